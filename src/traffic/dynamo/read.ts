/**
 * Reads the requests of a Dynamo request trace (one or more shards) into columns, checked across
 * rows and sorted by arrival. `traffic/dynamo/index.ts` turns them into a RequestTable.
 *
 * Rules across rows (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`; the reference loader `loadgen/dynamo.rs`):
 *  - Files are read in the order `expandTracePaths` gives (paths in order; a directory's or a
 *    pattern's files by name). A repeated `request_id` keeps its FIRST row in that reading order
 *    (the retune window reader's rule; the later rows are counted in `duplicateRows`).
 *  - The embedded `trace_block_size` is authoritative: every kept row must carry the same one, and
 *    an explicit `traffic.source.block_size` must equal it.
 *  - Either every kept request has `agent_context` (an agentic trace) or none does.
 *  - A `request_end` row without `output_tokens` is dropped and counted (`droppedStartMs`), as the
 *    retune window reader does (seed 003): it is not a request, and it claims no `request_id`.
 *  - Requests are sorted by (arrival, completion), so shards may be given in any order and rows
 *    may be in completion order (as Dynamo writes them). Ties keep reading order. (The reference
 *    breaks ties by request_id; reading order instead makes a converted Mooncake trace, whose
 *    same-millisecond rows have ids like `x-10` < `x-9`, replay exactly like the original.)
 */
import { GrowableF64, GrowableI32, GrowableU32 } from "../columns.js";
import { readJsonlLines } from "../jsonlReader.js";
import { TraceError } from "../traceError.js";
import { CompactIds } from "./hashes.js";
import { expandTracePaths } from "./paths.js";
import { type DynamoRequestRow, parseDynamoLine, type RowPosition } from "./record.js";

/** The requests of a Dynamo trace as columns, one row per request, sorted by arrival. */
export interface DynamoRequests {
  readonly count: number;
  /** The embedded trace block size (tokens per sequence hash). */
  readonly blockSize: number;
  /** Arrival, absolute unix milliseconds (integers). */
  readonly startMs: Float64Array;
  /** Recorded completion, absolute unix milliseconds (the event time when no duration is known). */
  readonly endMs: Float64Array;
  /**
   * 1 when the row carried `total_time_ms` (its completion is known and it can be censored), 0 when
   * `endMs` is only the event time (docs/retune.md §4 `censor_unavailable`).
   */
  readonly completionKnown: Uint8Array;
  readonly inputLength: Int32Array;
  readonly outputLength: Int32Array;
  /** Request i's compact hash ids are `hashIds[hashIdOffsets[i] .. hashIdOffsets[i+1])`. */
  readonly hashIdOffsets: Int32Array;
  /** Compact ids of the sequence hashes (equal hashes ⇔ equal ids), in first-appearance order. */
  readonly hashIds: Uint32Array;
  readonly requestIds: readonly string[];
  /** `agent_context.session_id` per request when the trace is agentic, else null. */
  readonly sessionIds: readonly string[] | null;
  /** The files read, in reading order. */
  readonly files: readonly string[];
  /** Rows that are not `request_end` records (tool events, payloads, …). */
  readonly skippedRows: number;
  /** `request_end` rows dropped because an earlier row had the same `request_id`. */
  readonly duplicateRows: number;
  /**
   * Arrivals (absolute unix ms, reading order) of the `request_end` rows dropped because they have
   * no `output_tokens`; their count is `length`. They are not requests of the trace.
   */
  readonly droppedStartMs: Float64Array;
}

export interface DynamoReadOptions {
  /** `traffic.source.block_size` when set: must equal the embedded size. */
  readonly expectedBlockSize?: number | null;
}

/** Reads and checks every request of the trace `paths` (files, directories or patterns). */
export async function readDynamoRequests(
  paths: readonly string[],
  opts: DynamoReadOptions = {},
): Promise<DynamoRequests> {
  if (paths.length === 0) throw new RangeError("a Dynamo trace needs at least one path");
  const files = expandTracePaths(paths);
  const acc = new Accumulator(opts.expectedBlockSize ?? null);
  for (const file of files) {
    const at = { file, line: 0 };
    await readJsonlLines(file, (text, lineNo) => {
      at.line = lineNo;
      const row = parseDynamoLine(text, at);
      if (row === null) acc.skippedRows++;
      else acc.add(row, at);
    });
  }
  if (acc.count === 0) {
    const dropped = acc.dropped.length;
    throw new TraceError(
      files.join(", "),
      0,
      dropped === 0
        ? "the trace holds no request_end record"
        : `the trace holds no request_end record with output_tokens (${dropped} without it dropped)`,
    );
  }
  return acc.finish(files);
}

