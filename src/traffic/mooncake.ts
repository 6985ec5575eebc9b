/**
 * Mooncake JSONL trace loader (mocker.md §6.1, aisimulate.md §2.1), plain or gzip.
 *
 * Row fields: `timestamp|created_time` (ms), `input_length|input_tokens`, `output_length|output_tokens`
 * (required), `hash_ids` (required), optional `session_id`, `delay|delay_ms`, `request_id`,
 * `output_token_ids`; `priority`, `strict_priority`, `policy_class` and any other key are ignored.
 * A `null` optional field counts as absent. Every malformed row fails with a TraceError naming the file,
 * the 1-based line and the field.
 */
import { hashPrompts, toU32 } from "./blockHashes.js";
import { GrowableF64, GrowableI32, GrowableU32 } from "./columns.js";
import { readJsonlLines } from "./jsonlReader.js";
import type { RequestTable } from "./requests.js";
import { describeValue, TraceError } from "./traceError.js";

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

const MAX_I32 = 0x7fffffff;

type Row = Record<string, unknown>;

/**
 * Loads a Mooncake trace into a RequestTable. Timestamps are normalized so the earliest first-turn
 * timestamp is 0 (all timestamps shift by the same amount). Speedup is not applied here: the driver
 * divides timestamps and delays.
 *
 * A later turn's `delayAfterPreviousMs` is its `delay`/`delay_ms` if given, else its timestamp minus the
 * previous turn's timestamp when both are present (negative differences clamp to 0), else 0. A nonzero
 * delay on a first turn is an error.
 */
