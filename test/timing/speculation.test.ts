/**
 * The op-level price of a speculative verify pass (docs/speculation.md): every draft token is a
 * decode position through the layers, the LM head and decode attention (AIConfigurator's
 * `(nextn + 1)` decode batch), host time stays per sequence, and `mtp` adds one decoder layer,
 * the LM head and one layer of attention per draft step; `ngram` drafts cost no GPU time. The
 * closed forms (polynomial, fixed) price a verify pass as its plain decode pass.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { FixedTiming } from "../../src/timing/fixed.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";
import { PolynomialTiming } from "../../src/timing/polynomial.js";
import type { DraftKind } from "../../src/timing/timingSpec.js";
import { passOf } from "../helpers/passShape.js";

const KV = 1 << 20;
const HOST = { perPassMs: 0.02, perSequenceMs: 0.05 };

function timing(model: string, drafter: DraftKind | null, tensor = 1): OpLevelTiming {
  const arch = resolveModel(model);
  const moe = arch.moe === null ? { moeTensor: 1, moeExpert: 1 } : { moeTensor: tensor, moeExpert: 1 };
  const parallel = { tensor, pipeline: 1, attentionData: 1, ...moe };
  return new OpLevelTiming(arch, gpuSpec("h200_sxm"), loadCompactTables("h200_sxm"), parallel, HOST, drafter);
}

describe.each([
  ["Qwen/Qwen3-8B", 1],
  ["meta-llama/Llama-3.1-70B", 4],
  ["Qwen/Qwen3-30B-A3B", 1],
] as const)("verify passes on %s (TP %d)", (model, tensor) => {
  const ngram = timing(model, "ngram", tensor);
  const mtp = timing(model, "mtp", tensor);

  it("ngram: a batch × (K+1)-row decode pass whose host time counts the batch's sequences", () => {
    for (const [batch, ctx, k] of [
      [1, 500, 1],
      [16, 2000, 3],
      [64, 4000, 5],
    ]) {
      const verify = ngram.passMs(passOf(0, 0, 0, batch, batch * ctx, ctx, KV, batch, batch * k));
      const rows = batch * (k + 1);
      const asDecode = ngram.decodeMs(rows, rows * ctx, ctx, KV) - HOST.perSequenceMs * (rows - batch);
      expect(verify).toBeCloseTo(asDecode, 9);
      // Verifying costs more than a plain pass, and far less than K+1 plain passes.
      const plain = ngram.decodeMs(batch, batch * ctx, ctx, KV);
      expect(verify).toBeGreaterThan(plain);
      expect(verify).toBeLessThan((k + 1) * plain);
    }
  });

  it("mtp: the ngram price plus K draft steps, each well under a whole forward pass", () => {
    const [batch, ctx, k] = [16, 2000, 3];
    const ng = ngram.passMs(passOf(0, 0, 0, batch, batch * ctx, ctx, KV, batch, batch * k));
    const mt = mtp.passMs(passOf(0, 0, 0, batch, batch * ctx, ctx, KV, batch, batch * k));
    const plain = ngram.decodeMs(batch, batch * ctx, ctx, KV);
    expect(mt).toBeGreaterThan(ng);
    expect(mt - ng).toBeLessThan((k * plain) / 4);
    // Draft steps scale with the drafts per sequence: 1 draft step is a third of 3.
    const one =
      mtp.passMs(passOf(0, 0, 0, batch, batch * ctx, ctx, KV, batch, batch)) -
      ngram.passMs(passOf(0, 0, 0, batch, batch * ctx, ctx, KV, batch, batch));
    expect(one * 3).toBeCloseTo(mt - ng, 9);
  });

  it("a mixed pass verifies drafts inside the one forward pass", () => {
    const mixed = ngram.passMs(passOf(1, 1024, 0, 16, 16 * 800, 800, KV));
    const verify = ngram.passMs(passOf(1, 1024, 0, 16, 16 * 800, 800, KV, 16, 48));
    expect(verify).toBeGreaterThan(mixed);
    expect(verify - mixed).toBeLessThan(ngram.passMs(passOf(0, 0, 0, 16, 16 * 800, 800, KV, 16, 48)));
  });

  it("without a drafter (speculation off) draft arguments price as ngram's", () => {
    const off = timing(model, null, tensor);
    expect(off.passMs(passOf(0, 0, 0, 8, 8000, 1000, KV, 8, 16))).toBe(
      ngram.passMs(passOf(0, 0, 0, 8, 8000, 1000, KV, 8, 16)),
    );
  });
});

describe("closed forms", () => {
  it("polynomial and fixed price a verify pass as its plain decode pass (the mocker's rule)", () => {
    for (const t of [new PolynomialTiming(), new FixedTiming(10, 3)]) {
      expect(t.passMs(passOf(0, 0, 0, 16, 16_000, 1000, KV, 16, 48))).toBe(
        t.passMs(passOf(0, 0, 0, 16, 16_000, 1000, KV)),
      );
      expect(t.passMs(passOf(2, 512, 0, 16, 16_000, 1000, KV, 16, 48))).toBe(
        t.passMs(passOf(2, 512, 0, 16, 16_000, 1000, KV)),
      );
    }
  });
});
