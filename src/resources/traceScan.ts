/**
 * The preflight's pass over the trace (seed 000 "Size the Run": start-up includes "a pass over the
 * whole trace that sizes the memory plan"): how many rows the run will hold and how large they
 * are, without building them. Every line is counted (a byte scan for newlines, plain or gzip);
 * a systematic sample of at most `MAX_SAMPLES` lines is parsed for the prompt sizes; the first and
 * last request of each file give the trace's time span. Memory: one chunk plus the sample.
 */
import type { TraceFormat } from "../config/traceFormats.js";
import { binaryContent, lineTooLong, MAX_LINE_CHARS, openTraceStream } from "../traffic/jsonlReader.js";

/** What the preflight needs to know of a trace. */
export interface TraceSize {
  /**
   * Requests (Mooncake rows; Dynamo `request_end` rows; `num_turns + 1` per applied-compute
   * session), estimated from the sample's requests per line.
   */
  readonly rows: number;
  /** Non-blank lines read. */
  readonly lines: number;
  /** Mean prompt tokens per request of the sample. */
  readonly meanInputTokens: number;
  /** Mean trace hash ids per request of the sample (`hash_ids`, `input_sequence_hashes`). */
  readonly meanHashIds: number;
  /** Mean full engine blocks per request, ⌊input / engine block size⌋, of the sample. */
  readonly meanEngineBlocks: number;
  /** Last arrival − first arrival, trace ms (null when the rows carry no times). */
  readonly spanMs: number | null;
  readonly sampled: number;
  /** Bytes of the lines (decompressed), newlines included: the mean line is `bytes / lines`. */
  readonly bytes: number;
  /**
   * Whether the sample looks like a trace the replay streams (traffic/mooncake/stream.ts): no
   * sampled row names a session, and the sampled arrivals never go back. The load decides on
   * every row; the sample only sizes the plan.
   */
  readonly streamable: boolean;
}

/** Lines parsed at most (a systematic sample: every k-th line, k doubling as the trace grows). */
export const MAX_SAMPLES = 4096;

interface Sample {
  readonly request: boolean;
  /** Requests the line becomes (an `applied_compute_agentic` session: one per turn; else 1). */
  readonly requests: number;
  /** Sums over the line's requests: prompt tokens, trace hash ids, full engine blocks. */
  readonly input: number;
  readonly hashes: number;
  readonly engineBlocks: number;
  readonly arrivalMs: number | null;
  /** The row names a session (Mooncake `session_id`). */
  readonly session: boolean;
}

const NOT_A_REQUEST: Sample = {
  request: false,
  requests: 0,
  input: 0,
  hashes: 0,
  engineBlocks: 0,
  arrivalMs: null,
  session: false,
};

/** Reads one row of any format; null for a line that is not JSON (the load reports it). */
function sampleOf(
  line: string,
  format: TraceFormat,
  traceBlockSize: number,
  engineBlockSize: number,
): Sample | null {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    return null;
  }
  if (row === null || typeof row !== "object") return null;
  const r = row as Record<string, unknown>;
  const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const one = (input: number, hashes: number, arrivalMs: number | null, session: boolean): Sample => ({
    request: true,
    requests: 1,
    input,
    hashes,
    engineBlocks: Math.floor(input / engineBlockSize),
    arrivalMs,
    session,
  });
  if (format === "dynamo") {
    const request = r["request"] as Record<string, unknown> | undefined;
    const replay = request?.["replay"] as Record<string, unknown> | undefined;
    if (r["event_type"] !== "request_end" || replay === undefined) return NOT_A_REQUEST;
    const hashes = replay["input_sequence_hashes"];
    const received = num(request?.["request_received_ms"]);
    const event = num(r["event_time_unix_ms"]);
    const total = num(request?.["total_time_ms"]);
    return one(
      num(replay["input_length"]) ?? 0,
      Array.isArray(hashes) ? hashes.length : 0,
      received ?? (event !== null && total !== null ? event - total : event),
      false,
    );
  }
  if (format === "applied_compute_agentic") return sessionSample(r, traceBlockSize, engineBlockSize);
  // The Mooncake family: a delta turn is sized by its delta here (its prompt grows in the load).
  const ids = r["hash_ids"];
  const hashes = Array.isArray(ids) ? ids.length : 0;
  return one(
    num(r["input_length"]) ?? num(r["input_tokens"]) ?? hashes * traceBlockSize,
    hashes,
    num(r["timestamp"]) ?? num(r["created_time"]),
    // Sessions and dependency graphs are replayed from the table, not streamed.
    format !== "mooncake" || (r["session_id"] !== undefined && r["session_id"] !== null),
  );
}

