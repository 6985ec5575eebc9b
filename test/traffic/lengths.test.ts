/**
 * Distribution-valued token lengths (docs/traffic.md §Lengths): moments of each distribution with
 * fixed seeds, rounding and clamping, determinism, the table the generator builds, and the config
 * errors of a bad distribution mapping.
 */
import { describe, expect, it } from "vitest";
import { buildConfigJsonSchema } from "../../src/cli/schema.js";
import { LengthSampler, type LengthSpec, MAX_LENGTH } from "../../src/traffic/lengthDistribution.js";
import { completeTableHashes } from "../../src/traffic/requests.js";
import { makeSyntheticWorkload } from "../../src/traffic/synthetic/workload.js";
import { Prng } from "../../src/util/prng.js";
import { expectIssue, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { validate } from "../helpers/miniJsonSchema.js";

const N = 200_000;

function moments(spec: LengthSpec, seed = 1): { mean: number; sd: number; min: number; max: number } {
  const xs = new LengthSampler(spec, new Prng(seed)).fill(new Int32Array(N));
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const x of xs) {
    sum += x;
    min = Math.min(min, x);
    max = Math.max(max, x);
  }
  const mean = sum / N;
  let ss = 0;
  for (const x of xs) ss += (x - mean) ** 2;
  return { mean, sd: Math.sqrt(ss / (N - 1)), min, max };
}

describe("length distributions: moments with fixed seeds", () => {
  it("fixed stays fixed (the benchmarks' ignore_eos output)", () => {
    const m = moments({ distribution: "fixed", value: 128 });
    expect(m).toEqual({ mean: 128, sd: 0, min: 128, max: 128 });
  });

  it("uniform over [min, max] inclusive: mean (a+b)/2, sd of the discrete uniform, both ends reached", () => {
    const m = moments({ distribution: "uniform", min: 100, max: 300 });
    expect(m.min).toBe(100);
    expect(m.max).toBe(300);
    expect(m.mean).toBeCloseTo(200, 0);
    expect(Math.abs(m.sd - Math.sqrt((201 ** 2 - 1) / 12))).toBeLessThan(0.5);
  });

  it("normal: mean and stddev within 1 %", () => {
    const m = moments({ distribution: "normal", mean: 1000, stddev: 200, min: 1, max: MAX_LENGTH });
    expect(Math.abs(m.mean - 1000) / 1000).toBeLessThan(0.01);
    expect(Math.abs(m.sd - 200) / 200).toBeLessThan(0.01);
  });

  it("lognormal: mean and stddev are those of the length itself (not of its log), within 2 %", () => {
    const m = moments({ distribution: "lognormal", mean: 800, stddev: 400, min: 1, max: MAX_LENGTH });
    expect(Math.abs(m.mean - 800) / 800).toBeLessThan(0.02);
    expect(Math.abs(m.sd - 400) / 400).toBeLessThan(0.02);
  });

  it("exponential: mean ≈ stddev ≈ the given mean", () => {
    const m = moments({ distribution: "exponential", mean: 300, min: 0, max: MAX_LENGTH });
    expect(Math.abs(m.mean - 300) / 300).toBeLessThan(0.01);
    expect(Math.abs(m.sd - 300) / 300).toBeLessThan(0.02);
  });

  it("samples are integers clamped to [min, max] (floor 1 by default)", () => {
    const m = moments({ distribution: "normal", mean: 10, stddev: 50, min: 1, max: 40 });
    expect(m.min).toBe(1);
    expect(m.max).toBe(40);
    const xs = new LengthSampler({ distribution: "exponential", mean: 2, min: 1, max: 5 }, new Prng(3)).fill(
      new Int32Array(1000),
    );
    expect(xs.every((x) => Number.isInteger(x) && x >= 1 && x <= 5)).toBe(true);
  });

  it("stddev 0 gives exactly the mean (the mocker's LengthSpec rule) without drawing", () => {
    const rng = new Prng(5);
    const s = new LengthSampler(
      { distribution: "normal", mean: 77, stddev: 0, min: 1, max: MAX_LENGTH },
      rng,
    );
    expect(s.isConstant).toBe(true);
    expect(s.fill(new Int32Array(10)).every((x) => x === 77)).toBe(true);
    expect(rng.nextUint32()).toBe(new Prng(5).nextUint32());
  });

  it("is deterministic per seed and differs across seeds", () => {
    const spec: LengthSpec = { distribution: "lognormal", mean: 500, stddev: 300, min: 1, max: MAX_LENGTH };
    const a = new LengthSampler(spec, new Prng(9)).fill(new Int32Array(1000));
    const b = new LengthSampler(spec, new Prng(9)).fill(new Int32Array(1000));
    const c = new LengthSampler(spec, new Prng(10)).fill(new Int32Array(1000));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });
});

