/**
 * One line of a Dynamo request trace (`dynamo.request.trace.v1`, `ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`) → one request,
 * or null for a row that is not a request.
 *
 * Only `event_type: "request_end"` rows are requests; every other event (`tool_end`,
 * `request_payload`, `router_selection`, …) is skipped unread. A record may be wrapped as
 * `{"event": {...}}` (as the reference accepts). Fields of a `request_end` row:
 *
 * | field                                    | rule                                                        |
 * | ---------------------------------------- | ----------------------------------------------------------- |
 * | `schema`                                 | `"dynamo.request.trace.v1"`                                 |
 * | `event_time_unix_ms`                     | required, non-negative integer                              |
 * | `agent_context.session_id`               | optional (whole object); non-empty string when present      |
 * | `request.request_id`                     | required, non-empty string                                  |
 * | `request.request_received_ms`            | optional non-negative integer: the arrival                  |
 * | `request.total_time_ms`                  | optional finite number ≥ 0 (rounded to whole ms)            |
 * | `request.output_tokens`                  | non-negative integer: the output length; a row without it   |
 * |                                          | (absent or null) is dropped and counted, not an error       |
 * | `request.replay.trace_block_size`        | required, positive integer                                  |
 * | `request.replay.input_length`            | required, non-negative integer: the prompt length           |
 * | `request.replay.input_sequence_hashes`   | exactly ceil(input_length / trace_block_size) u64 integers  |
 *
 * Arrival = `request_received_ms`, else `event_time_unix_ms − total_time_ms` (else the event
 * time); completion = `request_received_ms + total_time_ms` when both exist, else the event time
 * (the reference's `request_times`). A `null` optional field counts as absent. Other keys
 * (`model`, `input_tokens`, `ttft_ms`, …) are ignored: `replay.input_length` is the prompt.
 */

import { describeValue, parseJsonObject, TraceError } from "../traceError.js";
import { hashKey, rawHashTokens } from "./hashes.js";

export const DYNAMO_TRACE_SCHEMA = "dynamo.request.trace.v1";

const MAX_I32 = 0x7fffffff;

/** One `request_end` row, validated. Hash keys are not yet compacted (see CompactIds). */
export interface DynamoRequestRow {
  readonly requestId: string;
  readonly startMs: number;
  readonly endMs: number;
  /** The row carried `total_time_ms`: `endMs` is a recorded completion, not just the event time. */
  readonly completionKnown: boolean;
  readonly inputLength: number;
  /**
   * Null when the row has no `output_tokens`: the reader drops it and counts it (the retune window
   * reader's rule, seed 003 "Windows": "request_end rows without output_tokens (dropped)").
   */
  readonly outputLength: number | null;
  readonly blockSize: number;
  readonly hashKeys: readonly (number | string)[];
  /** `agent_context.session_id`, or null when the row has no `agent_context`. */
  readonly sessionId: string | null;
}

type Json = Record<string, unknown>;

/** Where a row came from, for error messages. */
export interface RowPosition {
  readonly file: string;
  readonly line: number;
}

/** Parses one non-blank line; null when it is valid JSON but not a `request_end` record. */
export function parseDynamoLine(text: string, at: RowPosition): DynamoRequestRow | null {
  const parsed = parseJsonObject(at.file, at.line, text) as Json;
  const wrapped = isObject(parsed["event"]);
  const record = wrapped ? (parsed["event"] as Json) : parsed;
  const f = new Fields(at, wrapped ? "event." : "");

  const eventType = record["event_type"];
  if (typeof eventType !== "string")
    throw f.error("event_type", `expected a string, got ${describeValue(eventType)}`);
  if (eventType !== "request_end") return null;

  const schema = record["schema"];
  if (schema !== DYNAMO_TRACE_SCHEMA) {
    throw f.error("schema", `expected "${DYNAMO_TRACE_SCHEMA}", got ${describeValue(schema)}`);
  }
  const eventTime = f.count(record, "event_time_unix_ms", Number.MAX_SAFE_INTEGER);
  const sessionId = readSession(record, f);

  const request = f.object(record, "request");
  const requestId = request["request_id"];
  if (typeof requestId !== "string" || requestId.trim() === "") {
    throw f.error("request.request_id", `expected a non-empty string, got ${describeValue(requestId)}`);
  }
  const received = f.optionalCount(request, "request.request_received_ms", "request_received_ms");
  const total = readTotal(request, f);
  const rawOutput = request["output_tokens"];
  const outputLength =
    rawOutput === undefined || rawOutput === null
      ? null
      : f.count(request, "output_tokens", MAX_I32, "request.output_tokens");

  const replay = f.object(request, "replay", "request.replay");
  const blockSize = f.count(replay, "trace_block_size", MAX_I32, "request.replay.trace_block_size");
  if (blockSize === 0) throw f.error("request.replay.trace_block_size", "must be a positive integer, got 0");
  const inputLength = f.count(replay, "input_length", MAX_I32, "request.replay.input_length");
  const hashKeys = readHashes(text, replay, Math.ceil(inputLength / blockSize), f);

  const startMs = received ?? Math.max(0, eventTime - (total ?? 0));
  const endMs = received !== null && total !== null ? received + total : eventTime;
  const completionKnown = total !== null;
  return {
    requestId,
    startMs,
    endMs,
    completionKnown,
    inputLength,
    outputLength,
    blockSize,
    hashKeys,
    sessionId,
  };
}

