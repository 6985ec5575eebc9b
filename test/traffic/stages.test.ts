/**
 * Staged (piecewise) Poisson and constant rates (`traffic.load.stages`, docs/traffic.md §Stages):
 * arrival counts per stage match the rates (exactly for constant, within 4σ for Poisson with fixed
 * seeds), stage boundaries are respected, a replay sees those arrivals, and bad stages are config
 * errors at their own path.
 */
import { describe, expect, it } from "vitest";
import { predict } from "../../src/api/replay.js";
import { type RateStage, stagedArrivalTimes } from "../../src/traffic/stagedArrivals.js";
import { makeSyntheticWorkload } from "../../src/traffic/synthetic/workload.js";
import { expectIssue, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";

const sec = (s: number) => s * 1000;

function perStage(stageEnd: Int32Array): number[] {
  return Array.from(stageEnd, (end, i) => end - (i === 0 ? 0 : stageEnd[i - 1]));
}

describe("stagedArrivalTimes", () => {
  const stages: RateStage[] = [
    { requestsPerSecond: 5, durationMs: sec(60), requests: null },
    { requestsPerSecond: 50, durationMs: sec(20), requests: null },
    { requestsPerSecond: 0, durationMs: sec(10), requests: null },
    { requestsPerSecond: 2, durationMs: null, requests: 30 },
    { requestsPerSecond: 12.5, durationMs: sec(8), requests: null },
  ];

  it("constant: exact counts ⌈D·r⌉ per duration stage, n per count stage, evenly spaced from each stage start", () => {
    const a = stagedArrivalTimes(stages, "constant_rate", 0);
    expect(perStage(a.stageEnd)).toEqual([300, 1000, 0, 30, 100]);
    expect(Array.from(a.stageStartMs)).toEqual([0, 60_000, 80_000, 90_000, 105_000, 113_000]);
    expect(a.timestampMs[0]).toBe(0);
    expect(a.timestampMs[299]).toBeCloseTo(59_800, 9);
    expect(a.timestampMs[300]).toBe(60_000);
    expect(a.timestampMs[1301]).toBeCloseTo(90_500, 9);
    expect(a.timestampMs[1330]).toBe(105_000);
    for (let i = 1; i < a.timestampMs.length; i++) {
      expect(a.timestampMs[i]).toBeGreaterThan(a.timestampMs[i - 1]);
    }
  });

  it("Poisson: per-stage counts within 4σ of rate × duration, every arrival inside its stage, idle stage empty", () => {
    for (const seed of [1, 42, 1234]) {
      const a = stagedArrivalTimes(stages, "poisson", seed);
      const counts = perStage(a.stageEnd);
      const expected = [300, 1000, 0, 30, 100];
      for (const i of [0, 1, 4]) {
        expect(Math.abs(counts[i] - expected[i])).toBeLessThan(4 * Math.sqrt(expected[i]));
      }
      expect(counts[2]).toBe(0);
      expect(counts[3]).toBe(30);
      for (let s = 0; s < stages.length; s++) {
        const lo = s === 0 ? 0 : a.stageEnd[s - 1];
        for (let i = lo; i < a.stageEnd[s]; i++) {
          expect(a.timestampMs[i]).toBeGreaterThanOrEqual(a.stageStartMs[s]);
          expect(a.timestampMs[i]).toBeLessThanOrEqual(a.stageStartMs[s + 1]);
        }
      }
    }
  });

  it("Poisson: gaps inside a stage are exponential with mean 1000/r (mean and CV within 3 %)", () => {
    const a = stagedArrivalTimes(
      [{ requestsPerSecond: 40, durationMs: sec(2000), requests: null }],
      "poisson",
      7,
    );
    const n = a.timestampMs.length;
    expect(Math.abs(n - 80_000)).toBeLessThan(4 * Math.sqrt(80_000));
    let sum = 0;
    let ss = 0;
    for (let i = 1; i < n; i++) sum += a.timestampMs[i] - a.timestampMs[i - 1];
    const mean = sum / (n - 1);
    for (let i = 1; i < n; i++) ss += (a.timestampMs[i] - a.timestampMs[i - 1] - mean) ** 2;
    const cv = Math.sqrt(ss / (n - 2)) / mean;
    expect(Math.abs(mean - 25) / 25).toBeLessThan(0.03);
    expect(Math.abs(cv - 1)).toBeLessThan(0.03);
  });

  it("is deterministic per seed", () => {
    expect(stagedArrivalTimes(stages, "poisson", 3).timestampMs).toEqual(
      stagedArrivalTimes(stages, "poisson", 3).timestampMs,
    );
    expect(stagedArrivalTimes(stages, "poisson", 3).timestampMs).not.toEqual(
      stagedArrivalTimes(stages, "poisson", 4).timestampMs,
    );
  });
});

const STAGED = `traffic:
  source: {type: synthetic, input_tokens: 64, output_tokens: 4}
  load:
    type: constant_rate
    stages:
      - {requests_per_second: 10, duration_seconds: 2}
      - {requests_per_second: 40, requests: 20}
      - {requests_per_second: 5, duration_seconds: 1}
`;

describe("staged loads through config and replay", () => {
  it("resolves the stages, the mean rate and the expected count; the table follows the stages", () => {
    const spec = loadYaml(`${RUNNABLE_ENGINE}${STAGED}`);
    expect(spec.load).toEqual({
      type: "constant_rate",
      requestsPerSecond: 45 / 3.5,
      stages: [
        { requestsPerSecond: 10, durationMs: 2000, requests: null },
        { requestsPerSecond: 40, durationMs: null, requests: 20 },
        { requestsPerSecond: 5, durationMs: 1000, requests: null },
      ],
    });
    expect(spec.stop.requests).toBe(45);
    const t = makeSyntheticWorkload(spec.source as never, spec.load, spec.stop, 16);
    expect(t.count).toBe(45);
    expect(t.timestampMs[19]).toBeCloseTo(1900, 9);
    expect(t.timestampMs[20]).toBe(2000);
    expect(t.timestampMs[40]).toBe(2500);
  });

  it("a replay's arrivals are the staged timestamps (per-request records)", async () => {
    const report = await predict(
      {
        engine: {
          model: "Qwen/Qwen3-8B",
          hardware: "h200_sxm",
          workers: {
            aggregated: {
              kv_cache: { capacity: { type: "fixed", blocks: 1000 } },
              timing: { type: "polynomial" },
            },
          },
        },
        traffic: {
          source: { type: "synthetic", input_tokens: 64, output_tokens: 4 },
          load: {
            type: "poisson",
            seed: 11,
            stages: [
              { requests_per_second: 20, duration_seconds: 5 },
              { requests_per_second: 100, duration_seconds: 2 },
            ],
          },
        },
      },
      { capturePerRequest: true },
    );
    const arrivals = report.perRequest!.map((r) => r.arrival_time_ms).sort((a, b) => a - b);
    const first = arrivals.filter((t) => t < 5000).length;
    const second = arrivals.filter((t) => t >= 5000 && t < 7000).length;
    expect(arrivals.length).toBe(first + second);
    expect(Math.abs(first - 100)).toBeLessThan(40);
    expect(Math.abs(second - 200)).toBeLessThan(57);
    expect(report.summary.completed_requests).toBe(arrivals.length);
    expect(report.run.traffic?.stages).toBe(2);
  });

  const bad =
    (load: string, path: string, message: string, stop = "") =>
    () =>
      expectIssue(
        `${RUNNABLE_ENGINE}traffic:\n  source: {type: synthetic}\n  load: ${load}\n${stop}`,
        path,
        message,
      );
  it(
    "a stage needs exactly one of duration_seconds or requests",
    bad(
      "{type: poisson, stages: [{requests_per_second: 3, duration_seconds: 1, requests: 4}]}",
      "traffic.load.stages.0",
      "traffic.load.stages.0 requires exactly one of duration_seconds or requests, got ['duration_seconds', 'requests']",
    ),
  );
  it(
    "a stage without either",
    bad(
      "{type: constant_rate, stages: [{requests_per_second: 3}]}",
      "traffic.load.stages.0",
      "traffic.load.stages.0 requires exactly one of duration_seconds or requests",
    ),
  );
  it(
    "a count stage needs a positive rate",
    bad(
      "{type: constant_rate, stages: [{requests_per_second: 0, requests: 4}]}",
      "traffic.load.stages.0.requests_per_second",
      "traffic.load.stages.0.requests_per_second must be greater than 0 in a stage of requests",
    ),
  );
  it(
    "a negative rate",
    bad(
      "{type: constant_rate, stages: [{requests_per_second: -1, duration_seconds: 4}]}",
      "traffic.load.stages.0.requests_per_second",
      "Input should be greater than or equal to 0",
    ),
  );
  it(
    "no stages",
    bad("{type: poisson, stages: []}", "traffic.load.stages", "List should have at least 1 item(s)"),
  );
  it(
    "stages and a rate",
    bad(
      "{type: poisson, requests_per_second: 2, stages: [{requests_per_second: 3, duration_seconds: 1}]}",
      "traffic.load",
      "traffic.load takes one of requests_per_second, sessions_per_second or stages, got ['requests_per_second', 'stages']",
    ),
  );
  it(
    "stages under closed loop",
    bad(
      "{type: concurrency, stages: [{requests_per_second: 3, duration_seconds: 1}]}",
      "traffic.load",
      "traffic.load.type='concurrency' does not accept ['stages']",
      "  stop: {requests: 3}\n",
    ),
  );
  it(
    "stages with a count stop",
    bad(
      "{type: poisson, stages: [{requests_per_second: 3, duration_seconds: 1}]}",
      "traffic.stop",
      "traffic.load.stages fix how many requests arrive; traffic.stop does not accept ['requests']",
      "  stop: {requests: 3}\n",
    ),
  );
  it(
    "stages that would generate too many arrivals",
    bad(
      "{type: poisson, stages: [{requests_per_second: 1000000, duration_seconds: 100000}]}",
      "traffic.load.stages",
      "traffic.load.stages expect 100000000000 arrivals, more than 50000000",
    ),
  );
});
