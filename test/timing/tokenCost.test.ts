/**
 * The op-level model prices a pass's token-dependent ops (every GEMM, the MoE and its collectives,
 * the memory-bound ops, Q/K norms, all-reduces, pipeline hand-offs) in one path that both sums
 * them and, for `fleetsim estimate`, lists them (`OpLevelTiming` `tokenOps`). The price a pass
 * pays must be the sum of the listed ops in list order, the double a sum over the list gives, for
 * every kind of op.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { OpLevelTiming, type Parallelism } from "../../src/timing/opLevel.js";

const ONE: Parallelism = { tensor: 1, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };

const CASES: { name: string; model: string; parallel: Parallelism; sharedExpertStream?: number }[] = [
  { name: "Llama-3.1-8B, TP1", model: "meta-llama/Llama-3.1-8B", parallel: ONE },
  {
    name: "Qwen3-32B, TP2 × PP2",
    model: "Qwen/Qwen3-32B",
    parallel: { ...ONE, tensor: 2, pipeline: 2, moeTensor: 2 },
  },
  {
    name: "Qwen3-30B-A3B, DP4 × EP4",
    model: "Qwen/Qwen3-30B-A3B",
    parallel: { ...ONE, attentionData: 4, moeExpert: 4 },
  },
  {
    name: "Qwen3-30B-A3B, DP2 × TP2",
    model: "Qwen/Qwen3-30B-A3B",
    parallel: { ...ONE, tensor: 2, attentionData: 2, moeTensor: 4 },
  },
  {
    name: "DeepSeek-V3, TP8, shared experts on a second stream",
    model: "deepseek-ai/DeepSeek-V3",
    parallel: { ...ONE, tensor: 8, moeTensor: 8 },
    sharedExpertStream: 1024,
  },
];

/** The private per-pass price of the token-dependent ops. */
function tokenCost(t: OpLevelTiming, tokens: number): number {
  return (t as unknown as { tokenCost(tokens: number): number }).tokenCost(tokens);
}

describe("the token-dependent ops' price is the sum of the ops listed", () => {
  const seen = new Set<string>();
  for (const c of CASES) {
    it(c.name, () => {
      const t = new OpLevelTiming(
        resolveModel(c.model),
        gpuSpec("h200_sxm"),
        loadCompactTables("h200_sxm"),
        c.parallel,
        undefined,
        null,
        { sharedExpertStreamTokens: c.sharedExpertStream ?? 0 },
      );
      for (const tokens of [1, 7, 64, 333, 2048, 8192]) {
        const ops = t.explainPrefill(1, tokens, 0).ops;
        const end = ops.findIndex((o) => o.name === "logits_gemm");
        expect(end).toBeGreaterThan(0);
        let sum = 0;
        for (const op of ops.slice(0, end)) {
          sum += op.latencyMs;
          seen.add(op.name);
        }
        expect(tokenCost(t, tokens)).toBe(sum);
      }
    });
  }
  it("covers every kind of token-dependent op", () => {
    for (const kind of [
      "moe",
      "moe_all_to_all",
      "moe_dp_gather",
      "shared_experts_overlap",
      "qk_norm",
      "all_reduce",
      "pipeline_p2p",
    ])
      expect(seen, kind).toContain(kind);
  });
});
