/**
 * Retune windows (docs/retune.md §4): bounds, launch ticks, the Planner ↔ trace clock and window
 * membership with its censoring edges. Expected values are worked out by hand in the comments.
 */
import { describe, expect, it } from "vitest";
import {
  formatWindowCounts,
  launchTickS,
  plannerToTraceMs,
  retuneWindow,
  selectWindowRows,
  tickAtOrAfter,
  traceMsToPlanner,
  windowDueAtTick,
} from "../../../src/planner/retune/windows.js";

const SCENARIO_1 = { intervalS: 600, graceS: 60 };
const O = 1_760_000_000_000;

describe("retuneWindow", () => {
  it("covers [kT, (k+1)T) and launches at (k+1)T + G (seed 000 Scenario 1)", () => {
    expect(retuneWindow(0, SCENARIO_1)).toEqual({ index: 0, startS: 0, endS: 600, asOfS: 660 });
    expect(retuneWindow(2, SCENARIO_1)).toEqual({ index: 2, startS: 1200, endS: 1800, asOfS: 1860 });
  });
  it("is anchored at s0", () => {
    expect(retuneWindow(1, SCENARIO_1, 10)).toEqual({ index: 1, startS: 610, endS: 1210, asOfS: 1270 });
  });
  it("rejects a negative or fractional index", () => {
    expect(() => retuneWindow(-1, SCENARIO_1)).toThrow(RangeError);
    expect(() => retuneWindow(0.5, SCENARIO_1)).toThrow(RangeError);
  });
});

describe("ticks", () => {
  it("finds the first tick at or after a time; the first tick is one Δ after s0", () => {
    expect(tickAtOrAfter(660, 5)).toBe(660);
    expect(tickAtOrAfter(660.5, 5)).toBe(665);
    expect(tickAtOrAfter(0, 5)).toBe(5);
    expect(tickAtOrAfter(-3, 5)).toBe(5);
    expect(tickAtOrAfter(7, 5, 1)).toBe(11);
  });
  it("treats binary noise as on the tick", () => {
    expect(tickAtOrAfter(0.1 * 3, 0.1)).toBe(0.3);
    expect(tickAtOrAfter(665.0000000001, 0.5)).toBe(665);
  });
  it("launches window k on the first tick at or after L_k", () => {
    expect(launchTickS(retuneWindow(0, SCENARIO_1), 5)).toBe(660);
    // G = 7 is off the 5 s grid: L_0 = 607 launches at 610.
    expect(launchTickS(retuneWindow(0, { intervalS: 600, graceS: 7 }), 5)).toBe(610);
  });
  it("says which window comes due on a tick", () => {
    expect(windowDueAtTick(655, SCENARIO_1, 5)).toBeNull();
    expect(windowDueAtTick(660, SCENARIO_1, 5)?.index).toBe(0);
    expect(windowDueAtTick(665, SCENARIO_1, 5)).toBeNull();
    expect(windowDueAtTick(1260, SCENARIO_1, 5)?.index).toBe(1);
    const g7 = { intervalS: 600, graceS: 7 };
    expect(windowDueAtTick(605, g7, 5)).toBeNull();
    expect(windowDueAtTick(610, g7, 5)?.index).toBe(0);
    expect(windowDueAtTick(1210, g7, 5)?.index).toBe(1);
  });
});

describe("Planner ↔ trace clock", () => {
  it("maps s to the first arrival + s·1000·speedup", () => {
    const clock = { originMs: O, speedup: 2 };
    expect(plannerToTraceMs(600, clock)).toBe(O + 1_200_000);
    expect(traceMsToPlanner(O + 1_200_000, clock)).toBe(600);
    expect(plannerToTraceMs(-10, { originMs: O, speedup: 1 })).toBe(O - 10_000);
  });
});

