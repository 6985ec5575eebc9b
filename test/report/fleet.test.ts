/**
 * The fleet block below the AIPerf table (docs/metrics.md "Fleet block"): GPU-hours, goodput, SLA
 * attainment, scaling events, peak and mean provisioned GPUs, the over-budget warning and the
 * saturation note, from the prediction document alone.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Prediction } from "../../src/output/prediction.js";
import { predictionReadSchema } from "../../src/output/read.js";
import { type FleetFacts, fleetFactsOf } from "../../src/report/fleet.js";
import { FLEET_TITLE, fleetLines, renderFleetBlock } from "../../src/report/fleetBlock.js";
import { renderSummaryTable } from "../../src/report/table.js";
import { cliPredict } from "../helpers/cli.js";
import { engineYaml, fixedTiming } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

/** The facts of a document as a file reader gets them: through the tolerant schema. */
function readFacts(document: unknown): FleetFacts {
  return fleetFactsOf(predictionReadSchema().parse(document));
}

/** The fleet block of a document read as a file reader reads it. */
function renderRead(document: unknown): string {
  return fleetLines(readFacts(document)).join("\n");
}

/** A prediction document with an aggregated Planner run (2 workers of 1 GPU at the start, budget 2). */
function plannerDoc(lifecycle: unknown[], over: Record<string, unknown> = {}) {
  return {
    summary: {
      num_requests: 100,
      completed_requests: 98,
      goodput_completed_requests: 90,
      goodput_request_throughput_rps: 0.3,
      gpu_hours: 0.2,
      duration_ms: 300_000,
      decode_worker_seconds: 720,
      decode_gpus_per_worker: 1,
      prefill_worker_seconds: 0,
      prefill_gpus_per_worker: 0,
    },
    run: {
      topology: { aggregated: { replicas: 2, gpus_per_worker: 1 } },
      planner: { target: "load", max_num_gpus: 2 },
      sla: { ttft_ms: 500, itl_ms: 40 },
    },
    coverage: { capture_planner_details: true },
    planner: {
      scaling_events: [
        { at_s: 100, component: "agg", from_count: 2, to_count: 3, reason: "scale_up" },
        { at_s: 150, component: "agg", from_count: 3, to_count: 2, reason: "scale_down" },
      ],
      lifecycle_operations: lifecycle,
    },
    ...over,
  };
}

const op = (at_ms: number, cause: string, transitions: [number, string][]) => ({
  at_ms,
  pool: "agg",
  cause,
  transitions: transitions.map(([worker_id, transition]) => ({ worker_id, transition, at_ms })),
});

/** A time series of `n` 1 s buckets with the given arrivals and completions per bucket. */
function timeseries(arrivals: number[], completions: number[]) {
  return {
    interval_ms: 1000,
    t_ms: arrivals.map((_, k) => k * 1000),
    arrivals,
    completions,
  };
}

