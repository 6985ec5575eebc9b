import type { TimingModel } from "../timing/timingModel.js";

/**
 * The duration of a pass from the timing model, as both scheduler cores price it: its prefill
 * batch by count, mean (integer division) of the tokens up to each chunk's end and of those
 * before it; its decode batch as the core counts it (`meanDecodeKv` is the core's own rounding);
 * 0 for a pass with neither.
 */
export function pricePass(
  timing: TimingModel,
  prefills: number,
  prefillIslSum: number,
  prefillPrefixSum: number,
  decodes: number,
  activeKv: number,
  meanDecodeKv: number,
  totalKv: number,
  draftSequences: number,
  draftTokens: number,
): number {
  if (prefills === 0 && decodes === 0) return 0;
  return timing.passMs(
    prefills,
    prefills > 0 ? Math.floor(prefillIslSum / prefills) : 0,
    prefills > 0 ? Math.floor(prefillPrefixSum / prefills) : 0,
    decodes,
    activeKv,
    meanDecodeKv,
    totalKv,
    draftSequences,
    draftTokens,
  );
}
