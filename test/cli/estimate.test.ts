import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";

describe("fleetsim estimate", () => {
  it("--op-tables backend prices the pass from the backend's own tables and names them", async () => {
    const args = [
      "--model",
      "Qwen/Qwen3-235B-A22B-FP8",
      "--hardware",
      "h200_sxm",
      "--tensor",
      "4",
      "--moe-tensor",
      "4",
    ];
    const pass = ["--batch", "32", "--context", "2048", "--format", "json"];
    const own = await cli("estimate", ...args, ...pass, "--backend", "sglang", "--op-tables", "backend");
    const borrowed = await cli("estimate", ...args, ...pass, "--backend", "sglang");
    expect(own.code, own.err).toBe(0);
    const o = JSON.parse(own.out);
    const b = JSON.parse(borrowed.out);
    expect(o.op_tables.backend).toBe("sglang");
    expect(o.op_tables.version).toBe("0.5.9");
    // H200's SGLang tables have no per-tensor FP8 MoE rows: those come from vLLM's (named).
    expect(o.op_tables.filled_from_vllm).toContain("moe fp8");
    expect(b.op_tables).toEqual({ backend: "vllm", version: "0.24.0", filled_from_vllm: [] });
    expect(o.backend).toBe("sglang");
    // SGLang's own fused MoE and DeepGEMM cells, not vLLM's.
    expect(o.total_ms).not.toBe(b.total_ms);
    const table = await cli(
      "estimate",
      ...args,
      "--batch",
      "32",
      "--context",
      "2048",
      "--backend",
      "trtllm",
      "--op-tables",
      "backend",
    );
    expect(table.out).toContain("(TensorRT-LLM, fp8_block weights");
    expect(table.out).toContain("op tables: TensorRT-LLM 1.2.0rc5");
  });

  it("--context-attention-extrapolation quadratic prices attention past the tables as the reference does, and nothing inside them differently", async () => {
    const llama = ["--model", "meta-llama/Meta-Llama-3.1-8B", "--hardware", "h200_sxm"];
    const attention = async (prefix: number, rule: string): Promise<{ att: number; total: number }> => {
      const r = await cli(
        "estimate",
        ...llama,
        ...["--prefill-tokens", "8192", "--prefix", String(prefix)],
        ...["--context-attention-extrapolation", rule, "--format", "json"],
      );
      expect(r.code, r.err).toBe(0);
      const doc = JSON.parse(r.out) as {
        total_ms: number;
        prefill: { ops: { name: string; latency_ms: number }[] };
      };
      const att = doc.prefill.ops.find((o) => o.name === "context_attention")!.latency_ms;
      return { att, total: doc.total_ms };
    };
    // Inside the context-attention tables (16,384 tokens in all) the rule changes nothing.
    expect((await attention(8192, "quadratic")).total).toBe((await attention(8192, "sqrt")).total);
    // Past them the square of the length, so the new tokens' share grows linearly in the prefix:
    // equal prefix steps add equal attention time.
    const [a, b, c] = await Promise.all([24_576, 32_768, 40_960].map((p) => attention(p, "quadratic")));
    expect(c!.att - b!.att).toBeCloseTo(b!.att - a!.att, 6);
    const far = await attention(57_344, "quadratic");
    expect(far.total).toBeGreaterThan((await attention(57_344, "sqrt")).total);
    // The reference's estimator prices this pass at 577.72 ms (docs/conformance.md "Forward-pass estimates").
    expect(Math.abs(far.total / 577.72 - 1)).toBeLessThan(0.01);
    const bad = await cli(
      "estimate",
      ...llama,
      "--prefill-tokens",
      "8",
      "--context-attention-extrapolation",
      "cubic",
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("sqrt, quadratic");
  });

  it("prints a per-operation breakdown of a prefill pass whose rows add up to the total", async () => {
    const r = await cli(
      "estimate",
      "--model",
      "nvidia/Llama-3.1-8B-Instruct-FP8",
      "--hardware",
      "h200_sxm",
      "--prefill-tokens",
      "4096",
      "--format",
      "json",
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.hardware).toBe("h200_sxm");
    expect(doc.decode).toBeNull();
    const ops = doc.prefill.ops as { name: string; repeat: number; latency_ms: number }[];
    const names = ops.map((o) => o.name);
    for (const name of [
      "qkv_gemm",
      "proj_gemm",
      "gate_up_gemm",
      "down_gemm",
      "context_attention",
      "logits_gemm",
    ]) {
      expect(names).toContain(name);
    }
    // Llama-3.1-8B has 32 layers: every per-layer GEMM runs 32 times.
    expect(ops.find((o) => o.name === "qkv_gemm")?.repeat).toBe(32);
    // TP 1: no all-reduce.
    expect(names).not.toContain("all_reduce");
    const sum = ops.reduce((a, o) => a + o.latency_ms, 0);
    expect(doc.prefill.total_ms).toBeCloseTo(sum, 9);
    expect(doc.total_ms).toBeCloseTo(sum, 9);
    // An 8B FP8 model prefilling 4k tokens on one H200 takes tens of milliseconds, not seconds.
    expect(doc.total_ms).toBeGreaterThan(20);
    expect(doc.total_ms).toBeLessThan(200);
  });

  it("adds tensor-parallel all-reduces and prices a decode step as a table", async () => {
    const r = await cli(
      "estimate",
      "--model",
      "meta-llama/Llama-3.1-70B",
      "--hardware",
      "h100_sxm",
      "--tensor",
      "4",
      "--batch",
      "64",
      "--context",
      "8192",
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain("Decode: 64 sequences at context 8192");
    expect(r.out).toContain("generation_attention");
    expect(r.out).toContain("all_reduce");
    expect(r.out).toMatch(/Pass latency \(ms\): [\d,.]+/);
  });

  it("costs more for a longer prefix, a larger batch, and a longer context", async () => {
    const json = async (...extra: string[]) => {
      const r = await cli(
        "estimate",
        "--model",
        "Qwen/Qwen3-32B",
        "--hardware",
        "h200_sxm",
        "--format",
        "json",
        ...extra,
      );
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out).total_ms as number;
    };
    expect(await json("--prefill-tokens", "2048", "--prefix", "16384")).toBeGreaterThan(
      await json("--prefill-tokens", "2048"),
    );
    expect(await json("--batch", "128", "--context", "4096")).toBeGreaterThan(
      await json("--batch", "8", "--context", "4096"),
    );
    expect(await json("--batch", "32", "--context", "32768")).toBeGreaterThan(
      await json("--batch", "32", "--context", "1024"),
    );
  });

  it.each([
    [["--model", "acme/unknown-7b", "--hardware", "h200_sxm", "--context", "10"], /acme\/unknown-7b/],
    [["--model", "meta-llama/Llama-3.1-8B", "--hardware", "tpu_v9", "--context", "10"], /tpu_v9/],
    [
      ["--model", "deepseek-ai/DeepSeek-V3", "--hardware", "h200_sxm", "--tensor", "3", "--context", "10"],
      /no all-reduce table for 3 GPUs/,
    ],
    [["--model", "meta-llama/Llama-3.1-8B", "--hardware", "h200_sxm"], /--prefill-tokens/],
    [
      ["--model", "meta-llama/Llama-3.1-8B", "--hardware", "h200_sxm", "--tensor", "0", "--context", "1"],
      /--tensor/,
    ],
  ])("user error %# exits 2 with a clear message", async (args, message) => {
    const r = await cli("estimate", ...args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).not.toContain("    at ");
  });
});
