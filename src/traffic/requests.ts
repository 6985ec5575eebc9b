/**
 * The workload as columns: one row per request (a Mooncake row, or one synthetic request), in
 * file/generation order. Memory is a few typed arrays, not one object per request.
 *
 * Engine-block hashes are precomputed per request (see `blockHashes.ts`): request `i` owns
 * `blockHashes[blockOffsets[i] .. blockOffsets[i+1])`, the chained sequence hashes of its *full*
 * engine blocks of prompt tokens (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`). A trailing partial block has no hash.
 */
export interface RequestTable {
  readonly count: number;
  /** Authored arrival time in ms, normalized so the first session starts at 0 (NaN when absent). */
  readonly timestampMs: Float64Array;
  readonly inputLength: Int32Array;
  readonly outputLength: Int32Array;
  /** Session index (0-based, dense). Rows without `session_id` get a session of their own. */
  readonly session: Int32Array;
  /** Turn index within the session (0 for the first). */
  readonly turn: Int32Array;
  /** Delay before this turn once the previous turn completed, ms (0 for first turns). */
  readonly delayAfterPreviousMs: Float64Array;
  readonly blockOffsets: Int32Array;
  /**
   * Sequence hashes as non-negative integers below 2^53 (exact in a double). With `lazyHashes`,
   * a row's are written only when a use needs them (`completeTableHashes`).
   */
  readonly blockHashes: Float64Array;
  /**
   * Present when `blockHashes` is filled row by row on demand (a synthetic table: its hashes are a
   * counter, and an engine reads none of them while every block is owner-only; a Mooncake table:
   * each row hashed up to its owner-only blocks), or absent: the table is hashed whole. A table
   * whose hashes are replaced must drop it.
   */
  readonly lazyHashes?: LazyTableHashes | null;
  /** Engine block size the hashes were computed for. */
  readonly engineBlockSize: number;
  /**
   * Per row, the first of its blocks from which on no other row's prompt holds them
   * (`RequestSource.ownerOnlyFrom`: output blocks included, so a source whose prompts hold earlier
   * outputs must leave it out), or absent when the source does not know. A table whose rows are
   * copied, repeated or merged must drop it (a repeated row shares its whole prompt).
   */
  readonly ownerOnlyFrom?: Int32Array | null;
  /** Authored `request_id` per row (or null), or ids numbered by row (`requestIdAt`). */
  readonly requestIds: ReadonlyArray<string | null> | NumberedRequestIds;
  /** Authored `session_id` per session index, or null for implicit sessions. */
  readonly sessionIds: ReadonlyArray<string | null>;
  /** Number of sessions. */
  readonly sessionCount: number;
  /** Row index of the first turn of each session (sessions are in order of first appearance). */
  readonly sessionFirstRow: Int32Array;
  /** Row index of the next turn of the same session, or -1. */
  readonly nextTurnRow: Int32Array;
  /**
   * A dependency graph between rows (`agentic_mooncake`, traffic/agenticMooncake.ts), or absent:
   * then sessions decide (`nextTurnRow`). With it every row is a session of its own, a row
   * without dependencies is ready at its timestamp and a row with some is ready
   * `delayAfterPreviousMs` after the last of them ended (sim/dagArrivals.ts).
   */
  readonly dependencies?: RequestDependencies | null;
}

/**
 * Writes a lazy table's rows' hashes into its `blockHashes` (`completePromptHashes(row,
 * blockHashes, blockOffsets[row])`, as `RequestSource.hashCompleter` does for a source) and says
 * which rows have them.
 */
export interface LazyTableHashes {
  /** How many of row `row`'s prompt hashes the table's `blockHashes` holds now. */
  hashedCount(row: number): number;
  /** Writes row `row`'s hashes into `out[outStart ..]` (a `PromptHashCompleter`, traffic/requestSource.ts). */
  completePromptHashes(row: number, out: Float64Array, outStart: number): void;
}

/** Writes every prompt hash of a lazy table (nothing to do for one hashed whole) and returns it: tests and copies. */
export function completeTableHashes<T extends RequestTable>(table: T): T {
  const lazy = table.lazyHashes ?? null;
  if (lazy === null) return table;
  for (let r = 0; r < table.count; r++)
    lazy.completePromptHashes(r, table.blockHashes, table.blockOffsets[r]);
  return table;
}

/** Row r waits for rows `waitRows[waitOffsets[r] .. waitOffsets[r + 1])` (acyclic; repeats count twice). */
export interface RequestDependencies {
  readonly waitOffsets: Int32Array;
  readonly waitRows: Int32Array;
}

/** The row columns of a table with sessions, blocks' offsets included (see `sessionTable`). */
export type SessionRows = Pick<
  RequestTable,
  | "timestampMs"
  | "inputLength"
  | "outputLength"
  | "session"
  | "turn"
  | "delayAfterPreviousMs"
  | "nextTurnRow"
  | "blockOffsets"
>;

/** Zeroed row columns for `count` rows, to fill in place. */
export function sessionRows(count: number): SessionRows {
  return {
    timestampMs: new Float64Array(count),
    inputLength: new Int32Array(count),
    outputLength: new Int32Array(count),
    session: new Int32Array(count),
    turn: new Int32Array(count),
    delayAfterPreviousMs: new Float64Array(count),
    nextTurnRow: new Int32Array(count),
    blockOffsets: new Int32Array(count + 1),
  };
}

/** A table of sessions without dependencies: its rows, their prompts' hashes and its sessions. */
export function sessionTable(
  rows: SessionRows,
  rest: Pick<
    RequestTable,
    "blockHashes" | "engineBlockSize" | "requestIds" | "sessionIds" | "sessionFirstRow"
  >,
): RequestTable {
  return {
    ...rows,
    ...rest,
    count: rows.inputLength.length,
    sessionCount: rest.sessionFirstRow.length,
  };
}

/**
 * Request ids numbered by row: row r's id is `${prefix}${r}`. A synthetic workload's ids, kept
 * as a rule instead of a string per row (131,072 strings built at start-up and kept alive all
 * run were most of its garbage collection; docs/performance.md). Plain data, so a table still
 * travels to sweep workers.
 */
export interface NumberedRequestIds {
  readonly prefix: string;
}

/** The request id of row `row` of a table's `requestIds`. */
export function requestIdAt(ids: RequestTable["requestIds"], row: number): string | null {
  return isNumbered(ids) ? `${ids.prefix}${row}` : ids[row];
}

function isNumbered(ids: RequestTable["requestIds"]): ids is NumberedRequestIds {
  return !Array.isArray(ids);
}
