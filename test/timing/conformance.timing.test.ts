/**
 * The TimingModel contract (src/timing/timingModel.ts), checked against every implementation:
 * polynomial, fixed and the op-level model (dense and MoE, TP 1 and 4, with and without host
 * overhead). Issue 15: one conformance suite per interface, run against every implementation.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { FixedTiming } from "../../src/timing/fixed.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";
import { PolynomialTiming } from "../../src/timing/polynomial.js";
import type { TimingModel } from "../../src/timing/timingModel.js";
import { passOf } from "../helpers/passShape.js";

function opLevel(model: string, gpu: string, tensor: number, perSequenceMs = 0): OpLevelTiming {
  const arch = resolveModel(model);
  const moe = arch.moe === null ? { moeTensor: 1, moeExpert: 1 } : { moeTensor: tensor, moeExpert: 1 };
  return new OpLevelTiming(
    arch,
    gpuSpec(gpu),
    loadCompactTables(gpu),
    { tensor, pipeline: 1, attentionData: 1, ...moe },
    { perPassMs: 0.1, perSequenceMs },
  );
}

const IMPLEMENTATIONS: [string, () => TimingModel][] = [
  ["polynomial", () => new PolynomialTiming()],
  ["fixed", () => new FixedTiming(12, 3)],
  ["op-level Llama-3.1-8B H100 TP1", () => opLevel("meta-llama/Llama-3.1-8B", "h100_sxm", 1)],
  ["op-level Llama-3.1-70B H200 TP4 + host", () => opLevel("meta-llama/Llama-3.1-70B", "h200_sxm", 4, 0.05)],
  ["op-level Qwen3-30B-A3B (MoE) H200 TP1", () => opLevel("Qwen/Qwen3-30B-A3B", "h200_sxm", 1)],
];

const TOTAL_KV = 1 << 20;

describe.each(IMPLEMENTATIONS)("TimingModel contract: %s", (_name, make) => {
  const t = make();

  it("an empty pass costs nothing, and an empty half adds nothing", () => {
    expect(t.prefillMs(0, 0, 0)).toBe(0);
    expect(t.decodeMs(0, 0, 0, TOTAL_KV)).toBe(0);
    expect(t.passMs(passOf(0, 0, 0, 0, 0, 0, TOTAL_KV))).toBe(0);
    expect(t.passMs(passOf(2, 1000, 0, 0, 0, 0, TOTAL_KV))).toBe(t.prefillMs(2, 1000, 0));
    expect(t.passMs(passOf(0, 0, 0, 16, 16 * 700, 700, TOTAL_KV))).toBe(
      t.decodeMs(16, 16 * 700, 700, TOTAL_KV),
    );
  });

  it("a fully cached prompt has no prefill cost (fixed timing charges any non-empty batch, as the reference's)", () => {
    expect(t.prefillMs(3, 512, 512)).toBe(t instanceof FixedTiming ? 12 : 0);
  });

  it("every non-empty pass is finite and positive, a token-emitting one never 0", () => {
    for (const batch of [1, 7, 64, 256]) {
      for (const ctx of [1, 100, 4096]) {
        const d = t.decodeMs(batch, batch * ctx, ctx, TOTAL_KV);
        expect(Number.isFinite(d) && d > 0, `decode ${batch}×${ctx}`).toBe(true);
      }
    }
    for (const [count, isl, prefix] of [
      [1, 1, 0],
      [1, 8192, 0],
      [4, 2048, 1024],
    ]) {
      const p = t.prefillMs(count, isl, prefix);
      expect(Number.isFinite(p) && p > 0, `prefill ${count}×${isl}/${prefix}`).toBe(true);
    }
  });

  it("more work never costs less: prefill in new tokens, decode in batch", () => {
    let last = 0;
    for (const isl of [16, 256, 1024, 4096, 16384]) {
      const p = t.prefillMs(1, isl, 0);
      expect(p).toBeGreaterThanOrEqual(last);
      last = p;
    }
    last = 0;
    for (const batch of [1, 2, 8, 32, 128]) {
      const d = t.decodeMs(batch, batch * 1000, 1000, TOTAL_KV);
      expect(d).toBeGreaterThanOrEqual(last);
      last = d;
    }
  });

  it("a mixed pass costs at least its larger half and at most the sum of both", () => {
    for (const [count, isl, batch, ctx] of [
      [1, 1024, 32, 800],
      [2, 512, 128, 2000],
      [1, 8192, 4, 100],
    ]) {
      const prefill = t.prefillMs(count, isl, 0);
      const decode = t.decodeMs(batch, batch * ctx, ctx, TOTAL_KV);
      const mixed = t.passMs(passOf(count, isl, 0, batch, batch * ctx, ctx, TOTAL_KV));
      expect(mixed).toBeGreaterThanOrEqual(Math.max(prefill, decode) - 1e-9);
      expect(mixed).toBeLessThanOrEqual(prefill + decode + 1e-9);
    }
  });

  it("draft tokens (speculative decoding): 0 changes nothing, more never cost less", () => {
    for (const [count, isl, batch, ctx] of [
      [0, 0, 32, 800],
      [1, 1024, 16, 2000],
    ]) {
      const plain = t.passMs(passOf(count, isl, 0, batch, batch * ctx, ctx, TOTAL_KV));
      expect(t.passMs(passOf(count, isl, 0, batch, batch * ctx, ctx, TOTAL_KV, 0, 0))).toBe(plain);
      expect(t.passMs(passOf(count, isl, 0, batch, batch * ctx, ctx, TOTAL_KV, batch, 0))).toBe(plain);
      let last = plain;
      for (const k of [1, 3, 5]) {
        const verify = t.passMs(passOf(count, isl, 0, batch, batch * ctx, ctx, TOTAL_KV, batch, batch * k));
        expect(Number.isFinite(verify) && verify >= last - 1e-9, `${k} drafts`).toBe(true);
        last = verify;
      }
    }
    // A prefill-only pass carries no drafts.
    expect(t.passMs(passOf(1, 1024, 0, 0, 0, 0, TOTAL_KV, 4, 12))).toBe(t.prefillMs(1, 1024, 0));
  });

  it("is a pure function: the same query gives the same answer", () => {
    const a = [
      t.prefillMs(2, 3000, 100),
      t.decodeMs(50, 50 * 900, 900, TOTAL_KV),
      t.passMs(passOf(1, 700, 0, 9, 9000, 1000, TOTAL_KV)),
    ];
    const b = [
      t.prefillMs(2, 3000, 100),
      t.decodeMs(50, 50 * 900, 900, TOTAL_KV),
      t.passMs(passOf(1, 700, 0, 9, 9000, 1000, TOTAL_KV)),
    ];
    expect(b).toEqual(a);
  });
});
