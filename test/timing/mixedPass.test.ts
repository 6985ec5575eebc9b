/**
 * A pass that prefills some requests and decodes others is ONE forward pass (vLLM chunked
 * prefill): the linear layers read their weights once for all tokens. Pricing the halves as two
 * passes read the weights twice, which put a decode step sharing a batch with a 1,024-token
 * prefill at ~30 ms on Llama-3.1-8B H100 (issue 14).
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";
import { PolynomialTiming } from "../../src/timing/polynomial.js";
import { passOf } from "../helpers/passShape.js";

function llama8b(perPassMs = 0): OpLevelTiming {
  const model = resolveModel("meta-llama/Llama-3.1-8B");
  const parallel = { tensor: 1, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };
  return new OpLevelTiming(model, gpuSpec("h100_sxm"), loadCompactTables("h100_sxm"), parallel, {
    perPassMs,
    perSequenceMs: 0,
  });
}

describe("op-level timing: mixed prefill + decode passes", () => {
  const t = llama8b(0.126);
  const kvTotal = 1 << 20;

  it("equals the prefill or decode price when the other half is empty", () => {
    expect(t.passMs(passOf(1, 1024, 0, 0, 0, 0, kvTotal))).toBe(t.prefillMs(1, 1024, 0));
    expect(t.passMs(passOf(0, 0, 0, 32, 32 * 800, 800, kvTotal))).toBe(
      t.decodeMs(32, 32 * 800, 800, kvTotal),
    );
    expect(t.passMs(passOf(0, 0, 0, 0, 0, 0, kvTotal))).toBe(0);
  });

  it("reads the weights once: a 1,024-token chunk plus 32 decodes costs far less than the two passes", () => {
    const mixed = t.passMs(passOf(1, 1024, 0, 32, 32 * 800, 800, kvTotal));
    const apart = t.prefillMs(1, 1024, 0) + t.decodeMs(32, 32 * 800, 800, kvTotal);
    const prefill = t.prefillMs(1, 1024, 0);
    // The decode rows add their attention and a few GEMM rows, not another weight read.
    expect(mixed).toBeGreaterThan(prefill);
    expect(mixed - prefill).toBeLessThan(0.5 * t.decodeMs(32, 32 * 800, 800, kvTotal));
    expect(mixed).toBeLessThan(apart - 4);
  });

  it("keeps the decode attention of the decode rows (longer contexts cost more)", () => {
    const short = t.passMs(passOf(1, 512, 0, 64, 64 * 512, 512, kvTotal));
    const long = t.passMs(passOf(1, 512, 0, 64, 64 * 8192, 8192, kvTotal));
    expect(long).toBeGreaterThan(short + 1);
  });

  it("is monotone in the prefill chunk and in the decode batch", () => {
    let last = 0;
    for (const chunk of [64, 256, 1024, 4096]) {
      const ms = t.passMs(passOf(1, chunk, 0, 16, 16 * 1000, 1000, kvTotal));
      expect(ms).toBeGreaterThan(last);
      last = ms;
    }
    last = 0;
    for (const batch of [1, 8, 64, 256]) {
      const ms = t.passMs(passOf(1, 512, 0, batch, batch * 1000, 1000, kvTotal));
      expect(ms).toBeGreaterThan(last);
      last = ms;
    }
  });

  it("the reference's closed forms still add the halves", () => {
    const p = new PolynomialTiming();
    expect(p.passMs(passOf(1, 1024, 0, 8, 8000, 1000, 100_000))).toBe(
      p.prefillMs(1, 1024, 0) + p.decodeMs(8, 8000, 1000, 100_000),
    );
    expect(p.passMs(passOf(0, 0, 0, 8, 8000, 1000, 100_000))).toBe(p.decodeMs(8, 8000, 1000, 100_000));
  });
});
