#!/usr/bin/env node
// Bundles the `fleetsim` executable with esbuild (run by `npm run build` after tsc, whose dist/
// output stays the library). Start-up (docs/performance.md "Start-up"): one bundle compiled from
// a V8 code cache costs far less than resolving, linking and compiling the ~300 modules tsc's
// output is (95 of them zod's). The files are listed at `buildCli`.
//
// Dependencies are bundled in, except ECharts (the report inlines the tree-shaken asset of
// build-report-assets.mjs, read from dist/ at run time). Files that modules read beside
// themselves (op tables, the charts asset, package.json) are read from tsc's copies in dist/
// (util/packageRoot.ts), so the bundle needs tsc's output beside it: build with `npm run build`.
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");

// CommonJS dependencies (commander, cli-table3, cli-progress) call `require` for Node built-ins;
// an ES module has none, so the worker entries and their chunks get one.
const REQUIRE_SHIM =
  'import { createRequire as __fleetsimCreateRequire } from "node:module";\n' +
  "const require = __fleetsimCreateRequire(import.meta.url);";

// The CLI bundle is CommonJS, where `import.meta` does not exist: every module's
// `import.meta.url` becomes the bundle file's own URL (an injected binding, inside the bundle's
// strict mode), which util/packageRoot.ts walks up from.
const META_URL_INJECT = join(ROOT, "scripts", "cjs-import-meta-url.js");

/** Options every output shares. */
const COMMON = {
  absWorkingDir: ROOT,
  bundle: true,
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
  logLevel: "warning",
};

/**
 * Writes the bundle into `dist` (default: the repository's dist/, after tsc). Returns the CLI
 * entry's path. test/cli/bundle.test.ts builds into a temporary package root instead.
 *
 *   dist/cli/bin.js                the executable: a small launcher (cli/launch.ts) that runs
 *                                  the CLI bundle through a V8 code cache (cli/codeCache.ts)
 *   dist/bundle/cli.cjs            the CLI, bin.ts and everything it imports, in one CommonJS
 *                                  file (vm.Script takes a code cache for it on Node 20; ES
 *                                  modules get none before Node 22). Lazily imported parts
 *                                  (each command, the HTML report, the parquet reader) stay in
 *                                  it, evaluated only when imported
 *   dist/bundle/sweepWorker.js     the sweep worker entry the CLI forks (pipeline/sweepTasks.ts)
 *   dist/bundle/redisProcessor.js  the sandboxed processor BullMQ forks for `fleetsim worker --redis`
 *   dist/bundle/chunks/*.js        code the two worker entries share
 */
export async function buildCli({ dist = join(ROOT, "dist") } = {}) {
  // esbuild is a dev dependency: imported only when building.
  const { build } = await import("esbuild");
  // util/packageRoot.ts's BUNDLE_DIR. Chunk names carry a content hash: clear the old ones
  // rather than leave them in the package.
  rmSync(join(dist, "bundle"), { recursive: true, force: true });
  // BullMQ forks its sandbox runner from its own package folder and loads its Lua scripts from
  // there: it (and the ioredis client it is given) stays a normal dependency, loaded from
  // node_modules only by the Redis executor and `fleetsim worker`.
  const external = ["bullmq", "ioredis"];
  const cliBundle = join(dist, "bundle", "cli.cjs");
  const bin = join(dist, "cli", "bin.js");
  const results = [
    await build({
      ...COMMON,
      entryPoints: ["src/cli/bin.ts"],
      external,
      outfile: cliBundle,
      format: "cjs",
      define: { ...COMMON.define, "import.meta.url": "bundleUrl" },
      inject: [META_URL_INJECT],
      // `import()` of an external (BullMQ, ioredis, a node: module) becomes `require`: a script
      // run from V8 cached data loses the dynamic-import callback Node gives it (and the one that
      // works without a cache is experimental in Node 20), while both load through require.
      supported: { "dynamic-import": false },
    }),
    await build({
      ...COMMON,
      entryPoints: ["src/cli/launch.ts"],
      outfile: bin,
      format: "esm",
    }),
    await build({
      ...COMMON,
      entryPoints: [
        { in: "src/pipeline/sweepWorker.ts", out: "sweepWorker" },
        { in: "src/pipeline/redisProcessor.ts", out: "redisProcessor" },
      ],
      external,
      outdir: join(dist, "bundle"),
      chunkNames: "chunks/[name]-[hash]",
      splitting: true,
      format: "esm",
      banner: { js: REQUIRE_SHIM },
    }),
  ];
  if (results.some((r) => r.errors.length > 0)) throw new Error("esbuild failed");
  // The CLI bundle runs inside a function wrapper (cli/codeCache.ts), where bin.ts's shebang
  // would be a syntax error: blank it, keeping the line so line numbers match the source map.
  const source = readFileSync(cliBundle, "utf8");
  if (source.startsWith("#!")) writeFileSync(cliBundle, source.replace(/^#![^\n]*/, ""));
  // The launcher reads the bundle as Latin-1, which is exact for ASCII and cheaper than UTF-8
  // decoding; esbuild escapes every non-ASCII character (its default charset), so check it did.
  for (let i = 0; i < source.length; i++) {
    if (source.charCodeAt(i) > 0x7f) throw new Error(`${cliBundle}: non-ASCII character at offset ${i}`);
  }
  // The launcher's shebang (src/cli/launch.ts) comes through; npm links `bin` as is.
  chmodSync(bin, 0o755);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bin = await buildCli();
  console.log(`cli bundle: ${bin} + ${join(dirname(dirname(bin)), "bundle")}/`);
}
