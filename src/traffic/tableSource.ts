/**
 * A materialized `RequestTable` as a `RequestSource`: every row is read before the replay starts
 * (the row window holds them all), and releasing a row frees nothing of the table.
 */
import { RowWindow } from "../util/rowWindow.js";
import type { PromptHashCompleter, RequestSource, WorkloadInfo } from "./requestSource.js";
import { type RequestTable, requestIdAt } from "./requests.js";

/** What a table says about the whole workload (`WorkloadInfo`). */
export function tableInfo(table: RequestTable): WorkloadInfo {
  let last = Number.NEGATIVE_INFINITY;
  for (let s = 0; s < table.sessionCount; s++) {
    const t = table.timestampMs[table.sessionFirstRow[s]];
    if (t > last) last = t; // a missing timestamp (NaN) compares false and is skipped
  }
  let longest = -1;
  for (let r = 0; r < table.count; r++) {
    const ctx = table.inputLength[r] + table.outputLength[r] - 1;
    if (ctx > longest) longest = ctx;
  }
  // A later session turn, or a row waiting for others, is made ready by another's end.
  let later = (table.dependencies?.waitRows.length ?? 0) > 0;
  const next = table.nextTurnRow;
  for (let r = 0; r < next.length && !later; r++) later = next[r] >= 0;
  return {
    count: table.count,
    sessionCount: table.sessionCount,
    lastFirstTurnMs: last,
    longestContext: longest,
    hasLaterTurns: later,
  };
}

export class TableSource implements RequestSource {
  readonly engineBlockSize: number;
  readonly info: WorkloadInfo;
  readonly window: RowWindow;
  readonly readyUntilMs = Number.POSITIVE_INFINITY;
  onRead: ((row: number, arrivalMs: number) => void) | null = null;

  constructor(readonly table: RequestTable) {
    this.engineBlockSize = table.engineBlockSize;
    this.info = tableInfo(table);
    this.window = new RowWindow(table.count);
    this.window.reserve(table.count);
    this.window.read = table.count;
  }

  fill(_untilMs: number): Promise<void> {
    return Promise.resolve();
  }

  inputLength(row: number): number {
    return this.table.inputLength[row];
  }

  outputLength(row: number): number {
    return this.table.outputLength[row];
  }

  session(row: number): number {
    return this.table.session[row];
  }

  hashes(_row: number): Float64Array {
    return this.table.blockHashes;
  }

  hashStart(row: number): number {
    return this.table.blockOffsets[row];
  }

  hashCount(row: number): number {
    return this.table.blockOffsets[row + 1] - this.table.blockOffsets[row];
  }

  /** All of a row's hashes, but for a lazy table's rows not written yet (`RequestTable.lazyHashes`). */
  hashedCount(row: number): number {
    const lazy = this.table.lazyHashes ?? null;
    return lazy === null ? this.hashCount(row) : lazy.hashedCount(row);
  }

  get hashCompleter(): PromptHashCompleter | null {
    return this.table.lazyHashes ?? null;
  }

  ownerOnlyFrom(row: number): number {
    const known = this.table.ownerOnlyFrom;
    return known === undefined || known === null ? Number.POSITIVE_INFINITY : known[row];
  }

  requestId(row: number): string | null {
    return requestIdAt(this.table.requestIds, row);
  }

  sessionLabel(row: number): string {
    const s = this.table.session[row];
    return this.table.sessionIds[s] ?? `request_${this.table.sessionFirstRow[s]}`;
  }

  turn(row: number): number {
    return this.table.turn[row];
  }

  release(_row: number): void {}

  close(): void {}
}

/** The source of a workload given as a table or already as a source. */
export function asRequestSource(workload: RequestTable | RequestSource): RequestSource {
  return "window" in workload ? workload : new TableSource(workload);
}
