/**
 * Runs the bundled CLI (one CommonJS file, `dist/bundle/cli.cjs`) with a V8 code cache, so a
 * start-up after the first skips compiling the JavaScript it runs (docs/performance.md
 * "Start-up"). Node 20 has no compile cache for ES modules (`module.enableCompileCache` is Node
 * ≥ 22.1), but `vm.Script` takes V8's cached data for a script on every supported Node.
 *
 * The cache holds what V8 compiled during a whole run (`createCachedData` at exit, so the
 * functions compiled lazily while it ran are in it), one file per command, in a folder of the
 * OS temporary directory (as Node 22's own compile cache) or `FLEETSIM_COMPILE_CACHE`; writing
 * one removes the files of other builds (an upgrade). V8 checks
 * the data against the source and its own version and flags and rejects data that does not match;
 * a rejected or missing file is written anew at exit. Any failure to read or write the cache only
 * costs the compile: the CLI runs the same either way.
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import vm from "node:vm";

/**
 * What the code cache did for this process: `hit` (V8 took the cached data), `miss` (none or
 * rejected: written at exit), `off` (turned off, or no cache folder could be keyed) or `none`
 * (the CLI was not started through the bundle's launcher: the sources, tsc's output, the API).
 */
export type CodeCacheState = "hit" | "miss" | "off" | "none";

// Shared by the launcher and the bundle it runs, which are separate copies of this module.
const STATE_KEY = Symbol.for("fleetsim.codeCache");

/** This process's code-cache state (the startup probe reports it, cli/startupProbe.ts). */
export function codeCacheState(): CodeCacheState {
  return ((globalThis as Record<symbol, unknown>)[STATE_KEY] as CodeCacheState | undefined) ?? "none";
}

const BUILD_KEY = Symbol.for("fleetsim.cacheBuild");

/**
 * The cache folder and the key of this build (the bundle and Node) when the CLI runs from its
 * bundle with the cache on, else null: other per-build caches (hardware/gridCache.ts) keep their
 * files there under the same key, and are pruned with the code cache.
 */
export function cacheBuild(): { readonly dir: string; readonly key: string } | null {
  return (
    ((globalThis as Record<symbol, unknown>)[BUILD_KEY] as { dir: string; key: string } | undefined) ?? null
  );
}

/** The environment variable naming the cache folder; `0`, `off` or empty turns the cache off. */
export const CACHE_ENV = "FLEETSIM_COMPILE_CACHE";

/** The cache folder for this process's environment, or null when the cache is turned off. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const set = env[CACHE_ENV];
  if (set !== undefined) return set === "" || set === "0" || set === "off" ? null : set;
  // Per user: a folder another user created in a shared /tmp is not ours to write.
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  return join(tmpdir(), `fleetsim-compile-cache-${uid}`);
}

/**
 * The cache file of `bundlePath` for `command`: keyed by the bundle's size and modification time
 * (a rebuilt or upgraded package gets a new file rather than a rejected one) and by Node's
 * version and architecture. The command is part of the key because each runs other code, and
 * the data holds only what ran; argument text that is not a plain command name shares one file.
 */
export function cacheFile(dir: string, bundlePath: string, command: string | undefined): string {
  const name = command !== undefined && /^[a-z][a-z-]{0,31}$/.test(command) ? command : "other";
  return join(dir, `${buildKey(bundlePath)}-${name}${SUFFIX}`);
}

const SUFFIX = ".v8cache";
/** hardware/gridCache.ts's files (not imported: the launcher stays small). */
const GRID_SUFFIX = ".grid";

/** The part of a cache file's name that names the build: the bundle and Node. */
function buildKey(bundlePath: string): string {
  const st = statSync(bundlePath);
  return `${basename(bundlePath)}-${st.size}-${Math.trunc(st.mtimeMs)}-${process.version}-${process.arch}`;
}

/**
 * Removes the cache files of other builds of the same bundle (an upgraded package, another
 * Node), so the folder holds one build's files rather than growing with every upgrade.
 */
export function pruneOtherBuilds(dir: string, bundlePath: string): void {
  const key = buildKey(bundlePath);
  const prefix = `${basename(bundlePath)}-`;
  for (const f of readdirSync(dir)) {
    if (f.startsWith(prefix) && (f.endsWith(SUFFIX) || f.endsWith(GRID_SUFFIX)) && !f.startsWith(`${key}-`)) {
      try {
        unlinkSync(join(dir, f));
      } catch {
        // Another run removed it first.
      }
    }
  }
}

function readCache(file: string | null): Buffer | undefined {
  if (file === null) return undefined;
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Writes through a temporary file and a rename: concurrent runs (sweep workers) never read half a file. */
function writeCache(file: string, bundlePath: string, data: Buffer): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, data);
    renameSync(tmp, file);
    pruneOtherBuilds(dirname(file), bundlePath);
  } catch {
    // A read-only or full disk only loses the next start-up's saving.
  }
}

/**
 * Loads and runs the CommonJS bundle at `bundlePath` as Node's own loader would (same
 * `require`, `module`, `__filename`, `__dirname`), through the code cache of `command`.
 */
export function runBundle(bundlePath: string, command: string | undefined): void {
  const dir = cacheDir();
  let file: string | null = null;
  if (dir !== null) {
    try {
      file = cacheFile(dir, bundlePath, command);
    } catch {
      file = null;
    }
  }
  const cachedData = readCache(file);
  // ASCII only (scripts/build-cli.mjs checks), so Latin-1 reads it exactly, without UTF-8 decoding.
  const source = readFileSync(bundlePath, "latin1");
  // Node's own CommonJS wrapper, on the source's first line so line numbers stay the file's.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  // No dynamic-import callback: the bundle has no `import()` (scripts/build-cli.mjs lowers them to
  // `require`), and a script from cached data would lose one anyway.
  const script = new vm.Script(wrapped, { filename: bundlePath, cachedData });
  const hit = cachedData !== undefined && script.cachedDataRejected !== true;
  (globalThis as Record<symbol, unknown>)[STATE_KEY] = file === null ? "off" : hit ? "hit" : "miss";
  if (file !== null && dir !== null) {
    (globalThis as Record<symbol, unknown>)[BUILD_KEY] = { dir, key: buildKey(bundlePath) };
  }
  if (file !== null && !hit) {
    const target = file;
    process.once("exit", () => writeCache(target, bundlePath, script.createCachedData()));
  }
  const fn = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void;
  const mod = { exports: {} };
  fn.call(mod.exports, mod.exports, createRequire(bundlePath), mod, bundlePath, dirname(bundlePath));
}
