/**
 * `format: agentic_mooncake` (`ai-dynamo/dynamo@9ce5bc5:lib/mocker/src/loadgen/driver.rs`, `ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`, the AISimulate user guide §11.8): every
 * row is a request node of a dependency graph. The Mooncake fields keep their meaning (one full
 * prompt per row; `session_id` is only a label), and:
 *  - `request_id` is required, a non-empty string, unique;
 *  - `wait_for` (request ids): the node is ready once all of them have ended, plus its `delay`
 *    (or `delay_ms`) and `tool_wait_ms`; a node without any is ready at its `timestamp` (0 when
 *    absent), and the timestamp of a node with dependencies does not control its release;
 *  - `branches`, `prefix_reset`, `request_kind`, `tool_events` are producer metadata (type-checked
 *    where the reference types them, otherwise ignored), as are `priority` and friends;
 *  - an `input_length` above the `hash_ids` capacity is an error (not clamped, as for Mooncake),
 *    a `timestamp` must be ≥ 0, and unknown, self or cyclic dependencies are errors naming the
 *    line of the row that waits.
 * Timestamps shift so the earliest one of any row is 0, as the reference normalizes them.
 */
import { type AgenticNodes, buildAgenticTable } from "./agenticGraph.js";
import { TraceColumns } from "./columns.js";
import { readJsonlLines } from "./jsonlReader.js";
import type { MooncakeLoadOptions } from "./mooncake/index.js";
import { MooncakeRowParser } from "./mooncake/row.js";
import type { RequestTable } from "./requests.js";
import { describeValue } from "./traceError.js";

type AgenticLoadOptions = Pick<MooncakeLoadOptions, "traceBlockSize" | "engineBlockSize">;

export async function loadAgenticMooncakeTrace(
  path: string,
  opts: AgenticLoadOptions,
): Promise<RequestTable> {
  const T = opts.traceBlockSize;
  const E = opts.engineBlockSize;
  const { timestamp, delay, inputLength, outputLength, ids, idOffsets } = new TraceColumns();
  const sessionIds: (string | null)[] = [];
  const nodes: AgenticNodes = { path, ids: [], lines: [], waitFor: [] };
  const rowById = new Map<string, number>();

  const parser = new MooncakeRowParser(path, T, false);
  await readJsonlLines(path, (text, lineNo) => {
    const f = parser.parse(text, lineNo, ids);
    idOffsets.push(ids.length);
    const r = parser.row;
    const id = r["request_id"];
    if (id === undefined || id === null) throw parser.error("request_id", "required field is missing");
    if (typeof id !== "string" || id.trim() === "") {
      throw parser.error("request_id", `expected a non-empty string, got ${describeValue(id)}`);
    }
    const seen = rowById.get(id);
    if (seen !== undefined) {
      throw parser.error("request_id", `'${id}' is already the request_id of line ${nodes.lines[seen]}`);
    }
    if (f.timestampMs < 0) {
      throw parser.error(
        pickPresent(r, "timestamp", "created_time"),
        `expected a non-negative number of milliseconds, got ${f.timestampMs}`,
      );
    }
    const waits = readIdList(parser, r, "wait_for");
    readIdList(parser, r, "branches");
    const reset = r["prefix_reset"];
    if (reset !== undefined && reset !== null && typeof reset !== "boolean") {
      throw parser.error("prefix_reset", `expected true or false, got ${describeValue(reset)}`);
    }
    const toolWait =
      r["tool_wait_ms"] === undefined || r["tool_wait_ms"] === null
        ? 0
        : parser.readMs(r, "tool_wait_ms", true);
    const after = (Number.isNaN(f.delayMs) ? 0 : f.delayMs) + toolWait;

    rowById.set(id, nodes.ids.length);
    nodes.ids.push(id);
    nodes.lines.push(lineNo);
    nodes.waitFor.push(waits);
    timestamp.push(f.timestampMs);
    // A root's delay is never used: it is ready at its timestamp (as the reference's driver).
    delay.push(waits.length === 0 ? 0 : after);
    inputLength.push(f.inputLength);
    outputLength.push(f.outputLength);
    sessionIds.push(f.sessionId);
  });

  return buildAgenticTable(
    nodes,
    rowById,
    {
      timestamp: timestamp.toArray(),
      delay: delay.toArray(),
      inputLength: inputLength.toArray(),
      outputLength: outputLength.toArray(),
      ids: ids.data,
      idOffsets: idOffsets.data,
      sessionIds,
    },
    T,
    E,
  );
}

/** An optional list of request-id strings (`wait_for`, `branches`); [] when absent or null. */
function readIdList(parser: MooncakeRowParser, r: Readonly<Record<string, unknown>>, key: string): string[] {
  const v = r[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v))
    throw parser.error(key, `expected an array of request_id strings, got ${describeValue(v)}`);
  for (let k = 0; k < v.length; k++) {
    if (typeof v[k] !== "string") {
      throw parser.error(key, `element ${k}: expected a request_id string, got ${describeValue(v[k])}`);
    }
  }
  return v as string[];
}

function pickPresent(r: Readonly<Record<string, unknown>>, primary: string, alias: string): string {
  return r[primary] !== undefined && r[primary] !== null ? primary : alias;
}