describe("synthetic requests with distributed lengths", () => {
  const yaml = (source: string, extra = "") =>
    `${RUNNABLE_ENGINE}traffic:\n  source: ${source}\n  load: {type: concurrency, concurrency: 4}\n  stop: {requests: 5000}\n${extra}`;

  it("the table holds the sampled lengths, block hashes follow each prompt's length, no sharing", () => {
    const spec = loadYaml(
      yaml(
        "{type: synthetic, seed: 3, input_tokens: {distribution: uniform, min: 10, max: 2000}, output_tokens: {distribution: exponential, mean: 64, max: 1000}}",
      ),
    );
    const t = makeSyntheticWorkload(spec.source as never, spec.load, spec.stop, 16);
    expect(t.count).toBe(5000);
    let bad = 0;
    let inSum = 0;
    for (let i = 0; i < t.count; i++) {
      const len = t.inputLength[i];
      const out = t.outputLength[i];
      if (len < 10 || len > 2000 || out < 1 || out > 1000) bad++;
      if (t.blockOffsets[i + 1] - t.blockOffsets[i] !== Math.floor(len / 16)) bad++;
      inSum += len;
    }
    expect(bad).toBe(0);
    completeTableHashes(t);
    expect(new Set(t.blockHashes).size).toBe(t.blockHashes.length);
    expect(Math.abs(inSum / t.count - 1005) / 1005).toBeLessThan(0.03);
    const again = makeSyntheticWorkload(spec.source as never, spec.load, spec.stop, 16);
    expect(again.inputLength).toEqual(t.inputLength);
    expect(again.outputLength).toEqual(t.outputLength);
    completeTableHashes(again);
    expect(again.blockHashes).toEqual(t.blockHashes);
  });

  it("fixed lengths keep the reference's spec: no seed, no distribution fields", () => {
    const spec = loadYaml(yaml("{type: synthetic, input_tokens: 300, output_tokens: 20}"));
    expect(spec.source).toEqual({ type: "synthetic", inputTokens: 300, outputTokens: 20 });
  });

  const bad = (source: string, path: string, message: string) => () =>
    expectIssue(yaml(source), path, message);
  it(
    "rejects an unknown distribution",
    bad(
      "{type: synthetic, output_tokens: {distribution: zipf, mean: 3}}",
      "traffic.source.output_tokens.distribution",
      "Input should be 'uniform', 'normal', 'lognormal' or 'exponential'",
    ),
  );
  it(
    "rejects a missing parameter",
    bad(
      "{type: synthetic, output_tokens: {distribution: normal, mean: 100}}",
      "traffic.source.output_tokens",
      "traffic.source.output_tokens.distribution='normal' requires stddev",
    ),
  );
  it(
    "rejects a parameter the distribution does not take",
    bad(
      "{type: synthetic, input_tokens: {distribution: uniform, min: 1, max: 9, mean: 5}}",
      "traffic.source.input_tokens",
      "traffic.source.input_tokens.distribution='uniform' does not accept ['mean']",
    ),
  );
  it(
    "rejects min above max",
    bad(
      "{type: synthetic, input_tokens: {distribution: uniform, min: 10, max: 9}}",
      "traffic.source.input_tokens.max",
      "traffic.source.input_tokens.max (9) must be at least min (10)",
    ),
  );
  it(
    "rejects a min below the floor of 1",
    bad(
      "{type: synthetic, output_tokens: {distribution: exponential, mean: 5, min: 0}}",
      "traffic.source.output_tokens.min",
      "Input should be greater than or equal to 1",
    ),
  );
  it(
    "rejects a non-positive mean",
    bad(
      "{type: synthetic, output_tokens: {distribution: exponential, mean: 0}}",
      "traffic.source.output_tokens.mean",
      "Input should be greater than 0",
    ),
  );
  it(
    "rejects a string length",
    bad(
      "{type: synthetic, output_tokens: lots}",
      "traffic.source.output_tokens",
      "Input should be a positive integer or a {distribution: ...} mapping, got string 'lots'",
    ),
  );
  it(
    "rejects a zero fixed length",
    bad(
      "{type: synthetic, input_tokens: 0}",
      "traffic.source.input_tokens",
      "Input should be greater than or equal to 1",
    ),
  );
  it(
    "rejects an unknown key with the usual message",
    bad(
      "{type: synthetic, input_tokens: {distribution: normal, mean: 5, stddev: 1, sigma: 2}}",
      "traffic.source.input_tokens.sigma",
      "Extra inputs are not permitted",
    ),
  );
});

describe("length fields in the config's JSON Schema (fleetsim schema)", () => {
  const schema = buildConfigJsonSchema("test") as Record<string, unknown>;
  const config = (source: unknown) => ({
    engine: { model: "Qwen/Qwen3-8B", hardware: "h200_sxm", workers: { aggregated: {} } },
    traffic: { source, stop: { requests: 3 } },
  });

  it("accepts an integer or a distribution mapping, and flags other shapes", () => {
    expect(
      validate(
        schema,
        config({
          type: "synthetic",
          input_tokens: 5,
          output_tokens: { distribution: "uniform", min: 1, max: 9 },
        }),
      ),
    ).toEqual([]);
    expect(validate(schema, config({ type: "synthetic", input_tokens: "5" }))).not.toEqual([]);
    expect(
      validate(schema, config({ type: "synthetic", input_tokens: { distribution: "zipf" } })),
    ).not.toEqual([]);
    expect(
      validate(schema, config({ type: "synthetic", input_tokens: { distribution: "normal", sigma: 1 } })),
    ).not.toEqual([]);
  });
});
