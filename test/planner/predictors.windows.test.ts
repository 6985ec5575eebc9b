import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { SeriesPredictors } from "../../src/planner/predictors/index.js";
import { extractMetricsFromMooncake } from "../../src/planner/trafficWindows.js";

function trace(rows: readonly (readonly [number, number, number])[]) {
  return {
    timestampMs: Float64Array.from(rows.map((r) => r[0])),
    inputLength: Int32Array.from(rows.map((r) => r[1])),
    outputLength: Int32Array.from(rows.map((r) => r[2])),
  };
}

describe("extractMetricsFromMooncake (upstream offline/trace_data.py)", () => {
  it("keeps interior gaps as zero windows with plain means elsewhere", () => {
    const w = extractMetricsFromMooncake(
      trace([
        [0, 100, 10],
        [5_000, 300, 30],
        [35_000, 500, 50],
      ]),
      10,
    );
    expect(w).toEqual([
      { intervalStartS: 0, numReq: 2, avgIsl: 200, avgOsl: 20 },
      { intervalStartS: 10, numReq: 0, avgIsl: 0, avgOsl: 0 },
      { intervalStartS: 20, numReq: 0, avgIsl: 0, avgOsl: 0 },
      { intervalStartS: 30, numReq: 1, avgIsl: 500, avgOsl: 50 },
    ]);
  });

  it("drops leading and trailing empty intervals; order of rows does not matter", () => {
    const w = extractMetricsFromMooncake(
      trace([
        [55_000, 200, 20],
        [35_000, 100, 10],
      ]),
      10,
    );
    expect(w.map((x) => x.intervalStartS)).toEqual([30, 40, 50]);
    expect(w.map((x) => x.numReq)).toEqual([1, 0, 1]);
  });

  it("intervals are contiguous and aligned to floor(ts / 1000 / I)·I", () => {
    const w = extractMetricsFromMooncake(
      { timestampMs: [0, 125_000], inputLength: [10, 20], outputLength: [1, 2] },
      30,
    );
    expect(w.map((x) => x.intervalStartS)).toEqual([0, 30, 60, 90, 120]);
    // 29 999 ms is still interval 0; 30 000 ms starts interval 30.
    const edge = extractMetricsFromMooncake(
      trace([
        [29_999, 1, 1],
        [30_000, 3, 3],
      ]),
      30,
    );
    expect(edge.map((x) => [x.intervalStartS, x.numReq])).toEqual([
      [0, 1],
      [30, 1],
    ]);
  });

  it("empty traces give no windows; rows without a timestamp are skipped", () => {
    expect(extractMetricsFromMooncake(trace([]), 10)).toEqual([]);
    const w = extractMetricsFromMooncake(
      trace([
        [Number.NaN, 999, 999],
        [12_000, 4, 2],
      ]),
      10,
    );
    expect(w).toEqual([{ intervalStartS: 10, numReq: 1, avgIsl: 4, avgOsl: 2 }]);
  });

  it("rejects a non-positive interval and short length columns", () => {
    expect(() => extractMetricsFromMooncake(trace([[0, 1, 1]]), 0)).toThrow(RangeError);
    expect(() =>
      extractMetricsFromMooncake({ timestampMs: [0, 1], inputLength: [1], outputLength: [1, 1] }, 10),
    ).toThrow(RangeError);
  });

  test.prop(
    [
      fc.array(
        fc.tuple(fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 0, max: 4096 }), fc.nat(512)),
        {
          maxLength: 60,
        },
      ),
      fc.constantFrom(1, 7.5, 60, 180),
    ],
    { seed: 20260401, numRuns: 200 },
  )("windows partition the requests and preserve token totals", (rows, intervalS) => {
    const w = extractMetricsFromMooncake(trace(rows), intervalS);
    expect(w.reduce((s, x) => s + x.numReq, 0)).toBe(rows.length);
    const isl = w.reduce((s, x) => s + x.avgIsl * x.numReq, 0);
    expect(isl).toBeCloseTo(
      rows.reduce((s, r) => s + r[1], 0),
      6,
    );
    for (let i = 1; i < w.length; i++)
      expect(w[i].intervalStartS - w[i - 1].intervalStartS).toBeCloseTo(intervalS, 9);
    if (w.length > 0) {
      expect(w[0].numReq).toBeGreaterThan(0);
      expect(w[w.length - 1].numReq).toBeGreaterThan(0);
    }
  });

  it("feeds a predictor warm-up", () => {
    const windows = extractMetricsFromMooncake(
      trace([
        [0, 100, 10],
        [5_000, 300, 30],
        [35_000, 500, 50],
      ]),
      10,
    );
    const s = new SeriesPredictors("constant", {
      log1p: false,
      prophetWindowSize: 20,
      intervalS: 10,
      kalmanQLevel: 1,
      kalmanQTrend: 0.1,
      kalmanR: 10,
      kalmanMinPoints: 5,
    });
    s.warm(windows);
    expect(s.predict()).toEqual({ numReq: 1, isl: 500, osl: 50 });
  });
});
