/**
 * The Planner's perf-model bootstrap (seed 000 "Planner Performance Model"): priced by the default
 * (op-level) estimates for `engine.model` on `engine.hardware` even when the engines run
 * `polynomial` or `fixed` timing, so the Planner's model and the engines can disagree.
 */
import { describe, expect, it } from "vitest";
import type { BootstrapInfo } from "../../src/autoscale/plannerAdapter.js";
import { createPlanner, LOAD_ONLY_WARNING } from "../../src/autoscale/plannerSetup.js";
import type { RunSpec } from "../../src/config/runSpec.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { loadYaml } from "../helpers/configHelpers.js";

const TRACE = "trace.jsonl";
const ROWS = `${JSON.stringify({ timestamp: 0, input_length: 512, output_length: 4, hash_ids: [1] })}\n`;

function yaml(
  timing: string,
  model = "Qwen/Qwen3-8B",
  mode: "aggregated" | "disaggregated" = "aggregated",
): string {
  const role = `      kv_cache: {capacity: {type: fixed, blocks: 1000}}
      timing: ${timing}
`;
  const workers =
    mode === "aggregated" ? `    aggregated:\n${role}` : `    prefill:\n${role}    decode:\n${role}`;
  return `traffic:
  source: {type: trace, format: mooncake, paths: [${TRACE}]}
engine:
  mode: ${mode}
  model: ${model}
  hardware: h200_sxm
  context_length: 4096
  workers:
${workers}planner: {policy: enabled, target: sla}
evaluation: {sla: {ttft_ms: 1500, itl_ms: 50}}
`;
}

function spec(text: string): RunSpec {
  return loadYaml(text, { files: { [TRACE]: ROWS } });
}

async function bootstrapOf(s: RunSpec, warnings: string[] = []): Promise<BootstrapInfo> {
  const planner = await createPlanner(s, await createRoleTimings(s.engine), null, null, {
    warn: (line) => warnings.push(line),
  });
  return planner!.report([]).metadata["bootstrap"] as BootstrapInfo;
}

describe("perf-model bootstrap", () => {
  it("polynomial and fixed engines are bootstrapped with the same op-level passes as default timing", async () => {
    const op = await bootstrapOf(spec(yaml("{type: default}")));
    const poly = await bootstrapOf(spec(yaml("{type: polynomial}")));
    const fixed = await bootstrapOf(spec(yaml("{type: fixed, prefill_ms: 5, decode_ms: 2}")));
    expect(op.status).toBe("installed");
    expect(op.decode_fpm_count).toBeGreaterThan(0);
    expect(poly).toEqual(op);
    expect(fixed).toEqual(op);
  });

  it("a disaggregated deployment prices each role with the op-level estimates too", async () => {
    const op = await bootstrapOf(spec(yaml("{type: default}", "Qwen/Qwen3-8B", "disaggregated")));
    const fixed = await bootstrapOf(
      spec(yaml("{type: fixed, prefill_ms: 5, decode_ms: 2}", "Qwen/Qwen3-8B", "disaggregated")),
    );
    expect(fixed).toEqual(op);
  });

  it("a model the op-level estimates cannot price leaves the bootstrap at session_failed_load_only, with a warning", async () => {
    const warnings: string[] = [];
    // Polynomial timing with fixed capacity runs any model id; the bootstrap cannot price it.
    const info = await bootstrapOf(spec(yaml("{type: polynomial}", "acme/not-a-model")), warnings);
    expect(info).toEqual({ status: "session_failed_load_only", benchmark_granularity: 8 });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("acme/not-a-model");
    expect(warnings[0]).toContain("throughput regression will not be bootstrapped");
    expect(warnings[1]).toBe(LOAD_ONLY_WARNING);
  });
});

describe('no bootstrap: throughput-based scaling falls back to load-based scaling (seed 000 "Run from Python")', () => {
  async function fallback(s: RunSpec) {
    const warnings: string[] = [];
    const planner = await createPlanner(s, await createRoleTimings(s.engine), null, null, {
      warn: (line) => warnings.push(line),
    });
    const metadata = planner!.report([]).metadata;
    return { warnings, metadata, config: metadata["planner_config"] as Record<string, unknown> };
  }

  it("not_configured_load_only (engine arguments without a model and GPU): a warning and load-only scaling", async () => {
    const base = spec(yaml("{type: polynomial}"));
    const s: RunSpec = { ...base, planner: { ...base.planner!, bootstrapPerfModel: false } };
    expect([s.planner!.enableThroughputScaling, s.planner!.enableLoadScaling]).toEqual([true, false]);
    const { warnings, metadata, config } = await fallback(s);
    expect(warnings).toEqual([LOAD_ONLY_WARNING]);
    expect(metadata["bootstrap"]).toEqual({ status: "not_configured_load_only" });
    expect([config["enable_throughput_scaling"], config["enable_load_scaling"]]).toEqual([false, true]);
    // The tick follows the load interval (5 s) instead of the throughput interval (180 s).
    expect(metadata["scale_interval_seconds"]).toBe(5);
  });

  it("an installed bootstrap keeps throughput-based scaling", async () => {
    const { warnings, config } = await fallback(spec(yaml("{type: polynomial}")));
    expect(warnings).toEqual([]);
    expect([config["enable_throughput_scaling"], config["enable_load_scaling"]]).toEqual([true, false]);
  });
});
