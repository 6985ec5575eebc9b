import type { RunSpec } from "./config/runSpec.js";
import { buildPrediction, type Prediction } from "./report/prediction.js";
import { createPlanner } from "./sim/plannerSetup.js";
import { Replay, type ReplayResult } from "./sim/replay.js";
import { createRoleTimings } from "./timing/index.js";
import { loadMooncakeTrace } from "./traffic/mooncake.js";
import type { RequestTable } from "./traffic/requests.js";
import { makeSyntheticTable } from "./traffic/synthetic.js";

/** Builds the request table a run spec describes (trace file or synthetic generator). */
export async function loadWorkload(spec: RunSpec): Promise<RequestTable> {
  // Both roles of a disaggregated deployment share one block size (config rule).
  const engine = spec.engine;
  const engineBlockSize =
    engine.mode === "aggregated" ? engine.aggregated.blockSize : engine.prefill.blockSize;
  const source = spec.source;
  if (source.type === "trace") {
    return loadMooncakeTrace(source.path, {
      traceBlockSize: source.blockSize,
      engineBlockSize,
      requireTimestamps: spec.load.type === "trace_timestamps",
    });
  }
  const load = spec.load;
  if (load.type === "trace_timestamps") throw new Error("internal: trace_timestamps with a synthetic source");
  return makeSyntheticTable({
    inputTokens: source.inputTokens,
    outputTokens: source.outputTokens,
    requests: spec.stop.requests ?? 0,
    engineBlockSize,
    arrivals: load,
  });
}

export interface RunOutcome {
  readonly prediction: Prediction;
  readonly result: ReplayResult;
}

export interface RunHooks {
  /** Receives the replay before it starts (to abort it on Ctrl-C, or show progress). */
  onStart?(replay: Replay): void;
}

/** Loads the workload, replays it and builds the prediction document. */
export async function runPrediction(
  spec: RunSpec,
  opts: { capturePerRequest: boolean },
  hooks: RunHooks = {},
): Promise<RunOutcome> {
  const [table, timings] = await Promise.all([loadWorkload(spec), createRoleTimings(spec.engine)]);
  const planner = await createPlanner(spec, timings);
  const replay = new Replay(spec, table, timings, {
    capturePerRequest: opts.capturePerRequest,
    scaling: planner,
  });
  hooks.onStart?.(replay);
  const result = await replay.run();
  const plannerReport = planner === null ? null : planner.report(result.lifecycleOperations);
  return { prediction: buildPrediction(spec, result, opts.capturePerRequest, plannerReport), result };
}
