/**
 * `prediction.json` → `timeseries` (src/metrics/timeline.ts, docs/metrics.md "Time series"):
 * hand-computed buckets and boundary samples, worker appearance/removal under scaling, a
 * disaggregated run, the interval rules, and determinism with the real Planner.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import type { RunSpec } from "../../src/config/runSpec.js";
import { Terminal } from "../../src/metrics/collector.js";
import { nearestRank } from "../../src/metrics/distribution.js";
import { requestRowsOf } from "../../src/metrics/requestLog.js";
import {
  buildTimeseries,
  coarserFactor,
  MAX_BUCKETS,
  niceIntervalMs,
  type SampledPool,
  TimelineSampler,
  type TimeseriesReport,
} from "../../src/metrics/timeline.js";
import { loadWorkload, runPrediction } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { stableStringify } from "../../src/report/json.js";
import { buildPrediction } from "../../src/report/prediction.js";
import { Replay } from "../../src/sim/replay.js";
import type { ScalingPolicy } from "../../src/sim/scaling.js";
import { CONVERSATION_600S } from "../helpers/fixtures.js";
import { ScriptedPolicy } from "../helpers/scriptedPolicy.js";
import { disaggSpec, traceSpec, writeTrace } from "../helpers/specs.js";

async function timeseriesOf(spec: RunSpec, scaling: ScalingPolicy | null = null): Promise<TimeseriesReport> {
  const table = await loadWorkload(spec);
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
    scaling,
  });
  return buildPrediction(spec, replay.runSync(), false).timeseries;
}

describe("hand-computed aggregated run (one worker, max_sequences 1, fixed 30 ms prefill / 40 ms decode)", () => {
  // 40 KV blocks of 4 tokens. Requests run one at a time:
  //   A (8 in, 3 out) arrives 0:   [0,70) prefill + token 1, [70,110) token 2, [110,150) token 3.
  //   B (16 in, 2 out) arrives 20: [150,220) prefill + token 1, [220,260) token 2.
  //   C (4 in, 1 out) arrives 30:  [260,330) prefill + its only token.
  //   D (4 in, 1 out) arrives 250: [330,400) prefill + its only token.
  // The last arrival (250 ms) sets the interval: the smallest nice step ≥ 100 ms → 100 ms.
  const rows = [
    { timestamp: 0, input_length: 8, output_length: 3, hash_ids: [1, 2] },
    { timestamp: 20, input_length: 16, output_length: 2, hash_ids: [3, 4, 5, 6] },
    { timestamp: 30, input_length: 4, output_length: 1, hash_ids: [7] },
    { timestamp: 250, input_length: 4, output_length: 1, hash_ids: [8] },
  ];
  const spec = traceSpec(writeTrace(rows), {
    role: { maxSequences: 1, numGpuBlocks: 40, timing: { type: "fixed", prefillMs: 30, decodeMs: 40 } },
  });

  it("buckets arrivals, completions, tokens and latencies by their times", async () => {
    const ts = await timeseriesOf(spec);
    expect(ts.interval_ms).toBe(100);
    // The run ends at 400 (D's completion): buckets start at 0, 100, …, 400.
    expect(ts.t_ms).toEqual([0, 100, 200, 300, 400]);
    expect(ts.arrivals).toEqual([3, 0, 1, 0, 0]);
    // A at 150, B at 260, C at 330, D at 400 (a completion at a boundary opens the next bucket).
    expect(ts.completions).toEqual([0, 1, 1, 1, 1]);
    expect(ts.output_tokens).toEqual([0, 3, 2, 1, 1]);
    // TTFT by first-token time: A 70 (at 70), B 200 (at 220), C 300 (at 330), D 150 (at 400).
    expect(ts.ttft_ms.p50).toEqual([70, null, 200, 300, 150]);
    expect(ts.ttft_ms.p99).toEqual([70, null, 200, 300, 150]);
    // Mean ITL by completion time: A (150 − 70)/2 = 40, B (260 − 220)/1 = 40; C, D have one token.
    expect(ts.itl_ms.p90).toEqual([null, 40, 40, null, null]);
  });

  it("samples queue depth, running and KV utilization as the state just before each boundary's events", async () => {
    const ts = await timeseriesOf(spec);
    expect(ts.active_workers).toEqual({ aggregated: [1, 1, 1, 1, 1] });
    expect(ts.workers).toHaveLength(1);
    const w = ts.workers[0];
    expect([w.role, w.worker_id]).toEqual(["aggregated", 0]);
    // t=0: nothing arrived yet. t=100: A running (9 tokens → 3 blocks), B and C waiting.
    // t=200: B running (16 prompt tokens → 4 blocks), C waiting; A's blocks are only cached.
    // t=300: C running (1 block), D waiting. t=400 (before D's completion): D running (1 block).
    expect(w.queue_depth).toEqual([0, 2, 1, 1, 0]);
    expect(w.running).toEqual([0, 1, 1, 1, 1]);
    expect(w.kv_utilization).toEqual([0, 3 / 40, 4 / 40, 1 / 40, 1 / 40]);
  });
});

describe("percentiles inside a bucket", () => {
  it("are exact nearest-rank values (rank round((n − 1)·p/100)) of the bucket's requests, rounded to 3 decimals", () => {
    // Five completed requests arriving at 0, first token in bucket 0, completed in bucket 1.
    const ttft = [50.0004, 10, 40, 20, 30];
    const n = ttft.length;
    const columns = {
      arrival: new Float64Array(n).fill(0),
      firstToken: Float64Array.from(ttft),
      lastToken: Float64Array.from(ttft, (x, i) => x + 10 * (i + 1)), // 2 tokens: ITL 10·(i + 1)
      terminal: Float64Array.from(ttft, (x, i) => x + 10 * (i + 1)),
      tokens: new Int32Array(n).fill(2),
      status: new Uint8Array(n).fill(Terminal.Completed),
      admissions: new Int32Array(n).fill(1),
    };
    const samples = { intervalMs: 100, count: 2, pools: [] };
    const ts = buildTimeseries(samples, requestRowsOf(columns, n));
    // Sorted TTFT 10, 20, 30, 40, 50.0004: p50 → rank 2, p90 → round(3.6) = 4, p99 → 4.
    expect([ts.ttft_ms.p50[0], ts.ttft_ms.p90[0], ts.ttft_ms.p99[0]]).toEqual([30, 50, 50]);
    expect(ts.ttft_ms.p50[1]).toBeNull();
    // Completions at 60.0004, 30, 70, 60, 80: bucket 0 holds all five, ITL 10…50.
    expect(ts.completions).toEqual([5, 0]);
    expect([ts.itl_ms.p50[0], ts.itl_ms.p90[0]]).toEqual([30, 50]);
    expect(ts.arrivals).toEqual([5, 0]);
    expect(ts.output_tokens).toEqual([10, 0]);
  });

  it("leave out requests that did not complete (the summary's populations)", () => {
    const columns = {
      arrival: Float64Array.from([0, 0, Number.NaN]),
      firstToken: Float64Array.from([5, 7, Number.NaN]),
      lastToken: Float64Array.from([5, 9, Number.NaN]),
      terminal: Float64Array.from([5, 9, Number.NaN]),
      tokens: Int32Array.from([1, 2, 0]),
      status: Uint8Array.from([Terminal.Completed, Terminal.Rejected, Terminal.None]),
      admissions: Int32Array.from([1, 1, 0]),
    };
    const ts = buildTimeseries({ intervalMs: 100, count: 1, pools: [] }, requestRowsOf(columns, 3));
    expect(ts.arrivals).toEqual([2]); // the third request never arrived
    expect(ts.completions).toEqual([1]);
    expect(ts.ttft_ms.p50).toEqual([5]);
    expect(ts.itl_ms.p50).toEqual([null]);
  });
});

describe("fine and coarse latency buckets from one collection", () => {
  /** Exact nearest-rank percentiles of `values`, rounded as the report rounds them. */
  const exact = (values: number[]): (number | null)[] => {
    if (values.length === 0) return [null, null, null];
    const v = [...values].sort((a, b) => a - b);
    return [50, 90, 99].map((p) => Math.round(v[nearestRank(v.length, p)] * 1000) / 1000);
  };
  it("equal the percentiles of each bucket's own samples, whatever the collection limit", () => {
    let seed = 3;
    const rnd = (): number => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed / 2 ** 32;
    };
    const n = 4000;
    const arrival = Float64Array.from({ length: n }, (_, i) => i * 30 + 20 * rnd());
    const firstToken = Float64Array.from(arrival, (a) => a + 5 + 900 * rnd() ** 3);
    const lastToken = Float64Array.from(firstToken, (f) => f + 3000 * rnd());
    const tokens = Int32Array.from({ length: n }, () => 1 + Math.floor(40 * rnd()));
    const columns = {
      arrival,
      firstToken,
      lastToken,
      terminal: lastToken,
      tokens,
      status: new Uint8Array(n).fill(Terminal.Completed),
      admissions: new Int32Array(n).fill(1),
    };
    const samples = { intervalMs: 200, count: 650, pools: [] };
    const reports = [1_000_000, 37, 1].map((limit) =>
      buildTimeseries(samples, requestRowsOf(columns, n), null, limit),
    );
    for (const r of reports.slice(1)) expect(r).toStrictEqual(reports[0]);
    const ts = reports[0];
    const coarse = ts.latency.interval_ms;
    expect(coarse).toBeGreaterThan(samples.intervalMs); // the test needs both intervals distinct
    const bucket = (t: number, interval: number, count: number) =>
      Math.min(count - 1, Math.floor(t / interval));
    const m = ts.latency.t_ms.length;
    const byFine = Array.from({ length: samples.count }, () => [] as number[]);
    const byCoarse = Array.from({ length: m }, () => [] as number[]);
    for (let i = 0; i < n; i++) {
      const k = bucket(firstToken[i], samples.intervalMs, samples.count);
      byFine[k].push(firstToken[i] - arrival[i]);
      byCoarse[Math.floor((k * samples.intervalMs) / coarse)].push(firstToken[i] - arrival[i]);
    }
    byFine.forEach((v, k) => {
      expect([ts.ttft_ms.p50[k], ts.ttft_ms.p90[k], ts.ttft_ms.p99[k]]).toEqual(exact(v));
    });
    byCoarse.forEach((v, j) => {
      expect([ts.latency.ttft_ms.p50[j], ts.latency.ttft_ms.p90[j], ts.latency.ttft_ms.p99[j]]).toEqual(
        exact(v),
      );
      expect(ts.latency.ttft_samples[j]).toBe(v.length);
    });
  });
});

