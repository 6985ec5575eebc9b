/**
 * Mooncake trace → Dynamo request trace, as the reference's `mooncake_to_dynamo.py` does it
 * ("Prepare a Dynamo Request Trace"): one `request_end` record per Mooncake row,
 *
 *   {"schema": "dynamo.request.trace.v1", "event_type": "request_end", "event_time_unix_ms": T,
 *    "request": {"request_id": "<prefix>-<index>", "request_received_ms": T, "output_tokens": osl,
 *                "replay": {"trace_block_size": B, "input_length": isl, "input_sequence_hashes": hash_ids}}}
 *
 * with T = origin + int(timestamp) and index the 0-based line index (Python's `enumerate`). With a
 * split time S (ms), a row whose int(timestamp) < S goes to the history file and every other row —
 * one arriving exactly at S included — to the replay file.
 *
 * Where the script would fail or write a record no loader accepts, this converter keeps the
 * Mooncake loader's meaning instead (and counts the row):
 *  - `input_length` absent → the hash capacity; above it → clamped to it (Mooncake semantics);
 *    hash ids beyond ceil(input_length / B) are dropped, since a Dynamo record must carry exactly
 *    that many (they never reach a token anyway). Counted in `adjustedRows`.
 *  - A later session turn without a timestamp (it only has `delay`) gets the previous turn's
 *    arrival + delay. Counted in `derivedArrivals`. A Dynamo standard trace is open-loop, so
 *    session turns become independent requests either way (as in the script, which drops
 *    `session_id`): a trace with sessions does not replay the same after conversion.
 * Mooncake's aliases (`created_time`, `input_tokens`, `output_tokens`, `delay_ms`) are accepted.
 */
import { basename } from "node:path";
import { readJsonlLines } from "../jsonlReader.js";
import { describeValue, parseJsonObject, TraceError } from "../traceError.js";
import { DYNAMO_TRACE_SCHEMA } from "./record.js";
import { AtomicJsonlWriter } from "./writer.js";

/** The script's `ORIGIN_MS`: any epoch-millisecond origin works. */
export const DEFAULT_ORIGIN_UNIX_MS = 1_760_000_000_000;
export const DEFAULT_CONVERT_BLOCK_SIZE = 512;

export interface ConvertOptions {
  readonly input: string;
  /** Tokens per Mooncake hash id (`trace_block_size` of every record). */
  readonly traceBlockSize: number;
  /** Unix ms that Mooncake timestamp 0 becomes. */
  readonly originUnixMs: number;
  /** Request ids are `<prefix>-<line index>`; default `defaultRequestIdPrefix(input)`. */
  readonly requestIdPrefix?: string;
  /** One output file, or a split into history and replay files. */
  readonly target:
    | { readonly output: string }
    | { readonly splitAtMs: number; readonly history: string; readonly replay: string };
}

export interface ConvertResult {
  readonly requests: number;
  /** Per output file: its path and its number of records. */
  readonly files: readonly { readonly path: string; readonly requests: number }[];
  readonly derivedArrivals: number;
  readonly adjustedRows: number;
}

/**
 * The input's file name without `.gz`, `.jsonl` and a trailing `_trace`: `toolagent_trace.jsonl`
 * gives `toolagent`, hence the script's ids `toolagent-0`, `toolagent-1`, ….
 */
export function defaultRequestIdPrefix(input: string): string {
  const name = basename(input)
    .replace(/\.gz$/, "")
    .replace(/\.jsonl$/, "")
    .replace(/_trace$/, "");
  return name === "" ? "request" : name;
}

/** Converts a Mooncake trace into one or two Dynamo request traces, each written atomically. */
export async function convertMooncakeToDynamo(opts: ConvertOptions): Promise<ConvertResult> {
  const B = opts.traceBlockSize;
  if (!(Number.isInteger(B) && B > 0))
    throw new RangeError(`traceBlockSize must be a positive integer, got ${B}`);
  const prefix = opts.requestIdPrefix ?? defaultRequestIdPrefix(opts.input);
  const target = opts.target;
  const dests = "output" in target ? [target.output] : [target.history, target.replay];
  const splitAtMs = "output" in target ? null : target.splitAtMs;
  const rows = new RowReader(opts.input, B);
  const writers: AtomicJsonlWriter[] = [];
  try {
    for (const dest of dests) writers.push(new AtomicJsonlWriter(dest));
    await readJsonlLines(opts.input, (text, lineNo) => {
      const row = rows.read(text, lineNo);
      const receivedMs = opts.originUnixMs + row.offsetMs;
      if (!Number.isSafeInteger(receivedMs) || receivedMs < 0) {
        throw new TraceError(
          opts.input,
          lineNo,
          `arrival ${receivedMs} is not a valid unix time in ms`,
          "timestamp",
        );
      }
      const record = {
        schema: DYNAMO_TRACE_SCHEMA,
        event_type: "request_end",
        event_time_unix_ms: receivedMs,
        request: {
          request_id: `${prefix}-${lineNo - 1}`,
          request_received_ms: receivedMs,
          output_tokens: row.outputLength,
          replay: { trace_block_size: B, input_length: row.inputLength, input_sequence_hashes: row.hashIds },
        },
      };
      const writer = splitAtMs === null || row.offsetMs < splitAtMs ? writers[0] : writers[1];
      writer.write(JSON.stringify(record));
    });
    if (rows.count === 0) throw new TraceError(opts.input, 0, "trace has no rows");
    for (const w of writers) await w.commit();
  } catch (err) {
    for (const w of writers) w.abort();
    throw err;
  }
  return {
    requests: rows.count,
    files: writers.map((w) => ({ path: w.dest, requests: w.lines })),
    derivedArrivals: rows.derivedArrivals,
    adjustedRows: rows.adjustedRows,
  };
}

