import { PassShape } from "./passShape.js";
import { decodeRunMs, type TimingModel } from "./timingModel.js";

/**
 * `timing.mixed_passes: additive`: a pass that prefills some requests and decodes others costs a
 * prefill pass plus a decode pass of the wrapped model, as the reference prices it (it adds
 * `prefill_time + decode_time`; `ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`).
 * fleetsim's default prices such a pass as one forward pass (docs/timing.md "Mixed passes"); this
 * is the reference's convention, for runs meant to reproduce its numbers (docs/conformance.md).
 * Passes with one half only cost what the wrapped model says.
 */
export class SplitPassTiming implements TimingModel {
  private readonly prefillHalf = new PassShape();
  private readonly decodeHalf = new PassShape();

  constructor(private readonly inner: TimingModel) {}

  prefillMs(batchCount: number, meanIsl: number, meanPrefix: number): number {
    return this.inner.prefillMs(batchCount, meanIsl, meanPrefix);
  }

  decodeMs(batch: number, activeKvTokens: number, meanContext: number, totalKvTokens: number): number {
    return this.inner.decodeMs(batch, activeKvTokens, meanContext, totalKvTokens);
  }

  /** Plain decode passes have one half only: the wrapped model's. */
  decodeRunMs(
    batch: number,
    firstActiveKvTokens: number,
    totalKvTokens: number,
    count: number,
    out: Float64Array,
  ): void {
    decodeRunMs(this.inner, batch, firstActiveKvTokens, totalKvTokens, count, out, this.decodeHalf);
  }

  passMs(pass: Readonly<PassShape>): number {
    if (pass.prefillCount === 0 || pass.decodeBatch === 0) return this.inner.passMs(pass);
    const total = pass.totalKvTokens;
    const prefill = this.prefillHalf
      .setPrefill(pass.prefillCount, pass.meanIsl, pass.meanPrefix)
      .setDecode(0, 0, 0, total)
      .setDrafts(0, 0);
    const decode = this.decodeHalf
      .setPrefill(0, 0, 0)
      .setDecode(pass.decodeBatch, pass.activeKvTokens, pass.meanContext, total)
      .setDrafts(pass.draftSequences, pass.draftTokens);
    return this.inner.passMs(prefill) + this.inner.passMs(decode);
  }
}
