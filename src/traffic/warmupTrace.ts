/**
 * The Planner's predictor warm-up trace (`load_predictor_warmup_trace`) as read: its format is
 * sniffed from the first line of each file, so a Dynamo request trace and a Mooncake trace both
 * work.
 */
import { type DynamoRequests, readDynamoRequests } from "./dynamo/index.js";
import { readJsonlLines } from "./jsonlReader.js";
import { loadMooncakeTrace } from "./mooncake/index.js";
import { TraceError } from "./traceError.js";
import { warmupTraceFiles } from "./warmupTraceFiles.js";

/** Thrown by the sniffing line callback to stop after the first line. */
const FIRST_LINE_READ = Symbol("first line read");

/**
 * Whether a trace file is a Dynamo request trace (`dynamo.request.trace.v1` rows) rather than a
 * Mooncake trace: judged by its first non-blank line (plain or gzip).
 */
export async function isDynamoTraceFile(path: string): Promise<boolean> {
  let first = "";
  try {
    await readJsonlLines(path, (line) => {
      first = line;
      throw FIRST_LINE_READ;
    });
  } catch (err) {
    if (err !== FIRST_LINE_READ) throw err;
  }
  return first.includes("dynamo.request.trace");
}

/**
 * The `load_predictor_warmup_trace` as read: a Dynamo request trace (its requests, absolute
 * timestamps) or a Mooncake trace (timestamps, lengths). Null without one.
 */
export type WarmupTrace =
  | { readonly format: "dynamo"; readonly requests: DynamoRequests }
  | {
      readonly format: "mooncake";
      readonly timestampMs: ArrayLike<number>;
      readonly inputLength: ArrayLike<number>;
      readonly outputLength: ArrayLike<number>;
    };

/**
 * Reads a `load_predictor_warmup_trace` setting (absolute): one file, the shards of a directory or
 * the files a pattern matches (warmupTraceFiles.ts), read together as one trace. Every file must
 * have the same format.
 */
export async function readWarmupTraceFiles(path: string): Promise<WarmupTrace> {
  const files = warmupTraceFiles(path);
  const dynamo = await Promise.all(files.map((f) => isDynamoTraceFile(f)));
  if (dynamo.every(Boolean)) return { format: "dynamo", requests: await readDynamoRequests(files) };
  const mixed = files.find((_, i) => dynamo[i]);
  if (mixed !== undefined) {
    throw new TraceError(
      mixed,
      0,
      "load_predictor_warmup_trace mixes Dynamo request traces and Mooncake traces; use one format",
    );
  }
  // Mooncake timestamps are relative to their trace's start: shards are read as one trace.
  const timestampMs: number[] = [];
  const inputLength: number[] = [];
  const outputLength: number[] = [];
  for (const file of files) {
    // Block sizes do not matter here: only timestamps and lengths are read, on the trace's own axis.
    const table = await loadMooncakeTrace(file, {
      traceBlockSize: 512,
      engineBlockSize: 512,
      normalizeTimestamps: false,
    });
    for (let i = 0; i < table.timestampMs.length; i++) {
      timestampMs.push(table.timestampMs[i]);
      inputLength.push(table.inputLength[i]);
      outputLength.push(table.outputLength[i]);
    }
  }
  return { format: "mooncake", timestampMs, inputLength, outputLength };
}
