import type { PassShape } from "../timing/passShape.js";
import type { TimingModel } from "../timing/timingModel.js";

/**
 * The duration of a pass from the timing model, as both scheduler cores price it (`pass` filled
 * by the core: its prefill batch by count and integer-division means, its decode batch as the
 * core counts it); 0 for a pass with neither half.
 */
export function pricePass(timing: TimingModel, pass: Readonly<PassShape>): number {
  if (pass.prefillCount === 0 && pass.decodeBatch === 0) return 0;
  return timing.passMs(pass);
}
