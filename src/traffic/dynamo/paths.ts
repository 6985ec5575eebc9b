/**
 * Which files a Dynamo request trace spans (`traffic.source.paths` with `format: dynamo`).
 *
 * Each path is one of:
 *  - a file: read as is (plain or gzip, whatever its name);
 *  - a directory: its `.jsonl` and `.jsonl.gz` files, not recursive;
 *  - a pattern whose LAST segment holds `*` (any run of characters) or `?` (one character), e.g.
 *    `/tmp/dynamo-request-trace.*.jsonl.gz`: every file of that directory whose name matches.
 * Directory and pattern matches are sorted by name in code-unit order (not locale order), so the
 * zero-padded segments Dynamo's rotating sink writes (`NNNNNN`) come back in recording order.
 * Node 20 has no `fs.glob`; a dependency would be overkill for one segment.
 *
 * The result keeps the paths' order and drops a file met a second time (a directory and one of
 * its files both listed), so no shard is read twice.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { TraceError } from "../traceError.js";

const SHARD_SUFFIXES = [".jsonl", ".jsonl.gz"] as const;

/** Expands trace paths (files, directories, last-segment patterns) to files, in reading order. */
export function expandTracePaths(paths: readonly string[]): string[] {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    for (const file of expandTracePath(path)) {
      if (seen.has(file)) continue;
      seen.add(file);
      files.push(file);
    }
  }
  return files;
}

/** Files one trace path names (see the module comment). Throws TraceError (line 0) when none. */
export function expandTracePath(path: string): string[] {
  const kind = statKind(path);
  if (kind === "file") return [path];
  if (kind === "dir") {
    const names = listFiles(path).filter((name) => SHARD_SUFFIXES.some((s) => name.endsWith(s)));
    if (names.length === 0) throw new TraceError(path, 0, "directory holds no .jsonl or .jsonl.gz file");
    return names.map((name) => join(path, name));
  }
  const pattern = basename(path);
  const dir = dirname(path);
  if (hasWildcard(dir)) {
    throw new TraceError(path, 0, "wildcards are only supported in the last path segment");
  }
  if (!hasWildcard(pattern)) throw new TraceError(path, 0, "trace file not found");
  if (statKind(dir) !== "dir") throw new TraceError(path, 0, `directory not found: ${dir}`);
  const names = listFiles(dir).filter((name) => matchesPattern(name, pattern));
  if (names.length === 0) throw new TraceError(path, 0, "no file matches the pattern");
  return names.map((name) => join(dir, name));
}

/** True when `name` matches `pattern` in full (`*` = any run, `?` = one character; no escapes). */
export function matchesPattern(name: string, pattern: string): boolean {
  // Iterative wildcard matching with backtracking to the last `*`: linear for typical patterns,
  // never exponential.
  let n = 0;
  let p = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (c === "?" || (c !== undefined && c !== "*" && c === name[n])) {
      n++;
      p++;
    } else if (c === "*") {
      star = p++;
      mark = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

function hasWildcard(text: string): boolean {
  return text.includes("*") || text.includes("?");
}

/** Regular files (following links) of `dir`, sorted by name in code-unit order. */
function listFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new TraceError(
      dir,
      0,
      `cannot list directory: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return names.filter((name) => statKind(join(dir, name)) === "file").sort(compareCodeUnits);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function statKind(path: string): "file" | "dir" | "other" | "missing" {
  try {
    const st = statSync(path);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
  } catch {
    return "missing";
  }
}