/** An `applied_compute_agentic` session: its `num_turns + 1` growing prompts (traffic/appliedComputeAgentic.ts). */
function sessionSample(r: Record<string, unknown>, traceBlockSize: number, engineBlockSize: number): Sample {
  const nums = (v: unknown): number[] =>
    Array.isArray(v) ? v.map((x) => (typeof x === "number" ? x : 0)) : [];
  const turns = typeof r["num_turns"] === "number" ? Math.max(0, Math.floor(r["num_turns"])) : 0;
  const assistant = nums(r["assistant_response_length"]);
  const tool = nums(r["tool_call_output_length"]);
  let length = typeof r["input_prompt_length"] === "number" ? r["input_prompt_length"] : 0;
  let input = 0;
  let hashes = 0;
  let engineBlocks = 0;
  for (let k = 0; k <= turns; k++) {
    input += length;
    hashes += Math.ceil(length / traceBlockSize);
    engineBlocks += Math.floor(length / engineBlockSize);
    length += (assistant[k] ?? 0) + (tool[k] ?? 0);
  }
  return { request: true, requests: turns + 1, input, hashes, engineBlocks, arrivalMs: null, session: true };
}

interface FileScan {
  lines: number;
  bytes: number;
  firstRequest: Sample | null;
  /** The file's last non-blank line (for the trace's last arrival). */
  lastLine: string | null;
}

/**
 * Scans one file: counts non-blank lines, parses every `stride`-th one (counting from the first
 * line of the trace) into `samples`, thinned to at most 2 × MAX_SAMPLES by doubling the stride, and
 * keeps the file's first request and last line.
 */
