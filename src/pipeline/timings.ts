import type { EngineSpec } from "../config/runSpec.js";
import { createTimingModel, type RoleTimings } from "../timing/index.js";

/** Builds the timing models of every role of a deployment (pipeline step "timing"). */
export async function createRoleTimings(engine: EngineSpec): Promise<RoleTimings> {
  if (engine.mode === "aggregated") {
    return {
      mode: "aggregated",
      aggregated: await createTimingModel(engine.aggregated.timing, engine.aggregated),
    };
  }
  const [prefill, decode] = await Promise.all([
    createTimingModel(engine.prefill.timing, engine.prefill),
    createTimingModel(engine.decode.timing, engine.decode),
  ]);
  return { mode: "disaggregated", prefill, decode };
}
