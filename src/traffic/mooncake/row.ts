/**
 * One Mooncake trace line, validated (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`, `ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`): the field rules shared
 * by the table loader (`traffic/mooncake/index.ts`) and the streamed reader (`traffic/mooncake/stream.ts`), so both
 * accept the same rows and fail a malformed one with the same TraceError (file, 1-based line,
 * field), checking fields in the same order.
 */
import { toU32 } from "../blockHashes.js";
import type { GrowableU32 } from "../columns.js";
import { describeValue, parseJsonObject, TraceError } from "../traceError.js";

const MAX_I32 = 0x7fffffff;

type Row = Record<string, unknown>;

/** A parsed row's fields (one object, refilled by every `parse`). */
export interface MooncakeFields {
  /** Prompt tokens, clamped to the hash capacity. */
  inputLength: number;
  outputLength: number;
  /** ms, NaN when absent. */
  timestampMs: number;
  /** Authored `delay` / `delay_ms`, NaN when absent. */
  delayMs: number;
  /** The key the delay came from, or null. */
  delayKey: string | null;
  requestId: string | null;
  sessionId: string | null;
  /** Trace hash ids of the row (appended to the parse's `ids`). */
  hashIdCount: number;
}

export class MooncakeRowParser {
  /** Line of the row parsed last (errors found after `parse` name it too). */
  line = 0;
  /** The JSON object of the row parsed last, for the fields a format adds (`agentic_mooncake`). */
  row: Readonly<Record<string, unknown>> = {};
  readonly fields: MooncakeFields = {
    inputLength: 0,
    outputLength: 0,
    timestampMs: Number.NaN,
    delayMs: Number.NaN,
    delayKey: null,
    requestId: null,
    sessionId: null,
    hashIdCount: 0,
  };

  constructor(
    readonly path: string,
    /** Tokens per trace hash block. */
    private readonly traceBlockSize: number,
    /**
     * Whether an `input_length` above the hash capacity is clamped to it (Mooncake, as the
     * reference's loader) or an error (`agentic_mooncake`, whose reference loader rejects it).
     */
    private readonly clampInput = true,
  ) {}

  /** A TraceError at the row parsed last. */
  error(field: string, detail: string): TraceError {
    return new TraceError(this.path, this.line, detail, field);
  }

  /**
   * Parses line `lineNo`: its hash ids (truncated to u32) are appended to `ids`, its other fields
   * go to `fields` (returned). Throws a TraceError for a malformed row.
   */
  parse(text: string, lineNo: number, ids: GrowableU32): MooncakeFields {
    this.line = lineNo;
    const r: Row = parseJsonObject(this.path, lineNo, text);
    this.row = r;
    const f = this.fields;

    // hash_ids (required): non-negative integers, truncated to u32.
    const hashIds = r["hash_ids"];
    if (hashIds === undefined) throw this.error("hash_ids", "required field is missing");
    if (!Array.isArray(hashIds)) {
      throw this.error(
        "hash_ids",
        `expected an array of non-negative integers, got ${describeValue(hashIds)}`,
      );
    }
    for (let k = 0; k < hashIds.length; k++) {
      const h: unknown = hashIds[k];
      if (typeof h !== "number" || !Number.isInteger(h) || h < 0) {
        throw this.error(
          "hash_ids",
          `element ${k}: expected a non-negative integer, got ${describeValue(h)}`,
        );
      }
      ids.push(toU32(h));
    }
    f.hashIdCount = hashIds.length;
    const capacity = hashIds.length * this.traceBlockSize;

    // input_length | input_tokens (optional; defaults to and is clamped to the hash capacity).
    const inKey = pickKey(r, "input_length", "input_tokens");
    const authored = inKey === null ? capacity : this.readCount(r, inKey);
    if (!this.clampInput && authored > capacity) {
      throw this.error(
        inKey!,
        `${authored} tokens exceed the ${capacity} that ${hashIds.length} hash_ids of ${this.traceBlockSize} tokens hold`,
      );
    }
    const isl = Math.min(authored, capacity);
    if (isl > MAX_I32) throw this.error("hash_ids", `prompt of ${isl} tokens is too long`);
    f.inputLength = isl;

    // output_length | output_tokens (required).
    const outKey = pickKey(r, "output_length", "output_tokens") ?? "output_length";
    if (r[outKey] === undefined) {
      throw this.error(outKey, "required field is missing (also accepted as 'output_tokens')");
    }
    const osl = this.readCount(r, outKey);
    f.outputLength = osl;

    // output_token_ids (optional): length must equal output_length. Validated, not stored.
    const outIds = r["output_token_ids"];
    if (outIds !== undefined && outIds !== null) {
      if (!Array.isArray(outIds)) {
        throw this.error("output_token_ids", `expected an array, got ${describeValue(outIds)}`);
      }
      if (outIds.length !== osl) {
        throw this.error("output_token_ids", `expected ${osl} token ids (${outKey}), got ${outIds.length}`);
      }
    }

    // timestamp | created_time (ms, optional); delay | delay_ms (ms, optional).
    const tsKey = pickKey(r, "timestamp", "created_time");
    f.timestampMs = tsKey === null ? Number.NaN : this.readMs(r, tsKey, false);
    const delayKey = pickKey(r, "delay", "delay_ms");
    f.delayKey = delayKey;
    f.delayMs = delayKey === null ? Number.NaN : this.readMs(r, delayKey, true);

    f.requestId = this.readId(r, "request_id");
    // session_id (optional): rows with the same id are turns of one session, in file order.
    f.sessionId = this.readId(r, "session_id");
    return f;
  }

  /** A non-negative integer that fits an Int32 column. */
  readCount(r: Row, key: string): number {
    const v = r[key];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
      throw this.error(key, `expected a non-negative integer, got ${describeValue(v)}`);
    }
    if (v > MAX_I32) throw this.error(key, `value ${v} is too large (max ${MAX_I32})`);
    return v;
  }

  /** A finite number of milliseconds (non-negative when `nonNegative`). */
  readMs(r: Row, key: string, nonNegative: boolean): number {
    const v = r[key];
    if (typeof v !== "number" || !Number.isFinite(v) || (nonNegative && v < 0)) {
      const what = nonNegative ? "a non-negative number of milliseconds" : "a number of milliseconds";
      throw this.error(key, `expected ${what}, got ${describeValue(v)}`);
    }
    return v;
  }

  /** An optional string-or-number id (numbers are stringified), or null when absent/null. */
  private readId(r: Row, key: string): string | null {
    const v = r[key];
    if (v === undefined || v === null) return null;
    if (typeof v === "string") return v;
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    throw this.error(key, `expected a string or number, got ${describeValue(v)}`);
  }
}

/**
 * The checks of a session's first turn: no delay, and a timestamp when the replay runs on trace
 * timestamps.
 */
export function checkFirstTurn(
  parser: MooncakeRowParser,
  f: MooncakeFields,
  requireTimestamps: boolean,
): void {
  if (f.delayMs > 0) {
    throw parser.error(f.delayKey ?? "delay", "a delay is not allowed on the first turn of a session");
  }
  if (requireTimestamps && Number.isNaN(f.timestampMs)) {
    throw parser.error(
      "timestamp",
      "required on the first turn of a session when replaying trace timestamps",
    );
  }
}

/** The first of two alias keys present with a non-null value, or null. */
function pickKey(r: Row, primary: string, alias: string): string | null {
  const p = r[primary];
  if (p !== undefined && p !== null) return primary;
  const a = r[alias];
  if (a !== undefined && a !== null) return alias;
  return null;
}
