/**
 * Mooncake JSONL trace loader (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`, `ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`), plain or gzip.
 *
 * Row fields: `timestamp|created_time` (ms), `input_length|input_tokens`, `output_length|output_tokens`
 * (required), `hash_ids` (required), optional `session_id`, `delay|delay_ms`, `request_id`,
 * `output_token_ids`; `priority`, `strict_priority`, `policy_class` and any other key are ignored.
 * A `null` optional field counts as absent. Every malformed row fails with a TraceError naming the file,
 * the 1-based line and the field.
 */
import { computeBlockHashes, hashPrompts, type PackedBlockHashes } from "../blockHashes.js";
import { GrowableI32, TraceColumns } from "../columns.js";
import { readJsonlLines } from "../jsonlReader.js";
import { TokenBlockCounts } from "../ownerOnlyBlocks.js";
import type { LazyTableHashes, RequestTable } from "../requests.js";
import { TraceError } from "../traceError.js";
import { checkFirstTurn, MooncakeRowParser } from "./row.js";

export interface MooncakeLoadOptions {
  /** Tokens per trace hash block (`traffic.source.block_size`, 512 for public Mooncake traces). */
  readonly traceBlockSize: number;
  /** Engine KV block size the sequence hashes are computed for. */
  readonly engineBlockSize: number;
  /**
   * Under `trace_timestamps` load every session's first row needs a timestamp (default true). Pass false
   * for concurrency replay, where first-turn timestamps are ignored; missing ones are then NaN.
   */
  readonly requireTimestamps?: boolean;
  /**
   * Shift timestamps so the earliest first turn is at 0 (default true). The Planner's warm-up keeps
   * the trace's own axis, as the reference buckets `floor(timestamp / interval)` unshifted.
   */
  readonly normalizeTimestamps?: boolean;
}

/**
 * A Mooncake trace's rows, validated and grouped into sessions, before their prompts are hashed:
 * what both the full-prompt loader (`loadMooncakeTrace`) and the delta loader
 * (`traffic/mooncake/delta.ts`) build their tables from.
 */
export interface MooncakeRows
  extends Pick<
    RequestTable,
    | "count"
    | "timestampMs"
    | "outputLength"
    | "session"
    | "turn"
    | "delayAfterPreviousMs"
    | "nextTurnRow"
    | "requestIds"
    | "sessionIds"
    | "sessionFirstRow"
  > {
  readonly path: string;
  /** Tokens the row's `hash_ids` describe (clamped to their capacity). */
  readonly inputLength: Int32Array;
  /** The rows' u32 hash ids, packed: row i uses `ids[idOffsets[i] .. idOffsets[i + 1])`. */
  readonly ids: Uint32Array;
  readonly idOffsets: Int32Array;
  /** 1-based line of each row (blank lines skipped), for errors found after the read. */
  readonly lines: Int32Array;
}

/**
 * Reads and validates a Mooncake trace's rows and groups them into sessions. Timestamps are
 * normalized so the earliest first-turn timestamp is 0 (all timestamps shift by the same amount).
 * Speedup is not applied here: the driver divides timestamps and delays.
 *
 * A later turn's `delayAfterPreviousMs` is its `delay`/`delay_ms` if given, else its timestamp minus the
 * previous turn's timestamp when both are present (negative differences clamp to 0), else 0. A nonzero
 * delay on a first turn is an error.
 */
export async function readMooncakeRows(path: string, opts: MooncakeLoadOptions): Promise<MooncakeRows> {
  const T = opts.traceBlockSize;
  const E = opts.engineBlockSize;
  if (!(Number.isInteger(T) && T > 0))
    throw new RangeError(`traceBlockSize must be a positive integer, got ${T}`);
  if (!(Number.isInteger(E) && E > 0))
    throw new RangeError(`engineBlockSize must be a positive integer, got ${E}`);
  const requireTimestamps = opts.requireTimestamps ?? true;

  const { timestamp, inputLength, outputLength, session, turn, delay, ids, idOffsets } = new TraceColumns();
  const nextTurnRow = new GrowableI32();
  const lines = new GrowableI32();
  const requestIds: (string | null)[] = [];
  const sessionIds: (string | null)[] = [];
  const sessionFirstRow = new GrowableI32();
  const sessionLastRow = new GrowableI32();
  const sessionByKey = new Map<string, number>();

  const parser = new MooncakeRowParser(path, T);
  const onLine = (text: string, lineNo: number): void => {
    const f = parser.parse(text, lineNo, ids);
    idOffsets.push(ids.length);
    const row = timestamp.length;
    const ts = f.timestampMs;
    const authoredDelay = f.delayMs;
    const sessionKey = f.sessionId;
    const existing = sessionKey === null ? undefined : sessionByKey.get(sessionKey);

    let s: number;
    let turnIndex: number;
    let delayMs: number;
    if (existing === undefined) {
      // First turn of a new session.
      checkFirstTurn(parser, f, requireTimestamps);
      s = sessionIds.length;
      sessionIds.push(sessionKey);
      sessionFirstRow.push(row);
      sessionLastRow.push(row);
      if (sessionKey !== null) sessionByKey.set(sessionKey, s);
      turnIndex = 0;
      delayMs = 0;
    } else {
      s = existing;
      const prev = sessionLastRow.data[s];
      turnIndex = turn.data[prev] + 1;
      nextTurnRow.data[prev] = row;
      sessionLastRow.data[s] = row;
      if (!Number.isNaN(authoredDelay)) delayMs = authoredDelay;
      else {
        const prevTs = timestamp.data[prev];
        delayMs = Number.isNaN(ts) || Number.isNaN(prevTs) ? 0 : Math.max(0, ts - prevTs);
      }
    }

    timestamp.push(ts);
    inputLength.push(f.inputLength);
    outputLength.push(f.outputLength);
    session.push(s);
    turn.push(turnIndex);
    delay.push(delayMs);
    nextTurnRow.push(-1);
    lines.push(lineNo);
    requestIds.push(f.requestId);
  };

  await readJsonlLines(path, onLine);

  const count = timestamp.length;
  if (count === 0) throw new TraceError(path, 0, "trace has no rows");

  // Normalize: the earliest first-turn timestamp becomes 0.
  const ts = timestamp.toArray();
  const firstRows = sessionFirstRow.toArray();
  let minStart = Number.POSITIVE_INFINITY;
  for (let k = 0; k < firstRows.length; k++) {
    const t = ts[firstRows[k]];
    if (t < minStart) minStart = t;
  }
  if (opts.normalizeTimestamps !== false && minStart !== Number.POSITIVE_INFINITY && minStart !== 0) {
    for (let i = 0; i < count; i++) ts[i] -= minStart; // NaN stays NaN
  }

  return {
    path,
    count,
    timestampMs: ts,
    inputLength: inputLength.toArray(),
    outputLength: outputLength.toArray(),
    session: session.toArray(),
    turn: turn.toArray(),
    delayAfterPreviousMs: delay.toArray(),
    nextTurnRow: nextTurnRow.toArray(),
    requestIds,
    sessionIds,
    sessionFirstRow: firstRows,
    ids: ids.data,
    idOffsets: idOffsets.data,
    lines: lines.toArray(),
  };
}

