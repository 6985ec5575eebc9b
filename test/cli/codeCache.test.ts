/**
 * The V8 code cache of the bundled CLI (cli/codeCache.ts): where it lives and how a file is keyed.
 * test/cli/bundle.test.ts runs the built launcher to show a cache is written, taken and survives
 * corruption.
 */
import { readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CACHE_ENV, cacheDir, cacheFile, pruneOtherBuilds } from "../../src/cli/codeCache.js";
import { tempDir } from "../helpers/specs.js";

describe("code cache folder and keys", () => {
  it("defaults to a per-user folder of the OS temporary directory; the variable moves or disables it", () => {
    const uid = process.getuid?.() ?? "user";
    expect(cacheDir({})).toBe(join(tmpdir(), `fleetsim-compile-cache-${uid}`));
    expect(cacheDir({ [CACHE_ENV]: "/somewhere" })).toBe("/somewhere");
    for (const off of ["", "0", "off"]) expect(cacheDir({ [CACHE_ENV]: off })).toBeNull();
  });

  it("keys a file by the bundle's size and mtime, Node's version and the command", () => {
    const dir = tempDir("fleetsim-cc-");
    const bundle = join(dir, "cli.cjs");
    writeFileSync(bundle, "module.exports = 1;\n");
    utimesSync(bundle, 1_000, 1_000);
    const a = cacheFile("/c", bundle, "predict");
    expect(a).toBe(join("/c", `cli.cjs-20-1000000-${process.version}-${process.arch}-predict.v8cache`));
    expect(cacheFile("/c", bundle, "validate")).not.toBe(a);
    // A flag or a path is no file name: those runs share one file.
    expect(basename(cacheFile("/c", bundle, "--version"))).toMatch(/-other\.v8cache$/);
    expect(basename(cacheFile("/c", bundle, "../../etc"))).toMatch(/-other\.v8cache$/);
    expect(cacheFile("/c", bundle, undefined)).toBe(cacheFile("/c", bundle, "--help"));
    // A rebuilt bundle gets a new file rather than a rejected one.
    writeFileSync(bundle, "module.exports = 22;\n");
    utimesSync(bundle, 1_000, 1_000);
    expect(cacheFile("/c", bundle, "predict")).not.toBe(a);
  });

  it("prunes the files of other builds of the bundle, keeping this build's and anything else", () => {
    const dir = tempDir("fleetsim-cc-prune-");
    const bundle = join(dir, "cli.cjs");
    writeFileSync(bundle, "module.exports = 1;\n");
    const mine = [basename(cacheFile(dir, bundle, "predict")), basename(cacheFile(dir, bundle, "validate"))];
    mine.push(basename(cacheFile(dir, bundle, "predict")).replace(/-predict\.v8cache$/, "-0123abcd.grid"));
    const others = [
      "cli.cjs-99-1-v18.0.0-x64-predict.v8cache",
      "cli.cjs-20-5-v20.0.0-arm64-report.v8cache",
      "cli.cjs-99-1-v18.0.0-x64-0123abcd.grid",
    ];
    for (const f of [...mine, ...others, "notes.txt", "other.cjs-1-1-v20-x64-predict.v8cache"])
      writeFileSync(join(dir, f), "x");
    pruneOtherBuilds(dir, bundle);
    expect(readdirSync(dir).sort()).toEqual(
      ["cli.cjs", ...mine, "notes.txt", "other.cjs-1-1-v20-x64-predict.v8cache"].sort(),
    );
  });
});
