import type { PassShape } from "./passShape.js";

/**
 * Forward-pass latency provider (`ai-dynamo/aisimulate@a71c2e8:crates/core/src/engine/timing.rs`, `ai-dynamo/aisimulate@4c80077:crates/core/src/engine/common/perf_model.rs`). The scheduler prices every
 * pass with `passMs(shape)`: the reference's closed forms (polynomial, fixed) add
 * `prefillMs(...) + decodeMs(...)`; the op-level model prices a mixed pass as one forward pass
 * (docs/timing.md, "Mixed passes").
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
  /**
   * One pass that prefills `pass.prefillCount` requests and decodes `pass.decodeBatch` others
   * (see `PassShape`; a 0 count means that half is empty).
   *
   * With speculative decoding (docs/speculation.md), `pass.draftSequences` of the decoding
   * requests verify `pass.draftTokens` draft tokens in all besides their one real token: the pass
   * carries `decodeBatch + draftTokens` decode positions. With 0 drafts the pass costs exactly
   * what it costs without speculation.
   */
  passMs(pass: Readonly<PassShape>): number;
  /**
   * Optional: the durations of `count` plain decode passes of `batch` sequences — no prefill, no
   * drafts — whose Σ sequence length is `firstActiveKvTokens` in the first and `batch` more in
   * each next one, into `out[0 .. count)`: each exactly what `passMs` gives that pass. Decode-run
   * merging prices a run's passes in one call this way (`decodeRunMs` below), with nothing boxed
   * per pass; a model without it is asked pass by pass.
   */
  decodeRunMs?(
    batch: number,
    firstActiveKvTokens: number,
    totalKvTokens: number,
    count: number,
    out: Float64Array,
  ): void;
}

/**
 * `timing.decodeRunMs(...)`, or, for a model without that method, `passMs` of each pass in turn
 * (`shape` is the caller's scratch).
 */
export function decodeRunMs(
  timing: TimingModel,
  batch: number,
  firstActiveKvTokens: number,
  totalKvTokens: number,
  count: number,
  out: Float64Array,
  shape: PassShape,
): void {
  if (timing.decodeRunMs !== undefined) {
    timing.decodeRunMs(batch, firstActiveKvTokens, totalKvTokens, count, out);
    return;
  }
  shape.setPrefill(0, 0, 0).setDrafts(0, 0);
  let activeKv = firstActiveKvTokens;
  for (let j = 0; j < count; j++) {
    out[j] = timing.passMs(shape.setDecode(batch, activeKv, activeKv / batch, totalKvTokens));
    activeKv += batch;
  }
}

/**
 * Base of the reference's closed forms: a mixed pass costs its prefill plus its decode, and an
 * empty half is not priced at all. Draft tokens add nothing: the closed forms price a decode pass
 * by its batch and KV use, which verification does not change — as the Dynamo mocker prices a
 * speculating pass with its perf model's plain decode time (docs/speculation.md).
 */
export abstract class AdditiveTiming implements TimingModel {
  abstract prefillMs(batchCount: number, meanIsl: number, meanPrefix: number): number;
  abstract decodeMs(
    batch: number,
    activeKvTokens: number,
    meanContext: number,
    totalKvTokens: number,
  ): number;

  passMs(pass: Readonly<PassShape>): number {
    const prefill =
      pass.prefillCount > 0 ? this.prefillMs(pass.prefillCount, pass.meanIsl, pass.meanPrefix) : 0;
    const batch = pass.decodeBatch;
    const decode =
      batch > 0 ? this.decodeMs(batch, pass.activeKvTokens, pass.meanContext, pass.totalKvTokens) : 0;
    return prefill + decode;
  }
}
