/**
 * The replay task: one simulation run per job, as `runPrediction` does it (src/run.ts), on the
 * whole workload or on a subset of its request rows, returning the prediction summary.
 *
 * The spec travels as data: a RunSpec is plain objects all the way down (the resolved model and
 * GPU included), which `runSweep` checks before sending. The workload is loaded once per worker
 * and reused while jobs name the same one (a sweep's candidates usually share their trace).
 */
import type { RunSpec } from "../../config/runSpec.js";
import type { Summary } from "../../metrics/summary.js";
import type { WarmupWindow } from "../../planner/predictors/series.js";
import { buildPrediction } from "../../report/prediction.js";
import { loadWorkload } from "../../run.js";
import { createPlanner } from "../../sim/plannerSetup.js";
import { Replay } from "../../sim/replay.js";
import { createRoleTimings } from "../../timing/index.js";
import type { RequestTable } from "../../traffic/requests.js";
import { selectRows } from "../tableRows.js";

export interface ReplayJob {
  readonly spec: RunSpec;
  /** Strictly increasing request rows to replay (see tableRows.ts); absent = every row. */
  readonly rows?: readonly number[];
  /** Per-request records are never shipped back: a sweep scores summaries. */
  readonly capturePerRequest: false;
  /**
   * With `spec.planner` scaling on throughput: the inner Planner's predictor warm-up (a retune
   * candidate's history buckets, docs/retune.md §5), used instead of `load_predictor_warmup_trace`.
   */
  readonly plannerWarmup?: readonly WarmupWindow[];
}

export interface ReplayJobOutput {
  readonly summary: Summary;
}

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
  const planner = await createPlanner(spec, timings, null, job.plannerWarmup ?? null);
  const replay = new Replay(spec, table, timings, { capturePerRequest: false, scaling: planner });
  const result = await replay.run();
  const plannerReport = planner === null ? null : planner.report(result.lifecycleOperations);
  return { summary: buildPrediction(spec, result, false, plannerReport).summary };
}

let cached: { key: string; table: Promise<RequestTable> } | null = null;

/** The replay never writes to its table, so one loaded table serves every job that shares it. */
function workload(spec: RunSpec): Promise<RequestTable> {
  // Everything loadWorkload reads: the source, the load (timestamps required, synthetic arrivals),
  // the request count and the engine block size the hashes are computed for.
  const engine = spec.engine;
  const blockSize = engine.mode === "aggregated" ? engine.aggregated.blockSize : engine.prefill.blockSize;
  const key = JSON.stringify([spec.source, spec.load, spec.stop.requests, blockSize]);
  if (cached === null || cached.key !== key) {
    const table = loadWorkload(spec);
    table.catch(() => {
      if (cached?.table === table) cached = null; // do not keep a failure
    });
    cached = { key, table };
  }
  return cached.table;
}
