import { describe, expect, it } from "vitest";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { Grid } from "../../src/hardware/grid.js";
import { contextRules } from "../../src/hardware/tableData.js";
import { expectDefaultTimingOnlyKey } from "../helpers/configHelpers.js";

const HEADS = { numHeads: 32, numKvHeads: 8, headDim: 128, kvDtype: "bfloat16" } as const;

describe("context attention beyond the longest measured sequence (timing.context_attention_extrapolation)", () => {
  it("quadratic: the last point of the sequence axis × (length / its length)²", () => {
    // One head count, one batch; the sequence axis measured at 1k and 2k (latency ∝ length^1.5).
    const axes = [[32], [1, 2], [1024, 2048, 4096]];
    const cells = [1, 2.83, null, 2, 5.66, 16];
    const quad = new Grid(axes, cells, contextRules("quadratic"));
    expect(quad.at3(32, 2, 8192)).toBeCloseTo(16 * 4, 9);
    expect(quad.at3(32, 2, 6144)).toBeCloseTo(16 * 1.5 ** 2, 9);
    // The hole (batch 1 at 4k) is filled along batch first (fillOrder), as with the √ rule, and
    // extrapolated from there.
    const sqrt = new Grid(axes, cells, contextRules("sqrt"));
    expect(quad.at3(32, 1, 4096)).toBe(sqrt.at3(32, 1, 4096));
    expect(quad.at3(32, 1, 8192)).toBeCloseTo(quad.at3(32, 1, 4096) * 4, 9);
    // Along the sequence axis only: below the first point both rules clamp.
    expect(quad.at3(32, 2, 512)).toBe(sqrt.at3(32, 2, 512));
    // √ continues the last segment (2k → 4k) in √latency: three segments on at 8k, not × 4.
    expect(sqrt.at3(32, 2, 8192)).toBeCloseTo((Math.sqrt(5.66) + 3 * (4 - Math.sqrt(5.66))) ** 2, 9);
  });

  it("changes nothing inside the measured range of the built-in tables, and × 4 from 16k to 32k tokens", () => {
    const sqrt = loadCompactTables("h200_sxm");
    const quad = loadCompactTables("h200_sxm", false, "vllm", "quadratic");
    for (const len of [512, 4096, 12_000, 16_384])
      expect(quad.contextAttention(HEADS, 1, len, 0)).toBe(sqrt.contextAttention(HEADS, 1, len, 0));
    const at16k = quad.contextAttention(HEADS, 1, 16_384, 0);
    expect(quad.contextAttention(HEADS, 1, 32_768, 0)).toBeCloseTo(at16k * 4, 9);
    // The √ rule grows less: the measured kernel's exponent is below 2 (docs/conformance.md, Known differences 3).
    const sqrtRatio = sqrt.contextAttention(HEADS, 1, 32_768, 0) / at16k;
    expect(sqrtRatio).toBeGreaterThan(3);
    expect(sqrtRatio).toBeLessThan(4);
  });

  it("is read from the YAML for default timing only", () => {
    expectDefaultTimingOnlyKey(
      "context_attention_extrapolation",
      "quadratic",
      "sqrt",
      "contextExtrapolation",
    );
  });
});
