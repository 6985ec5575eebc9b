/**
 * Retune's candidate replays in the run's worker pool (src/pipeline/candidateReplays.ts): the
 * window's request table built once in the parent, timing models kept by the workers. The decisions
 * and the whole prediction must not depend on it: `max_parallel` 1 and 2, and the uncached path
 * (each candidate reading the trace and building its timing models afresh, as sweep workers did
 * before the pool) give the same prediction.json, host-time keys apart.
 */
import { describe, expect, it } from "vitest";
import type { RunSpec } from "../../src/config/runSpec.js";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { runPrediction } from "../../src/pipeline/index.js";
import { replayJob } from "../../src/pipeline/replayTask.js";
import { simulate } from "../../src/pipeline/simulate.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { loadRetuneWorkload } from "../../src/pipeline/workload.js";
import type { Prediction } from "../../src/report/prediction.js";
import type { CandidateReplays } from "../../src/sim/candidateReplays.js";
import { loadYaml } from "../helpers/configHelpers.js";
import { dynamoTrace } from "../helpers/dynamoTraces.js";

/** Scenario 1 in small, on the op-level timing model (the one whose tables the workers keep). */
const CONFIG = `traffic:
  source: {type: trace, format: dynamo, paths: [trace.jsonl]}
  load: {type: trace_timestamps}
engine:
  model: nvidia/Llama-3.1-8B-Instruct-FP8
  hardware: h200_sxm
  workers:
    aggregated:
      parallelism: {replicas: 3, tensor: 1}
      kv_cache: {capacity: {type: fixed, blocks: 1000}}
      timing: {type: default}
router: {policy: kv_router, temperature: 0.0}
planner:
  policy: enabled
  enable_load_scaling: false
  enable_throughput_scaling: false
  retune:
    interval_seconds: 30
    grace_seconds: 5
    max_parallel: 1
    objective: TTFT
    min_improvement_percentage: 0
    router:
      overlap_score_credit: {choices: [0.0, 1.0]}
      prefill_load_scale: {choices: [0.0, 1.0, 4.0]}
      temperature: {choices: [0.0, 1.0]}
evaluation:
  sla: {ttft_ms: 1500, itl_ms: 50}
`;

function spec(maxParallel: number): RunSpec {
  return loadYaml(CONFIG, {
    files: { "trace.jsonl": dynamoTrace(110, 60) },
    sets: [`planner.retune.max_parallel=${maxParallel}`],
  });
}

/** The document without what measures the host, and without the `max_parallel` it echoes. */
function simulated(p: Prediction): unknown {
  const doc = JSON.parse(JSON.stringify(p)) as {
    summary: Record<string, unknown>;
    run: { planner: { retune: Record<string, unknown> } };
    planner: { retune_events: Record<string, unknown>[] };
  };
  for (const k of HOST_TIME_KEYS) delete doc.summary[k];
  for (const e of doc.planner.retune_events) delete e["sweep_wall_s"];
  delete doc.run.planner.retune["max_parallel"];
  return doc;
}

/** Every candidate in this process, its workload read from the trace and its timing built afresh. */
const uncachedReplays: CandidateReplays = async ({ rows, jobs }) => {
  const t0 = performance.now();
  const results = [];
  for (const job of jobs) {
    results.push({ status: "ok" as const, value: await replayJob({ ...job, rows }, undefined, null) });
  }
  return {
    results,
    processesStarted: 0,
    pids: [],
    timedOut: false,
    wallMs: performance.now() - t0,
    sharedBytes: 0,
  };
};

describe("retune candidate replays in the run's worker pool", () => {
  it("decide as max_parallel 1, max_parallel 2 and the uncached path do", async () => {
    const one = await runPrediction(spec(1), { capturePerRequest: false });
    const two = await runPrediction(spec(2), { capturePerRequest: false });
    const s = spec(1);
    const { table, requests } = await loadRetuneWorkload(s, undefined);
    const uncached = await simulate(s, table, await createRoleTimings(s.engine), {
      capturePerRequest: false,
      retune: { requests, replays: uncachedReplays },
    });

    const events = one.prediction.planner?.retune_events ?? [];
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.some((e) => e.outcome === "applied")).toBe(true);
    expect(events.every((e) => e.failed_candidates.length === 0)).toBe(true);
    expect(simulated(two.prediction)).toStrictEqual(simulated(one.prediction));
    expect(simulated(uncached.prediction)).toStrictEqual(simulated(one.prediction));

    // The pool: started once for the run, max_parallel processes, each sent the window's table.
    expect(one.retuneSweeps?.map((x) => [x.workers, x.processesStarted])).toEqual(
      events.map((_, i) => [1, i === 0 ? 1 : 0]),
    );
    expect(two.retuneSweeps?.map((x) => x.workers)).toEqual(events.map(() => 2));
    expect(two.retuneSweeps?.reduce((n, x) => n + x.processesStarted, 0)).toBe(2);
    for (const x of one.retuneSweeps ?? []) expect(x.tableBytes).toBeGreaterThan(0);
  }, 120_000);
});
