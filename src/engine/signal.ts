/**
 * What a pass emits, by request row, delivered by the replay loop at pass end (`PassSignals`
 * buffers them; `WorkerEngine.takeSignals` hands them over).
 */
export const Signal = {
  /** One output token. */
  Token: 1,
  /** One output token and the request is complete. */
  TokenAndComplete: 2,
  /** Complete without a token (zero-output request). */
  Complete: 3,
  /** Rejected (prompt ≥ max_model_len, or larger than the whole KV cache). */
  Rejected: 4,
  /** Prefill role: the prompt and the hidden first token are computed; the KV is held for transfer. */
  PrefillDone: 5,
} as const;
