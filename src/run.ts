import type { RunSpec } from "./config/runSpec.js";
import { buildPrediction, type Prediction } from "./report/prediction.js";
import { createPlanner } from "./sim/plannerSetup.js";
import { Replay, type ReplayResult } from "./sim/replay.js";
import { createRoleTimings } from "./timing/index.js";
import {
  buildDynamoTable,
  type DynamoRequests,
  isAgentic,
  readDynamoRequests,
} from "./traffic/dynamoTrace.js";
import { loadMooncakeTrace } from "./traffic/mooncake.js";
import type { RequestTable } from "./traffic/requests.js";
import { makeSyntheticTable } from "./traffic/synthetic.js";
import { TraceError } from "./traffic/traceError.js";

/** Builds the request table a run spec describes (trace file or synthetic generator). */
export async function loadWorkload(spec: RunSpec): Promise<RequestTable> {
  // Both roles of a disaggregated deployment share one block size (config rule).
  const engine = spec.engine;
  const engineBlockSize =
    engine.mode === "aggregated" ? engine.aggregated.blockSize : engine.prefill.blockSize;
  const source = spec.source;
  if (source.type === "trace" && source.format === "dynamo") {
    const requests = await readDynamoRequests(source.paths, { expectedBlockSize: source.blockSize });
    checkDynamoLoad(requests, spec);
    return buildDynamoTable(requests, { engineBlockSize });
  }
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

/**
 * An agentic Dynamo trace (agent_context on every request) replays only on its timestamps and
 * runs to its end (aisimulate.md §2.1: concurrency and max_virtual_time are for standard traces).
 * Known only once the trace is read, hence here rather than in config validation.
 */
function checkDynamoLoad(requests: DynamoRequests, spec: RunSpec): void {
  if (!isAgentic(requests)) return;
  const why =
    spec.load.type !== "trace_timestamps"
      ? `traffic.load.type='${spec.load.type}'; use 'trace_timestamps'`
      : spec.stop.maxVirtualTimeMs !== null
        ? "traffic.stop.max_virtual_time_seconds; remove it"
        : null;
  if (why !== null) {
    throw new TraceError(
      requests.files[0],
      0,
      `an agentic Dynamo trace (agent_context on every request) does not support ${why}`,
    );
  }
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
/** A valid config asks for something fleetsim cannot simulate yet (a user-facing refusal, exit 2). */
export class NotImplementedError extends Error {}

export async function runPrediction(
  spec: RunSpec,
  opts: { capturePerRequest: boolean },
  hooks: RunHooks = {},
): Promise<RunOutcome> {
  if (spec.planner?.retune !== undefined && spec.planner.retune !== null) {
    // The config is validated (docs/retune.md is the spec), but the controller does not exist yet:
    // refuse rather than silently replay without retune.
    throw new NotImplementedError(
      "planner.retune: the retune controller is not implemented in fleetsim yet (the configuration is valid; " +
        "see docs/retune.md). Remove planner.retune to replay without it.",
    );
  }
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
