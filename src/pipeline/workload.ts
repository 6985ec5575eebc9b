/**
 * Pipeline step "workload": the request table a run spec describes (a trace of one of the
 * formats of docs/traces.md, or a synthetic generator), hashed for the deployment's engine block
 * size.
 */
import { engineBlockSize } from "../config/blockSize.js";
import type { RunSpec } from "../config/runSpec.js";
import { loadAgenticMooncakeTrace } from "../traffic/agenticMooncake.js";
import { loadAppliedComputeAgenticTrace } from "../traffic/appliedComputeAgentic.js";
import {
  buildDynamoTable,
  type DynamoRequests,
  isAgentic,
  readDynamoRequests,
} from "../traffic/dynamo/index.js";
import { loadMooncakeDeltaTrace } from "../traffic/mooncake/delta.js";
import { loadMooncakeTrace } from "../traffic/mooncake/index.js";
import { openMooncakeStream } from "../traffic/mooncake/stream.js";
import type { RequestSource } from "../traffic/requestSource.js";
import type { RequestTable } from "../traffic/requests.js";
import { makeSyntheticWorkload } from "../traffic/synthetic/workload.js";
import { TableSource } from "../traffic/tableSource.js";
import { TraceError } from "../traffic/traceError.js";
import { loadWekaTrace } from "../traffic/weka.js";

/**
 * Builds the request table a run spec describes (trace file or synthetic generator). `warn`
 * receives what the trace reader dropped (Dynamo `request_end` rows without `output_tokens`).
 */
export async function loadWorkload(spec: RunSpec, warn?: (line: string) => void): Promise<RequestTable> {
  const blockSize = engineBlockSize(spec.engine);
  const source = spec.source;
  if (source.type === "trace" && source.format === "dynamo") {
    const requests = await readDynamoRequests(source.paths, { expectedBlockSize: source.blockSize });
    warnDropped(requests, warn);
    checkDynamoLoad(requests, spec);
    return buildDynamoTable(requests, { engineBlockSize: blockSize });
  }
  if (source.type === "trace" && source.format === "weka") {
    return loadWekaTrace(source.path, {
      traceBlockSize: source.blockSize,
      engineBlockSize: blockSize,
      nestedTimestampBasis: source.nestedTimestampBasis,
    });
  }
  if (source.type === "trace") {
    const opts = {
      traceBlockSize: source.blockSize,
      engineBlockSize: blockSize,
      requireTimestamps: spec.load.type === "trace_timestamps",
    };
    switch (source.format) {
      case "mooncake":
        return loadMooncakeTrace(source.path, opts);
      case "mooncake-delta":
        return loadMooncakeDeltaTrace(source.path, opts);
      case "agentic_mooncake":
        return loadAgenticMooncakeTrace(source.path, opts);
      case "applied_compute_agentic":
        return loadAppliedComputeAgenticTrace(source.path, opts);
    }
  }
  return makeSyntheticWorkload(source, spec.load, spec.stop, blockSize);
}

/**
 * The workload of a replay as it reads it: a streamed Mooncake trace when the trace allows it
 * (traffic/mooncake/stream.ts), else the whole table (`loadWorkload`).
 */
export async function openWorkload(spec: RunSpec, warn?: (line: string) => void): Promise<RequestSource> {
  const source = spec.source;
  if (source.type === "trace" && source.format === "mooncake" && spec.load.type === "trace_timestamps") {
    const stream = await openMooncakeStream(source.path, {
      traceBlockSize: source.blockSize,
      engineBlockSize: engineBlockSize(spec.engine),
      speedup: spec.load.speedup,
    });
    if (stream !== null) return stream;
  }
  return new TableSource(await loadWorkload(spec, warn));
}

/** Says how many `request_end` rows without `output_tokens` the reader dropped (none: nothing). */
function warnDropped(requests: DynamoRequests, warn: ((line: string) => void) | undefined): void {
  const n = requests.droppedStartMs.length;
  if (n === 0 || warn === undefined) return;
  warn(
    `${requests.files.join(", ")}: dropped ${n} request_end row${n === 1 ? "" : "s"} without output_tokens ` +
      `(${requests.count} request${requests.count === 1 ? "" : "s"} kept)`,
  );
}

/**
 * An agentic Dynamo trace (agent_context on every request) replays only on its timestamps and
 * runs to its end (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`: concurrency and max_virtual_time are for standard traces).
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

/**
 * The workload of a retune run, read once: the Dynamo trace's requests (the window reader's rows)
 * and their table. An agentic trace is rejected (docs/retune.md §1: windows replay open-loop).
 */
export async function loadRetuneWorkload(
  spec: RunSpec,
  warn: ((line: string) => void) | undefined,
): Promise<{ table: RequestTable; requests: DynamoRequests }> {
  const source = spec.source;
  if (source.type !== "trace" || source.format !== "dynamo") {
    throw new Error("internal: planner.retune needs a Dynamo request trace (config rule)");
  }
  const requests = await readDynamoRequests(source.paths, { expectedBlockSize: source.blockSize });
  warnDropped(requests, warn);
  if (isAgentic(requests)) {
    throw new TraceError(
      requests.files[0],
      0,
      "planner.retune replays open-loop windows: an agentic Dynamo trace (agent_context on every request) is not supported",
    );
  }
  return { table: buildDynamoTable(requests, { engineBlockSize: engineBlockSize(spec.engine) }), requests };
}
