/**
 * Which files `planner.load_predictor_warmup_trace` names (seed 000 "Configure the Planner
 * Section": "a file, a directory of JSONL or JSONL.GZ shards, or a glob; a relative path resolves
 * against the working directory").
 *
 * The forms are those of a Dynamo trace's `traffic.source.paths` (traffic/dynamo/paths.ts): a file, a
 * directory (its `.jsonl` / `.jsonl.gz` files), or a pattern in the last path segment. As the
 * reference's warm-up reader does, a shard matched both plain and gzipped (`x.jsonl` and
 * `x.jsonl.gz`) is refused rather than counted twice.
 */
import { isAbsolute, resolve } from "node:path";
import { expandTracePath } from "./dynamo/paths.js";
import { TraceError } from "./traceError.js";

/** Absolute path of a warm-up trace setting: relative to `workDir` (the working directory). */
export function warmupTracePath(setting: string, workDir: string): string {
  return isAbsolute(setting) ? setting : resolve(workDir, setting);
}

/** The files of a warm-up trace setting (already absolute), in reading order. Throws TraceError. */
export function warmupTraceFiles(path: string): string[] {
  const files = expandTracePath(path);
  const byStem = new Map<string, string>();
  for (const file of files) {
    const stem = file.endsWith(".jsonl.gz") ? file.slice(0, -3) : file;
    const other = byStem.get(stem);
    if (other !== undefined && other !== file) {
      throw new TraceError(
        path,
        0,
        `both a plain and a gzipped copy of one shard match (${other} and ${file}); select one with a pattern such as *.jsonl.gz`,
      );
    }
    byStem.set(stem, file);
  }
  return files;
}
