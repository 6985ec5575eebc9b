/**
 * vLLM's CUDA-graph padding (timing/cudaGraphs.ts, docs/timing.md "CUDA-graph padding"): the
 * capture sizes vLLM derives from the scheduler's limits, a pass's token count rounded up to the
 * next of them, and a vLLM role's op-level prices at the padded count unless
 * `timing.cuda_graph_padding: false`.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { CudaGraphPadding, vllmCaptureSizes } from "../../src/timing/cudaGraphs.js";
import { createTimingModel } from "../../src/timing/index.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";
import { aggregatedRole, issueAt, loadError, loadYaml } from "../helpers/configHelpers.js";
import { engineYaml } from "../helpers/configYaml.js";
import { passOf } from "../helpers/passShape.js";

const PAR = { tensor: 1, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };

describe("vLLM's capture sizes", () => {
  it("1, 2, 4, multiples of 8 below 256, then of 16, up to min(2 × max_num_seqs, 512, max_num_batched_tokens)", () => {
    const sizes = vllmCaptureSizes(512, 8192);
    expect(sizes.slice(0, 6)).toEqual([1, 2, 4, 8, 16, 24]);
    expect(sizes.filter((s) => s < 256)).toHaveLength(3 + 31);
    expect(sizes.filter((s) => s >= 256)).toEqual(Array.from({ length: 17 }, (_, i) => 256 + 16 * i));
    // max_num_seqs 128: the cap is 256.
    const p = CudaGraphPadding.vllmDefault(128, 2048)!;
    expect(p.largest).toBe(256);
    // max_num_batched_tokens below the cap is captured itself and caps the list.
    expect(vllmCaptureSizes(100, 100)).toEqual([
      1,
      2,
      4,
      ...Array.from({ length: 12 }, (_, i) => 8 * (i + 1)),
      100,
    ]);
    expect(CudaGraphPadding.vllmDefault(256, 100)!.largest).toBe(100);
  });

  it("pads a count up to the next captured size and leaves larger counts alone", () => {
    const p = CudaGraphPadding.vllmDefault(256, 8192)!;
    expect([1, 2, 3, 5, 8, 9, 85, 248, 249, 257, 511, 512].map((t) => p.tokens(t))).toEqual([
      1, 2, 4, 8, 8, 16, 88, 248, 256, 272, 512, 512,
    ]);
    expect(p.tokens(513)).toBe(513);
    expect(p.tokens(4096)).toBe(4096);
    // A mean-based count rounds up before padding; nothing is left at nothing.
    expect(p.tokens(10.5)).toBe(16);
    expect(p.tokens(0)).toBe(0);
  });
});

describe("op-level prices", () => {
  const model = resolveModel("Qwen/Qwen3-8B");
  const tables = loadCompactTables("h200_sxm");
  const bare = new OpLevelTiming(model, gpuSpec("h200_sxm"), tables, PAR);
  const padded = new OpLevelTiming(
    model,
    gpuSpec("h200_sxm"),
    tables,
    PAR,
    undefined,
    null,
    {},
    CudaGraphPadding.vllmDefault(256, 8192),
  );

  it("a decode pass of 85 sequences costs the token ops of 88 and the attention of 85", () => {
    const at85 = padded.decodeMs(85, 85 * 1000, 1000, 1e6);
    // The same layers at 88 rows, attention and LM head still over 85 sequences.
    const tokenOpsDelta = bare.decodeMs(88, 88 * 1000, 1000, 1e6) - bare.decodeMs(85, 85 * 1000, 1000, 1e6);
    expect(at85).toBeGreaterThan(bare.decodeMs(85, 85 * 1000, 1000, 1e6));
    expect(at85).toBeLessThan(bare.decodeMs(85, 85 * 1000, 1000, 1e6) + tokenOpsDelta);
    // A captured size itself is not padded; past the largest, nothing is.
    expect(padded.decodeMs(88, 88 * 1000, 1000, 1e6)).toBe(bare.decodeMs(88, 88 * 1000, 1000, 1e6));
    expect(padded.prefillMs(1, 2000, 0)).toBe(bare.prefillMs(1, 2000, 0));
  });

  it("a mixed pass pads its total tokens", () => {
    const mixed = passOf(1, 40, 0, 20, 20 * 500, 500, 1e6);
    expect(padded.passMs(mixed)).toBeGreaterThan(bare.passMs(mixed));
  });
});

describe("timing.cuda_graph_padding", () => {
  const ENGINE = (timing: string, backend = "vllm") =>
    engineYaml({
      model: "Qwen/Qwen3-8B",
      contextLength: null,
      kvCache: "{capacity: {type: fixed, blocks: 1000}}",
      timing,
    }).replace("  hardware:", `  backend: ${backend}\n  hardware:`);
  const decode = async (yaml: string) => {
    const role = aggregatedRole(loadYaml(yaml, { stack: "engine" }));
    const t = await createTimingModel(role.timing, role);
    return t.decodeMs(85, 85 * 500, 500, 1e6);
  };

  it("is on for a vLLM role by default; false prices the real count", async () => {
    const on = await decode(ENGINE("{type: default}"));
    const off = await decode(ENGINE("{type: default, cuda_graph_padding: false}"));
    expect(on).toBeGreaterThan(off);
    expect(await decode(ENGINE("{type: default, cuda_graph_padding: true}"))).toBe(on);
  });

  it("is refused on another backend, at its config path, and on closed-form timing", () => {
    const err = loadError(ENGINE("{type: default, cuda_graph_padding: true}", "sglang"), { stack: "engine" });
    expect(issueAt(err, "engine.workers.aggregated.timing.cuda_graph_padding").message).toMatch(
      /vLLM's CUDA-graph capture sizes/,
    );
    const poly = loadError(ENGINE("{type: polynomial, cuda_graph_padding: false}"), { stack: "engine" });
    expect(poly.format()).toMatch(/does not accept \['cuda_graph_padding'\]/);
  });
});