function readSession(record: Json, f: Fields): string | null {
  const ctx = record["agent_context"];
  if (ctx === undefined || ctx === null) return null;
  if (!isObject(ctx)) throw f.error("agent_context", `expected an object, got ${describeValue(ctx)}`);
  const id = ctx["session_id"];
  if (typeof id !== "string" || id.trim() === "") {
    throw f.error("agent_context.session_id", `expected a non-empty string, got ${describeValue(id)}`);
  }
  return id;
}

function readTotal(request: Json, f: Fields): number | null {
  const v = request["total_time_ms"];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    throw f.error("request.total_time_ms", `expected a finite number ≥ 0, got ${describeValue(v)}`);
  }
  // The reference rounds the duration to whole milliseconds (half away from zero; v ≥ 0 here).
  return Math.round(v);
}

function readHashes(text: string, replay: Json, expected: number, f: Fields): (number | string)[] {
  const field = "request.replay.input_sequence_hashes";
  const hashes = replay["input_sequence_hashes"];
  if (!Array.isArray(hashes))
    throw f.error(field, `expected an array of u64 integers, got ${describeValue(hashes)}`);
  if (hashes.length !== expected) {
    throw f.error(
      field,
      `expected exactly ${expected} hashes (ceil(input_length / trace_block_size)), got ${hashes.length}`,
    );
  }
  let raw: string[] | undefined;
  let rawLooked = false;
  const keys: (number | string)[] = new Array(hashes.length);
  for (let k = 0; k < hashes.length; k++) {
    const v: unknown = hashes[k];
    if (typeof v === "number" && !Number.isSafeInteger(v) && !rawLooked) {
      rawLooked = true;
      raw = rawHashTokens(text, hashes);
    }
    const key = hashKey(v, raw?.[k]);
    if (typeof key === "object") throw f.error(field, `element ${k}: ${key.error}, got ${describeValue(v)}`);
    keys[k] = key;
  }
  return keys;
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Field readers that name the field (with its `event.` prefix when wrapped) in their errors. */
class Fields {
  constructor(
    private readonly at: RowPosition,
    private readonly prefix: string,
  ) {}

  error(field: string, detail: string): TraceError {
    return new TraceError(this.at.file, this.at.line, detail, this.prefix + field);
  }

  object(parent: Json, key: string, field = key): Json {
    const v = parent[key];
    if (v === undefined || v === null) throw this.error(field, "required field is missing");
    if (!isObject(v)) throw this.error(field, `expected an object, got ${describeValue(v)}`);
    return v;
  }

  /** A required non-negative integer ≤ max. */
  count(parent: Json, key: string, max: number, field = key): number {
    const v = parent[key];
    if (v === undefined || v === null) throw this.error(field, "required field is missing");
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
      throw this.error(field, `expected a non-negative integer, got ${describeValue(v)}`);
    }
    if (v > max) throw this.error(field, `value ${v} is too large (max ${max})`);
    return v;
  }

  optionalCount(parent: Json, field: string, key: string): number | null {
    const v = parent[key];
    if (v === undefined || v === null) return null;
    return this.count(parent, key, Number.MAX_SAFE_INTEGER, field);
  }
}
