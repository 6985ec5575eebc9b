import { describe, expect, it } from "vitest";
import type { ModelArchitecture } from "../../src/model/architecture.js";
import {
  assignReplicas,
  ladderShapes,
  latentNames,
  roleDimensions,
  snapShape,
} from "../../src/recommend/parallelism.js";

const dense = { numHeads: 32, moe: null } as unknown as ModelArchitecture;
const moe = { numHeads: 64, moe: { numExperts: 8 } } as unknown as ModelArchitecture;

describe("default parallelism preset", () => {
  it("enumerates the GPU ladder within the budget, attention-DP only for aggregated workers", () => {
    const agg = ladderShapes("aggregated", dense, 4);
    expect(agg.map((s) => `${s.gpus}:${s.tensor}x${s.attentionData}`)).toEqual([
      "1:1x1",
      "2:2x1",
      "2:1x2",
      "4:4x1",
      "4:1x4",
    ]);
    const decode = ladderShapes("decode", dense, 16);
    expect(decode.map((s) => s.tensor)).toEqual([1, 2, 4, 8, 16]);
    expect(decode.every((s) => s.attentionData === 1)).toBe(true);
  });

  it("drops tensor splits the model's heads do not divide and expert splits its experts do not divide", () => {
    const odd = { numHeads: 12, moe: null } as unknown as ModelArchitecture;
    expect(ladderShapes("decode", odd, 16).map((s) => s.tensor)).toEqual([1, 2, 4]);
    const shapes = ladderShapes("decode", moe, 16);
    // 16-way expert parallelism needs 16 experts; 8 has only the tensor split of its FFN.
    expect(shapes.filter((s) => s.gpus === 16).map((s) => s.ffnMode)).toEqual(["tp"]);
    expect(shapes.filter((s) => s.gpus === 8).map((s) => [s.moeTensor, s.moeExpert])).toEqual([
      [1, 8],
      [8, 1],
    ]);
  });

  it("snaps a suggestion to the nearest legal shape: modes first, then GPUs in log2", () => {
    const shapes = ladderShapes("aggregated", dense, 8);
    const n = latentNames("aggregated");
    expect(snapShape("aggregated", shapes, { [n.gpus]: 3, [n.attention]: "dp" })).toMatchObject({
      gpus: 4,
      attentionData: 4,
    });
    expect(snapShape("aggregated", shapes, { [n.gpus]: 1, [n.attention]: "dp" })).toMatchObject({
      gpus: 2,
      attentionData: 2,
    });
    expect(snapShape("aggregated", shapes, { [n.gpus]: 6 })).toMatchObject({ gpus: 8 });
    const dims = roleDimensions("aggregated", shapes);
    expect(dims.map((d) => d.name)).toEqual([n.gpus, n.attention]);
  });

  it("fills the budget by used_gpu_ratio, and splits it between prefill and decode within the budget", () => {
    expect(
      assignReplicas([{ role: "aggregated", gpus: 2 }], 8, 0, { used_gpu_ratio: 1 }).get("aggregated"),
    ).toBe(4);
    expect(
      assignReplicas([{ role: "aggregated", gpus: 2 }], 8, 0, { used_gpu_ratio: 0 }).get("aggregated"),
    ).toBe(1);
    expect(
      assignReplicas([{ role: "aggregated", gpus: 2 }], 8, 6, { used_gpu_ratio: 0 }).get("aggregated"),
    ).toBe(3);
    const pd = assignReplicas(
      [
        { role: "prefill", gpus: 1 },
        { role: "decode", gpus: 2 },
      ],
      8,
      0,
      { used_gpu_ratio: 1, prefill_gpu_share: 0.5 },
    );
    expect([pd.get("prefill"), pd.get("decode")]).toEqual([4, 2]);
    const tight = assignReplicas(
      [
        { role: "prefill", gpus: 4 },
        { role: "decode", gpus: 4 },
      ],
      8,
      0,
      { used_gpu_ratio: 1, prefill_gpu_share: 0.9 },
    );
    expect((tight.get("prefill") ?? 0) * 4 + (tight.get("decode") ?? 0) * 4).toBeLessThanOrEqual(8);
  });
});
