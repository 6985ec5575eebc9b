/**
 * `predict --executor` (docs/sweep.md "Executors"): where planner.retune's window sweeps run. A
 * value that is not an executor, or a Redis that does not answer, is a user error (exit 2) before
 * any work, leaving the output directory as it was; without planner.retune the option changes
 * nothing and a warning says so. (That the executors decide alike: test/pipeline/candidateReplays
 * and, against a real redis-server, test/redis/.)
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { writeRetuneProject } from "../helpers/retuneProject.js";
import { tempDir } from "../helpers/specs.js";
import { sweepProject } from "../helpers/sweepProject.js";

describe("predict --executor", () => {
  it("refuses a value that names no executor (exit 2, naming the option)", async () => {
    const config = writeRetuneProject();
    const r = await cli("predict", "-c", config, "--executor", "kubernetes", "--output-dir", tempDir());
    expect(r.code).toBe(2);
    expect(r.err).toContain("--executor kubernetes: expected local");
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it("refuses a Redis that does not answer before the replay, leaving the output as it was", async () => {
    const config = writeRetuneProject();
    const out = tempDir();
    writeFileSync(join(out, "prediction.json"), "{}\n");
    const r = await cli(
      "predict",
      "-c",
      config,
      "--executor",
      "redis://127.0.0.1:1",
      "--output-dir",
      out,
      "--overwrite",
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("cannot reach Redis at redis://127.0.0.1:1");
    expect(readFileSync(join(out, "prediction.json"), "utf8")).toBe("{}\n");
  }, 30_000);

  it("without planner.retune it changes nothing and says so", async () => {
    const p = sweepProject();
    const out = join(p.dir, "out");
    const r = await cli("predict", "-c", p.baseFile, "--executor", "inline", "--output-dir", out);
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      "--executor runs planner.retune's window sweeps; this config has no planner.retune",
    );
    expect(existsSync(join(out, "prediction.json"))).toBe(true);
  });
});
