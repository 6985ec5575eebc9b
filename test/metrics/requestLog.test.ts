/**
 * The request log (metrics/requestLog.ts): rows in row order, chunks past the resident size in a
 * spill file that is read back, column by column, by every scan — so memory stops growing with
 * the run while every end-of-run computation sees the same rows.
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Collector, Terminal } from "../../src/metrics/collector.js";
import { ALL_LOG_COLUMNS, RequestLog } from "../../src/metrics/requestLog.js";
import { tempDir } from "../helpers/specs.js";

/** A collector with `n` rows, each with distinct values in every column. */
function filled(n: number): Collector {
  const c = new Collector(n, { holdGapsUntilTerminal: false, captureHistory: false });
  for (let r = 0; r < n; r++) {
    c.onArrival(r, r * 10);
    c.onDispatch(r, r * 10 + 1, r % 3, r % 2, 4 * r);
    c.onAdmit(r, r * 10 + 2, r);
    c.onToken(r, r * 10 + 3);
    c.onToken(r, r * 10 + 4.5);
    if (r % 5 !== 4) c.onTerminal(r, r * 10 + 6, r % 7 === 0 ? Terminal.Rejected : Terminal.Completed);
  }
  return c;
}

describe("RequestLog", () => {
  it("holds every row in order; past the resident size, chunks go to a spill file and come back the same", () => {
    const n = 1000;
    const c = filled(n);
    const memory = new RequestLog();
    const dir = tempDir();
    const spilled = new RequestLog({ chunkRows: 16, residentRows: 32, spillDir: dir });
    for (let r = 0; r < n; r++) {
      memory.append(c, r, 100 + r);
      spilled.append(c, r, 100 + r);
    }
    expect(memory.spilledChunks).toBe(0);
    // 62 full chunks of 16, two of them resident, and 8 rows in the chunk being filled.
    expect(spilled.spilledChunks).toBe(60);
    // The file is unlinked as soon as it is open: nothing is left in the folder.
    expect(readdirSync(dir)).toEqual([]);
    const a = memory.columns();
    const b = spilled.columns();
    for (const k of ALL_LOG_COLUMNS) expect(Array.from(b[k])).toEqual(Array.from(a[k]));
    expect(Array.from(a.inputLength.subarray(0, 3))).toEqual([100, 101, 102]);
    expect(Array.from(a.status.subarray(0, 5))).toEqual([
      Terminal.Rejected,
      Terminal.Completed,
      Terminal.Completed,
      Terminal.Completed,
      Terminal.None,
    ]);
    expect(a.secondToken[7]).toBe(74.5);
    // A scan reads the columns it names, chunk by chunk in row order.
    const seen: number[] = [];
    spilled.scan(["arrival"], (chunk, rows, first) => {
      for (let i = 0; i < rows; i++) seen.push(chunk.arrival[i] - 10 * (first + i));
    });
    expect(seen).toEqual(new Array(n).fill(0));
    expect(spilled.get("worker", 500)).toBe(500 % 3);
    expect(spilled.get("terminal", 998)).toBe(9986);
    expect(spilled.get("terminal", 999)).toBeNaN(); // never terminal
    spilled.close();
    memory.close();
  });

  it("takes rows in row order only", () => {
    const c = filled(3);
    const log = new RequestLog();
    log.append(c, 0, 1);
    expect(() => log.append(c, 2, 1)).toThrow(/got row 2, expected 1/);
  });
});
