/**
 * `planner.speculative_nextn` (PlannerConfig `speculative_nextn`, `ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`): the fallback
 * speculative-decoding depth the Planner's SLA load loop clamps the observed accept length with
 * when a worker advertises none (`ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py`). A fleetsim extension of the public schema, added as one
 * row of the knob table. A speculating worker's own depth wins over it (test/sim/speculation.test.ts,
 * docs/speculation.md); without speculation the observed accept length is 1, which no clamp changes.
 */
import { describe, expect, it } from "vitest";
import { translateTraceReplay } from "../../src/api/translate.js";
import { plannerConfigPayload } from "../../src/knobs/planner.js";
import { clampAcceptLength } from "../../src/planner/loadScaling/types.js";
import type { EngineCapabilities, PlannerSettings } from "../../src/planner/types.js";
import { loadError, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";

function planner(extra: string): PlannerSettings {
  return loadYaml(`planner: {policy: enabled${extra}}\n${RUNNABLE_ENGINE}`).planner!;
}

const NO_WORKER_DEPTH = { speculativeNextn: 0 } as EngineCapabilities;

describe("planner.speculative_nextn", () => {
  it("defaults to 0 and is then left out of planner_config, as the AISimulate payload has it", () => {
    const s = planner("");
    expect(s.speculativeNextn).toBe(0);
    expect(plannerConfigPayload(s)).not.toHaveProperty("speculative_nextn");
    expect(clampAcceptLength(3, s, NO_WORKER_DEPTH)).toBe(1);
  });

  it("set, it reaches the settings, the payload and the accept-length clamp", () => {
    const s = planner(", speculative_nextn: 2");
    expect(s.speculativeNextn).toBe(2);
    expect(plannerConfigPayload(s)["speculative_nextn"]).toBe(2);
    expect(clampAcceptLength(5, s, NO_WORKER_DEPTH)).toBe(3);
  });

  it("must be a non-negative integer", () => {
    const err = loadError(`planner: {policy: enabled, speculative_nextn: -1}\n${RUNNABLE_ENGINE}`);
    expect(err.issues.map((i) => i.path)).toEqual(["planner.speculative_nextn"]);
    const frac = loadError(`planner: {policy: enabled, speculative_nextn: 1.5}\n${RUNNABLE_ENGINE}`);
    expect(frac.issues[0].message).toContain("Input should be a valid integer, got number 1.5");
  });

  it("is a plannerConfig option of the library API under its PlannerConfig name", () => {
    const { draft } = translateTraceReplay(
      "trace.jsonl",
      { modelName: "Qwen/Qwen3-8B", plannerConfig: { speculative_nextn: 1 } },
      process.cwd(),
    );
    expect((draft.doc["planner"] as Record<string, unknown>)["speculative_nextn"]).toBe(1);
    expect(draft.optionFor(["planner", "speculative_nextn"])).toBe("plannerConfig.speculative_nextn");
  });

  it("is not a retune.planner key", () => {
    const err = loadError(
      `planner: {policy: enabled, retune: {interval_seconds: 60, planner: {speculative_nextn: 1}}}\n${RUNNABLE_ENGINE}`,
    );
    expect(err.message).toContain("speculative_nextn");
  });
});