export async function loadMooncakeTrace(path: string, opts: MooncakeLoadOptions): Promise<RequestTable> {
  const T = opts.traceBlockSize;
  const E = opts.engineBlockSize;
  if (!(Number.isInteger(T) && T > 0))
    throw new RangeError(`traceBlockSize must be a positive integer, got ${T}`);
  if (!(Number.isInteger(E) && E > 0))
    throw new RangeError(`engineBlockSize must be a positive integer, got ${E}`);
  const requireTimestamps = opts.requireTimestamps ?? true;

  const timestamp = new GrowableF64();
  const inputLength = new GrowableI32();
  const outputLength = new GrowableI32();
  const session = new GrowableI32();
  const turn = new GrowableI32();
  const delay = new GrowableF64();
  const nextTurnRow = new GrowableI32();
  const ids = new GrowableU32(1 << 16);
  const idOffsets = new GrowableI32();
  idOffsets.push(0);
  const requestIds: (string | null)[] = [];
  const sessionIds: (string | null)[] = [];
  const sessionFirstRow = new GrowableI32();
  const sessionLastRow = new GrowableI32();
  const sessionByKey = new Map<string, number>();

  const at: Where = { file: path, line: 0 };
  const onLine = (text: string, lineNo: number): void => {
    at.line = lineNo;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new TraceError(path, lineNo, `invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new TraceError(path, lineNo, `expected a JSON object, got ${describeValue(parsed)}`);
    }
    const r = parsed as Row;
    const row = timestamp.length;

    // hash_ids (required): non-negative integers, truncated to u32.
    const hashIds = r["hash_ids"];
    if (hashIds === undefined) throw fieldError(at, "hash_ids", "required field is missing");
    if (!Array.isArray(hashIds)) {
      throw fieldError(
        at,
        "hash_ids",
        `expected an array of non-negative integers, got ${describeValue(hashIds)}`,
      );
    }
    for (let k = 0; k < hashIds.length; k++) {
      const h: unknown = hashIds[k];
      if (typeof h !== "number" || !Number.isInteger(h) || h < 0) {
        throw fieldError(
          at,
          "hash_ids",
          `element ${k}: expected a non-negative integer, got ${describeValue(h)}`,
        );
      }
      ids.push(toU32(h));
    }
    idOffsets.push(ids.length);
    const capacity = hashIds.length * T;

    // input_length | input_tokens (optional; defaults to and is clamped to the hash capacity).
    const inKey = pickKey(r, "input_length", "input_tokens");
    const isl = inKey === null ? capacity : Math.min(readCount(r, inKey, at), capacity);
    if (isl > MAX_I32) throw fieldError(at, "hash_ids", `prompt of ${isl} tokens is too long`);

    // output_length | output_tokens (required).
    const outKey = pickKey(r, "output_length", "output_tokens") ?? "output_length";
    if (r[outKey] === undefined) {
      throw fieldError(at, outKey, "required field is missing (also accepted as 'output_tokens')");
    }
    const osl = readCount(r, outKey, at);

    // output_token_ids (optional): length must equal output_length. Validated, not stored.
    const outIds = r["output_token_ids"];
    if (outIds !== undefined && outIds !== null) {
      if (!Array.isArray(outIds)) {
        throw fieldError(at, "output_token_ids", `expected an array, got ${describeValue(outIds)}`);
      }
      if (outIds.length !== osl) {
        throw fieldError(
          at,
          "output_token_ids",
          `expected ${osl} token ids (${outKey}), got ${outIds.length}`,
        );
      }
    }

    // timestamp | created_time (ms, optional); delay | delay_ms (ms, optional).
    const tsKey = pickKey(r, "timestamp", "created_time");
    const ts = tsKey === null ? Number.NaN : readMs(r, tsKey, at, false);
    const delayKey = pickKey(r, "delay", "delay_ms");
    const authoredDelay = delayKey === null ? Number.NaN : readMs(r, delayKey, at, true);

    const requestId = readId(r, "request_id", at);
    // session_id (optional): rows with the same id are turns of one session, in file order.
    const sessionKey = readId(r, "session_id", at);
    const existing = sessionKey === null ? undefined : sessionByKey.get(sessionKey);

    let s: number;
    let turnIndex: number;
    let delayMs: number;
    if (existing === undefined) {
      // First turn of a new session.
      if (authoredDelay > 0) {
        throw fieldError(at, delayKey ?? "delay", "a delay is not allowed on the first turn of a session");
      }
      if (requireTimestamps && Number.isNaN(ts)) {
        throw fieldError(
          at,
          "timestamp",
          "required on the first turn of a session when replaying trace timestamps",
        );
      }
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
    inputLength.push(isl);
    outputLength.push(osl);
    session.push(s);
    turn.push(turnIndex);
    delay.push(delayMs);
    nextTurnRow.push(-1);
    requestIds.push(requestId);
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

  const inputs = inputLength.toArray();
  const packed = hashPrompts(count, ids.data, idOffsets.data, inputs, T, E);

  return {
    count,
    timestampMs: ts,
    inputLength: inputs,
    outputLength: outputLength.toArray(),
    session: session.toArray(),
    turn: turn.toArray(),
    delayAfterPreviousMs: delay.toArray(),
    blockOffsets: packed.offsets,
    blockHashes: packed.hashes,
    engineBlockSize: E,
    requestIds,
    sessionIds,
    sessionCount: sessionIds.length,
    sessionFirstRow: firstRows,
    nextTurnRow: nextTurnRow.toArray(),
  };
}

/** The first of two alias keys present with a non-null value, or null. */
function pickKey(r: Row, primary: string, alias: string): string | null {
  const p = r[primary];
  if (p !== undefined && p !== null) return primary;
  const a = r[alias];
  if (a !== undefined && a !== null) return alias;
  return null;
}

/** Error position; `line` is updated per row (one object, no per-row allocation). */
interface Where {
  readonly file: string;
  line: number;
}

function fieldError(at: Where, field: string, detail: string): TraceError {
  return new TraceError(at.file, at.line, detail, field);
}

/** A non-negative integer that fits an Int32 column. */
function readCount(r: Row, key: string, at: Where): number {
  const v = r[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
    throw fieldError(at, key, `expected a non-negative integer, got ${describeValue(v)}`);
  }
  if (v > MAX_I32) throw fieldError(at, key, `value ${v} is too large (max ${MAX_I32})`);
  return v;
}

/** A finite number of milliseconds (non-negative when `nonNegative`). */
function readMs(r: Row, key: string, at: Where, nonNegative: boolean): number {
  const v = r[key];
  if (typeof v !== "number" || !Number.isFinite(v) || (nonNegative && v < 0)) {
    const what = nonNegative ? "a non-negative number of milliseconds" : "a number of milliseconds";
    throw fieldError(at, key, `expected ${what}, got ${describeValue(v)}`);
  }
  return v;
}

/** An optional string-or-number id (numbers are stringified), or null when absent/null. */
function readId(r: Row, key: string, at: Where): string | null {
  const v = r[key];
  if (v === undefined || v === null) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  throw fieldError(at, key, `expected a string or number, got ${describeValue(v)}`);
}