/**
 * Loads a Mooncake trace (every row a full prompt) into a RequestTable (`readMooncakeRows`' rules).
 * A row's prompt is hashed up to its owner-only blocks, all that another request's lookup can
 * reach; the rest when a use asks (`RequestTable.lazyHashes`; the stream's "Lazy hashes",
 * traffic/mooncake/stream.ts).
 */
export async function loadMooncakeTrace(path: string, opts: MooncakeLoadOptions): Promise<RequestTable> {
  const rows = await readMooncakeRows(path, opts);
  const E = opts.engineBlockSize;
  const T = opts.traceBlockSize;
  const ownerOnlyFrom = ownerOnlyBlocks(rows, T, E);
  const { offsets, hashes } = hashPrompts(
    rows.count,
    rows.ids,
    rows.idOffsets,
    rows.inputLength,
    T,
    E,
    ownerOnlyFrom,
  );
  return {
    ...mooncakeTable(rows, rows.inputLength, { offsets, hashes }, E),
    ownerOnlyFrom,
    lazyHashes: new PromptHashes(rows, T, E, offsets, hashes, ownerOnlyFrom),
  };
}

/**
 * A Mooncake table's prompt hashes past each row's owner-only start, written on demand. A row is
 * whole once its last hash is written: a hash is never 0 but by a 2^−53 chance, and then the row
 * is only hashed again, to the same values.
 */
class PromptHashes implements LazyTableHashes {
  constructor(
    private readonly rows: MooncakeRows,
    private readonly traceBlockSize: number,
    private readonly engineBlockSize: number,
    private readonly offsets: Int32Array,
    private readonly hashes: Float64Array,
    private readonly ownerOnlyFrom: Int32Array,
  ) {}

  hashedCount(row: number): number {
    const n = this.offsets[row + 1] - this.offsets[row];
    return n > 0 && this.hashes[this.offsets[row + 1] - 1] !== 0 ? n : Math.min(n, this.ownerOnlyFrom[row]);
  }

  completePromptHashes(row: number, out: Float64Array, outStart: number): void {
    const { ids, idOffsets, inputLength } = this.rows;
    const start = idOffsets[row];
    computeBlockHashes(
      ids,
      start,
      idOffsets[row + 1] - start,
      this.traceBlockSize,
      inputLength[row],
      this.engineBlockSize,
      out,
      outStart,
    );
  }
}

/** Per row, where its prompt's owner-only blocks start (traffic/ownerOnlyBlocks.ts). */
function ownerOnlyBlocks(rows: MooncakeRows, traceBlockSize: number, engineBlockSize: number): Int32Array {
  const counts = new TokenBlockCounts();
  const offsets = rows.idOffsets;
  for (let r = 0; r < rows.count; r++) counts.add(rows.ids, offsets[r], offsets[r + 1] - offsets[r]);
  const out = new Int32Array(rows.count);
  for (let r = 0; r < rows.count; r++) {
    out[r] = counts.ownerOnlyFrom(
      rows.ids,
      offsets[r],
      offsets[r + 1] - offsets[r],
      rows.inputLength[r],
      traceBlockSize,
      engineBlockSize,
    );
  }
  return out;
}

/** The table of Mooncake rows whose prompts are `inputLength` tokens hashed as `packed`. */
export function mooncakeTable(
  rows: MooncakeRows,
  inputLength: Int32Array,
  packed: PackedBlockHashes,
  engineBlockSize: number,
): RequestTable {
  return {
    count: rows.count,
    timestampMs: rows.timestampMs,
    inputLength,
    outputLength: rows.outputLength,
    session: rows.session,
    turn: rows.turn,
    delayAfterPreviousMs: rows.delayAfterPreviousMs,
    blockOffsets: packed.offsets,
    blockHashes: packed.hashes,
    engineBlockSize,
    requestIds: rows.requestIds,
    sessionIds: rows.sessionIds,
    sessionCount: rows.sessionIds.length,
    sessionFirstRow: rows.sessionFirstRow,
    nextTurnRow: rows.nextTurnRow,
  };
}
