/**
 * Reading what a benchmark client measured (src/calibrate/benchmarkResults.ts, docs/calibrate.md),
 * and the fit of the client's fixed overhead (src/calibrate/fit.ts).
 */
import { describe, expect, it } from "vitest";
import { readBenchmarkResults } from "../../src/calibrate/benchmarkResults.js";
import { fitClientOverheadMs } from "../../src/calibrate/fit.js";

describe("benchmark results", () => {
  it("reads vllm bench serve's flat means (ITL, else TPOT)", () => {
    expect(
      readBenchmarkResults({ completed: 300, mean_ttft_ms: 56.6, mean_itl_ms: 20.1, mean_e2el_ms: 4300 }),
    ).toEqual({
      format: "vllm-bench-serve",
      ttftMeanMs: 56.6,
      itlMeanMs: 20.1,
      e2eMeanMs: 4300,
      completed: 300,
    });
    expect(readBenchmarkResults({ mean_ttft_ms: 10, mean_tpot_ms: 5 })).toMatchObject({
      itlMeanMs: 5,
      e2eMeanMs: null,
      completed: null,
    });
  });

  it("reads AIPerf's profile export, at the top level or under records, in its units", () => {
    const doc = {
      aiperf_version: "0.12.0",
      request_count: { avg: 640 },
      time_to_first_token: { unit: "ms", avg: 45.5, p99: 120 },
      inter_token_latency: { unit: "ms", avg: 12.25 },
      request_latency: { unit: "ms", avg: 1800 },
    };
    expect(readBenchmarkResults(doc)).toEqual({
      format: "aiperf",
      ttftMeanMs: 45.5,
      itlMeanMs: 12.25,
      e2eMeanMs: 1800,
      completed: 640,
    });
    expect(
      readBenchmarkResults({ records: { time_to_first_token: { unit: "s", avg: 0.05 }, request_count: 7 } }),
    ).toMatchObject({ format: "aiperf", ttftMeanMs: 50, itlMeanMs: null, completed: 7 });
  });

  it("reads inference-perf's lifecycle metrics (seconds) and pairs E2E and TTFT for ITL as it does", () => {
    // The shape of inference-sim/training's results/summary_lifecycle_metrics.json (c4f03409).
    const doc = {
      load_summary: { count: 9000 },
      successes: {
        count: 9000,
        latency: {
          request_latency: { mean: 2.0807397430955556 },
          time_to_first_token: { mean: 0.027981806303111346 },
          inter_token_latency: { mean: 0.0041 },
        },
        output_len: { mean: 195.09044444444444 },
      },
      failures: { count: 0 },
    };
    const r = readBenchmarkResults(doc);
    if ("error" in r) throw new Error(r.error);
    expect(r.format).toBe("inference-perf");
    expect(r.ttftMeanMs).toBeCloseTo(27.9818063031, 9);
    expect(r.e2eMeanMs).toBeCloseTo(2080.7397430956, 9);
    // The run's published itl_ms_mean: (E2E − TTFT) / (client output − 1).
    expect(r.itlMeanMs).toBeCloseTo(10.5762957196, 6);
    expect(r.completed).toBe(9000);
  });

  it("says what it expected for a document of no known format", () => {
    expect(readBenchmarkResults([1, 2])).toEqual({ error: "expected a JSON object" });
    expect(readBenchmarkResults({ ttft: 3 })).toMatchObject({
      error: expect.stringContaining("mean_ttft_ms"),
    });
  });
});

describe("client overhead fit", () => {
  it("is the residual that minimises the absolute percentage error, never negative", () => {
    expect(fitClientOverheadMs([{ engine: 30, measured: 40 }])).toBe(10);
    // Weighted median of 8, 10, 30 with weights 1/measured: the middle one.
    expect(
      fitClientOverheadMs([
        { engine: 20, measured: 28 },
        { engine: 20, measured: 30 },
        { engine: 20, measured: 50 },
      ]),
    ).toBe(10);
    expect(fitClientOverheadMs([{ engine: 50, measured: 40 }])).toBe(0);
    expect(fitClientOverheadMs([])).toBe(0);
  });
});
