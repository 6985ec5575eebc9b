import type { EngineSpec } from "./runSpec.js";

/**
 * The engine KV block size of a deployment, in tokens: what request tables hash prompts for. Both
 * roles of a disaggregated deployment share one block size (a config rule), so the prefill role's
 * stands for both.
 */
export function engineBlockSize(engine: EngineSpec): number {
  return engine.mode === "aggregated" ? engine.aggregated.blockSize : engine.prefill.blockSize;
}
