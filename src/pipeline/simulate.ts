/**
 * The pipeline's last steps, shared by every run (the CLI and library `runPrediction`, and each
 * retune candidate in a sweep worker): policy (the Planner, when configured) → replay → the
 * prediction document.
 */

import type { CandidateReplays } from "../autoscale/candidateReplays.js";
import type { PlannerReplayAdapter } from "../autoscale/plannerAdapter.js";
import { createPlanner, type PlannerMessages } from "../autoscale/plannerSetup.js";
import type { RunSpec } from "../config/runSpec.js";
import type { WarmupWindow } from "../planner/predictors/series.js";
import { buildPrediction, type Prediction } from "../report/prediction.js";
import { Replay, type ReplayResult } from "../sim/replay.js";
import type { RoleTimings } from "../timing/index.js";
import type { DynamoRequests } from "../traffic/dynamo/index.js";
import type { RequestSource } from "../traffic/requestSource.js";
import type { RequestTable } from "../traffic/requests.js";

export interface SimulateOptions {
  readonly capturePerRequest: boolean;
  /** With `planner.retune`: the replayed Dynamo trace's requests and how candidates are replayed. */
  readonly retune?: {
    readonly requests: DynamoRequests;
    readonly replays: CandidateReplays;
    readonly log?: (line: string) => void;
  } | null;
  /** Predictor warm-up windows instead of `load_predictor_warmup_trace` (a retune candidate). */
  readonly plannerWarmup?: readonly WarmupWindow[] | null;
  /** The Planner's start-up messages. */
  readonly messages?: PlannerMessages;
  /** Receives the replay and its Planner before the replay starts. */
  onStart?(replay: Replay, planner: PlannerReplayAdapter | null): void;
  /** Receives the replay's result before its report is built. */
  onReplayEnd?(result: ReplayResult): void;
}

export interface Simulation {
  readonly prediction: Prediction;
  readonly result: ReplayResult;
  readonly planner: PlannerReplayAdapter | null;
}

/** Replays the workload under the spec's Planner (if any) and builds the prediction document. */
export async function simulate(
  spec: RunSpec,
  table: RequestTable | RequestSource,
  timings: RoleTimings,
  opts: SimulateOptions,
): Promise<Simulation> {
  const planner = await createPlanner(
    spec,
    timings,
    opts.retune ?? null,
    opts.plannerWarmup ?? null,
    opts.messages,
  );
  const replay = new Replay(spec, table, timings, {
    capturePerRequest: opts.capturePerRequest,
    scaling: planner,
  });
  opts.onStart?.(replay, planner);
  const result = await replay.run();
  try {
    opts.onReplayEnd?.(result);
    const plannerReport = planner === null ? null : planner.report(result.lifecycleOperations);
    const prediction = buildPrediction(spec, result, opts.capturePerRequest, plannerReport);
    return { prediction, result, planner };
  } finally {
    // The log's spill file (a long run's) is not needed once the report is built.
    result.requests.close();
  }
}
