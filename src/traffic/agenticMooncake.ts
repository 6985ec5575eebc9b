/**
 * `format: agentic_mooncake` (mocker.md §4.3 and §6.2, the AISimulate user guide §11.8): every
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
import { hashPrompts } from "./blockHashes.js";
import { GrowableF64, GrowableI32, GrowableU32 } from "./columns.js";
import { readJsonlLines } from "./jsonlReader.js";
import type { MooncakeLoadOptions } from "./mooncake.js";
import { MooncakeRowParser } from "./mooncakeRow.js";
import type { RequestDependencies, RequestTable } from "./requests.js";
import { describeValue, TraceError } from "./traceError.js";

type AgenticLoadOptions = Pick<MooncakeLoadOptions, "traceBlockSize" | "engineBlockSize">;

/** What the graph checks need of the rows read. */
interface Nodes {
  readonly path: string;
  readonly ids: string[];
  readonly lines: number[];
  /** Per row: the ids it waits for, as written. */
  readonly waitFor: string[][];
}

export async function loadAgenticMooncakeTrace(
  path: string,
  opts: AgenticLoadOptions,
): Promise<RequestTable> {
  const T = opts.traceBlockSize;
  const E = opts.engineBlockSize;
  const timestamp = new GrowableF64();
  const delay = new GrowableF64();
  const inputLength = new GrowableI32();
  const outputLength = new GrowableI32();
  const ids = new GrowableU32(1 << 16);
  const idOffsets = new GrowableI32();
  idOffsets.push(0);
  const sessionIds: (string | null)[] = [];
  const nodes: Nodes = { path, ids: [], lines: [], waitFor: [] };
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

  const count = nodes.ids.length;
  if (count === 0) throw new TraceError(path, 0, "trace has no rows");
  const dependencies = resolveDependencies(nodes, rowById);
  checkAcyclic(nodes, dependencies);

  const ts = timestamp.toArray();
  let min = Number.POSITIVE_INFINITY;
  for (const t of ts) if (t < min) min = t;
  const shift = min === Number.POSITIVE_INFINITY ? 0 : min;
  for (let i = 0; i < count; i++) {
    const waits = dependencies.waitOffsets[i + 1] - dependencies.waitOffsets[i];
    // A dependent node's release is its dependencies' business: it has no arrival time of its own.
    ts[i] = waits > 0 ? Number.NaN : ts[i] - shift;
  }

  const inputs = inputLength.toArray();
  const packed = hashPrompts(count, ids.data, idOffsets.data, inputs, T, E);
  const rows = Int32Array.from({ length: count }, (_, i) => i);
  return {
    count,
    timestampMs: ts,
    inputLength: inputs,
    outputLength: outputLength.toArray(),
    // Every node is a session of its own (its own tie-break key), as in the reference's driver.
    session: rows,
    turn: new Int32Array(count),
    delayAfterPreviousMs: delay.toArray(),
    blockOffsets: packed.offsets,
    blockHashes: packed.hashes,
    engineBlockSize: E,
    requestIds: nodes.ids,
    sessionIds,
    sessionCount: count,
    sessionFirstRow: rows.slice(),
    nextTurnRow: new Int32Array(count).fill(-1),
    dependencies,
  };
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

/** `wait_for` ids → rows; an unknown id or a row waiting for itself is an error at its line. */
function resolveDependencies(nodes: Nodes, rowById: ReadonlyMap<string, number>): RequestDependencies {
  const n = nodes.ids.length;
  const waitOffsets = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    waitOffsets[i] = total;
    total += nodes.waitFor[i].length;
  }
  waitOffsets[n] = total;
  const waitRows = new Int32Array(total);
  for (let i = 0; i < n; i++) {
    const waits = nodes.waitFor[i];
    for (let k = 0; k < waits.length; k++) {
      const row = rowById.get(waits[k]);
      if (row === undefined) {
        throw new TraceError(
          nodes.path,
          nodes.lines[i],
          `element ${k}: unknown request_id '${waits[k]}'`,
          "wait_for",
        );
      }
      if (row === i) {
        throw new TraceError(
          nodes.path,
          nodes.lines[i],
          `element ${k}: request '${waits[k]}' cannot wait for itself`,
          "wait_for",
        );
      }
      waitRows[waitOffsets[i] + k] = row;
    }
  }
  return { waitOffsets, waitRows };
}

/**
 * A cycle of dependencies is an error at the line of the first row (in file order) from which
 * one is found, naming the cycle. Depth-first, iterative: a chain of a million rows is fine.
 */
function checkAcyclic(nodes: Nodes, deps: RequestDependencies): void {
  const n = nodes.ids.length;
  const { waitOffsets, waitRows } = deps;
  // 0 unvisited, 1 on the current path, 2 done.
  const mark = new Uint8Array(n);
  const next = new Int32Array(n); // the next dependency to visit, per row on the path
  const path: number[] = [];
  for (let root = 0; root < n; root++) {
    if (mark[root] !== 0) continue;
    path.push(root);
    mark[root] = 1;
    next[root] = waitOffsets[root];
    while (path.length > 0) {
      const v = path[path.length - 1];
      if (next[v] === waitOffsets[v + 1]) {
        mark[v] = 2;
        path.pop();
        continue;
      }
      const w = waitRows[next[v]++];
      if (mark[w] === 1) {
        const cycle = path.slice(path.indexOf(w));
        const names = [...cycle, w].map((row) => `'${nodes.ids[row]}' (line ${nodes.lines[row]})`);
        throw new TraceError(
          nodes.path,
          nodes.lines[cycle[0]],
          `dependency cycle: ${names.join(" waits for ")}`,
          "wait_for",
        );
      }
      if (mark[w] === 0) {
        mark[w] = 1;
        next[w] = waitOffsets[w];
        path.push(w);
      }
    }
  }
}
