/**
 * `engine.wideep_num_slots` (docs/models.md "Redundant expert slots"): the reference's rules
 * (a MoE model, at least one slot per expert, redundant slots only with EPLB, default timing) and
 * what fleetsim does with the slots — each EP rank holds slots / EP experts' weights, so the
 * KV cache of a memory-sized worker shrinks by exactly the redundant copies' bytes.
 */
import { describe, expect, it } from "vitest";
import { resolveModel } from "../../src/model/resolve.js";
import { weightBreakdown } from "../../src/model/weights.js";
import { aggregatedRole, issueAt, loadError, loadYaml } from "../helpers/configHelpers.js";
import { syntheticTraffic } from "../helpers/configYaml.js";

const MODEL = "Qwen/Qwen3-30B-A3B"; // 128 experts of 2048 × 768, 48 MoE layers, BF16

const config = (
  extra: string,
  parallelism = "{tensor: 4, moe_tensor: 1, moe_expert: 4}",
) => `${syntheticTraffic("{type: concurrency, concurrency: 4}", "{requests: 10}")}engine:
  model: ${MODEL}
  hardware: h200_sxm
${extra}  workers:
    aggregated:
      parallelism: ${parallelism}
      kv_cache: {block_size: 16}
`;

const blocks = (extra: string) => aggregatedRole(loadYaml(config(extra))).numGpuBlocks;

describe("engine.wideep_num_slots", () => {
  it("a rank holds slots / EP experts: 160 slots over EP 4 add 8 experts' weights per MoE layer", () => {
    const model = resolveModel(MODEL);
    const par = { tensor: 4, pipeline: 1, moeTensor: 1, moeExpert: 4 };
    const plain = weightBreakdown(model, par);
    const slotted = weightBreakdown(model, { ...par, expertSlots: 160 });
    const perExpert = 2048 * 768 * 2 * 3; // hidden · expert_inter · BF16 · (gate, up, down)
    expect(slotted.expertBytes - plain.expertBytes).toBe(48 * 8 * perExpert);
    // The router still scores the 128 logical experts; nothing else moves.
    expect(slotted.routerBytes).toBe(plain.routerBytes);
    expect(slotted.perGpuBytes - plain.perGpuBytes).toBe(48 * 8 * perExpert);
    // One slot per expert is the default.
    expect(weightBreakdown(model, { ...par, expertSlots: 128 })).toEqual(plain);
  });

  it("shrinks a memory-sized KV cache by the redundant copies' bytes; 128 slots (one per expert) change nothing", () => {
    const eplb = "  enable_eplb: true\n";
    const base = blocks(eplb);
    expect(blocks(`${eplb}  wideep_num_slots: 128\n`)).toBe(base);
    const slotted = blocks(`${eplb}  wideep_num_slots: 160\n`);
    // vLLM's rule: KV = capacity · 0.9 − non-KV, so the extra weights come off the KV budget whole.
    const kvBytesPerBlock = 16 * 2 * 48 * 1 * 128 * 2; // block · K,V · layers · kv heads/GPU (4/4) · head_dim · BF16
    const extraWeights = 48 * 8 * 2048 * 768 * 2 * 3;
    expect(base - slotted).toBeGreaterThanOrEqual(Math.floor(extraWeights / kvBytesPerBlock));
    expect(base - slotted).toBeLessThanOrEqual(Math.ceil(extraWeights / kvBytesPerBlock));
  });

  it.each([
    [
      "a dense model",
      "  wideep_num_slots: 64\n",
      "Qwen/Qwen3-8B",
      "engine.wideep_num_slots requires an MoE model (as in the reference); Qwen/Qwen3-8B is dense",
    ],
    [
      "fewer slots than experts",
      "  enable_eplb: true\n  wideep_num_slots: 96\n",
      MODEL,
      `engine.wideep_num_slots (96) must be at least ${MODEL}'s 128 experts: every expert needs a slot`,
    ],
    [
      "redundant slots without EPLB",
      "  wideep_num_slots: 160\n",
      MODEL,
      `engine.wideep_num_slots (160) above ${MODEL}'s 128 experts needs engine.enable_eplb: true ` +
        "(the redundant slots hold EPLB's copies of hot experts; the reference requires it too)",
    ],
    [
      "slots that do not split over the EP ranks",
      "  enable_eplb: true\n  wideep_num_slots: 130\n",
      MODEL,
      "engine.wideep_num_slots (130) must split evenly over the 4 expert-parallel ranks of engine.workers.aggregated " +
        "(parallelism.moe_expert), so that every rank holds the same number of slots",
    ],
  ])("refuses %s", (_name, extra, model, message) => {
    const err = loadError(config(extra).replace(MODEL, model));
    expect(err.issues, err.format()).toHaveLength(1);
    expect(issueAt(err, "engine.wideep_num_slots").message).toBe(message);
  });

  it("refuses non-default timing, as the reference does for its engine model controls", () => {
    const yaml = config("  enable_eplb: true\n  wideep_num_slots: 160\n").replace(
      "      kv_cache: {block_size: 16}\n",
      "      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 100}}\n      timing: {type: polynomial}\n",
    );
    expect(issueAt(loadError(yaml), "engine.wideep_num_slots").message).toBe(
      "engine.wideep_num_slots needs timing type 'default' in every role, as in the reference (AIConfigurator prices it); " +
        "engine.workers.aggregated.timing.type is 'polynomial'",
    );
  });
});
