/**
 * Forward-pass latency provider (aisimulate.md §4.1, mocker.md §2). The scheduler prices every
 * pass as `prefillMs(...) + decodeMs(...)`.
 */
export interface TimingModel {
  /**
   * Prefill time of one pass.
   * @param batchCount requests that scheduled prompt tokens in this pass
   * @param meanIsl    mean over those requests of (tokens before this chunk + chunk), integer division
   * @param meanPrefix mean over those requests of tokens before this chunk (cached prefix + earlier chunks)
   */
  prefillMs(batchCount: number, meanIsl: number, meanPrefix: number): number;
  /**
   * Decode time of one pass.
   * @param batch          requests that emit a token at the end of this pass
   * @param activeKvTokens Σ sequence length over those requests
   * @param meanContext    activeKvTokens / batch
   * @param totalKvTokens  num_gpu_blocks × block_size of the worker
   */
  decodeMs(batch: number, activeKvTokens: number, meanContext: number, totalKvTokens: number): number;
}
