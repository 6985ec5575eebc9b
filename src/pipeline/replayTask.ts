/**
 * The replay sweep task: one retune candidate replay per job, through the same pipeline as
 * `runPrediction` (`simulate`), on the sweep's shared request table (a retune window's, built once
 * by the parent) or the spec's own workload, whole or a subset of its rows, returning the
 * prediction summary.
 *
 * The spec travels as data: a RunSpec is plain objects all the way down (the resolved model and
 * GPU included), which the sweep checks before sending. A worker keeps the workloads it loaded and
 * the timing models it built between jobs (replayCaches.ts): a sweep's candidates usually share
 * both, and a pool's worker keeps them across sweeps.
 */

import type { CandidateJob, ReplayJobOutput } from "../autoscale/candidateReplays.js";
import { engineBlockSize } from "../config/blockSize.js";
import { fleetFactsOfPrediction } from "../report/fleet.js";
import type { RequestTable } from "../traffic/requests.js";
import { selectRows } from "../traffic/tableRows.js";
import { ReplayCaches } from "./replayCaches.js";
import { simulate } from "./simulate.js";
import { hasSpec } from "./taskInput.js";
import { createRoleTimings } from "./timings.js";
import { loadWorkload } from "./workload.js";

export type { ReplayJobOutput } from "../autoscale/candidateReplays.js";

/** One replay: a candidate, optionally on a subset of its workload's rows. */
export interface ReplayJob extends CandidateJob {
  /** Strictly increasing request rows to replay (traffic/tableRows.ts); absent = every row. */
  readonly rows?: readonly number[];
}

/** What every job of a sweep replays instead of its spec's workload (`SweepOptions.shared`). */
export interface ReplayShared {
  /** Hashed for the jobs' engine block size; the replay never writes to it. */
  readonly table: RequestTable;
}

export async function run(job: ReplayJob, shared: ReplayShared | undefined): Promise<ReplayJobOutput> {
  if (!hasSpec(job)) {
    throw new TypeError(
      "replay task: the input must be {spec: RunSpec, rows?: number[], capturePerRequest: false}",
    );
  }
  const s: unknown = shared;
  if (
    s !== undefined &&
    (typeof s !== "object" ||
      s === null ||
      !("table" in s) ||
      typeof s.table !== "object" ||
      s.table === null ||
      !("count" in s.table) ||
      typeof s.table.count !== "number")
  ) {
    throw new TypeError("replay task: the sweep's shared input must be {table: RequestTable}");
  }
  return replayJob(job, shared);
}

/** This worker's caches, kept for every job it runs. */
const WORKER_CACHES = new ReplayCaches();

/**
 * The task body, also callable in-process (same result as in a worker). `caches: null` loads the
 * workload and builds the timing models afresh for this job alone.
 */
export async function replayJob(
  job: ReplayJob,
  shared?: ReplayShared,
  caches: ReplayCaches | null = WORKER_CACHES,
): Promise<ReplayJobOutput> {
  const { spec } = job;
  if (spec.planner?.retune !== undefined && spec.planner.retune !== null) {
    // A sweep replay is itself a retune candidate; nesting retune in it is never meant.
    throw new Error("replay task: planner.retune must be absent in a sweep replay");
  }
  const whole = shared?.table ?? (await (caches?.workload(spec) ?? loadWorkload(spec)));
  if (whole.engineBlockSize !== engineBlockSize(spec.engine)) {
    throw new Error(
      `replay task: the shared request table is hashed for ${whole.engineBlockSize}-token blocks, ` +
        `the spec's engine uses ${engineBlockSize(spec.engine)}`,
    );
  }
  const table =
    job.rows === undefined ? whole : selectRows(whole, job.rows, spec.load.type !== "concurrency");
  const timings = await (caches?.roleTimings(spec.engine) ?? createRoleTimings(spec.engine));
  // With `spec.planner` set the replay runs that Planner (a retune candidate with scaling on).
  const { prediction } = await simulate(spec, table, timings, {
    capturePerRequest: false,
    plannerWarmup: job.plannerWarmup ?? null,
  });
  const fleet = fleetFactsOfPrediction(prediction);
  return { summary: prediction.summary, provisionedGpus: { peak: fleet.peakGpus, mean: fleet.meanGpus } };
}