describe("fleetFacts", () => {
  it("peak provisioned GPUs and the time over budget come from the lifecycle records", () => {
    // Worker 2 starts at 100 s (startup delay), is ready at 130 s; worker 1 drains at 150 s and is
    // removed at 190 s: 3 GPUs are provisioned from 100 s to 190 s, one above the budget.
    const f = readFacts(
      plannerDoc([
        op(100_000, "scale_up", [[2, "worker_starting"]]),
        op(130_000, "startup_complete", [[2, "worker_ready"]]),
        op(150_000, "scale_down", [[1, "worker_draining"]]),
        op(190_000, "drain_complete", [[1, "worker_removed"]]),
      ]),
    );
    expect(f.gpuSteps?.source).toBe("lifecycle");
    expect(f.gpuSteps?.atMs).toEqual([0, 100_000, 190_000]);
    expect(f.gpuSteps?.gpus).toEqual([2, 3, 2]);
    expect(f.peakGpus).toBe(3);
    expect(f.peakAtMs).toBe(100_000);
    expect(f.overBudget).toEqual({ budget: 2, peakGpus: 3, firstAtMs: 100_000, durationMs: 90_000 });
    // mean = gpu_hours / duration (the reference's avg_gpu): 0.2 h over 300 s
    expect(f.meanGpus).toBeCloseTo(0.2 / (300_000 / 3.6e6), 12);
    expect(f.scaling).toEqual({ total: 2, up: 1, down: 1, recommended: null });
    expect(f.slaAttainment).toBeCloseTo(0.9, 12);
  });

  it("a worker added without a startup delay counts from its worker_ready; within budget, no warning", () => {
    const f = readFacts(
      plannerDoc([
        op(50_000, "scale_down", [[1, "worker_draining"]]),
        op(60_000, "drain_complete", [[1, "worker_removed"]]),
        op(100_000, "scale_up", [[2, "worker_ready"]]),
      ]),
    );
    expect(f.gpuSteps?.gpus).toEqual([2, 1, 2]);
    expect(f.peakGpus).toBe(2);
    expect(f.overBudget).toBeNull();
    const block = renderRead(plannerDoc([]));
    expect(block).not.toContain("Warning");
  });

  it("workers provisioned long after the last completion: mean (the reference's avg_gpu) over peak, with a note", () => {
    // 2 GPUs for an hour, but the last request completed at 5 min: GPU-hours ÷ duration_ms is 24.
    const base = plannerDoc([]);
    const doc = {
      ...base,
      summary: { ...base.summary, gpu_hours: 2, duration_ms: 300_000 },
      timeseries: timeseries(new Array(3600).fill(0), new Array(3600).fill(0)),
    };
    const f = readFacts(doc);
    expect(f.meanGpus).toBeCloseTo(24, 9);
    expect(f.peakGpus).toBe(2);
    expect(f.provisionedAfterLastMs).toBe(3_599_000 - 300_000);
    expect(renderRead(doc)).toContain(
      "Note: mean GPUs is the reference's avg_gpu (GPU-hours over duration_ms, which ends at the last completion); " +
        "workers stayed provisioned about 55 min after it, so the mean exceeds the peak",
    );
    // A run that ends with its last completion gets no note.
    expect(readFacts(plannerDoc([])).provisionedAfterLastMs).toBeNull();
  });

  it("without a Planner the provisioned GPUs are the starting ones", () => {
    const doc = plannerDoc([], { planner: null });
    const f = readFacts(doc);
    expect(f.gpuSteps).toEqual({ atMs: [0], gpus: [2], source: "fixed" });
    expect(f.scaling).toBeNull();
    expect(renderRead(doc)).toContain("Scaling Events: none (no Planner)");
  });

  it("a run whose backlog keeps growing to its last arrival is saturated; one that keeps up is not", () => {
    const n = 40;
    const arrivals = Array.from({ length: n }, () => 10);
    // 8 of 10 served per second: the backlog grows by 2 a second, 20 over the last 10 s.
    const short = readFacts(
      plannerDoc([], {
        timeseries: timeseries(
          arrivals,
          arrivals.map(() => 8),
        ),
      }),
    );
    expect(short.saturation).not.toBeNull();
    expect(short.saturation?.windowMs).toBe(10_000);
    expect(short.saturation?.growth).toBeCloseTo(20, 9);
    expect(short.saturation?.backlogAtLastArrival).toBe(80);
    // Served one bucket later, then drained after the last arrival: a constant backlog.
    const keepsUp = readFacts(plannerDoc([], { timeseries: timeseries([...arrivals, 0], [0, ...arrivals]) }));
    expect(keepsUp.saturation).toBeNull();
    // A ramp-up that the fleet follows: the backlog rises with the rate, far less than 5% of arrivals.
    const ramp = Array.from({ length: n }, (_, k) => 10 + k);
    const follows = readFacts(plannerDoc([], { timeseries: timeseries(ramp, [0, ...ramp.slice(0, -1)]) }));
    expect(follows.saturation).toBeNull();
  });
});

describe("renderFleetBlock", () => {
  it("names every figure, the budget warning and the saturation note", () => {
    const arrivals = Array.from({ length: 40 }, () => 10);
    const doc = plannerDoc(
      [op(100_000, "scale_up", [[2, "worker_starting"]]), op(190_000, "scale_down", [[2, "worker_removed"]])],
      {
        timeseries: timeseries(
          arrivals,
          arrivals.map(() => 8),
        ),
      },
    );
    expect(renderRead(doc).split("\n")).toEqual([
      FLEET_TITLE,
      "GPU Hours: 0.20",
      "Provisioned GPUs: peak 3, mean 2.40, budget 2",
      "Warning: provisioned GPUs exceed the budget of 2 (planner.max_num_gpus) from 0:01:40 of virtual time, " +
        "for 90 s in all, peak 3; starting and draining workers count",
      "Goodput (requests/sec): 0.30",
      "SLA Attainment: 90.00% (90 of 100 requests within TTFT ≤ 500 ms, ITL ≤ 40 ms)",
      "Scaling Events: 2 (1 up, 1 down)",
      "Note: the run is saturated: the queue was still growing at the last arrival (+20 requests over the " +
        "last 10 s of arrivals; 80 requests waiting or running then): the fleet cannot keep up with this " +
        "traffic, so latencies depend on how long the trace is",
      // 98 of the 100 requests completed
      "Not Completed: 2 of 100 requests (rejected: prompt at max_model_len or larger than a worker's KV cache; " +
        "or unfinished when the run stopped)",
    ]);
  });

  it("without an SLA, goodput and attainment read N/A", () => {
    const doc = plannerDoc([]);
    const summary = { ...doc.summary } as Record<string, unknown>;
    delete summary.goodput_completed_requests;
    delete summary.goodput_request_throughput_rps;
    const block = renderRead({ ...doc, summary, run: { ...doc.run, sla: null } });
    expect(block).toContain("Goodput (requests/sec): N/A (no evaluation.sla)");
    expect(block).toContain("SLA Attainment: N/A (no evaluation.sla)");
  });
});

