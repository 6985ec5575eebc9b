/**
 * Bounded work on hostile configs (issue 13 §5): no hang, no crash, a short message with a path,
 * exit 2 — for an interval that overflows the tick gcd, aliases and alias bombs in `--set`,
 * 1,000-deep nesting, an oversized file, and tens of thousands of unknown keys.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_SHOWN_ISSUES } from "../../src/config/errors.js";
import { MAX_INTERVAL_SECONDS } from "../../src/config/schema/planner.js";
import { LIMITS } from "../../src/config/schema/role.js";
import { MAX_CONFIG_BYTES } from "../../src/config/yamlSource.js";
import { cli } from "../helpers/cli.js";
import { loadError, RUNNABLE_ENGINE, tempDir } from "../helpers/configHelpers.js";
import { syntheticTraffic } from "../helpers/configYaml.js";

const BASE = syntheticTraffic("{type: concurrency, concurrency: 4}", "{requests: 10}") + RUNNABLE_ENGINE;

function configFile(text: string): string {
  const path = join(tempDir(), "config.yaml");
  writeFileSync(path, text);
  return path;
}

async function validate(text: string, ...sets: string[]) {
  const args = ["validate", "--stack", "dynamo", "-c", configFile(text)];
  for (const s of sets) args.push("--set", s);
  const t0 = performance.now();
  const r = await cli(...args);
  return { ...r, ms: performance.now() - t0 };
}

describe("config limits", () => {
  it("an adjustment interval past a year is refused (it overflowed the tick gcd and spun forever)", async () => {
    const r = await validate(
      `${BASE}planner: {policy: enabled, enable_throughput_scaling: true}\n`,
      "planner.throughput_adjustment_interval_seconds=1e307",
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("planner.throughput_adjustment_interval_seconds");
    expect(r.err).toContain(`at most ${MAX_INTERVAL_SECONDS} seconds`);
    expect(r.ms).toBeLessThan(5_000);
  });

  it("sizes are bounded to what they mean: 2^31 replicas or KV blocks are refused at the key", async () => {
    for (const [set, path, limit] of [
      ["engine.workers.aggregated.parallelism.replicas=2147483647", "parallelism.replicas", LIMITS.replicas],
      ["engine.workers.aggregated.parallelism.tensor=100000", "parallelism.tensor", LIMITS.parallelism],
      [
        "engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 2147483647}",
        "kv_cache.capacity.blocks",
        LIMITS.blocks,
      ],
      [
        "engine.workers.aggregated.scheduler.max_sequences=1e9",
        "scheduler.max_sequences",
        LIMITS.maxSequences,
      ],
    ] as const) {
      const r = await validate(BASE, set);
      expect(r.code, set).toBe(2);
      expect(r.err).toContain(`engine.workers.aggregated.${path}`);
      expect(r.err).toContain(`at most ${limit}`);
    }
  });

  it("an alias without its anchor, or an alias bomb, in --set is exit 2 (was a ReferenceError, exit 1)", async () => {
    const a = await validate(BASE, "engine.workers.aggregated.parallelism.replicas=*a");
    expect(a.code).toBe(2);
    expect(a.err).toMatch(/invalid YAML value: Unresolved alias/);
    const bomb = `[&a [x,x,x,x,x,x,x,x], &b [*a,*a,*a,*a,*a,*a,*a,*a], &c [*b,*b,*b,*b,*b,*b,*b,*b], [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]]`;
    const b = await validate(BASE, `router=${bomb}`);
    expect(b.code).toBe(2);
    expect(b.err).toMatch(/invalid YAML value: .*alias/i);
    expect(b.err).not.toContain("    at ");
  });

  it("1,000-deep nesting in the file or in --set is a clear error, not a stack overflow", async () => {
    const deep = `${"[".repeat(1000)}${"]".repeat(1000)}`;
    const file = await validate(`${BASE}extra: ${deep}\n`);
    expect(file.code).toBe(2);
    expect(file.err).toContain("nests deeper than 64 levels");
    expect(file.err).not.toMatch(/call stack/i);
    const set = await validate(BASE, `router=${deep}`);
    expect(set.code).toBe(2);
    expect(set.err).toMatch(/nests deeper than 64 levels|invalid YAML value/);
    expect(set.err).not.toMatch(/call stack/i);
  });

  it("a file over the size limit is refused at once (a 10 MB list exhausted the heap)", async () => {
    const r = await validate(`${BASE}extra: [${"1,".repeat(MAX_CONFIG_BYTES / 2)}1]\n`);
    expect(r.code).toBe(2);
    expect(r.err).toContain("config file too large");
    expect(r.ms).toBeLessThan(5_000);
  });

  it("tens of thousands of unknown keys: linear time, a short message that counts the rest", async () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `  k${i}: 1\n`).join("");
    const r = await validate(`${BASE}router:\n  policy: round_robin\n${keys}`);
    expect(r.code).toBe(2);
    expect(r.err).toContain("40000 validation errors");
    expect(r.err).toContain(`… and ${40_000 - MAX_SHOWN_ISSUES} more`);
    expect(r.err.length).toBeLessThan(5_000);
    expect(r.ms).toBeLessThan(15_000);
  }, 60_000);

  it("a huge offending value is echoed clipped, and duplicate keys are still found with their position", () => {
    const err = loadError(`${BASE}router: {policy: ${"x".repeat(100_000)}}\n`);
    expect(err.format().length).toBeLessThan(2_000);
    const dup = loadError(`${BASE}router: {policy: round_robin}\nrouter: {policy: round_robin}\n`);
    expect(dup.issues[0]).toMatchObject({ path: "router", message: "Map keys must be unique" });
    expect(dup.issues[0].line).toBeGreaterThan(1);
  });
});
