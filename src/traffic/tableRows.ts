/**
 * A request table restricted to some of its rows, for replaying part of a workload (a retune
 * window). Kept rows keep their prompts (hashes), lengths and authored timing; within a session
 * they chain in row order, so a session's first kept row becomes its first turn. Timestamps shift
 * so the earliest first turn starts at 0, the invariant every loader keeps (traffic/requests.ts).
 */
import { type RequestTable, requestIdAt, sessionRows, sessionTable } from "./requests.js";

/**
 * `rows` must be strictly increasing row indices. `needTimestamps` (open-loop load): every session's
 * first kept row must have a timestamp, which a dropped earlier turn may have left it without.
 */
export function selectRows(
  table: RequestTable,
  rows: readonly number[],
  needTimestamps: boolean,
): RequestTable {
  checkRows(rows, table.count);
  // A dependency graph does not survive dropped rows (a kept row could wait for a dropped one);
  // only Dynamo traces are cut into windows (retune), and they have none.
  if ((table.dependencies ?? null) !== null)
    throw new RangeError("rows: a table with dependencies cannot be cut");
  const n = rows.length;
  const selected = sessionRows(n);
  const { timestampMs, inputLength, outputLength, session, turn, delayAfterPreviousMs, nextTurnRow } =
    selected;
  const { blockOffsets } = selected;
  nextTurnRow.fill(-1);
  const requestIds: (string | null)[] = new Array<string | null>(n);
  const sessionIds: (string | null)[] = [];
  const firstRows: number[] = [];
  /** Old session → [new session, its last kept row so far]. */
  const sessions = new Map<number, { id: number; last: number }>();
  let hashCount = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    timestampMs[i] = table.timestampMs[r];
    inputLength[i] = table.inputLength[r];
    outputLength[i] = table.outputLength[r];
    requestIds[i] = requestIdAt(table.requestIds, r);
    hashCount += table.blockOffsets[r + 1] - table.blockOffsets[r];
    blockOffsets[i + 1] = hashCount;
    const old = table.session[r];
    const seen = sessions.get(old);
    if (seen === undefined) {
      if (needTimestamps && Number.isNaN(timestampMs[i])) {
        throw new RangeError(`row ${r} starts a session of the selection but has no timestamp`);
      }
      sessions.set(old, { id: firstRows.length, last: i });
      session[i] = firstRows.length;
      firstRows.push(i);
      sessionIds.push(table.sessionIds[old]);
    } else {
      // A dropped turn in between: the delay still counts from whichever turn precedes this one.
      session[i] = seen.id;
      turn[i] = turn[seen.last] + 1;
      delayAfterPreviousMs[i] = table.delayAfterPreviousMs[r];
      nextTurnRow[seen.last] = i;
      seen.last = i;
    }
  }
  const blockHashes = new Float64Array(hashCount);
  const lazy = table.lazyHashes ?? null;
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    // The copy is hashed whole.
    lazy?.completePromptHashes(r, table.blockHashes, table.blockOffsets[r]);
    blockHashes.set(
      table.blockHashes.subarray(table.blockOffsets[r], table.blockOffsets[r + 1]),
      blockOffsets[i],
    );
  }
  const sessionFirstRow = Int32Array.from(firstRows);
  normalizeStarts(timestampMs, sessionFirstRow);
  return sessionTable(selected, {
    blockHashes,
    engineBlockSize: table.engineBlockSize,
    requestIds,
    sessionIds,
    sessionFirstRow,
  });
}

function checkRows(rows: readonly number[], count: number): void {
  if (rows.length === 0) throw new RangeError("rows: the selection is empty");
  let prev = -1;
  for (const r of rows) {
    if (!(Number.isInteger(r) && r > prev && r < count)) {
      throw new RangeError(
        `rows: expected strictly increasing row indices below ${count}, got ${r} after ${prev}`,
      );
    }
    prev = r;
  }
}

/** Shifts every timestamp so the earliest first turn is at 0 (NaN stays NaN), as the loaders do. */
function normalizeStarts(ts: Float64Array, firstRows: Int32Array): void {
  let min = Number.POSITIVE_INFINITY;
  for (const row of firstRows) if (ts[row] < min) min = ts[row];
  if (min === Number.POSITIVE_INFINITY || min === 0) return;
  for (let i = 0; i < ts.length; i++) ts[i] -= min;
}
