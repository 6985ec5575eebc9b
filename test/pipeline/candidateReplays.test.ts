/**
 * Retune's candidate replays in the run's worker pool (src/pipeline/candidateReplays.ts): the
 * window's request table built once in the parent, timing models kept by the workers. The decisions
 * and the whole prediction must not depend on it: `max_parallel` 1 and 2, the inline executor
 * (`predict --executor inline`), and the uncached path
 * (each candidate reading the trace and building its timing models afresh, as sweep workers did
 * before the pool) give the same prediction.json, host-time keys apart.
 */
import { describe, expect, it } from "vitest";
import type { CandidateReplays } from "../../src/autoscale/candidateReplays.js";
import type { RunSpec } from "../../src/config/runSpec.js";
import { runPrediction } from "../../src/pipeline/index.js";
import { replayJob } from "../../src/pipeline/replayTask.js";
import { simulate } from "../../src/pipeline/simulate.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { loadRetuneWorkload } from "../../src/pipeline/workload.js";
import { loadYaml } from "../helpers/configHelpers.js";
import { RETUNE_CONFIG, retuneSimulated, retuneTrace } from "../helpers/retuneProject.js";

function spec(maxParallel: number): RunSpec {
  return loadYaml(RETUNE_CONFIG, {
    files: { "trace.jsonl": retuneTrace() },
    sets: [`planner.retune.max_parallel=${maxParallel}`],
  });
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
    // `predict --executor inline`: every window's candidates in this process, one after another.
    const inline = await runPrediction(spec(1), { capturePerRequest: false, executor: { kind: "inline" } });
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
    expect(retuneSimulated(two.prediction)).toStrictEqual(retuneSimulated(one.prediction));
    expect(retuneSimulated(uncached.prediction)).toStrictEqual(retuneSimulated(one.prediction));
    expect(retuneSimulated(inline.prediction)).toStrictEqual(retuneSimulated(one.prediction));
    expect(inline.retuneSweeps?.map((x) => x.processesStarted)).toEqual(events.map(() => 0));

    // The pool: started once for the run, max_parallel processes, each sent the window's table.
    expect(one.retuneSweeps?.map((x) => [x.workers, x.processesStarted])).toEqual(
      events.map((_, i) => [1, i === 0 ? 1 : 0]),
    );
    expect(two.retuneSweeps?.map((x) => x.workers)).toEqual(events.map(() => 2));
    expect(two.retuneSweeps?.reduce((n, x) => n + x.processesStarted, 0)).toBe(2);
    for (const x of one.retuneSweeps ?? []) expect(x.tableBytes).toBeGreaterThan(0);
  }, 120_000);
});
