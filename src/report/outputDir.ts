import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/** A user mistake about the output directory (exit code 2). */
export class OutputDirError extends Error {}

/**
 * Files fleetsim (or aisimulate) may write into an output directory. `--overwrite` deletes only
 * these, never anything else the user keeps there (aisimulate.md §1.4).
 */
export const KNOWN_OUTPUT_FILES = [
  "prediction.json",
  "requests.jsonl",
  "report.html",
  "fpm-coverage.json",
  "recommendation.json",
  "recommendation.csv",
  "resource-plan.json",
  "resource-runtime.json",
  "execution-events.jsonl",
  "afd-replay-spec.json",
  "afd-qualification.json",
] as const;

const RECOMMENDATION_FILE = /^[0-9]{4}\.yaml$/;

/**
 * Checks, before any work, that results can go to `dir`: it is absent, an empty directory, or
 * `overwrite` is set. Nothing is changed on disk.
 */
export function checkOutputDir(dir: string, overwrite: boolean): void {
  let entries: string[];
  try {
    const st = statSync(dir);
    if (!st.isDirectory()) throw new OutputDirError(`output path ${dir} exists and is not a directory`);
    entries = readdirSync(dir);
  } catch (err) {
    if (err instanceof OutputDirError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new OutputDirError(`cannot read output directory ${dir}: ${(err as Error).message}`);
  }
  if (entries.length > 0 && !overwrite) {
    throw new OutputDirError(
      `output directory ${dir} is not empty; pass --overwrite to replace fleetsim's own files in it`,
    );
  }
}

/** Removes fleetsim's known files from `dir` (used by `--overwrite` once a run succeeded). */
export function removeKnownFiles(dir: string): void {
  for (const name of KNOWN_OUTPUT_FILES) rmSync(join(dir, name), { force: true });
  const recs = join(dir, "recommendations");
  try {
    for (const name of readdirSync(recs)) {
      if (RECOMMENDATION_FILE.test(name)) rmSync(join(recs, name), { force: true });
    }
  } catch {
    // no recommendations/ folder: nothing to remove
  }
}

export interface OutputFile {
  readonly name: string;
  /** Content as chunks, so large JSONL files need not be one string. */
  readonly chunks: Iterable<string>;
}

/**
 * Writes every file atomically: all go to hidden temporary names first and are renamed into
 * place only when all were written, so a failure leaves no partial result behind.
 */
export function writeOutputs(dir: string, files: readonly OutputFile[], overwrite: boolean): string[] {
  mkdirSync(dir, { recursive: true });
  const temps: string[] = [];
  try {
    for (const file of files) {
      const tmp = join(dir, `.${file.name}.${process.pid}.tmp`);
      temps.push(tmp);
      const fd = openSync(tmp, "w");
      try {
        for (const chunk of file.chunks) writeSync(fd, chunk);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    if (overwrite) removeKnownFiles(dir);
    const written: string[] = [];
    files.forEach((file, i) => {
      const dest = join(dir, file.name);
      renameSync(temps[i], dest);
      written.push(dest);
    });
    return written;
  } catch (err) {
    for (const tmp of temps) rmSync(tmp, { force: true });
    throw err;
  }
}
