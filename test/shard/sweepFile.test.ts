/**
 * The sweep file (shard/sweepFile.ts) and its grid (shard/plan.ts `gridValues`): lists and
 * recommend's domains as axes, `set` in both spellings, and every mistake at its line.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/errors.js";
import { gridValues } from "../../src/shard/plan.js";
import { readSweepFile } from "../../src/shard/sweepFile.js";
import { tempDir } from "../helpers/specs.js";

function sweepFile(text: string): string {
  const path = join(tempDir("fleetsim-sweepfile-"), "sweep.yaml");
  writeFileSync(path, text);
  return path;
}

function errorOf(text: string): string {
  try {
    readSweepFile(sweepFile(text));
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).format();
  }
  throw new Error("expected a ConfigError");
}

describe("readSweepFile", () => {
  it("reads the issue's file: base beside it, set entries, axes in file order", () => {
    const path = sweepFile(`base: prediction.yaml
set:
  - {traffic.stop.max_virtual_time_seconds: 300}
  - router.temperature=0.5
vary:
  engine.workers.aggregated.parallelism.replicas: [1, 2, 3]
  router.policy: [round_robin, kv_router]
`);
    const f = readSweepFile(path);
    expect(f.basePath).toBe(join(path, "..", "prediction.yaml"));
    expect(f.set).toEqual([
      { path: "traffic.stop.max_virtual_time_seconds", value: 300 },
      { path: "router.temperature", value: 0.5 },
    ]);
    expect(f.axes.map((a) => [a.path, a.values, a.line])).toEqual([
      ["engine.workers.aggregated.parallelism.replicas", [1, 2, 3], 6],
      ["router.policy", ["round_robin", "kv_router"], 7],
    ]);
    expect(f.stack).toBeNull();
    expect(f.optimization.target).toBe("throughput");
    // First axis outermost: index = row-major position.
    expect(gridValues(f).map((v) => Object.values(v).join("/"))).toEqual([
      "1/round_robin",
      "1/kv_router",
      "2/round_robin",
      "2/kv_router",
      "3/round_robin",
      "3/kv_router",
    ]);
  });

  it("takes recommend's domains as axes: choices, and stepped ranges checked by the knob's rule", () => {
    const f = readSweepFile(
      sweepFile(`base: p.yaml
vary:
  engine.workers.aggregated.scheduler.max_batched_tokens: {choices: [4096, 8192]}
  traffic.load.speedup: {range: {min: 0.5, max: 1.5, step: 0.25}}
  engine.workers.aggregated.parallelism.replicas: {range: {min: 2, max: 6, step: 2}}
optimization: {target: goodput_per_gpu}
`),
    );
    expect(f.axes.map((a) => a.values)).toEqual([
      [4096, 8192],
      [0.5, 0.75, 1, 1.25, 1.5],
      [2, 4, 6],
    ]);
    expect(gridValues(f).length).toBe(30);
    expect(f.optimization.target).toBe("goodput_per_gpu");
  });

  it("reports each mistake at its line", () => {
    expect(errorOf("base: p.yaml\nvary:\n  router.policy: [round_robin, round_robin]\n")).toContain(
      "string 'round_robin' is repeated: an axis's values must be unique (line 3, column 32)",
    );
    expect(errorOf("base: p.yaml\nvary:\n  traffic.load.speedup: {range: {min: 1, max: 2}}\n")).toContain(
      "a sweep enumerates its axes: a range needs a step",
    );
    expect(
      errorOf("base: p.yaml\nvary:\n  engine.workers.aggregated.parallelism.replicas: {choices: [0]}\n"),
    ).toMatch(/choices\.0\n {2}.*(greater than|>=|at least).*\(line 3/);
    expect(errorOf("base: p.yaml\nvary:\n  router.policy: kv_router\n")).toContain(
      "Input should be a list of values or a domain",
    );
    expect(errorOf("base: p.yaml\nvary:\n  engine..x: [1]\n")).toContain("empty path segment");
    expect(errorOf("base: p.yaml\nsets: []\n")).toContain("sets\n  Extra inputs are not permitted");
    expect(errorOf("vary: {}\n")).toContain("base\n  Input should be the path of a predict config");
    expect(errorOf("base: p.yaml\nset:\n  - {a: 1, b: 2}\n")).toContain("Input should be a one-key mapping");
    expect(errorOf("base: p.yaml\nstack: k8s\n")).toContain("Input should be 'engine' or 'dynamo'");
    expect(errorOf("base: p.yaml\noptimization: {target: fastest}\n")).toContain("optimization.target");
    // The manifest is JSON: a value it cannot hold is refused, not silently turned into null.
    expect(errorOf("base: p.yaml\nvary:\n  traffic.load.speedup: [1, .inf]\n")).toContain(
      "Infinity is not a finite number (line 3, column 29)",
    );
    expect(errorOf("base: p.yaml\nset:\n  - {traffic.load.speedup: .nan}\n")).toContain(
      "NaN is not a finite number",
    );
  });
});
