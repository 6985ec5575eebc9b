import type { SpeculationSpec } from "../../src/engine/speculation.js";
import type { PassShape } from "../../src/timing/passShape.js";
import { AdditiveTiming } from "../../src/timing/timingModel.js";

/** A speculation profile with one conditional rate per draft position (K = the rates' count). */
export const speculationSpec = (rates: number[], seed = 42): SpeculationSpec => ({
  kind: "ngram",
  numSpeculativeTokens: rates.length,
  acceptanceRates: rates,
  seed,
});

/** Fixed-cost timing (prefill 10 ms, decode 2 ms) that records each pass's (draft sequences, draft tokens). */
export class DraftRecorder extends AdditiveTiming {
  readonly drafts: [number, number][] = [];
  prefillMs(count: number): number {
    return count > 0 ? 10 : 0;
  }
  decodeMs(batch: number): number {
    return batch > 0 ? 2 : 0;
  }
  override passMs(pass: Readonly<PassShape>): number {
    this.drafts.push([pass.draftSequences, pass.draftTokens]);
    return super.passMs(pass);
  }
}
