/**
 * The bundled CLI (scripts/build-cli.mjs, docs/cli.md "The executable"). It is built here into
 * a temporary package root that holds only package.json, the bundle and the data files it reads
 * from tsc's output (the compact op tables, the report's charts asset) — no node_modules, no
 * tsc-compiled modules — so a run proves the bundle finds its files through util/packageRoot.ts
 * and forks its own sweep worker entry. Its predictions are the sources' (the golden cases,
 * host-time keys stripped: test/golden/cases.ts).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildCli } from "../../scripts/build-cli.mjs";
import { SOURCE_ASSET } from "../../scripts/build-report-assets.mjs";
import { diffJson, GOLDEN_CASES, goldenPath, type Json, stripHostTime } from "../golden/cases.js";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const ROOT = join(import.meta.dirname, "..", "..");

let pkg: string;
let bin: string;

beforeAll(async () => {
  pkg = tempDir("fleetsim-bundle-");
  copyFileSync(join(ROOT, "package.json"), join(pkg, "package.json"));
  mkdirSync(join(pkg, "dist", "hardware"), { recursive: true });
  symlinkSync(join(ROOT, "src", "hardware", "calibration"), join(pkg, "dist", "hardware", "calibration"));
  mkdirSync(join(pkg, "dist", "report", "html", "generated"), { recursive: true });
  copyFileSync(SOURCE_ASSET, join(pkg, "dist", "report", "html", "generated", "echarts.min.js"));
  bin = await buildCli({ dist: join(pkg, "dist") });
});

function runBundle(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Runs golden case `name` through the bundle and returns the paths that differ from its golden. */
function goldenDiffs(name: string, extra: readonly string[]): { diffs: string[]; out: string } {
  const c = GOLDEN_CASES.find((g) => g.name === name)!;
  const out = join(tempDir("fleetsim-bundle-out-"), "out");
  const args = ["predict", "-c", join(ROOT, c.config), "--stack", c.stack, "--output-dir", out];
  for (const s of c.sets) args.push("--set", s);
  const r = runBundle(...args, "--format", "json", "--progress", "none", ...extra);
  expect(r.err).not.toContain("internal error");
  expect(r.code, r.err).toBe(0);
  const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")) as { [key: string]: Json };
  const golden = JSON.parse(readFileSync(goldenPath(c), "utf8")) as Json;
  return { diffs: diffJson(golden, stripHostTime(doc)), out };
}

describe("bundled CLI", () => {
  it("lays the bundle out as package.json's bin and sweepTasks.ts expect, with no tsc output", () => {
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).bin).toEqual({
      fleetsim: "dist/cli/bin.js",
    });
    expect(readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(existsSync(join(pkg, "dist", "bundle", "sweepWorker.js"))).toBe(true);
    expect(existsSync(join(pkg, "dist", "cli", "main.js"))).toBe(false);
    expect(existsSync(join(pkg, "dist", "pipeline", "sweepWorker.js"))).toBe(false);
  });

  it("tree-shakes zod's locales out (zod is imported as a namespace, its core classes from zod/v4/core)", () => {
    // `import { z } from "zod"` or a value read through `z.core` keeps every locale (~400 kB that
    // predict would load); the German one's wording stands for them all.
    const chunks = join(pkg, "dist", "bundle", "chunks");
    const files = readdirSync(chunks).filter((f) => f.endsWith(".js"));
    expect(files.length).toBeGreaterThan(1);
    for (const f of [bin, ...files.map((f) => join(chunks, f))]) {
      expect(readFileSync(f, "utf8"), f).not.toContain("Base64-codierter String");
    }
  });

  it("predict --html on examples/aggregated.yaml: the sources' prediction, and the report with its charts", () => {
    const { diffs, out } = goldenDiffs("aggregated", ["--html"]);
    expect(diffs).toEqual([]);
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html).toContain("(Apache-2.0), tree-shaken for the fleetsim report");
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
    expect(html).toContain(`fleetsim ${version}`);
  });

  it("a retune run forks the bundle's sweep workers and predicts what the sources predict", () => {
    const { diffs } = goldenDiffs("retune-router", []);
    expect(diffs).toEqual([]);
  });

  it("loads a lazily imported command's chunk (schema, --version) as the sources run it", async () => {
    const fromBundle = runBundle("schema");
    expect(fromBundle.code, fromBundle.err).toBe(0);
    expect(fromBundle.out).toBe((await cli("schema")).out);
    expect(runBundle("--version").out.trim()).toBe(
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version,
    );
  });
});
