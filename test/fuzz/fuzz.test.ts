/**
 * The CLI fuzz suite in `npm test` (issue 13 §10, issue 44): a fixed-seed sample of mutated configs,
 * `--set` values and trace lines, and of input at the CLI's edges (binary and endless traces, cut
 * gzip, broken prediction.json files, damaged sweep directories); `npm run fuzz` runs the same
 * generators for 100,000+ cases.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FuzzOutcome, fuzzCase, runFuzzCase } from "./cliFuzz.js";
import { edgeCase, runEdgeCase } from "./edgeFuzz.js";

describe("CLI fuzz: every input ends in exit 0/2/3 with a clean message", () => {
  it("2,000 mutated configs, --set values and trace lines", async () => {
    const codes = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        const r: FuzzOutcome = await runFuzzCase(c);
        codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
        if (r.problem !== null) throw new Error(r.problem);
      }),
      { seed: 20261201, numRuns: 2_000, endOnFailure: true },
    );
    // The generator reaches both sides of the contract: runs that succeed and user errors.
    expect(codes.get(0) ?? 0).toBeGreaterThan(50);
    expect(codes.get(2) ?? 0).toBeGreaterThan(500);
  }, 300_000);

  it("300 traces, prediction files and sweep directories broken at the edges", async () => {
    const codes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(edgeCase, async (c) => {
        const r: FuzzOutcome = await runEdgeCase(c);
        const key = `${c.kind} ${r.code}`;
        codes.set(key, (codes.get(key) ?? 0) + 1);
        if (r.problem !== null) throw new Error(`${r.problem}\ncase: ${JSON.stringify(c).slice(0, 300)}`);
      }),
      { seed: 20261206, numRuns: 300, endOnFailure: true },
    );
    // Every family is drawn, and each reaches the refusals it exists for.
    for (const kind of ["trace", "prediction", "sweep"])
      expect(codes.get(`${kind} 2`) ?? 0).toBeGreaterThan(10);
  }, 300_000);
});
