/**
 * `fleetsim sweep run` on a sweep directory whose results are damaged (issue 44): a `results`
 * that is a file is refused before any point runs (exit 2, named, no stack trace); a result cut
 * short is not counted as done but run again, and the rerun's result is whole; a manifest that is
 * a folder is named as such.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resultSchema } from "../../src/shard/results.js";
import { cli } from "../helpers/cli.js";
import { sweepProject } from "../helpers/sweepProject.js";

async function plan(vary: string): Promise<{ dir: string; hashes: string[] }> {
  const p = sweepProject(vary);
  const dir = join(p.dir, "plan");
  const r = await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir);
  expect(r.code).toBe(0);
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
    points: { hash: string }[];
  };
  return { dir, hashes: manifest.points.map((point) => point.hash) };
}

describe("sweep run on damaged results", () => {
  it("refuses a results path that is a file before running anything (exit 2)", async () => {
    const { dir } = await plan("  engine.workers.aggregated.parallelism.replicas: [1, 2]");
    rmSync(join(dir, "results"), { recursive: true, force: true });
    writeFileSync(join(dir, "results"), "x\n");
    const r = await cli("sweep", "run", dir, "--parallel", "1");
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${join(dir, "results")} is not a folder`);
    expect(r.err).not.toContain("    at ");
    expect(r.err).not.toContain("running point");
    expect(readFileSync(join(dir, "results"), "utf8")).toBe("x\n");
  });

  it("runs a point again whose result is cut short, and counts it only once it reads back", async () => {
    const { dir, hashes } = await plan("  engine.workers.aggregated.parallelism.replicas: [1, 2]");
    expect((await cli("sweep", "run", dir, "--parallel", "1")).code).toBe(0);
    const damaged = join(dir, "results", `${hashes[1]}.json`);
    const whole = readFileSync(damaged, "utf8");
    writeFileSync(damaged, whole.slice(0, Math.floor(whole.length / 2)));
    const rerun = await cli("sweep", "run", dir, "--parallel", "1");
    expect(rerun.code).toBe(0);
    expect(rerun.err).toContain(
      `point 1: results/${hashes[1]}.json is damaged (not valid JSON (cut short?)); running it again`,
    );
    expect(rerun.out).toContain("2 points: 1 run, 1 already had a result, 0 failed");
    expect(readFileSync(damaged, "utf8")).toBe(whole);
    expect(resultSchema.safeParse(JSON.parse(readFileSync(damaged, "utf8"))).success).toBe(true);
    expect(readdirSync(join(dir, "results")).sort()).toEqual(hashes.map((h) => `${h}.json`).sort());
    expect(statSync(damaged).isFile()).toBe(true);
  });

  it("a manifest.json that is a folder is named as such (exit 2), not a raw EISDIR", async () => {
    const { dir } = await plan("  engine.workers.aggregated.parallelism.replicas: [1]");
    rmSync(join(dir, "manifest.json"));
    mkdirSync(join(dir, "manifest.json"));
    for (const command of ["run", "merge"]) {
      const r = await cli(
        "sweep",
        command,
        dir,
        ...(command === "merge" ? ["-o", join(dir, "..", "out")] : []),
      );
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `fleetsim: error: ${join(dir, "manifest.json")} is a folder, not a sweep manifest; plan the sweep again (fleetsim sweep plan)\n`,
      );
    }
  });
});
