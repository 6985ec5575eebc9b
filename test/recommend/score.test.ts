import { describe, expect, it } from "vitest";
import { formatG, renderRanking } from "../../src/recommend/result.js";
import { avgGpus, paretoFront, type Ranked, rank, scoreCandidate } from "../../src/recommend/score.js";

const base = {
  completed_requests: 10,
  duration_ms: 3.6e6,
  gpu_hours: 4,
  output_throughput_tok_s: 1000,
  mean_output_token_throughput_per_user: 50,
  goodput_output_throughput_tok_s: 800,
  goodput_request_throughput_rps: 2,
  mean_ttft_ms: 100,
  mean_tpot_ms: 10,
  mean_e2e_latency_ms: 900,
  num_ttft_samples: 10,
  num_e2e_latency_samples: 10,
};
const settings = { strictSla: false, sla: { ttftMs: 200, itlMs: 20, e2eMs: null }, minGoodputRps: null };

describe("scoring", () => {
  it("reads each target's metric, per GPU by time-averaged provisioned GPUs, minimised targets negated", () => {
    expect(avgGpus(base)).toBe(4);
    const s = (target: Parameters<typeof scoreCandidate>[0]["target"]) =>
      scoreCandidate({ ...settings, target }, base, 4);
    expect(s("throughput")).toMatchObject({ score: 1000 });
    expect(s("throughput_per_gpu")).toMatchObject({ score: 250 });
    expect(s("goodput_per_gpu")).toMatchObject({ score: 200 });
    expect(s("throughput_per_user")).toMatchObject({ score: 50 });
    expect(s("ttft")).toMatchObject({ score: -100 });
    expect(s("e2e_latency")).toMatchObject({ score: -900 });
    expect(s("min_gpus")).toMatchObject({ score: -4 });
    expect(
      scoreCandidate(
        { ...settings, target: "cost_per_good_request" },
        { ...base, goodput_completed_requests: 5, cost_per_good_request_usd: 0.25 },
        4,
      ),
    ).toMatchObject({ score: -0.25 });
    expect(s("pareto")).toMatchObject({
      score: 250,
      objectives: { throughput_per_gpu: 250, throughput_per_user: 50 },
    });
  });

  it("strict_sla and min_gpus filter aggregate means (inclusive bounds); min_gpus needs its goodput floor", () => {
    const slow = { ...base, mean_tpot_ms: 20.5 };
    expect(scoreCandidate({ ...settings, target: "throughput", strictSla: true }, slow, 4)).toMatchObject({
      status: "infeasible",
      category: "sla_constraint",
    });
    expect(
      scoreCandidate(
        { ...settings, target: "throughput", strictSla: true },
        { ...base, mean_tpot_ms: 20 },
        4,
      ),
    ).toMatchObject({
      score: 1000,
    });
    expect(scoreCandidate({ ...settings, target: "min_gpus", minGoodputRps: 3 }, base, 4)).toMatchObject({
      category: "sla_constraint",
    });
    expect(
      scoreCandidate({ ...settings, target: "goodput" }, { ...base, completed_requests: 0 }, 4),
    ).toMatchObject({
      category: "no_samples",
    });
    const { goodput_output_throughput_tok_s: _, ...noGoodput } = base;
    expect(scoreCandidate({ ...settings, target: "goodput" }, noGoodput, 4)).toMatchObject({
      status: "failed",
      category: "runner_contract",
    });
  });

  it("ranks by score, then fewer GPUs, then id; the Pareto front drops dominated points, sorted by its last objective", () => {
    const r = (id: string, score: number, usedGpus: number, tpu = 0): Ranked => ({
      id,
      score,
      usedGpus,
      objectives: { throughput_per_gpu: score, throughput_per_user: tpu },
      metrics: {},
    });
    expect(
      rank("throughput", [r("c", 5, 4), r("a", 5, 2), r("b", 7, 8), r("d", 5, 2)]).map((x) => x.id),
    ).toEqual(["b", "a", "d", "c"]);
    const front = paretoFront([r("a", 10, 1, 1), r("b", 5, 1, 5), r("c", 4, 1, 4), r("d", 1, 1, 9)]);
    expect(front.map((x) => x.id)).toEqual(["a", "b", "d"]);
  });

  it("prints scores as Python's .4g and the reference's ranking lines", () => {
    expect([formatG(2314.56), formatG(12346), formatG(0.000123456), formatG(-4), formatG(510.7)]).toEqual([
      "2315",
      "1.235e+04",
      "0.0001235",
      "-4",
      "510.7",
    ]);
    const row = { rank: 1, score: 400, objectives: null, config_path: "o/recommendations/0001.yaml" };
    // A fixed deployment: provisioned GPUs are its GPUs, the line is the reference's.
    expect(renderRanking([{ ...row, used_gpus: 4, peak_gpus: 4, mean_gpus: 4 }], "table")).toBe(
      "fleetsim recommendations\n1: score=400 used_gpus=4 config=o/recommendations/0001.yaml",
    );
    // An autoscaled one started on 2 GPUs, peaked at 4 and averaged 2.75: both are shown.
    expect(renderRanking([{ ...row, used_gpus: 2, peak_gpus: 4, mean_gpus: 2.75 }], "table")).toBe(
      "fleetsim recommendations\n1: score=400 used_gpus=2 peak_gpus=4 mean_gpus=2.75 config=o/recommendations/0001.yaml",
    );
    expect(renderRanking([], "table")).toBe("No feasible candidate found.");
  });
});