describe("selectWindowRows", () => {
  const window0 = retuneWindow(0, SCENARIO_1);
  const clock = { originMs: O, speedup: 1 };
  // Window 0 is trace [O, O + 600 000), cutoff L_0 = O + 660 000.
  const rows = {
    arrivalMs: [
      O, // 0 at the window start: in
      O + 600_000, // 1 at the window end: window 1's
      O + 599_999, // 2 completes exactly at L_0: in
      O + 1_000, // 3 completes 1 ms after L_0: censored
      O + 2_000, // 4 no total_time_ms: in, censor_unavailable
      O - 1, // 5 before the window: history only
      O + 3_000, // 6 repeats row 0's id: duplicate
      O - 100_000, // 7 at the history start (100 s): history
      O - 100_001, // 8 before the history: out
      O - 50, // 9 history that completed after L_0: censored
    ],
    completionMs: [
      O + 100,
      O + 600_100,
      O + 660_000,
      O + 660_001,
      Number.NaN,
      O + 10,
      O + 3_100,
      O - 99_000,
      O - 99_000,
      O + 700_000,
    ],
    requestId: ["a", "b", "c", "d", "e", "f", "a", "g", "h", "i"],
  };

  it("keeps arrivals in [start, end) that completed at or before L_k", () => {
    const m = selectWindowRows(rows, window0, clock);
    expect(m.window).toEqual([0, 2, 4]);
    expect(m.history).toEqual([]);
    expect(m.counts).toEqual({ censored: 1, duplicate: 1, censorUnavailable: 1, historyRequests: 0 });
    expect([m.startMs, m.endMs, m.cutoffMs]).toEqual([O, O + 600_000, O + 660_000]);
  });

  it("reads and censors the history before the window", () => {
    const m = selectWindowRows(rows, window0, clock, 100);
    expect(m.window).toEqual([0, 2, 4]);
    expect(m.history).toEqual([5, 7]);
    expect(m.counts).toEqual({ censored: 2, duplicate: 1, censorUnavailable: 1, historyRequests: 2 });
    expect(m.historyStartMs).toBe(O - 100_000);
  });

  it("maps the bounds with the speedup", () => {
    // speedup 2: window 0 = trace [O, O + 1 200 000), cutoff O + 1 320 000.
    const m = selectWindowRows(
      {
        arrivalMs: [O + 1_199_999, O + 1_200_000, O + 10],
        completionMs: [O + 1_320_000, O + 1_200_001, O + 1_320_001],
      },
      window0,
      { originMs: O, speedup: 2 },
    );
    expect(m.window).toEqual([0]);
    expect(m.counts.censored).toBe(1);
  });

  it("keeps the first row of a repeated id even when that row is outside the range", () => {
    // Row 0 (window 1) comes first, so row 1 (window 0, same id) is a duplicate.
    const m = selectWindowRows(
      { arrivalMs: [O + 700_000, O + 10], completionMs: [O + 700_010, O + 20], requestId: ["x", "x"] },
      window0,
      clock,
    );
    expect(m.window).toEqual([]);
    expect(m.counts.duplicate).toBe(1);
  });

  it("treats every row as distinct without ids and rejects ragged columns", () => {
    const m = selectWindowRows({ arrivalMs: [O, O], completionMs: [O, O] }, window0, clock);
    expect(m.window).toEqual([0, 1]);
    expect(() => selectWindowRows({ arrivalMs: [O, O], completionMs: [O] }, window0, clock)).toThrow(
      RangeError,
    );
  });

  it("logs the request count and the non-zero counts", () => {
    const counts = {
      dropped: 2,
      censored: 1,
      duplicate: 0,
      censorUnavailable: 3,
      agentContextStripped: 0,
      historyRequests: 0,
    };
    expect(formatWindowCounts(window0, 5, counts)).toBe(
      "retune window 0 [0, 600) s: 5 requests, dropped=2, censored=1, censor_unavailable=3",
    );
    const zero = { ...counts, dropped: 0, censored: 0, censorUnavailable: 0 };
    expect(formatWindowCounts(window0, 0, zero)).toBe("retune window 0 [0, 600) s: 0 requests");
  });
});
