/**
 * The Planner in the loop, end to end (issue acceptance): the seed walkthroughs with their
 * Planner sections, the startup-delay sweep, a traffic surge, and advisory mode.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { Prng } from "../src/util/prng.js";
import { cli } from "./helpers/cli.js";
import { tempDir } from "./helpers/specs.js";

interface ScalingEvent {
  at_s: number;
  component: string;
  from_count: number;
  to_count: number;
  reason: string;
}
interface Transition {
  worker_id: number;
  transition: string;
  at_ms: number;
}
interface Prediction {
  summary: Record<string, number>;
  planner: {
    metadata: { mode: string; advisory: boolean; bootstrap: { status: string; fpm_sha256?: string } };
    scaling_events: ScalingEvent[];
    recommended_scaling_events?: ScalingEvent[];
    lifecycle_operations: { at_ms: number; pool: string; cause: string; transitions: Transition[] }[];
    ticks: { ordinal: number; at_ms: number; runtime_decision: { target_decode: number | null } }[];
    total_ticks: number;
    html_report_path: null;
  } | null;
}

async function predict(config: string, ...sets: string[]): Promise<{ doc: Prediction; bytes: number }> {
  const out = join(tempDir(), "out");
  const args = ["predict", "-c", config, "--output-dir", out];
  for (const s of sets) args.push("--set", s);
  const r = await cli(...args);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  const text = readFileSync(join(out, "prediction.json"), "utf8");
  return { doc: JSON.parse(text) as Prediction, bytes: Buffer.byteLength(text) };
}

const addedWorkers = (p: NonNullable<Prediction["planner"]>): number =>
  p.scaling_events.filter((e) => e.reason === "scale_up").reduce((a, e) => a + e.to_count - e.from_count, 0);
const transitions = (p: NonNullable<Prediction["planner"]>): Transition[] =>
  p.lifecycle_operations.flatMap((o) => o.transitions);

describe("seed walkthroughs with the Planner, conversation trace", () => {
  it("aggregated baseline: SLA Planner bootstrapped, ticks recorded, report under 5 MB", async () => {
    const { doc, bytes } = await predict("examples/seed-aggregated.yaml");
    const p = doc.planner!;
    expect(p.metadata.mode).toBe("agg");
    expect(p.metadata.advisory).toBe(false);
    expect(p.metadata.bootstrap.status).toBe("installed");
    expect(p.metadata.bootstrap.fpm_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(p.html_report_path).toBeNull();
    // One tick every 10 s (gcd of 300 and 10) from 10 s until the traffic is served.
    expect(p.total_ticks).toBe(p.ticks.length);
    expect(p.ticks[0].at_ms).toBe(10_000);
    expect(p.ticks.every((t, i) => t.ordinal === i && t.at_ms === 10_000 * (i + 1))).toBe(true);
    expect(p.scaling_events.length).toBeGreaterThan(0);
    for (const e of p.scaling_events) {
      expect(e.component).toBe("agg");
      expect(e.reason).toBe(e.to_count > e.from_count ? "scale_up" : "scale_down");
      // max_num_gpus 2 at 1 GPU per worker, min_workers 1.
      expect(e.to_count).toBeGreaterThanOrEqual(1);
      expect(e.to_count).toBeLessThanOrEqual(2);
    }
    expect(doc.summary.num_requests).toBe(12031);
    expect(bytes).toBeLessThan(5 * 1024 * 1024);
  });

  it("disaggregated comparison: both roles scale within their minimums and GPU-hours add up", async () => {
    const { doc } = await predict("examples/seed-disaggregated.yaml");
    const p = doc.planner!;
    expect(p.metadata.mode).toBe("disagg");
    for (const e of p.scaling_events) {
      expect(["prefill", "decode"]).toContain(e.component);
      expect(e.to_count).toBeGreaterThanOrEqual(1);
    }
    const s = doc.summary;
    expect(s.gpu_hours).toBeCloseTo(
      (s.prefill_worker_seconds * s.prefill_gpus_per_worker +
        s.decode_worker_seconds * s.decode_gpus_per_worker) /
        3600,
      9,
    );
    expect(s.num_requests).toBe(12031);
  });

  it("startup sweep 0…300 s: added workers start, become ready exactly startup_seconds later, and do not depend on the delay", async () => {
    const added: number[] = [];
    const ttft: number[] = [];
    for (const startup of [0, 60, 120, 180, 240, 300]) {
      const { doc } = await predict(
        "examples/seed-aggregated.yaml",
        `engine.workers.aggregated.startup_seconds=${startup}`,
      );
      const p = doc.planner!;
      const tr = transitions(p);
      const starting = tr.filter((t) => t.transition === "worker_starting");
      const n = addedWorkers(p);
      added.push(n);
      ttft.push(doc.summary.mean_ttft_ms);
      if (startup === 0) {
        expect(starting).toHaveLength(0);
        expect(tr.filter((t) => t.transition === "worker_ready")).toHaveLength(n);
      } else {
        expect(starting).toHaveLength(n);
        for (const s of starting) {
          const ready = tr.find((t) => t.worker_id === s.worker_id && t.transition === "worker_ready");
          const cancelled = tr.find(
            (t) =>
              t.worker_id === s.worker_id &&
              t.transition === "worker_removed" &&
              t.at_ms < s.at_ms + startup * 1000,
          );
          if (cancelled === undefined) expect(ready?.at_ms).toBe(s.at_ms + startup * 1000);
        }
      }
    }
    expect(added.every((n) => n === added[0])).toBe(true);
    expect(added[0]).toBeGreaterThan(0);
    // A slower startup leaves the deployment short for longer.
    expect(ttft[5]).toBeGreaterThan(ttft[0]);
  }, 120_000);
});

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
  writeFileSync(join(dir, "surge.jsonl"), `${rows.join("\n")}\n`);
  const config = join(dir, "surge.yaml");
  writeFileSync(
    config,
    `traffic:
  source: {type: trace, format: mooncake, paths: [surge.jsonl], block_size: 512}
  load: {type: trace_timestamps}
engine:
  model: nvidia/Llama-3.1-8B-Instruct-FP8
  hardware: h200_sxm
  workers:
    aggregated:
      parallelism: {replicas: 1}
planner:
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
    // Nothing happens before the surge; the first scale-up comes within seconds of it.
    expect(events.every((e) => e.at_s > 120)).toBe(true);
    expect(ups[0].at_s).toBeLessThan(180);
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
    const { doc } = await predict(surgeConfig(), "planner.max_num_gpus=1");
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
