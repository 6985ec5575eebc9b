/** Property tests: validation never throws on arbitrary data, and the Python-style rounding. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveRunSpec, roundHalfEven } from "../../src/config/resolve/index.js";
import { validateConfig } from "../../src/config/schema/index.js";
import { tempDir } from "../helpers/configHelpers.js";

const VALID = {
  traffic: {
    source: { type: "synthetic", input_tokens: 10, output_tokens: 5 },
    load: { type: "concurrency", concurrency: 2 },
    stop: { requests: 3 },
  },
  engine: {
    model: "m",
    hardware: "h200_sxm",
    workers: {
      aggregated: {
        parallelism: { tensor: 2 },
        kv_cache: { block_size: 16, bytes_per_token: 10, capacity: { type: "fixed", blocks: 5 } },
        timing: { type: "fixed", prefill_ms: 1, decode_ms: 1 },
      },
    },
  },
  router: { policy: "round_robin" },
  evaluation: { sla: { ttft_ms: 100 } },
};

const PD_ROLE = {
  parallelism: { tensor: 2 },
  kv_cache: { block_size: 16, capacity: { type: "fixed", blocks: 5 } },
  timing: { type: "polynomial" },
};

/** A disaggregated counterpart of VALID, so that the P/D schema and resolution get fuzzed too. */
const VALID_PD = {
  ...VALID,
  engine: {
    mode: "disaggregated",
    model: "m",
    hardware: "h200_sxm",
    kv_transfer: { bytes_per_token: 100, bandwidth_gb_per_second: 50 },
    workers: { prefill: { ...PD_ROLE, hardware: "b200_sxm" }, decode: PD_ROLE },
  },
  router: { policy: "kv_router", temperature: 0.5 },
};

const BASES = [VALID, VALID_PD] as const;

/** Every mapping path of VALID, e.g. ["engine", "workers"]. */
function mappingPaths(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  return [prefix, ...Object.entries(value).flatMap(([k, v]) => mappingPaths(v, [...prefix, k]))];
}

const PATHS = BASES.flatMap((base) => mappingPaths(base));
const KEYS = [
  ...new Set(PATHS.flat()),
  "mode",
  "aggregated",
  "overlap_score_credit",
  "timing_mode",
  "type",
  "paths",
  "format",
  "speedup",
  "requests_per_second",
  "bytes",
  "seed",
  "nextn",
  "nextn_accepted",
];

describe("validateConfig", () => {
  it("accepts the base configs", () => {
    for (const base of BASES) expect(validateConfig(base, "dynamo").ok).toBe(true);
  });

  it("never throws, whatever is put where", () => {
    const emptyDir = tempDir();
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(
        "synthetic",
        "trace",
        "poisson",
        "fixed",
        "default",
        "max",
        "auto",
        "kv_router",
        "aic",
        "aggregated",
        "disaggregated",
        "afd",
        "full_prompt",
      ),
      fc.double(),
      fc.integer({ min: -3, max: 1e6 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...BASES),
        fc.array(fc.tuple(fc.constantFrom(...PATHS), fc.constantFrom(...KEYS), value), { maxLength: 5 }),
        fc.constantFrom("dynamo" as const, "engine" as const),
        (base, edits, stack) => {
          const config: unknown = structuredClone(base);
          for (const [path, key, v] of edits) {
            let node = config as Record<string, unknown>;
            for (const seg of path) {
              const next = node[seg];
              if (next === null || typeof next !== "object" || Array.isArray(next)) return;
              node = next as Record<string, unknown>;
            }
            node[key] = v;
          }
          const result = validateConfig(config, stack);
          if (result.ok) {
            // Whatever validated must resolve to a RunSpec or to issues, never throw.
            const lookup = { env: {}, homeDir: emptyDir, baseDirs: [] };
            resolveRunSpec(result.config, {
              stack,
              configDir: emptyDir,
              workDir: emptyDir,
              contextLength: lookup,
            });
          } else {
            expect(result.issues.length).toBeGreaterThan(0);
            for (const issue of result.issues) expect(issue.message).not.toMatch(/\{path/);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("roundHalfEven", () => {
  it("matches Python round() on ties and is within 0.5 otherwise", () => {
    expect([0.5, 1.5, 2.5, 3.5, 2.4999, 2.5001, 0].map(roundHalfEven)).toEqual([0, 2, 2, 4, 2, 3, 0]);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e12, noNaN: true }), (x) => {
        const r = roundHalfEven(x);
        expect(Number.isInteger(r)).toBe(true);
        expect(Math.abs(r - x)).toBeLessThanOrEqual(0.5);
        if (Math.abs(r - x) === 0.5) expect(r % 2).toBe(0);
      }),
    );
  });
});
