/**
 * MoE under tensor parallelism is sharded by default (issue 14: Mixtral TP2 was priced with
 * unsharded experts, a decode pass ~1.85× too slow): `moe_tensor` × `moe_expert` at 1 × 1 means
 * "not set", and the experts shard over the worker's tensor × attention_data ranks as vLLM does
 * without expert parallelism and as the reference leaves it to its estimator.
 */
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { aggregatedRole, loadYaml } from "../helpers/configHelpers.js";
import { engineYaml, syntheticTraffic } from "../helpers/configYaml.js";

const config = (parallelism: string) =>
  `${syntheticTraffic("{type: concurrency, concurrency: 4}", "{requests: 10}")}${engineYaml({
    model: "Qwen/Qwen3-30B-A3B",
    hardware: "h100_sxm",
    contextLength: null,
    parallelism,
    kvCache: "{capacity: {type: fixed, blocks: 1000}}",
  })}`;

describe("MoE sharding defaults", () => {
  it("tensor 2 with the MoE fields left out shards the experts over the two ranks", () => {
    expect(aggregatedRole(loadYaml(config("{tensor: 2}")))).toMatchObject({ moeTensor: 2, moeExpert: 1 });
    // Written out as 1 × 1, the same: the product 1 is the unset value.
    const explicit = aggregatedRole(loadYaml(config("{tensor: 2, moe_tensor: 1, moe_expert: 1}")));
    expect(explicit).toMatchObject({ moeTensor: 2, moeExpert: 1 });
    // Expert parallelism when asked for; attention DP widens the MoE group.
    expect(aggregatedRole(loadYaml(config("{tensor: 2, moe_tensor: 1, moe_expert: 2}")))).toMatchObject({
      moeTensor: 1,
      moeExpert: 2,
    });
    expect(aggregatedRole(loadYaml(config("{tensor: 2, attention_data: 2}")))).toMatchObject({
      moeTensor: 4,
      moeExpert: 1,
    });
  });

  it("a dense model keeps 1 × 1, and estimate prices the default as --moe-tensor 2", async () => {
    const dense = aggregatedRole(
      loadYaml(config("{tensor: 2}").replace("Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-8B")),
    );
    expect(dense).toMatchObject({ moeTensor: 1, moeExpert: 1 });
    const args = ["estimate", "--model", "Qwen/Qwen3-30B-A3B", "--hardware", "h100_sxm", "--tensor", "2"];
    const decode = async (...extra: string[]) => {
      const r = await cli(...args, "--batch", "32", "--context", "1024", "--format", "json", ...extra);
      expect(r.code).toBe(0);
      return JSON.parse(r.out) as { parallelism: Record<string, number>; decode: { total_ms: number } };
    };
    const byDefault = await decode();
    const sharded = await decode("--moe-tensor", "2");
    const expert = await decode("--moe-expert", "2");
    expect(byDefault.parallelism).toMatchObject({ moe_tensor: 2, moe_expert: 1 });
    expect(byDefault.decode.total_ms).toBe(sharded.decode.total_ms);
    expect(expert.decode.total_ms).not.toBe(sharded.decode.total_ms);
  });
});
