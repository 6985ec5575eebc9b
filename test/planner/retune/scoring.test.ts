/**
 * Retune scoring (docs/retune.md §7): each objective's score from a candidate summary, the Goodput
 * rescaling, per-GPU normalization, failing closed, ranking with ties to the current point, and the
 * improvement threshold.
 */
import { describe, expect, it } from "vitest";
import {
  type CandidateSummary,
  clearsThreshold,
  improvementPercentage,
  objectiveSense,
  rankCandidates,
  scoreCandidate,
} from "../../../src/planner/retune/scoring.js";
import type { RetuneObjective } from "../../../src/planner/types.js";

/**
 * A 600 s window replayed in 700 s (100 s drain) on 3 GPUs: gpu_hours = 3 · 700 / 3600, so
 * avg_gpu = gpu_hours / (700 000 / 3.6e6) = 3.
 */
const SUMMARY: CandidateSummary = {
  duration_ms: 700_000,
  gpu_hours: (3 * 700) / 3600,
  completed_requests: 50,
  goodput_output_throughput_tok_s: 100,
  output_throughput_tok_s: 120,
  mean_output_token_throughput_per_user: 30,
  mean_ttft_ms: 200,
  mean_e2e_latency_ms: 3000,
  num_ttft_samples: 50,
  num_e2e_latency_samples: 50,
};
const T = 600;

function score(objective: RetuneObjective, summary: CandidateSummary = SUMMARY): number {
  const r = scoreCandidate(summary, objective, T);
  if (!r.ok) throw new Error(r.error);
  return r.score;
}

function error(objective: RetuneObjective, summary: CandidateSummary): string {
  const r = scoreCandidate(summary, objective, T);
  if (r.ok) throw new Error(`scored ${r.score}`);
  return r.error;
}

describe("scoreCandidate", () => {
  it("rescales Goodput to SLA-good tokens per window second", () => {
    // 100 tok/s over 700 s = 70 000 good tokens; / 600 s = 116.67.
    expect(score("Goodput")).toBeCloseTo(70_000 / 600, 10);
    const r = scoreCandidate(SUMMARY, "Goodput", T);
    expect(r.ok && r.objectiveValue).toBe(100);
  });

  it("divides GoodputPerGPU by the average GPUs, then rescales", () => {
    // objective_value = 100 / 3; score = 100 / 3 · 700 / 600 = 38.89.
    expect(score("GoodputPerGPU")).toBeCloseTo(70_000 / 600 / 3, 10);
  });

  it("does not rescale the other objectives", () => {
    expect(score("Throughput")).toBe(120);
    expect(score("ThroughputPerGPU")).toBeCloseTo(40, 10);
    expect(score("ThroughputPerUser")).toBe(30);
    expect(score("TTFT")).toBe(200);
    expect(score("E2ELatency")).toBe(3000);
  });

  it("ranks a slower drain lower under Goodput only through its SLA-good tokens", () => {
    // Same 70 000 good tokens, drained in 800 s: goodput 87.5 tok/s, the same rescaled score.
    const slower = { ...SUMMARY, duration_ms: 800_000, goodput_output_throughput_tok_s: 87.5 };
    expect(score("Goodput", slower)).toBeCloseTo(score("Goodput"), 10);
  });

  it("fails closed when an input of the objective is missing", () => {
    expect(error("Goodput", { ...SUMMARY, goodput_output_throughput_tok_s: undefined })).toMatch(
      /goodput_output_throughput_tok_s/,
    );
    expect(error("GoodputPerGPU", { ...SUMMARY, gpu_hours: 0 })).toMatch(/non-positive gpu_hours/);
    expect(error("Goodput", { ...SUMMARY, duration_ms: 0 })).toMatch(/non-positive duration_ms/);
    expect(error("ThroughputPerGPU", { ...SUMMARY, duration_ms: -1 })).toMatch(/duration_ms/);
    expect(error("Throughput", { ...SUMMARY, output_throughput_tok_s: null })).toMatch(
      /output_throughput_tok_s/,
    );
    expect(error("TTFT", { ...SUMMARY, num_ttft_samples: 0 })).toMatch(/no TTFT samples/);
    expect(
      error("E2ELatency", { ...SUMMARY, num_e2e_latency_samples: undefined, completed_requests: 0 }),
    ).toMatch(/no E2E latency samples/);
    expect(error("ThroughputPerUser", { ...SUMMARY, completed_requests: 0 })).toMatch(/per-user/);
    expect(error("E2ELatency", { ...SUMMARY, mean_e2e_latency_ms: Number.NaN })).toMatch(
      /mean_e2e_latency_ms/,
    );
  });

  it("needs only the objective's own inputs", () => {
    // Plain Goodput and Throughput do not read gpu_hours.
    expect(score("Goodput", { ...SUMMARY, gpu_hours: 0 })).toBeCloseTo(70_000 / 600, 10);
    expect(score("Throughput", { output_throughput_tok_s: 5 })).toBe(5);
  });
});

describe("ranking", () => {
  it("maximizes throughput-like objectives and minimizes latencies", () => {
    expect(objectiveSense("GoodputPerGPU")).toBe("max");
    expect(objectiveSense("ThroughputPerUser")).toBe("max");
    expect(objectiveSense("TTFT")).toBe("min");
    expect(objectiveSense("E2ELatency")).toBe("min");
  });

  it("ranks best first, ties to the current point, then canonical order; failed candidates drop out", () => {
    expect(rankCandidates([5, 7, 7, 3], 2, "max")).toEqual([2, 1, 0, 3]);
    expect(rankCandidates([5, 7, 7, 3], 0, "max")).toEqual([1, 2, 0, 3]);
    expect(rankCandidates([7, 7, 7], 2, "max")).toEqual([2, 0, 1]);
    expect(rankCandidates([5, 3, 3, null], 2, "min")).toEqual([2, 1, 0]);
    expect(rankCandidates([null, null], 0, "max")).toEqual([]);
  });
});

describe("threshold", () => {
  it("needs more than min_improvement_percentage of the current score", () => {
    expect(clearsThreshold(103, 100, "max", 3)).toBe(false);
    expect(clearsThreshold(103.01, 100, "max", 3)).toBe(true);
    expect(clearsThreshold(97, 100, "min", 3)).toBe(false);
    expect(clearsThreshold(96.9, 100, "min", 3)).toBe(true);
    expect(clearsThreshold(100.0001, 100, "max", 0)).toBe(true);
    expect(clearsThreshold(100, 100, "max", 0)).toBe(false);
  });

  it("asks any strict gain of a zero score and never beats a zero latency", () => {
    expect(clearsThreshold(1e-9, 0, "max", 3)).toBe(true);
    expect(clearsThreshold(0, 0, "max", 3)).toBe(false);
    expect(clearsThreshold(0, 0, "min", 3)).toBe(false);
  });

  it("reports the improvement in percent of the current score, in the objective's sense", () => {
    expect(improvementPercentage(110, 100, "max")).toBeCloseTo(10, 10);
    expect(improvementPercentage(90, 100, "min")).toBeCloseTo(10, 10);
    expect(improvementPercentage(100, 100, "max")).toBe(0);
    expect(improvementPercentage(5, 0, "max")).toBe(Number.POSITIVE_INFINITY);
    expect(improvementPercentage(0, 0, "min")).toBe(0);
  });
});
