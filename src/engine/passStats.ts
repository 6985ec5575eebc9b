/**
 * What one engine did in its latest forward pass and what it had queued when the pass started:
 * the forward-pass metrics (FPM) the Planner observes (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py`, `ai-dynamo/dynamo@fdf4b3d:lib/mocker/src/replay/offline/planner_hook.rs`). One mutable
 * instance per engine, overwritten by every pass.
 */
export class PassStats {
  /** Pass duration, seconds (0 until the engine has run a pass). */
  wallTimeS = 0;
  numPrefillRequests = 0;
  sumPrefillTokens = 0;
  /** Σ chunk² of the prefill requests: SGLang's `varPrefillLength` is taken from it. */
  sumPrefillTokensSq = 0;
  /**
   * `var_prefill_length`: population variance of the prefill requests' lengths as the backend's
   * reference defines a length (vLLM: the whole prompt, `VllmEngine`; SGLang: the tokens the pass
   * computes for it), set by the engine that ran the pass.
   */
  varPrefillLength = 0;
  /** Tokens already in KV before this pass's prefill chunks (cached prefix + earlier chunks). */
  sumPrefillKvTokens = 0;
  numDecodeRequests = 0;
  sumDecodeKvTokens = 0;
  sumDecodeKvTokensSq = 0;
  numQueuedPrefill = 0;
  sumQueuedPrefillTokens = 0;
  sumQueuedPrefillTokensSq = 0;
  numQueuedDecode = 0;
  sumQueuedDecodeKvTokens = 0;
  sumQueuedDecodeKvTokensSq = 0;
  /** Speculative decoding: sequences that verified drafts in this pass, and the drafts they verified. */
  specDrafts = 0;
  specDraftTokens = 0;
  /** Tokens those sequences emitted (1 + accepted drafts each): the accept length's numerator. */
  specTokens = 0;

  /** Every field from `o`. */
  copyFrom(o: PassStats): void {
    this.wallTimeS = o.wallTimeS;
    this.numPrefillRequests = o.numPrefillRequests;
    this.sumPrefillTokens = o.sumPrefillTokens;
    this.sumPrefillTokensSq = o.sumPrefillTokensSq;
    this.varPrefillLength = o.varPrefillLength;
    this.sumPrefillKvTokens = o.sumPrefillKvTokens;
    this.numDecodeRequests = o.numDecodeRequests;
    this.sumDecodeKvTokens = o.sumDecodeKvTokens;
    this.sumDecodeKvTokensSq = o.sumDecodeKvTokensSq;
    this.numQueuedPrefill = o.numQueuedPrefill;
    this.sumQueuedPrefillTokens = o.sumQueuedPrefillTokens;
    this.sumQueuedPrefillTokensSq = o.sumQueuedPrefillTokensSq;
    this.numQueuedDecode = o.numQueuedDecode;
    this.sumQueuedDecodeKvTokens = o.sumQueuedDecodeKvTokens;
    this.sumQueuedDecodeKvTokensSq = o.sumQueuedDecodeKvTokensSq;
    this.specDrafts = o.specDrafts;
    this.specDraftTokens = o.specDraftTokens;
    this.specTokens = o.specTokens;
  }

  reset(): void {
    this.wallTimeS = 0;
    this.numPrefillRequests = 0;
    this.sumPrefillTokens = 0;
    this.sumPrefillTokensSq = 0;
    this.varPrefillLength = 0;
    this.sumPrefillKvTokens = 0;
    this.numDecodeRequests = 0;
    this.sumDecodeKvTokens = 0;
    this.sumDecodeKvTokensSq = 0;
    this.specDrafts = 0;
    this.specDraftTokens = 0;
    this.specTokens = 0;
  }
}

/** Population variance from a count, a sum and a sum of squares (0 for fewer than 2 values). */
export function varianceOf(n: number, sum: number, sumSq: number): number {
  if (n < 2) return 0;
  const mean = sum / n;
  return Math.max(0, sumSq / n - mean * mean);
}

/** What an engine publishes when it has been idle a while: every counter 0. */
export const IDLE_HEARTBEAT: Readonly<PassStats> = Object.freeze(new PassStats());
