#!/usr/bin/env node
// Bundles the `fleetsim` executable with esbuild (run by `npm run build` after tsc, whose dist/
// output stays the library). Start-up (docs/performance.md "Start-up"): Node loading a few chunks
// costs far less than resolving and linking the ~300 modules tsc's output is (95 of them zod's).
//
//   dist/cli/bin.js              the CLI entry (replaces tsc's bin.js; package.json `bin`)
//   dist/bundle/sweepWorker.js   the sweep worker entry the bundled CLI forks (pipeline/sweepTasks.ts)
//   dist/bundle/redisProcessor.js  the sandboxed processor BullMQ forks for `fleetsim worker --redis`
//   dist/bundle/chunks/*.js      code shared by the two entries, and the lazily imported parts
//                                (each command, the HTML report, the parquet reader) as their own
//                                chunks, loaded only when used
//
// Dependencies are bundled in, except ECharts (the report inlines the tree-shaken asset of
// build-report-assets.mjs, read from dist/ at run time). Files that modules read beside
// themselves (op tables, the charts asset, package.json) are read from tsc's copies in dist/
// (util/packageRoot.ts), so the bundle needs tsc's output beside it: build with `npm run build`.
import { chmodSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");

// CommonJS dependencies (commander, cli-table3, cli-progress) call `require` for Node built-ins;
// an ES module has none, so every output file gets one.
const REQUIRE_SHIM =
  'import { createRequire as __fleetsimCreateRequire } from "node:module";\n' +
  "const require = __fleetsimCreateRequire(import.meta.url);";

/**
 * Writes the bundle into `dist` (default: the repository's dist/, after tsc). Returns the CLI
 * entry's path. test/cli/bundle.test.ts builds into a temporary package root instead.
 */
export async function buildCli({ dist = join(ROOT, "dist") } = {}) {
  // esbuild is a dev dependency: imported only when building.
  const { build } = await import("esbuild");
  // util/packageRoot.ts's BUNDLE_DIR. Chunk names carry a content hash: clear the old ones
  // rather than leave them in the package.
  rmSync(join(dist, "bundle"), { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [
      { in: "src/cli/bin.ts", out: "cli/bin" },
      { in: "src/pipeline/sweepWorker.ts", out: "bundle/sweepWorker" },
      { in: "src/pipeline/redisProcessor.ts", out: "bundle/redisProcessor" },
    ],
    // BullMQ forks its sandbox runner from its own package folder and loads its Lua scripts from
    // there: it (and the ioredis client it is given) stays a normal dependency, loaded from
    // node_modules only by the Redis executor and `fleetsim worker`.
    external: ["bullmq", "ioredis"],
    outdir: dist,
    chunkNames: "bundle/chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Whitespace and syntax only: identifiers keep their names, so stack traces (FLEETSIM_DEBUG)
    // stay readable; renaming them too measured no faster start (docs/performance.md).
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "none",
    define: { FLEETSIM_BUNDLED: "true" },
    banner: { js: REQUIRE_SHIM },
    logLevel: "warning",
  });
  if (result.errors.length > 0) throw new Error("esbuild failed");
  // The shebang of src/cli/bin.ts comes through; npm links `bin` as is.
  const bin = join(dist, "cli", "bin.js");
  chmodSync(bin, 0o755);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bin = await buildCli();
  console.log(`cli bundle: ${bin} + ${join(dirname(dirname(bin)), "bundle")}/`);
}
