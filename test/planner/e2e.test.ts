import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ADVISORY_WARNING } from "../../src/autoscale/plannerSetup.js";
import { Prng } from "../../src/util/prng.js";
import { configFile, engineYaml } from "../helpers/configYaml.js";
import { configWarningLines, type PlannerPrediction, predictPlanner } from "../helpers/plannerRun.js";
import { tempDir } from "../helpers/specs.js";

async function predict(
  config: string,
  ...sets: string[]
): Promise<{ doc: PlannerPrediction; bytes: number; err: string }> {
  // Only an advisory replay has something to say on stderr: its start-up warning.
  const advisory = sets.includes("planner.advisory=true");
  return predictPlanner(config, sets, advisory ? `fleetsim: warning: ${ADVISORY_WARNING}\n` : "");
}

/** Poisson arrivals: 2 req/s for 120 s, a 24 req/s surge until 300 s, then 2 req/s until 600 s. */
function surgeConfig(): string {
  const dir = tempDir("fleetsim-surge-");
  const rng = new Prng(7);
  const rows: string[] = [];
  let id = 1;
  for (const [from, to, rate] of [
    [0, 120, 2],
    [120, 300, 24],
    [300, 600, 2],
  ]) {
    let t = from * 1000;
    for (;;) {
      t += (-Math.log(1 - rng.nextFloat()) / rate) * 1000;
      if (t >= to * 1000) break;
      rows.push(
        JSON.stringify({
          timestamp: Math.round(t),
          input_length: 2048,
          output_length: 256,
          hash_ids: [id++, id++, id++, id++],
        }),
      );
    }
  }
  const { config } = configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [surge.jsonl], block_size: 512}
  load: {type: trace_timestamps}
${engineYaml({ model: "nvidia/Llama-3.1-8B-Instruct-FP8", contextLength: null, replicas: 1 })}planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: true
  enable_load_scaling: true
  throughput_adjustment_interval_seconds: 30
  load_adjustment_interval_seconds: 5
  max_num_gpus: 6
  min_workers: 1
evaluation:
  sla: {ttft_ms: 1000, itl_ms: 40}
`,
    { dir, name: "surge.yaml", files: { "surge.jsonl": `${rows.join("\n")}\n` } },
  );
  return config;
}

describe("a traffic surge", () => {
  it("makes the Planner scale up during the surge and back down after it, beating the fixed deployment's goodput", async () => {
    const config = surgeConfig();
    const fixed = (await predict(config, "planner={policy: disabled}")).doc;
    const { doc } = await predict(config);
    const events = doc.planner!.scaling_events;
    const ups = events.filter((e) => e.reason === "scale_up");
    const downs = events.filter((e) => e.reason === "scale_down");
    // Nothing happens before the surge; the first scale-up comes within a minute of it (the mixed
    // passes' regression is ready after `load_min_observations` of them, sampled one per tick).
    expect(events.every((e) => e.at_s > 120)).toBe(true);
    expect(ups[0].at_s).toBeLessThanOrEqual(180);
    // After the surge the deployment returns to one worker.
    const last = events[events.length - 1];
    expect(last.reason).toBe("scale_down");
    expect(last.at_s).toBeGreaterThanOrEqual(300);
    expect(last.to_count).toBe(1);
    expect(downs.length).toBeGreaterThan(0);
    expect(doc.summary.goodput_completed_requests).toBeGreaterThan(fixed.summary.goodput_completed_requests);
    expect(doc.summary.mean_ttft_ms).toBeLessThan(fixed.summary.mean_ttft_ms);
  }, 60_000);

  it("a GPU budget at the starting size holds every scale-up", async () => {
    const config = surgeConfig();
    // predict says so before the run, as validate does (cli/validate.ts configWarnings).
    expect(configWarningLines(config, ["planner.max_num_gpus=1"])).toBe(
      "fleetsim: warning: planner.max_num_gpus = 1 is equal to the 1 GPU the starting replicas use: the Planner " +
        "holds every scale-up it proposes; set max_num_gpus above the starting GPU count\n",
    );
    const { doc } = await predict(config, "planner.max_num_gpus=1");
    const p = doc.planner!;
    expect(p.scaling_events.filter((e) => e.reason === "scale_up")).toEqual([]);
    const reasons = (
      p.ticks as unknown as { effects: { diagnostics: { load_decision_reason?: string } } }[]
    ).map((t) => t.effects.diagnostics.load_decision_reason);
    expect(reasons).toContain("gpu_budget_guard_hold");
  }, 60_000);

  it("advisory mode decides the same way but changes nothing: the summary equals the fixed deployment's", async () => {
    const config = surgeConfig();
    const fixed = (await predict(config, "planner={policy: disabled}")).doc;
    const { doc } = await predict(config, "planner.advisory=true");
    const p = doc.planner!;
    expect(p.metadata.advisory).toBe(true);
    expect(p.scaling_events).toEqual([]);
    expect(p.lifecycle_operations).toEqual([]);
    expect(p.recommended_scaling_events!.length).toBeGreaterThan(0);
    expect(p.recommended_scaling_events!.some((e) => e.reason === "scale_up")).toBe(true);
    expect(p.ticks.every((t) => t.runtime_decision.target_decode === null)).toBe(true);
    const hostKeys = ["wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"];
    const strip = (s: Record<string, number>) =>
      Object.fromEntries(Object.entries(s).filter(([k]) => !hostKeys.includes(k)));
    expect(strip(doc.summary)).toEqual(strip(fixed.summary));
  }, 60_000);
});

describe("load predictor warm-up", () => {
  it("a warm-up trace primes the predictors before the first throughput tick", async () => {
    const config = surgeConfig();
    const first = async (...sets: string[]) => {
      const { doc } = await predict(config, "planner.load_predictor=kalman", ...sets);
      const ticks = doc.planner!.ticks as unknown as {
        scheduled_tick: { run_throughput_scaling: boolean };
        effects: { diagnostics: { predicted_num_req?: number } };
      }[];
      return ticks.find((t) => t.scheduled_tick.run_throughput_scaling)!.effects.diagnostics
        .predicted_num_req!;
    };
    const cold = await first();
    // A relative warm-up trace resolves against the working directory (seed 000), so name it absolutely.
    const warm = await first(`planner.load_predictor_warmup_trace=${join(dirname(config), "surge.jsonl")}`);
    // Cold, the Kalman filter's first forecast is its first observation; warmed up it has a trend.
    expect(Number.isFinite(cold) && Number.isFinite(warm)).toBe(true);
    expect(warm).not.toBe(cold);
  }, 60_000);
});