describe("interval", () => {
  it("is the smallest nice step (1, 2, 5 × 10^k ms, at least 100 ms) giving at most 720 buckets", () => {
    expect(niceIntervalMs(0)).toBe(100);
    expect(niceIntervalMs(72_000)).toBe(100);
    expect(niceIntervalMs(72_001)).toBe(200);
    expect(niceIntervalMs(200_000)).toBe(500);
    expect(niceIntervalMs(3_600_000)).toBe(5000);
    expect(niceIntervalMs(3_600_001)).toBe(10_000);
    expect(niceIntervalMs(86_400_000)).toBe(200_000);
    expect([100, 200, 500, 1000, 2000, 5000].map(coarserFactor)).toEqual([2, 5, 2, 2, 5, 2]);
  });

  it("coarsens to a multiple past the hard cap, keeping the samples at the coarser boundaries", () => {
    const engine = {
      waitingCount: 0,
      inFlightBatchCount: 0,
      inFlightActiveBlocks: 0,
      pool: { capacity: 10 },
    };
    const pool: SampledPool = {
      role: "aggregated",
      ranksPerWorker: 1,
      workerCount: 1,
      readyCount: 1,
      engines: [engine],
      isProvisioned: () => true,
    };
    const sampler = new TimelineSampler([{ pool, extraWaiting: null }], 0);
    // The queue depth equals the boundary index at 100 ms, so decimation is visible.
    for (let k = 0; k < MAX_BUCKETS + 5; k++) {
      engine.waitingCount = k;
      sampler.sampleUntil(k * 100);
    }
    const samples = sampler.finish((MAX_BUCKETS + 4) * 100);
    expect(samples.intervalMs).toBe(200);
    expect(samples.count).toBe(Math.floor(((MAX_BUCKETS + 4) * 100) / 200) + 1);
    const queue = Array.from(samples.pools[0].workers[0].queue);
    expect(queue.slice(0, 4)).toEqual([0, 2, 4, 6]);
    expect(queue.every((q, j) => q === 2 * j)).toBe(true);
  });
});