type Row = Record<string, unknown>;

interface MooncakeRequest {
  /** Integer ms after Mooncake time 0 (`int(timestamp)`, or derived). */
  readonly offsetMs: number;
  readonly inputLength: number;
  readonly outputLength: number;
  readonly hashIds: readonly number[];
}

/** Validates Mooncake rows one by one, remembering each session's last arrival. */
class RowReader {
  count = 0;
  derivedArrivals = 0;
  adjustedRows = 0;
  private readonly lastArrival = new Map<string, number>();

  constructor(
    private readonly file: string,
    private readonly blockSize: number,
  ) {}

  read(text: string, line: number): MooncakeRequest {
    const r = parseJsonObject(this.file, line, text) as Row;
    const err = (field: string, detail: string) => new TraceError(this.file, line, detail, field);

    const hashIds = r["hash_ids"];
    if (!Array.isArray(hashIds))
      throw err("hash_ids", `expected an array of non-negative integers, got ${describeValue(hashIds)}`);
    hashIds.forEach((h: unknown, k) => {
      if (typeof h !== "number" || !Number.isInteger(h) || h < 0) {
        throw err("hash_ids", `element ${k}: expected a non-negative integer, got ${describeValue(h)}`);
      }
    });
    const capacity = hashIds.length * this.blockSize;
    const inKey = pick(r, "input_length", "input_tokens");
    const authoredIsl = inKey === null ? capacity : count(r, inKey, err);
    const inputLength = Math.min(authoredIsl, capacity);
    const needed = Math.ceil(inputLength / this.blockSize);
    if (authoredIsl !== inputLength || needed !== hashIds.length) this.adjustedRows++;

    const outKey = pick(r, "output_length", "output_tokens");
    if (outKey === null)
      throw err("output_length", "required field is missing (also accepted as 'output_tokens')");
    const outputLength = count(r, outKey, err);

    const offsetMs = this.arrival(r, err);
    this.count++;
    return { offsetMs, inputLength, outputLength, hashIds: hashIds.slice(0, needed) as number[] };
  }

  private arrival(r: Row, err: (field: string, detail: string) => TraceError): number {
    const session = r["session_id"];
    const key = typeof session === "string" || typeof session === "number" ? String(session) : null;
    const tsKey = pick(r, "timestamp", "created_time");
    let offset: number;
    if (tsKey !== null) {
      offset = Math.trunc(finite(r, tsKey, err)); // Python's int(): toward zero
    } else {
      const previous = key === null ? undefined : this.lastArrival.get(key);
      if (previous === undefined) {
        throw err(
          "timestamp",
          "required (a Dynamo request trace records every arrival), except on later session turns",
        );
      }
      const delayKey = pick(r, "delay", "delay_ms");
      offset = previous + (delayKey === null ? 0 : Math.trunc(finite(r, delayKey, err, true)));
      this.derivedArrivals++;
    }
    if (key !== null) this.lastArrival.set(key, offset);
    return offset;
  }
}

/** The first of two alias keys present with a non-null value, or null. */
function pick(r: Row, primary: string, alias: string): string | null {
  if (r[primary] !== undefined && r[primary] !== null) return primary;
  if (r[alias] !== undefined && r[alias] !== null) return alias;
  return null;
}

function count(r: Row, key: string, err: (field: string, detail: string) => TraceError): number {
  const v = r[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) {
    throw err(key, `expected a non-negative integer, got ${describeValue(v)}`);
  }
  return v;
}

function finite(
  r: Row,
  key: string,
  err: (field: string, detail: string) => TraceError,
  nonNegative = false,
): number {
  const v = r[key];
  if (typeof v !== "number" || !Number.isFinite(v) || (nonNegative && v < 0)) {
    const what = nonNegative ? "a non-negative number of milliseconds" : "a number of milliseconds";
    throw err(key, `expected ${what}, got ${describeValue(v)}`);
  }
  return v;
}
