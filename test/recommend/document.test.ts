import { describe, expect, it } from "vitest";
import type { PathIssue } from "../../src/config/issues.js";
import { extractSearch } from "../../src/recommend/document.js";
import { GLOBAL_KNOBS, parseDomain, ROLE_KNOBS } from "../../src/recommend/knobs.js";

function extract(doc: Record<string, unknown>) {
  const issues: PathIssue[] = [];
  const out = extractSearch(doc, issues);
  return { ...out, issues: issues.map((i) => `${i.path.join(".")}: ${i.message}`) };
}

describe("recommendation domains", () => {
  it("takes choices and ranges out of the template and gives omitted scheduler knobs their default ranges", () => {
    const r = extract({
      traffic: { load: { type: "concurrency", concurrency: { range: { min: 4, max: 16, step: 4 } } } },
      engine: {
        mode: "aggregated",
        model: "m",
        hardware: "h200_sxm",
        workers: { aggregated: { scheduler: { max_sequences: 64 } } },
      },
    });
    expect(r.issues).toEqual([]);
    expect(r.modes).toEqual(["aggregated"]);
    expect(r.slots.map((s) => [s.dimension.name, s.defaulted])).toEqual([
      ["traffic.load.concurrency", false],
      ["engine.workers.aggregated.scheduler.max_batched_tokens", true],
    ]);
    expect(r.slots[0].dimension).toMatchObject({ kind: "numeric", min: 4, max: 16, step: 4, integer: true });
    expect(r.template).toMatchObject({ traffic: { load: { type: "concurrency" } } });
    expect(r.parallelism.aggregated).toEqual({ kind: "default" });
  });

  it("studies the modes of a mode domain, or of the roles workers declares", () => {
    expect(
      extract({ engine: { mode: { choices: ["aggregated", "disaggregated"] }, model: "m", hardware: "h" } })
        .modes,
    ).toEqual(["aggregated", "disaggregated"]);
    expect(
      extract({ engine: { model: "m", hardware: "h", workers: { prefill: {}, decode: {} } } }).modes,
    ).toEqual(["disaggregated"]);
  });

  it("reads a parallelism preset list as one choice per complete mapping, and preset: false as per-knob domains", () => {
    const full = { replicas: 1, tensor: 2, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1 };
    const r = extract({
      engine: {
        mode: "aggregated",
        model: "m",
        hardware: "h",
        workers: { aggregated: { parallelism: { preset: [full, { ...full, replicas: 2 }] } } },
      },
    });
    expect(r.parallelism.aggregated).toMatchObject({
      kind: "preset",
      dimension: { values: [full, { ...full, replicas: 2 }] },
    });
    const k = extract({
      engine: {
        mode: "aggregated",
        model: "m",
        hardware: "h",
        workers: {
          aggregated: {
            parallelism: { preset: false, replicas: { range: { min: 1, max: 8, step: 1 } }, tensor: 2 },
          },
        },
      },
    });
    expect(k.parallelism.aggregated).toEqual({ kind: "knobs" });
    expect(k.slots.map((s) => s.dimension.name)).toContain("engine.workers.aggregated.parallelism.replicas");
    expect(k.template).toMatchObject({ engine: { workers: { aggregated: { parallelism: { tensor: 2 } } } } });
  });

  it("reports misplaced and malformed domains at their paths", () => {
    const r = extract({
      engine: {
        mode: "aggregated",
        model: { choices: ["a", "b"] },
        hardware: "h",
        workers: {
          aggregated: {
            parallelism: { preset: "default", replicas: 2 },
            scheduler: { max_sequences: { range: { min: 1, max: 64 } }, max_batched_tokens: { choices: [] } },
          },
        },
      },
      planner: { load_min_observations: { choices: [3, 5] } },
    });
    expect(r.issues).toEqual([
      "engine.workers.aggregated.parallelism.replicas: a preset and independent parallelism knobs cannot be combined; set preset: false to search knobs",
      "engine.workers.aggregated.scheduler.max_batched_tokens.choices: Input should be a non-empty list, got a list",
      "engine.workers.aggregated.scheduler.max_sequences.range: an integer linear range needs a step",
      "engine.model: engine.model is fixed during a recommendation and takes no search domain; give it a concrete value",
      "planner.load_min_observations: planner.load_min_observations is a Planner knob: fleetsim recommend does not search the Planner yet; give it a concrete value",
    ]);
  });

  it("checks choice values with the knob's own rule and log ranges for min > 0 without a step", () => {
    const issues: PathIssue[] = [];
    const rule = ROLE_KNOBS["scheduler.max_sequences"];
    expect(parseDomain({ choices: [8, 8] }, rule, "x", ["x"], issues)).toBeUndefined();
    expect(parseDomain({ choices: [0] }, rule, "x", ["x"], issues)).toBeUndefined();
    const temperature = GLOBAL_KNOBS["router.temperature"];
    expect(
      parseDomain({ range: { min: 0, max: 2, scale: "log" } }, temperature, "x", ["x"], issues),
    ).toBeUndefined();
    expect(parseDomain({ range: { min: 1, max: 8, scale: "log" } }, rule, "x", ["x"], issues)).toMatchObject({
      log: true,
    });
    expect(issues.map((i) => i.message)).toEqual([
      "number 8 is repeated: choices must be unique",
      expect.stringContaining("greater than or equal to 1"),
      "a log range needs min > 0",
    ]);
  });
});
