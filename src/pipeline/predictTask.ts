/**
 * The predict sweep task: one whole `fleetsim predict` run per job — `runPrediction`, the path
 * `predict` takes (retune included) — returning the prediction document (no per-request records)
 * and the warnings the run printed. A sweep point (`fleetsim sweep run`, docs/sweep.md) is one
 * such job, so a point's result is what `predict` of its config writes, host-time keys aside.
 */
import type { RunSpec } from "../config/runSpec.js";
import type { Prediction } from "../report/prediction.js";
import { runPrediction } from "./run.js";
import { hasSpec } from "./taskInput.js";

export interface PredictJob {
  readonly spec: RunSpec;
}

export interface PredictJobOutput {
  readonly prediction: Prediction;
  /** The `fleetsim: warning:` lines predict would print, without the prefix, in order. */
  readonly warnings: readonly string[];
}

export async function run(job: PredictJob): Promise<PredictJobOutput> {
  if (!hasSpec(job)) {
    throw new TypeError("predict task: the input must be {spec: RunSpec}");
  }
  return predictJob(job);
}

/** The task body, also callable in-process (same result as in a worker). */
export async function predictJob(job: PredictJob): Promise<PredictJobOutput> {
  const warnings: string[] = [];
  const { prediction } = await runPrediction(
    job.spec,
    { capturePerRequest: false },
    { warn: (line) => warnings.push(line) },
  );
  return { prediction, warnings };
}
