/**
 * Every request's final state, in row order: the collector's columns of a row are appended here
 * when the replay releases it (sim/requestLifecycle.ts), and the summary and the time series are computed
 * from this log at the end (`summary.ts`, `timeline.ts`) by scans over it, never from whole-run
 * arrays.
 *
 * Rows are kept in chunks of `chunkRows`. Up to `residentRows` rows stay in memory; past that,
 * the oldest full chunks are written to a spill file (in the OS temporary folder, removed from
 * the folder as soon as it is open) and dropped from memory, so a run's memory does not grow with
 * its request count: 89 bytes per request go to disk instead (docs/performance.md "Memory").
 * A scan reads spilled chunks back one at a time, only the columns it asks for.
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Collector } from "./collector.js";

/** Float64 columns of the log (times in ms, NaN when the event did not happen). */
export const LOG_F64_COLUMNS = [
  "arrival",
  "dispatched",
  "firstAdmit",
  "firstToken",
  "secondToken",
  "lastToken",
  "terminal",
] as const;
/** Int32 columns of the log. */
export const LOG_I32_COLUMNS = [
  "tokens",
  "reusedMax",
  "reusedFirst",
  "admissions",
  "worker",
  "dpRank",
  "routeOverlapTokens",
  "inputLength",
] as const;

export type LogF64Column = (typeof LOG_F64_COLUMNS)[number];
export type LogI32Column = (typeof LOG_I32_COLUMNS)[number];
export type LogColumn = LogF64Column | LogI32Column | "status";

/** One chunk's columns (a scan's view: only the columns it asked for hold this chunk's rows). */
export type LogChunk = { readonly [K in LogF64Column]: Float64Array } & {
  readonly [K in LogI32Column]: Int32Array;
} & { readonly status: Uint8Array };

/** Every column of the log as whole-run arrays (tests, and the per-request records of a capture run). */
export type RequestColumns = LogChunk;

const ROW_BYTES = LOG_F64_COLUMNS.length * 8 + LOG_I32_COLUMNS.length * 4 + 1;

/** Bytes per request of the log, in memory or in its spill file. */
export const REQUEST_LOG_ROW_BYTES = ROW_BYTES;

export interface RequestLogOptions {
  /** Rows per chunk (default 16,384). */
  readonly chunkRows?: number;
  /** Rows kept in memory before chunks spill to disk (default 262,144; rounded up to whole chunks). */
  readonly residentRows?: number;
  /** Folder of the spill file (default the OS temporary folder). */
  readonly spillDir?: string;
}

export const DEFAULT_CHUNK_ROWS = 1 << 14;
export const DEFAULT_RESIDENT_ROWS = 1 << 18;

function newChunk(rows: number): LogChunk {
  const c: Record<string, Float64Array | Int32Array | Uint8Array> = {};
  for (const k of LOG_F64_COLUMNS) c[k] = new Float64Array(rows);
  for (const k of LOG_I32_COLUMNS) c[k] = new Int32Array(rows);
  c["status"] = new Uint8Array(rows);
  return c as unknown as LogChunk;
}

/** Byte offset of each column inside a spilled chunk (columns one after the other). */
function columnOffsets(rows: number): Map<LogColumn, number> {
  const out = new Map<LogColumn, number>();
  let at = 0;
  for (const k of LOG_F64_COLUMNS) {
    out.set(k, at);
    at += rows * 8;
  }
  for (const k of LOG_I32_COLUMNS) {
    out.set(k, at);
    at += rows * 4;
  }
  out.set("status", at);
  return out;
}

