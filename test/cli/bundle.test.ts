/**
 * The bundled CLI (scripts/build-cli.mjs, docs/cli.md "The executable"), built into a temporary
 * package root (test/helpers/bundle.ts): a run proves the bundle finds its files through
 * util/packageRoot.ts and forks its own sweep worker entry. Its predictions are the sources' (the golden cases,
 * host-time keys stripped: test/golden/cases.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CACHE_ENV } from "../../src/cli/codeCache.js";
import { STARTUP_PROBE_ENV, STARTUP_PROBE_PREFIX } from "../../src/cli/startupProbe.js";
import { diffJson, GOLDEN_CASES, goldenPath, type Json, stripHostTime } from "../golden/cases.js";
import { buildBundle } from "../helpers/bundle.js";
import { cli } from "../helpers/cli.js";
import { type ProcessRun, runSync } from "../helpers/process.js";
import { tempDir } from "../helpers/specs.js";

const ROOT = join(import.meta.dirname, "..", "..");

let pkg: string;
let bin: string;
/** The code cache folder of these runs (cli/codeCache.ts), not the user's. */
let codeCache: string;

beforeAll(async () => {
  ({ pkg, bin } = await buildBundle());
  codeCache = tempDir("fleetsim-bundle-cache-");
});

function runBundle(...args: string[]): ProcessRun {
  return runBundleIn({}, ...args);
}

function runBundleIn(env: Readonly<Record<string, string>>, ...args: string[]): ProcessRun {
  return runSync([process.execPath, bin, ...args], { cwd: ROOT, env: { [CACHE_ENV]: codeCache, ...env } });
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
    // One CommonJS file with no `import()` left (scripts/build-cli.mjs lowers them to require): a
    // script run from V8 cached data has no dynamic-import callback.
    const cli = readFileSync(join(pkg, "dist", "bundle", "cli.cjs"), "utf8");
    expect(cli).not.toMatch(/[^\w$.]import\(/);
    // ASCII only: the launcher reads it as Latin-1 (cli/codeCache.ts).
    expect(Buffer.byteLength(cli, "utf8")).toBe(cli.length);
    expect(existsSync(join(pkg, "dist", "cli", "main.js"))).toBe(false);
    expect(existsSync(join(pkg, "dist", "pipeline", "sweepWorker.js"))).toBe(false);
  });

  it("tree-shakes zod's locales out (zod is imported as a namespace, its core classes from zod/v4/core)", () => {
    // `import { z } from "zod"` or a value read through `z.core` keeps every locale (~400 kB that
    // predict would load); the German one's wording stands for them all.
    const chunks = join(pkg, "dist", "bundle", "chunks");
    const files = readdirSync(chunks).filter((f) => f.endsWith(".js"));
    expect(files.length).toBeGreaterThan(0);
    const cli = join(pkg, "dist", "bundle", "cli.cjs");
    for (const f of [bin, cli, ...files.map((f) => join(chunks, f))]) {
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

  it("loads no node:crypto or node:zlib before predict's first event (they load where they are used)", () => {
    const dir = tempDir("fleetsim-bundle-modules-");
    const preload = join(dir, "modules.mjs");
    // Node's own modules loaded by the time the process ends (here: at the start-up probe).
    writeFileSync(
      preload,
      'process.on("exit", () => process.stderr.write("modules " + JSON.stringify(process.moduleLoadList) + "\\n"));\n',
    );
    const out = join(dir, "out");
    const r = runSync(
      [
        process.execPath,
        "--import",
        preload,
        bin,
        "predict",
        "-c",
        join(ROOT, "examples/aggregated.yaml"),
        "--output-dir",
        out,
      ],
      { cwd: ROOT, env: { [CACHE_ENV]: codeCache, [STARTUP_PROBE_ENV]: "exit" } },
    );
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(STARTUP_PROBE_PREFIX);
    const line = r.err.split("\n").find((l) => l.startsWith("modules "))!;
    const loaded = (JSON.parse(line.slice("modules ".length)) as string[]).filter((m) =>
      m.startsWith("NativeModule "),
    );
    // The probe's own prerequisites are there: the list is the real one.
    expect(loaded).toContain("NativeModule vm");
    expect(loaded.filter((m) => /crypto|zlib/.test(m))).toEqual([]);
  });

  it("runs a lazily imported command (schema, --version) as the sources run it", async () => {
    const fromBundle = runBundle("schema");
    expect(fromBundle.code, fromBundle.err).toBe(0);
    expect(fromBundle.out).toBe((await cli("schema")).out);
    expect(runBundle("--version").out.trim()).toBe(
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version,
    );
  });

  it("writes a V8 code cache per command at exit and starts from it, keeps built timing grids; a corrupt or disabled cache changes nothing", () => {
    const dir = tempDir("fleetsim-bundle-cc-");
    const out = join(tempDir("fleetsim-bundle-cc-out-"), "out");
    const args = [
      "predict",
      "-c",
      join(ROOT, "examples", "aggregated.yaml"),
      "--output-dir",
      out,
      "--overwrite",
    ];
    const run = (env: NodeJS.ProcessEnv): { state: string; prediction: string } => {
      const r = runBundleIn(
        { [CACHE_ENV]: dir, [STARTUP_PROBE_ENV]: "1", ...env },
        ...args,
        "--format",
        "json",
      );
      expect(r.code, r.err).toBe(0);
      const line = r.err.split("\n").find((l) => l.startsWith(STARTUP_PROBE_PREFIX))!;
      const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")) as { [key: string]: Json };
      return {
        state: (JSON.parse(line.slice(STARTUP_PROBE_PREFIX.length)) as { code_cache: string }).code_cache,
        prediction: JSON.stringify(stripHostTime(doc)),
      };
    };
    const first = run({});
    expect(first.state).toBe("miss");
    const files = readdirSync(dir).filter((f) => f.endsWith(".v8cache"));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^cli\.cjs-.*-predict\.v8cache$/);
    expect(statSync(join(dir, files[0])).size).toBeGreaterThan(100_000);
    const second = run({});
    expect(second.state).toBe("hit");
    expect(second.prediction).toBe(first.prediction);
    // V8 rejects data that is not its own: the run compiles as without a cache and rewrites it.
    writeFileSync(join(dir, files[0]), Buffer.alloc(4096, 7));
    const corrupt = run({});
    expect(corrupt.state).toBe("miss");
    expect(corrupt.prediction).toBe(first.prediction);
    expect(run({}).state).toBe("hit");
    // The timing grids built by the first run are kept beside it (hardware/gridCache.ts) and
    // read back by the later ones; a corrupt grid file is rebuilt, with the same prediction.
    const grids = readdirSync(dir).filter((f) => f.endsWith(".grid"));
    expect(grids.length).toBeGreaterThan(0);
    for (const g of grids) expect(g.startsWith(files[0].replace(/-predict\.v8cache$/, "-"))).toBe(true);
    for (const g of grids) writeFileSync(join(dir, g), Buffer.alloc(100, 3));
    expect(run({}).prediction).toBe(first.prediction);
    for (const g of grids) expect(statSync(join(dir, g)).size).not.toBe(100);
    const off = run({ [CACHE_ENV]: "0" });
    expect(off.state).toBe("off");
    expect(off.prediction).toBe(first.prediction);
    // An unwritable folder only costs the saving.
    const blocked = join(dir, "not-a-folder");
    writeFileSync(blocked, "");
    const unwritable = run({ [CACHE_ENV]: blocked });
    expect(unwritable.state).toBe("miss");
    expect(unwritable.prediction).toBe(first.prediction);
  });
});