function synthetic(rate: number, extra = "", shape = { input: 64, output: 20, sequences: 4, blocks: 4096 }) {
  const dir = tempDir("fleetsim-fleet-");
  const config = join(dir, "prediction.yaml");
  writeFileSync(
    config,
    `traffic:
  source: {type: synthetic, input_tokens: ${shape.input}, output_tokens: ${shape.output}}
  load: {type: poisson, requests_per_second: ${rate}, seed: 1}
  stop: {requests: 1500}
${engineYaml({
  replicas: 1,
  scheduler: `{max_sequences: ${shape.sequences}}`,
  kvCache: `{block_size: 64, capacity: {type: fixed, blocks: ${shape.blocks}}}`,
  timing: fixedTiming(5, 10),
})}evaluation:
  sla: {ttft_ms: 500}
${extra}`,
  );
  return { config, out: join(dir, "out") };
}

describe("fleetsim predict prints the fleet block below the unchanged AIPerf table", () => {
  it("a fleet that keeps up: the block follows the table's last line, no saturation note", async () => {
    const p = synthetic(5);
    const r = await cliPredict(p.config, p.out);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
    const table = renderSummaryTable(doc.summary).replace(/Wall Time \(ms\): [^\n]+/, "Wall Time (ms): …");
    const out = r.out.replace(/Wall Time \(ms\): [^\n]+/, "Wall Time (ms): …");
    expect(out.startsWith(`${table}\n\n${FLEET_TITLE}\nGPU Hours: `)).toBe(true);
    expect(out).toContain("Provisioned GPUs: peak 1, mean 1.00\n");
    expect(out).toContain("SLA Attainment: 100.00% (1,500 of 1,500 requests within TTFT ≤ 500 ms)\n");
    expect(out).not.toContain("saturated");
    expect(out.trimEnd().endsWith(`Saved full report to: ${join(p.out, "prediction.json")}`)).toBe(true);
  });

  it("arrivals above the fleet's capacity: the saturation note", async () => {
    const p = synthetic(30);
    const r = await cliPredict(p.config, p.out);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /Note: the run is saturated: the queue was still growing at the last arrival \(\+\d/,
    );
  });

  it("with the Planner: scaling events as prediction.json lists them; mean × duration = GPU-hours", async () => {
    const p = synthetic(
      40,
      "planner: {policy: enabled, target: load, max_num_gpus: 3, min_workers: 1, load_adjustment_interval_seconds: 5}",
      // KV-bound workers: load scaling reacts to their KV utilization.
      { input: 512, output: 64, sequences: 64, blocks: 300 },
    );
    const r = await cliPredict(p.config, p.out);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
    const events = doc.planner.scaling_events as { from_count: number; to_count: number }[];
    expect(events.length).toBeGreaterThan(0);
    const up = events.filter((e) => e.to_count > e.from_count).length;
    expect(r.out).toContain(`Scaling Events: ${events.length} (${up} up, ${events.length - up} down)\n`);
    const f = readFacts(doc);
    expect(f.budget).toBe(3);
    expect(f.peakGpus).toBeGreaterThanOrEqual(Math.max(...events.map((e) => e.to_count)));
    expect(f.peakGpus).toBeLessThanOrEqual(3);
    expect((f.meanGpus! * doc.summary.duration_ms) / 3.6e6).toBeCloseTo(doc.summary.gpu_hours, 9);
    expect(r.out).toContain(`Provisioned GPUs: peak ${f.peakGpus}, mean `);
  });

  it("--format json prints only the summary JSON (no fleet block on stdout)", async () => {
    const p = synthetic(5);
    const r = await cliPredict(p.config, p.out, "--format", "json");
    expect(r.code).toBe(0);
    expect(r.out).not.toContain(FLEET_TITLE);
    expect(() => JSON.parse(r.out)).not.toThrow();
  });
});

describe("the fleet block of the document predict just built", () => {
  // predict reads the document it built as it is (not through the tolerant schema): the same
  // block as reading the written file, on every golden run (Planner ticks and lifecycles included).
  const dir = join(import.meta.dirname, "..", "golden");
  const files = readdirSync(dir).filter((f) => f.endsWith(".prediction.json"));

  it.each(files)("%s: the same block either way", (file) => {
    const text = readFileSync(join(dir, file), "utf8");
    expect(renderFleetBlock(JSON.parse(text) as Prediction)).toBe(renderRead(JSON.parse(text)));
  });

  it("covers runs with the Planner in the loop", () => {
    expect(files.filter((f) => f.includes("planner")).length).toBeGreaterThanOrEqual(2);
  });
});