async function scanFile(
  path: string,
  lineOffset: number,
  state: { stride: number; samples: Sample[] },
  parse: (line: string) => Sample | null,
): Promise<FileScan> {
  const { stream } = await openTraceStream(path);
  const out: FileScan = { lines: 0, bytes: 0, firstRequest: null, lastLine: null };
  let last: Buffer | null = null;
  // The last non-blank line of the current buffer: [lastStart, lastEnd).
  let lastStart = -1;
  let lastEnd = -1;
  const onLine = (buf: Buffer, start: number, end: number): void => {
    let s = start;
    let e = end;
    while (s < e && (buf[s] === 32 || buf[s] === 9 || buf[s] === 13)) s++;
    while (e > s && (buf[e - 1] === 32 || buf[e - 1] === 9 || buf[e - 1] === 13)) e--;
    if (e <= s) return;
    const index = lineOffset + out.lines;
    out.lines++;
    lastStart = s;
    lastEnd = e;
    const sampled = index % state.stride === 0;
    if (!sampled && out.firstRequest !== null) return;
    const sample = parse(buf.toString("utf8", s, e));
    if (sample === null) return;
    if (sample.request && out.firstRequest === null) out.firstRequest = sample;
    if (!sampled) return;
    state.samples.push(sample);
    if (state.samples.length >= 2 * MAX_SAMPLES) {
      // Keep every other sample: the same as having sampled at twice the stride.
      state.samples = state.samples.filter((_, i) => i % 2 === 0);
      state.stride *= 2;
    }
  };
  // The unfinished line's pieces: joined once its line break arrives, so a long line costs its
  // length once (not once per chunk); it never holds a line break.
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of stream) {
    out.bytes += chunk.length;
    // A NUL or an endless line stops the scan at once (the trace load then names it the same way).
    if (chunk.indexOf(0) >= 0) throw binaryContent(path, lineOffset + out.lines + 1);
    const firstBreak = chunk.indexOf(10);
    if (firstBreak < 0 || (pendingBytes > 0 && pendingBytes + firstBreak > MAX_LINE_CHARS)) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes > MAX_LINE_CHARS) throw lineTooLong(path, lineOffset + out.lines + 1);
      continue;
    }
    const buf: Buffer = pending.length === 0 ? chunk : Buffer.concat([...pending, chunk]);
    pending.length = 0;
    pendingBytes = 0;
    let start = 0;
    lastStart = -1;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl < 0) break;
      if (nl - start > MAX_LINE_CHARS) throw lineTooLong(path, lineOffset + out.lines + 1);
      onLine(buf, start, nl);
      start = nl + 1;
    }
    if (lastStart >= 0) last = Buffer.from(buf.subarray(lastStart, lastEnd));
    if (start < buf.length) {
      pending.push(Buffer.from(buf.subarray(start)));
      pendingBytes = buf.length - start;
    }
  }
  const carry = pending.length === 0 ? null : Buffer.concat(pending);
  if (carry !== null) {
    lastStart = -1;
    onLine(carry, 0, carry.length);
    if (lastStart >= 0) last = carry.subarray(lastStart, lastEnd);
  }
  out.lastLine = last === null ? null : last.toString("utf8");
  return out;
}

/** Scans a trace's files (plain or gzip). I/O errors propagate: the caller leaves them to the load. */
export async function scanTrace(
  paths: readonly string[],
  format: TraceFormat,
  traceBlockSize: number,
  engineBlockSize: number,
): Promise<TraceSize> {
  const state = { stride: 1, samples: [] as Sample[] };
  const parse = (line: string): Sample | null => sampleOf(line, format, traceBlockSize, engineBlockSize);
  let lines = 0;
  let bytes = 0;
  let first: number | null = null;
  let last: number | null = null;
  for (const path of paths) {
    const f = await scanFile(path, lines, state, parse);
    lines += f.lines;
    bytes += f.bytes;
    const a = f.firstRequest?.arrivalMs ?? null;
    if (a !== null) first = first === null ? a : Math.min(first, a);
    const tailSample = f.lastLine === null ? null : parse(f.lastLine);
    const b = tailSample?.request ? tailSample.arrivalMs : null;
    if (b !== null) last = last === null ? b : Math.max(last, b);
  }
  const requests = state.samples.filter((s) => s.request);
  let ordered = paths.length === 1;
  let previous = Number.NEGATIVE_INFINITY;
  for (const s of requests) {
    if (s.session || s.arrivalMs === null || s.arrivalMs < previous) ordered = false;
    else previous = s.arrivalMs;
  }
  const perLine = (sum: number): number => (state.samples.length === 0 ? 1 : sum / state.samples.length);
  const sampledRequests = requests.reduce((sum, s) => sum + s.requests, 0);
  const mean = (f: (s: Sample) => number): number =>
    sampledRequests === 0 ? 0 : requests.reduce((sum, s) => sum + f(s), 0) / sampledRequests;
  return {
    rows: Math.round(lines * perLine(sampledRequests)),
    lines,
    meanInputTokens: mean((s) => s.input),
    meanHashIds: mean((s) => s.hashes),
    meanEngineBlocks: mean((s) => s.engineBlocks),
    spanMs: first === null || last === null ? null : Math.max(0, last - first),
    sampled: state.samples.length,
    bytes,
    streamable: format === "mooncake" && ordered && requests.length > 0,
  };
}
