/**
 * The workload as the replay reads it: row by row, as far as it has been read. A materialized
 * `RequestTable` (`tableSource.ts`) is read whole before the replay starts; a Mooncake trace of
 * single-turn requests on its own timestamps is streamed (`traffic/mooncake/stream.ts`): rows are read as
 * the simulated clock reaches their arrival, and a row's state is dropped once the replay
 * releases it (docs/performance.md "Memory").
 *
 * Per-row getters take the row number; they are valid for rows `[window.freed, window.read)`.
 */
import type { RowWindow } from "../util/rowWindow.js";
import type { RequestTable } from "./requests.js";

/** What is known of the whole workload before the replay starts. */
export interface WorkloadInfo {
  /** Requests (rows) of the workload. */
  readonly count: number;
  readonly sessionCount: number;
  /** The latest first-turn timestamp (ms, normalized as the table's), or -∞ when none has one. */
  readonly lastFirstTurnMs: number;
  /** The longest context, prompt + output − 1 tokens, over every row (−1 for an empty workload). */
  readonly longestContext: number;
  /** Whether some request's end can make another ready (a session's later turn, a dependent request). */
  readonly hasLaterTurns: boolean;
}

export interface RequestSource {
  readonly engineBlockSize: number;
  readonly info: WorkloadInfo;
  /** The rows read and not yet released; the replay's per-row stores live in it. */
  readonly window: RowWindow;
  /** The whole table when the workload is materialized (sessions, closed loop, synthetic, Dynamo); null for a stream. */
  readonly table: RequestTable | null;
  /**
   * Arrivals of rows not yet read come at or after this virtual time (ms, trace time ÷ speedup);
   * +∞ once every row is read. The replay reads more (`fill`) before its clock reaches it.
   */
  readonly readyUntilMs: number;
  /** Reads rows until `readyUntilMs > untilMs` or the workload ends (a materialized one has nothing to read). */
  fill(untilMs: number): Promise<void>;
  /**
   * Receives every row read from now on whose arrival is open loop, with its virtual arrival time
   * (a streamed trace: every row). Set once by the replay.
   */
  onRead: ((row: number, arrivalMs: number) => void) | null;
  inputLength(row: number): number;
  outputLength(row: number): number;
  /** Session index (tie-break order of arrivals). */
  session(row: number): number;
  /** The array holding the row's full-block prompt hashes, at `hashStart(row) .. + hashCount(row)`. */
  hashes(row: number): Float64Array;
  hashStart(row: number): number;
  hashCount(row: number): number;
  /**
   * How many of the row's `hashCount(row)` prompt hashes `hashes(row)` holds now: all of them,
   * or, from a source that hashes lazily, only those before `ownerOnlyFrom(row)` (all that a
   * lookup of another request can reach) until `hashCompleter` writes the rest.
   */
  hashedCount(row: number): number;
  /** Writes the hashes a lazy source left out; null when every row is hashed as it is read. */
  readonly hashCompleter: PromptHashCompleter | null;
  /**
   * The first of the row's blocks from which on no other row's prompt holds its blocks (its
   * prompt's content includes a token block no other row has, and no later prompt holds its
   * output), so that only the row's own lookups can find them; +∞ when the source does not know
   * (engine/kvBlockPool.ts "Owner-only runs").
   */
  ownerOnlyFrom(row: number): number;
  /** Authored `request_id`, or null. */
  requestId(row: number): string | null;
  /** The row's session as requests.jsonl names it: its `session_id`, or `request_<first row>`. */
  sessionLabel(row: number): string;
  /** Turn index within its session. */
  turn(row: number): number;
  /** The replay released the row: its state may go. */
  release(row: number): void;
  /** The replay is over (finished, cut off or aborted): an open file is closed. */
  close(): void;
}

/**
 * Writes the full-block hashes of row `row`'s prompt into `out[outStart ..]`, all of them (those
 * already there again, with the same values): what a source that hashes lazily left out
 * (traffic/mooncake/stream.ts "Lazy hashes"). Valid for any row read, released or not.
 */
export interface PromptHashCompleter {
  completePromptHashes(row: number, out: Float64Array, outStart: number): void;
}

/** Makes every prompt hash of `row` available in `source.hashes(row)` (a KV-aware router reads them all). */
export function completeRowHashes(source: RequestSource, row: number): void {
  if (source.hashedCount(row) < source.hashCount(row)) {
    source.hashCompleter!.completePromptHashes(row, source.hashes(row), source.hashStart(row));
  }
}