function bytesOf(a: Float64Array | Int32Array | Uint8Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

export const ALL_LOG_COLUMNS: readonly LogColumn[] = [...LOG_F64_COLUMNS, ...LOG_I32_COLUMNS, "status"];

/** What the end-of-run computations read: scans in row order (a `RequestLog`). */
export interface RequestRows {
  /**
   * Calls `visit(chunk, rows, firstRow)` for each chunk in row order: `chunk`'s columns named in
   * `columns` hold rows `firstRow .. firstRow + rows` at indices `0 .. rows` (the others are
   * unspecified). The views are valid during the call only.
   */
  scan(columns: readonly LogColumn[], visit: (chunk: LogChunk, rows: number, firstRow: number) => void): void;
}

/** Whole-run columns as `RequestRows` (one chunk; tests build them by hand, only the columns read). */
export function requestRowsOf(columns: Partial<RequestColumns>, count: number): RequestRows {
  return {
    scan: (_columns, visit) => {
      if (count > 0) visit(columns as RequestColumns, count, 0);
    },
  };
}

export class RequestLog implements RequestRows {
  readonly chunkRows: number;
  private readonly residentChunks: number;
  private readonly spillDir: string;
  /** Rows appended (the next row is `count`). */
  count = 0;
  /** Full chunks not spilled, oldest first, then the chunk being filled (`tail`). */
  private readonly resident: LogChunk[] = [];
  private tail: LogChunk;
  private tailRows = 0;
  /** Chunks 0 .. spilled − 1 are in the spill file, at `index × chunkBytes`. */
  private spilled = 0;
  private readonly chunkBytes: number;
  private readonly offsets: Map<LogColumn, number>;
  private fd: number | null = null;
  private spillPath: string | null = null;
  /** A spilled chunk's memory, reused for the next tail (no allocation per chunk once spilling). */
  private spare: LogChunk | null = null;
  /** The buffer scans read spilled chunks into. */
  private readBuffer: LogChunk | null = null;

  constructor(opts: RequestLogOptions = {}) {
    this.chunkRows = Math.max(1, Math.floor(opts.chunkRows ?? DEFAULT_CHUNK_ROWS));
    const residentRows = Math.max(this.chunkRows, opts.residentRows ?? DEFAULT_RESIDENT_ROWS);
    this.residentChunks = Math.ceil(residentRows / this.chunkRows);
    this.spillDir = opts.spillDir ?? tmpdir();
    this.chunkBytes = this.chunkRows * ROW_BYTES;
    this.offsets = columnOffsets(this.chunkRows);
    this.tail = newChunk(this.chunkRows);
  }

  /** Chunks written to the spill file so far (0: the whole log is in memory). */
  get spilledChunks(): number {
    return this.spilled;
  }

  /** Appends row `count` from the collector's slot of `row` (the replay's released row). */
  append(c: Collector, row: number, inputLength: number): void {
    if (row !== this.count) throw new Error(`internal: request log got row ${row}, expected ${this.count}`);
    const i = row & c.mask;
    const t = this.tail;
    const k = this.tailRows;
    t.arrival[k] = c.arrival[i];
    t.dispatched[k] = c.dispatched[i];
    t.firstAdmit[k] = c.firstAdmit[i];
    t.firstToken[k] = c.firstToken[i];
    t.secondToken[k] = c.secondToken[i];
    t.lastToken[k] = c.lastToken[i];
    t.terminal[k] = c.terminal[i];
    t.tokens[k] = c.tokens[i];
    t.reusedMax[k] = c.reusedMax[i];
    t.reusedFirst[k] = c.reusedFirst[i];
    t.admissions[k] = c.admissions[i];
    t.worker[k] = c.worker[i];
    t.dpRank[k] = c.dpRank[i];
    t.routeOverlapTokens[k] = c.routeOverlapTokens[i];
    t.inputLength[k] = inputLength;
    t.status[k] = c.status[i];
    this.count++;
    if (++this.tailRows === this.chunkRows) this.closeTail();
  }

  private closeTail(): void {
    this.resident.push(this.tail);
    this.tailRows = 0;
    if (this.resident.length > this.residentChunks) this.spillOldest();
    this.tail = this.spare ?? newChunk(this.chunkRows);
    this.spare = null;
  }

  private spillOldest(): void {
    const chunk = this.resident.shift()!;
    const fd = this.spillFile();
    let position = this.spilled * this.chunkBytes;
    for (const k of ALL_LOG_COLUMNS) {
      const bytes = bytesOf(chunk[k]);
      let done = 0;
      while (done < bytes.length) {
        done += this.io(() => writeSync(fd, bytes, done, bytes.length - done, position + done));
      }
      position += bytes.length;
    }
    this.spilled++;
    this.spare = chunk;
  }

  private spillFile(): number {
    if (this.fd !== null) return this.fd;
    const path = join(this.spillDir, `fleetsim-requests-${process.pid}-${Date.now().toString(36)}.bin`);
    this.fd = this.io(() => openSync(path, "w+", 0o600));
    try {
      // The data stays reachable through the descriptor; nothing is left behind on exit.
      unlinkSync(path);
    } catch {
      this.spillPath = path; // a system that cannot remove an open file: removed on close
    }
    return this.fd;
  }

  private io<T>(f: () => T): T {
    try {
      return f();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`request log spill file in ${this.spillDir}: ${why}`);
    }
  }

  scan(
    columns: readonly LogColumn[],
    visit: (chunk: LogChunk, rows: number, firstRow: number) => void,
  ): void {
    let first = 0;
    if (this.spilled > 0) {
      const fd = this.fd!;
      if (this.readBuffer === null) this.readBuffer = newChunk(this.chunkRows);
      const buffer = this.readBuffer;
      for (let k = 0; k < this.spilled; k++) {
        const base = k * this.chunkBytes;
        for (const col of columns) {
          const bytes = bytesOf(buffer[col]);
          const at = base + this.offsets.get(col)!;
          let done = 0;
          while (done < bytes.length) {
            const n = this.io(() => readSync(fd, bytes, done, bytes.length - done, at + done));
            if (n === 0) throw new Error("internal: request log spill file is shorter than written");
            done += n;
          }
        }
        visit(buffer, this.chunkRows, first);
        first += this.chunkRows;
      }
    }
    for (const chunk of this.resident) {
      visit(chunk, this.chunkRows, first);
      first += this.chunkRows;
    }
    if (this.tailRows > 0) visit(this.tail, this.tailRows, first);
  }

  /** One value of a logged row (tests and diagnostics: a spilled row costs a read). */
  get(column: LogColumn, row: number): number {
    if (!(Number.isInteger(row) && row >= 0 && row < this.count))
      throw new RangeError(`request log: no row ${row} (${this.count} rows)`);
    const k = Math.floor(row / this.chunkRows);
    const at = row - k * this.chunkRows;
    if (k >= this.spilled) {
      const chunk = k - this.spilled < this.resident.length ? this.resident[k - this.spilled] : this.tail;
      return chunk[column][at];
    }
    const one = newChunk(1);
    const bytes = bytesOf(one[column]);
    const position = k * this.chunkBytes + this.offsets.get(column)! + at * bytes.length;
    const fd = this.fd!;
    this.io(() => readSync(fd, bytes, 0, bytes.length, position));
    return one[column][0];
  }

  /** Every column as whole-run arrays (tests; per-request records of a capture run). */
  columns(): RequestColumns {
    const out = newChunk(this.count);
    this.scan(ALL_LOG_COLUMNS, (chunk, rows, first) => {
      for (const k of ALL_LOG_COLUMNS) out[k].set(chunk[k].subarray(0, rows), first);
    });
    return out;
  }

  /** Closes the spill file (a log that never spilled holds none). */
  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    if (this.spillPath !== null) {
      try {
        unlinkSync(this.spillPath);
      } catch {
        // already gone
      }
      this.spillPath = null;
    }
  }
}
