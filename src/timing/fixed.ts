import { AdditiveTiming } from "./timingModel.js";

/** Constant cost per non-empty prefill batch and per non-empty decode pass (`ai-dynamo/aisimulate@a71c2e8:crates/core/src/engine/timing.rs`). */
export class FixedTiming extends AdditiveTiming {
  constructor(
    private readonly prefill: number,
    private readonly decode: number,
  ) {
    super();
  }

  prefillMs(batchCount: number, _meanIsl: number, _meanPrefix: number): number {
    return batchCount > 0 ? this.prefill : 0;
  }

  decodeMs(batch: number, _activeKvTokens: number, _meanContext: number, _totalKvTokens: number): number {
    return batch > 0 ? this.decode : 0;
  }
}