describe("scaling: workers appear and disappear", () => {
  it("reports null before a worker exists and after its removal; active_workers counts ready workers", async () => {
    // One request at 0 keeps worker 0 busy until 2000 (1000 ms prefill + 1000 ms decode, 2 tokens
    // → 3000). Worker 1 starts at 100, is ready at 300 (200 ms startup), drains at 500 (idle: removed).
    const rows = [{ timestamp: 0, input_length: 4, output_length: 2, hash_ids: [1] }];
    const spec = traceSpec(writeTrace(rows), {
      role: { startupSeconds: 0.2, timing: { type: "fixed", prefillMs: 1000, decodeMs: 1000 } },
    });
    const ts = await timeseriesOf(spec, new ScriptedPolicy(100, { 100: 2, 500: 1 }));
    expect(ts.interval_ms).toBe(100);
    expect(ts.t_ms).toHaveLength(31); // 0 … 3000
    // Boundary samples precede the events at their time: at 300 worker 1 is still starting.
    expect(ts.active_workers.aggregated!.slice(0, 8)).toEqual([1, 1, 1, 1, 2, 2, 1, 1]);
    expect(ts.workers.map((w) => w.worker_id)).toEqual([0, 1]);
    const w1 = ts.workers[1];
    expect(w1.queue_depth.slice(0, 8)).toEqual([null, null, 0, 0, 0, 0, null, null]);
    expect(w1.kv_utilization.slice(0, 8)).toEqual([null, null, 0, 0, 0, 0, null, null]);
    expect(w1.queue_depth.slice(6).every((x) => x === null)).toBe(true);
    const w0 = ts.workers[0];
    expect(w0.running.slice(1, 30).every((x) => x === 1)).toBe(true);
    expect(w0.kv_utilization[5]).toBe(kv(1 / 64));
    expect(ts.completions[30]).toBe(1);
  });

  it("with the real Planner (seed walkthrough, first 600 s, 3 workers): a removed and an added worker; two runs are identical", async () => {
    // Three workers on a 3-GPU budget: the Planner drains one at 110 s and adds one at 120 s. (With
    // the seed's two it holds both all along, as the reference does: docs/planner.md "Perf model".)
    const spec = () =>
      loadConfig({
        configPath: "examples/seed-aggregated.yaml",
        sets: [
          `traffic.source.paths=[${CONVERSATION_600S}]`,
          "traffic.stop.max_virtual_time_seconds=600",
          "engine.workers.aggregated.parallelism.replicas=3",
          "planner.max_num_gpus=3",
        ],
        stack: "dynamo",
      });
    const first = await runPrediction(spec(), { capturePerRequest: false });
    const second = await runPrediction(spec(), { capturePerRequest: false });
    const ts = first.prediction.timeseries;
    expect(stableStringify(second.prediction.timeseries)).toBe(stableStringify(ts));
    // Horizon = the 600 s cap → 1000 ms buckets.
    expect(ts.interval_ms).toBe(1000);
    expect(ts.t_ms).toHaveLength(Math.floor(first.result.endTimeMs / 1000) + 1);
    const summary = first.prediction.summary;
    expect(sum(ts.arrivals)).toBe(summary.num_requests);
    expect(sum(ts.completions)).toBe(summary.completed_requests);
    expect(sum(ts.output_tokens)).toBe(summary.total_output_tokens);
    // Removed workers read null from the first boundary after their removal on; workers added by
    // the Planner (ids from 3: the run starts with three) read null before they existed.
    const removed = first.result.lifecycleOperations
      .flatMap((o) => o.transitions)
      .filter((x) => x.transition === "worker_removed");
    expect(removed.length).toBeGreaterThan(0);
    for (const r of removed) {
      const series = ts.workers.find((w) => w.worker_id === r.worker_id)!.queue_depth;
      expect(series[Math.floor(r.at_ms / 1000) + 1]).toBeNull();
      expect(series.at(-1)).toBeNull();
    }
    const added = ts.workers.filter((w) => w.worker_id >= 3);
    expect(added.length).toBeGreaterThan(0);
    for (const w of added) {
      expect(w.queue_depth[0]).toBeNull();
      expect(w.queue_depth.some((x) => x !== null)).toBe(true);
    }
    expect(new Set(ts.active_workers.aggregated).size).toBeGreaterThan(1);
  });
});

