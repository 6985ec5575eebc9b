import { describe, expect, it } from "vitest";
import { hasSla, isGood, type SlaThresholds } from "../../src/metrics/goodput.js";

const sla = (ttftMs: number | null, itlMs: number | null, e2eMs: number | null): SlaThresholds => ({
  ttftMs,
  itlMs,
  e2eMs,
});

describe("hasSla", () => {
  it("is true only when some threshold is set", () => {
    expect(hasSla(null)).toBe(false);
    expect(hasSla(undefined)).toBe(false);
    expect(hasSla(sla(null, null, null))).toBe(false);
    expect(hasSla(sla(100, null, null))).toBe(true);
    expect(hasSla(sla(null, 5, null))).toBe(true);
    expect(hasSla(sla(null, null, 1000))).toBe(true);
  });
});

describe("isGood", () => {
  it("TTFT bound is inclusive", () => {
    const s = sla(100, null, null);
    expect(isGood(s, 100, 5000, 10)).toBe(true);
    expect(isGood(s, 100.000001, 5000, 10)).toBe(false);
    expect(isGood(s, 0, 0, 1)).toBe(true);
  });

  it("E2E bound is inclusive", () => {
    const s = sla(null, null, 2000);
    expect(isGood(s, 1999, 2000, 3)).toBe(true);
    expect(isGood(s, 10, 2000.5, 3)).toBe(false);
  });

  it("ITL uses the average (e2e − ttft)/(n − 1), inclusive", () => {
    const s = sla(null, 10, null);
    expect(isGood(s, 50, 140, 10)).toBe(true); // 90 / 9 = 10
    expect(isGood(s, 50, 140.09, 10)).toBe(false);
    expect(isGood(s, 50, 60, 2)).toBe(true); // one gap of 10
  });

  it("n_out = 1 skips the ITL check", () => {
    const s = sla(null, 1, null);
    expect(isGood(s, 50, 5000, 1)).toBe(true);
    expect(isGood(sla(40, 1, null), 50, 50, 1)).toBe(false); // TTFT still applies
  });

  it("TTFT + ITL must both hold", () => {
    const s = sla(200, 20, null);
    expect(isGood(s, 200, 380, 10)).toBe(true); // ttft 200, itl 20
    expect(isGood(s, 201, 381, 10)).toBe(false); // ttft over
    expect(isGood(s, 100, 290, 10)).toBe(false); // itl 190/9 > 20
  });

  it("zero-output completed requests are good only under an e2e-only SLA", () => {
    expect(isGood(sla(100, null, null), null, null, 0)).toBe(false);
    expect(isGood(sla(null, 10, null), null, null, 0)).toBe(false);
    expect(isGood(sla(100, 10, null), null, null, 0)).toBe(false);
    // e2e-only: no token, so no token latency that could exceed the bound.
    expect(isGood(sla(null, null, 1000), null, null, 0)).toBe(true);
    expect(isGood(sla(null, null, 1000), undefined, undefined, 0)).toBe(true);
    // If a caller does supply an e2e for it, the bound applies.
    expect(isGood(sla(null, null, 1000), null, 1000, 0)).toBe(true);
    expect(isGood(sla(null, null, 1000), null, 1001, 0)).toBe(false);
  });

  it("missing or NaN measurements fail the thresholds that need them", () => {
    expect(isGood(sla(100, null, null), null, 50, 3)).toBe(false);
    expect(isGood(sla(null, null, 100), 10, null, 3)).toBe(false);
    expect(isGood(sla(null, 5, null), null, 50, 3)).toBe(false);
    expect(isGood(sla(100, null, null), Number.NaN, 50, 3)).toBe(false);
    expect(isGood(sla(null, 5, null), 10, Number.NaN, 3)).toBe(false);
  });
});
