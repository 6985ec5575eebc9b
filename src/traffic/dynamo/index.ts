/**
 * Dynamo request traces (`traffic.source.format: dynamo`, `dynamo.request.trace.v1`) → RequestTable.
 *
 * Reading and row rules live in `traffic/dynamo/record.ts` (one line) and `traffic/dynamo/read.ts` (files,
 * duplicates, block size, ordering). Here the sorted requests become table rows:
 *  - Standard trace (no `agent_context`): every request is its own session, arriving at its
 *    recorded arrival, exactly like a Mooncake row without `session_id`.
 *  - Agentic trace (`agent_context` on every request): `agent_context.session_id` is the session;
 *    its turns are ordered by arrival; a later turn arrives `max(0, its arrival − previous turn's
 *    recorded completion)` after the previous turn finishes in the simulation — the tool/think
 *    gap the reference derives for its `Completion` dependency. `parent_session_id` and tool
 *    events are not modelled: a child session starts at its own recorded arrival.
 *  - Arrivals are shifted so the earliest selected request arrives at 0.
 *  - Compact hash ids expand to engine-block hashes exactly as Mooncake `hash_ids` do, with the
 *    embedded block size as the trace block size, so prefix sharing works the same way.
 */
import { hashPrompts } from "../blockHashes.js";
import type { RequestTable } from "../requests.js";
import { type DynamoReadOptions, type DynamoRequests, readDynamoRequests } from "./read.js";

export type { DynamoRequests } from "./read.js";
export { readDynamoRequests } from "./read.js";

export interface DynamoTableOptions {
  /** Engine KV block size the sequence hashes are computed for. */
  readonly engineBlockSize: number;
  /** Rows of `requests` to keep (ascending); default all. For replaying a window of a trace. */
  readonly rows?: ArrayLike<number>;
  /** Treat every request as independent even in an agentic trace (open-loop window replay). */
  readonly ignoreSessions?: boolean;
}

/** True when every request of the trace carries `agent_context`. */
export function isAgentic(requests: DynamoRequests): boolean {
  return requests.sessionIds !== null;
}

/** Builds the RequestTable of (a selection of) the requests of a Dynamo trace. */
export function buildDynamoTable(requests: DynamoRequests, opts: DynamoTableOptions): RequestTable {
  const E = opts.engineBlockSize;
  if (!(Number.isInteger(E) && E > 0))
    throw new RangeError(`engineBlockSize must be a positive integer, got ${E}`);
  const rows = opts.rows ?? Array.from({ length: requests.count }, (_, i) => i);
  const count = rows.length;
  if (count === 0) throw new RangeError("no request selected");

  // Packed hash ids of the selected rows (a copy: a selection need not be contiguous).
  const idOffsets = new Int32Array(count + 1);
  let total = 0;
  for (let k = 0; k < count; k++) {
    idOffsets[k] = total;
    total += requests.hashIdOffsets[rows[k] + 1] - requests.hashIdOffsets[rows[k]];
  }
  idOffsets[count] = total;
  const ids = new Uint32Array(total);
  const timestampMs = new Float64Array(count);
  const inputLength = new Int32Array(count);
  const outputLength = new Int32Array(count);
  const requestIds: string[] = new Array(count);
  let origin = Number.POSITIVE_INFINITY;
  for (let k = 0; k < count; k++) {
    const r = rows[k];
    ids.set(
      requests.hashIds.subarray(requests.hashIdOffsets[r], requests.hashIdOffsets[r + 1]),
      idOffsets[k],
    );
    inputLength[k] = requests.inputLength[r];
    outputLength[k] = requests.outputLength[r];
    requestIds[k] = requests.requestIds[r];
    if (requests.startMs[r] < origin) origin = requests.startMs[r];
  }
  for (let k = 0; k < count; k++) timestampMs[k] = requests.startMs[rows[k]] - origin;

  const sessions =
    opts.ignoreSessions || requests.sessionIds === null
      ? independentSessions(count)
      : agentSessions(requests, rows, requests.sessionIds);
  const packed = hashPrompts(count, ids, idOffsets, inputLength, requests.blockSize, E);
  return {
    count,
    timestampMs,
    inputLength,
    outputLength,
    ...sessions,
    blockOffsets: packed.offsets,
    blockHashes: packed.hashes,
    engineBlockSize: E,
    requestIds,
  };
}

/** Reads a Dynamo trace and builds its RequestTable (all requests). */
export async function loadDynamoTrace(
  paths: readonly string[],
  opts: DynamoReadOptions & { readonly engineBlockSize: number },
): Promise<RequestTable> {
  const requests = await readDynamoRequests(paths, opts);
  return buildDynamoTable(requests, { engineBlockSize: opts.engineBlockSize });
}

type SessionColumns = Pick<
  RequestTable,
  | "session"
  | "turn"
  | "delayAfterPreviousMs"
  | "sessionIds"
  | "sessionCount"
  | "sessionFirstRow"
  | "nextTurnRow"
>;

function independentSessions(count: number): SessionColumns {
  const session = new Int32Array(count);
  for (let i = 0; i < count; i++) session[i] = i;
  return {
    session,
    turn: new Int32Array(count),
    delayAfterPreviousMs: new Float64Array(count),
    sessionIds: new Array<string | null>(count).fill(null),
    sessionCount: count,
    sessionFirstRow: session.slice(),
    nextTurnRow: new Int32Array(count).fill(-1),
  };
}

/** Sessions by `agent_context.session_id`; rows are already in arrival order. */
function agentSessions(
  requests: DynamoRequests,
  rows: ArrayLike<number>,
  ids: readonly string[],
): SessionColumns {
  const count = rows.length;
  const session = new Int32Array(count);
  const turn = new Int32Array(count);
  const delay = new Float64Array(count);
  const nextTurnRow = new Int32Array(count).fill(-1);
  const sessionIds: string[] = [];
  const firstRows: number[] = [];
  const lastRow: number[] = [];
  const byKey = new Map<string, number>();
  for (let k = 0; k < count; k++) {
    const r = rows[k];
    const key = ids[r];
    const s = byKey.get(key);
    if (s === undefined) {
      byKey.set(key, sessionIds.length);
      session[k] = sessionIds.length;
      sessionIds.push(key);
      firstRows.push(k);
      lastRow.push(k);
      continue;
    }
    const prev = lastRow[s];
    session[k] = s;
    turn[k] = turn[prev] + 1;
    delay[k] = Math.max(0, requests.startMs[r] - requests.endMs[rows[prev]]);
    nextTurnRow[prev] = k;
    lastRow[s] = k;
  }
  return {
    session,
    turn,
    delayAfterPreviousMs: delay,
    sessionIds,
    sessionCount: sessionIds.length,
    sessionFirstRow: Int32Array.from(firstRows),
    nextTurnRow,
  };
}