/** Rows as read (file order), before sorting. */
class Accumulator {
  count = 0;
  skippedRows = 0;
  duplicateRows = 0;
  readonly dropped = new GrowableF64();
  private readonly start = new GrowableF64();
  private readonly end = new GrowableF64();
  private readonly known: boolean[] = [];
  private readonly isl = new GrowableI32();
  private readonly osl = new GrowableI32();
  private readonly ids = new GrowableU32(1 << 16);
  private readonly idOffsets = new GrowableI32();
  private readonly requestIds: string[] = [];
  private readonly sessionIds: (string | null)[] = [];
  private readonly seen = new Set<string>();
  private readonly compact = new CompactIds();
  /** The first kept row: the reference for block size and agent_context. */
  private first: { row: DynamoRequestRow; where: string } | null = null;

  constructor(private readonly expectedBlockSize: number | null) {
    this.idOffsets.push(0);
  }

  add(row: DynamoRequestRow, at: RowPosition): void {
    if (row.outputLength === null) {
      this.dropped.push(row.startMs);
      return;
    }
    if (this.seen.has(row.requestId)) {
      this.duplicateRows++;
      return;
    }
    this.check(row, at);
    this.seen.add(row.requestId);
    for (const key of row.hashKeys) this.ids.push(this.compact.idOf(key));
    this.idOffsets.push(this.ids.length);
    this.start.push(row.startMs);
    this.end.push(row.endMs);
    this.known.push(row.completionKnown);
    this.isl.push(row.inputLength);
    this.osl.push(row.outputLength);
    this.requestIds.push(row.requestId);
    this.sessionIds.push(row.sessionId);
    this.count++;
  }

  private check(row: DynamoRequestRow, at: RowPosition): void {
    const first = this.first;
    if (first === null) {
      const expected = this.expectedBlockSize;
      if (expected !== null && expected !== row.blockSize) {
        throw new TraceError(
          at.file,
          at.line,
          `embedded trace block size ${row.blockSize} does not match traffic.source.block_size ${expected}; ` +
            "omit block_size for a Dynamo trace (the embedded size is authoritative)",
          "request.replay.trace_block_size",
        );
      }
      this.first = { row, where: `${at.file}:${at.line}` };
      return;
    }
    if (row.blockSize !== first.row.blockSize) {
      throw new TraceError(
        at.file,
        at.line,
        `trace block size ${row.blockSize} differs from ${first.row.blockSize} of the first request ` +
          `(${first.where}); mixed trace block sizes are not supported`,
        "request.replay.trace_block_size",
      );
    }
    if ((row.sessionId === null) !== (first.row.sessionId === null)) {
      const has = (r: DynamoRequestRow) => (r.sessionId === null ? "has no" : "has an");
      throw new TraceError(
        at.file,
        at.line,
        `this request ${has(row)} agent_context but the first request (${first.where}) ${has(first.row)} one; ` +
          "a Dynamo trace cannot mix requests with and without agent_context",
        "agent_context",
      );
    }
  }

  finish(files: readonly string[]): DynamoRequests {
    const n = this.count;
    const start = this.start.data;
    const end = this.end.data;
    const rid = this.requestIds;
    const order = Array.from({ length: n }, (_, i) => i);
    // Ties keep reading order (Array.prototype.sort is stable); see the module comment.
    order.sort((a, b) => start[a] - start[b] || end[a] - end[b]);

    const startMs = new Float64Array(n);
    const endMs = new Float64Array(n);
    const completionKnown = new Uint8Array(n);
    const inputLength = new Int32Array(n);
    const outputLength = new Int32Array(n);
    const hashIdOffsets = new Int32Array(n + 1);
    const hashIds = new Uint32Array(this.ids.length);
    const requestIds: string[] = new Array(n);
    const agentic = this.first!.row.sessionId !== null;
    const sessionIds: string[] | null = agentic ? new Array(n) : null;
    const srcIds = this.ids.data;
    const srcOffsets = this.idOffsets.data;
    let w = 0;
    for (let k = 0; k < n; k++) {
      const i = order[k];
      startMs[k] = start[i];
      endMs[k] = end[i];
      completionKnown[k] = this.known[i] ? 1 : 0;
      inputLength[k] = this.isl.data[i];
      outputLength[k] = this.osl.data[i];
      requestIds[k] = rid[i];
      if (sessionIds !== null) sessionIds[k] = this.sessionIds[i]!;
      hashIdOffsets[k] = w;
      hashIds.set(srcIds.subarray(srcOffsets[i], srcOffsets[i + 1]), w);
      w += srcOffsets[i + 1] - srcOffsets[i];
    }
    hashIdOffsets[n] = w;
    return {
      count: n,
      blockSize: this.first!.row.blockSize,
      startMs,
      endMs,
      completionKnown,
      inputLength,
      outputLength,
      hashIdOffsets,
      hashIds,
      requestIds,
      sessionIds,
      files,
      skippedRows: this.skippedRows,
      duplicateRows: this.duplicateRows,
      droppedStartMs: this.dropped.toArray(),
    };
  }
}
