/**
 * The replay sweep task: one retune candidate replay per job, through the same pipeline as
 * `runPrediction` (`simulate`), on the whole workload or on a subset of its request rows,
 * returning the prediction summary.
 *
 * The spec travels as data: a RunSpec is plain objects all the way down (the resolved model and
 * GPU included), which the sweep checks before sending. The workload is loaded once per worker
 * and reused while jobs name the same one (a sweep's candidates usually share their trace).
 */
import { engineBlockSize } from "../config/blockSize.js";
import type { RunSpec } from "../config/runSpec.js";
import type { ReplayJob, ReplayJobOutput } from "../sim/candidateReplays.js";
import type { RequestTable } from "../traffic/requests.js";
import { selectRows } from "../traffic/tableRows.js";
import { simulate } from "./simulate.js";
import { createRoleTimings } from "./timings.js";
import { loadWorkload } from "./workload.js";

export type { ReplayJob, ReplayJobOutput } from "../sim/candidateReplays.js";

export async function run(job: ReplayJob): Promise<ReplayJobOutput> {
  // The worker has only the parent's word for the input's type: fail with a clear message.
  const j: unknown = job;
  if (
    typeof j !== "object" ||
    j === null ||
    !("spec" in j) ||
    typeof j.spec !== "object" ||
    j.spec === null
  ) {
    throw new TypeError(
      "replay task: the input must be {spec: RunSpec, rows?: number[], capturePerRequest: false}",
    );
  }
  return replayJob(job);
}

/** The task body, also callable in-process (same result as in a worker). */
export async function replayJob(job: ReplayJob): Promise<ReplayJobOutput> {
  const { spec } = job;
  if (spec.planner?.retune !== undefined && spec.planner.retune !== null) {
    // A sweep replay is itself a retune candidate; nesting retune in it is never meant.
    throw new Error("replay task: planner.retune must be absent in a sweep replay");
  }
  const whole = await workload(spec);
  const table =
    job.rows === undefined ? whole : selectRows(whole, job.rows, spec.load.type !== "concurrency");
  const timings = await createRoleTimings(spec.engine);
  // With `spec.planner` set the replay runs that Planner (a retune candidate with scaling on).
  const { prediction } = await simulate(spec, table, timings, {
    capturePerRequest: false,
    plannerWarmup: job.plannerWarmup ?? null,
  });
  return { summary: prediction.summary };
}

let cached: { key: string; table: Promise<RequestTable> } | null = null;

/** The replay never writes to its table, so one loaded table serves every job that shares it. */
function workload(spec: RunSpec): Promise<RequestTable> {
  // Everything loadWorkload reads: the source, the load (timestamps required, synthetic arrivals),
  // the request count and the engine block size the hashes are computed for.
  const key = JSON.stringify([spec.source, spec.load, spec.stop.requests, engineBlockSize(spec.engine)]);
  if (cached === null || cached.key !== key) {
    const table = loadWorkload(spec);
    table.catch(() => {
      if (cached?.table === table) cached = null; // do not keep a failure
    });
    cached = { key, table };
  }
  return cached.table;
}