describe("disaggregated run", () => {
  it("samples prefill and decode workers: held KV on the prefill side, reserved KV and waiting hand-offs on the decode side", async () => {
    // Fixed 150 ms prefill, 100 ms decode; KV transfer 8 tokens × 1 MB at 0.08 GB/s = 100 ms.
    // Prefill takes one request at a time; the decode worker one sequence (reserved or running).
    //   A (8 in, 2 out) at 0: prefill [0,150), transfer [150,250), decode [250,350), [350,450).
    //   B (8 in, 1 out) at 0: prefill [150,300); its hand-off waits for decode capacity until A
    //   ends at 450, then transfer [450,550), decode [550,650).
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 2, hash_ids: [1, 2] },
      { timestamp: 0, input_length: 8, output_length: 1, hash_ids: [3, 4] },
    ];
    const timing = { type: "fixed", prefillMs: 150, decodeMs: 100 } as const;
    const spec = disaggSpec(writeTrace(rows), {
      prefill: { timing },
      decode: { timing, maxSequences: 1 },
      transfer: { bandwidthGBps: 0.08 },
    });
    const ts = await timeseriesOf(spec);
    expect(ts.interval_ms).toBe(100);
    expect(ts.active_workers).toEqual({
      prefill: ts.t_ms.map(() => 1),
      decode: ts.t_ms.map(() => 1),
    });
    expect(ts.workers.map((w) => [w.role, w.worker_id])).toEqual([
      ["prefill", 0],
      ["decode", 0],
    ]);
    expect(ts.t_ms).toEqual([0, 100, 200, 300, 400, 500, 600]);
    const [prefill, decode] = ts.workers;
    const blocks = (xs: number[]): number[] => xs.map((b) => kv(b / 64));
    // Prefill: t=100 A in its pass (2 blocks of 64), B waiting; t=200 B in its pass, A's KV held
    // for the transfer; t=300 B's pass still in flight (it ends at 300), and A's KV with it: A was
    // activated at 250, during that pass, so its source copy is freed at the pass end (the
    // reference's deferred ReleaseSource); t=400, 500 B's KV held (waiting for decode capacity,
    // then in transfer); released at 550.
    expect(prefill.queue_depth).toEqual([0, 1, 0, 0, 0, 0, 0]);
    expect(prefill.running).toEqual([0, 1, 1, 1, 0, 0, 0]);
    expect(prefill.kv_utilization).toEqual(blocks([0, 2, 4, 4, 2, 2, 0]));
    // Decode: t=200 A's 2 blocks reserved (in transfer); t=300 A's first decode pass; t=400 its
    // second (9 tokens → 3 blocks) while B's hand-off waits for a reservation (queued here);
    // t=500 B's 2 blocks reserved (A's are only cached now); t=600 B's decode pass.
    expect(decode.queue_depth).toEqual([0, 0, 0, 0, 1, 0, 0]);
    expect(decode.running).toEqual([0, 0, 0, 1, 1, 0, 1]);
    expect(decode.kv_utilization).toEqual(blocks([0, 0, 2, 2, 3, 2, 2]));
    expect(ts.completions).toEqual([0, 0, 0, 0, 1, 0, 1]);
  });
});

/** KV utilization as reported: rounded to 4 decimals. */
function kv(fraction: number): number {
  return Math.round(fraction * 10_000) / 10_000;
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
