import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../util/sha256.js";
import { Grid, type GridRules } from "./grid.js";

/**
 * Built interpolation grids kept between runs (issue 16 item 3, docs/performance.md "Start-up"):
 * decoding a compact table's cells, raising them to SOL and filling holes costs 35–65 ms of a
 * run's CPU, and gives the same grid every time for the same build. A grid built once is written
 * as its knots, cells and measured flags; a later run of the same build reads it back instead.
 *
 * Only the CLI turns it on (cli/main.ts), beside its V8 code cache and under the same key (the
 * bundle and Node, cli/codeCache.ts), so a rebuilt or upgraded fleetsim never reads another
 * build's grids. Only the committed compact tables are cached (a user's perf_database is read
 * fresh). A file that is missing, short or malformed is rebuilt and rewritten; a failure to
 * write only loses the saving.
 */
export interface GridStore {
  /** The grid stored under `key`, or `build()`'s (then stored). */
  grid(key: string, rules: GridRules, build: () => Grid): Grid;
}

let store: GridStore | null = null;

/** Where built grids are kept for this process (null: nowhere, every grid is built). */
export function setGridStore(s: GridStore | null): void {
  store = s;
}

/** `build()`, or the grid stored under `key` by an earlier run of this build. */
export function storedGrid(key: string | null, rules: GridRules, build: () => Grid): Grid {
  return store === null || key === null ? build() : store.grid(key, rules, build);
}

const MAGIC = 0x6772_6964; // "grid"
export const GRID_SUFFIX = ".grid";

/** A folder of grid files named `<buildKey>-<sha256 of the grid key>.grid`. */
export function fileGridStore(dir: string, buildKey: string): GridStore {
  return {
    grid(key, rules, build) {
      const digest = sha256().update(key).digest("hex").slice(0, 32);
      const file = join(dir, `${buildKey}-${digest}${GRID_SUFFIX}`);
      const restored = readGrid(file, rules);
      if (restored !== null) return restored;
      const grid = build();
      writeGrid(file, grid);
      return grid;
    },
  };
}

/**
 * Layout, little-endian doubles: magic, dims, the axes' lengths, the knots, the cells; then one
 * byte per cell, 1 where it was measured; then the SHA-256 of all that.
 */
function encode(grid: Grid): Buffer {
  const dims = grid.dims;
  const knotCount = grid.knots.reduce((n, k) => n + k.length, 0);
  const cells = grid.values.length;
  const head = 2 + dims;
  const doubles = new Float64Array(head + knotCount + cells);
  doubles[0] = MAGIC;
  doubles[1] = dims;
  let at = 2;
  for (const k of grid.knots) doubles[at++] = k.length;
  for (const k of grid.knots) {
    doubles.set(k, at);
    at += k.length;
  }
  doubles.set(grid.values, at);
  const body = Buffer.concat([Buffer.from(doubles.buffer), Buffer.from(grid.measured)]);
  return Buffer.concat([body, digestOf(body)]);
}

const DIGEST_BYTES = 32;

function digestOf(body: Uint8Array): Buffer {
  return sha256().update(body).digest();
}

function decode(file: Buffer, rules: GridRules): Grid | null {
  if (file.length < 16 + DIGEST_BYTES) return null;
  // A file changed after it was written (not by a run: those rename whole files in) is rebuilt.
  const bytes = file.subarray(0, file.length - DIGEST_BYTES);
  if (!digestOf(bytes).equals(file.subarray(file.length - DIGEST_BYTES))) return null;
  const header = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 16));
  const dims = header[1];
  if (header[0] !== MAGIC || !(dims >= 1 && dims <= 3) || dims !== rules.axes.length) return null;
  if (bytes.length < 8 * (2 + dims)) return null;
  const lengths = new Float64Array(
    bytes.buffer.slice(bytes.byteOffset + 16, bytes.byteOffset + 16 + 8 * dims),
  );
  let knotCount = 0;
  let cells = 1;
  for (const n of lengths) {
    if (!(Number.isInteger(n) && n >= 1)) return null;
    knotCount += n;
    cells *= n;
  }
  const doubleCount = 2 + dims + knotCount + cells;
  if (bytes.length !== 8 * doubleCount + cells) return null;
  const doubles = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 8 * doubleCount));
  let at = 2 + dims;
  const knots: number[][] = [];
  for (const n of lengths) {
    knots.push(Array.from(doubles.subarray(at, at + n)));
    at += n;
  }
  const values = doubles.subarray(at, at + cells);
  for (let i = 0; i < cells; i++) if (!Number.isFinite(values[i])) return null;
  let grid: Grid;
  try {
    grid = new Grid(knots, values, rules);
  } catch {
    return null;
  }
  const measured = bytes.subarray(8 * doubleCount);
  for (let i = 0; i < cells; i++) grid.measured[i] = measured[i] === 1 ? 1 : 0;
  return grid;
}

function readGrid(file: string, rules: GridRules): Grid | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return null;
  }
  return decode(bytes, rules);
}

/** Through a temporary file and a rename: a concurrent run never reads half a file. */
function writeGrid(file: string, grid: Grid): void {
  try {
    mkdirSync(join(file, ".."), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, encode(grid));
    renameSync(tmp, file);
  } catch {
    // A read-only or full disk only loses the next run's saving.
  }
}
