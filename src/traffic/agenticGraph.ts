/**
 * The dependency graph of an agentic trace (`agentic_mooncake`, and the formats lowered onto it
 * such as `weka`): request ids resolved to rows, checked for unknown, self and cyclic
 * dependencies (errors at the line, or source position, of the row that waits), and the request
 * table built from the rows' columns.
 */
import { hashPrompts } from "./blockHashes.js";
import type { RequestDependencies, RequestTable } from "./requests.js";
import { TraceError } from "./traceError.js";

/** What the graph checks need of the rows read. */
export interface AgenticNodes {
  readonly path: string;
  readonly ids: string[];
  /** Per row: the line (or, for a corpus, a position) errors name. */
  readonly lines: number[];
  /** Per row: the ids it waits for, as written. */
  readonly waitFor: string[][];
}

/** The rows' columns, in row order (`ids`/`idOffsets`: trace hash ids at the trace block size). */
export interface AgenticColumns {
  readonly timestamp: Float64Array;
  readonly delay: Float64Array;
  readonly inputLength: Int32Array;
  readonly outputLength: Int32Array;
  readonly ids: Uint32Array;
  readonly idOffsets: Int32Array;
  readonly sessionIds: (string | null)[];
}

/**
 * The request table of a graph: a node without dependencies arrives at its timestamp (shifted so
 * the earliest is 0); one with dependencies has no arrival of its own (NaN) and is released when
 * they have ended, after its delay.
 */
export function buildAgenticTable(
  nodes: AgenticNodes,
  rowById: ReadonlyMap<string, number>,
  c: AgenticColumns,
  traceBlockSize: number,
  engineBlockSize: number,
): RequestTable {
  const T = traceBlockSize;
  const E = engineBlockSize;
  const path = nodes.path;
  const count = nodes.ids.length;
  if (count === 0) throw new TraceError(path, 0, "trace has no rows");
  const dependencies = resolveDependencies(nodes, rowById);
  checkAcyclic(nodes, dependencies);

  const ts = c.timestamp;
  let min = Number.POSITIVE_INFINITY;
  for (const t of ts) if (t < min) min = t;
  const shift = min === Number.POSITIVE_INFINITY ? 0 : min;
  for (let i = 0; i < count; i++) {
    const waits = dependencies.waitOffsets[i + 1] - dependencies.waitOffsets[i];
    // A dependent node's release is its dependencies' business: it has no arrival time of its own.
    ts[i] = waits > 0 ? Number.NaN : ts[i] - shift;
  }

  const inputs = c.inputLength;
  const packed = hashPrompts(count, c.ids, c.idOffsets, inputs, T, E);
  const rows = Int32Array.from({ length: count }, (_, i) => i);
  return {
    count,
    timestampMs: ts,
    inputLength: inputs,
    outputLength: c.outputLength,
    // Every node is a session of its own (its own tie-break key), as in the reference's driver.
    session: rows,
    turn: new Int32Array(count),
    delayAfterPreviousMs: c.delay,
    blockOffsets: packed.offsets,
    blockHashes: packed.hashes,
    engineBlockSize: E,
    requestIds: nodes.ids,
    sessionIds: c.sessionIds,
    sessionCount: count,
    sessionFirstRow: rows.slice(),
    nextTurnRow: new Int32Array(count).fill(-1),
    dependencies,
  };
}

/** `wait_for` ids → rows; an unknown id or a row waiting for itself is an error at its line. */
function resolveDependencies(nodes: AgenticNodes, rowById: ReadonlyMap<string, number>): RequestDependencies {
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
function checkAcyclic(nodes: AgenticNodes, deps: RequestDependencies): void {
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
