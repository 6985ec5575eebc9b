/**
 * The V8 code cache of the bundled CLI (cli/codeCache.ts): where it lives and how a file is keyed.
 * test/cli/bundle.test.ts runs the built launcher to show a cache is written, taken and survives
 * corruption.
 */
import { utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CACHE_ENV, cacheDir, cacheFile } from "../../src/cli/codeCache.js";
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
});
