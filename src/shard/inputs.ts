/**
 * The files a sweep's points read besides their config — trace files and a Planner warm-up trace —
 * identified by content (SHA-256), so a point's hash changes when a trace does, and a worker that
 * finds a different file under the planned path refuses to run it (docs/sweep.md "Inputs").
 * `copy` places each trace file in the sweep directory under a content-addressed name (the
 * directory then holds everything a pod needs); `reference` keeps its absolute path, for traces
 * too large to copy, on a volume every worker mounts at the same path.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { UserError } from "../util/userError.js";

/** A planned input file (manifest.json `inputs`). */
export interface InputFile {
  /** Where a point reads it: relative to the sweep directory (copied) or absolute (referenced). */
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
}

/** An input file that is missing or changed since the plan (exit 2). */
export class InputMismatch extends UserError {}

/** The folder of a sweep directory that holds its copied inputs and its base config. */
export const INPUTS_DIR = "inputs";

const CHUNK = 1 << 20;

/** SHA-256 of a file's bytes (hex), read in 1 MiB chunks. */
export function fileSha256(path: string): { sha256: string; bytes: number } {
  const hash = createHash("sha256");
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(CHUNK);
  let bytes = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      bytes += n;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest("hex"), bytes };
}

/**
 * Where a copied file goes below `inputs/`: a folder named by the first 16 hex digits of its hash,
 * the file keeping its own name (a prediction's `run` block names the trace by its file name).
 */
function copiedName(sha256: string, file: string): string {
  return join(sha256.slice(0, 16), basename(file));
}

/**
 * Copies `file` into `dir/inputs/` under its content-addressed name unless a file of that name is
 * there already (the same bytes, by its name): through a temporary and a rename, so a reader never
 * sees a partial copy. Returns the path relative to `dir`.
 */
export function copyInput(dir: string, file: string, sha256: string): string {
  const rel = join(INPUTS_DIR, copiedName(sha256, file));
  const dest = join(dir, rel);
  if (existsSync(dest)) return rel;
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = `${dest}.${process.pid}.tmp`;
  try {
    copyFileSync(file, tmp);
    renameSync(tmp, dest);
  } finally {
    rmSync(tmp, { force: true });
  }
  return rel;
}

/**
 * Checks that every input a point reads is where the plan put it, with the planned size and hash
 * (`dir`: the sweep directory, which relative paths are below). Each file is hashed once per
 * process (`checked`): a worker that runs many points reads it once.
 */
export function checkInputs(dir: string, inputs: readonly InputFile[], checked: Set<string>): void {
  for (const input of inputs) {
    const path = input.path.startsWith("/") ? input.path : join(dir, input.path);
    const key = `${path}\0${input.sha256}`;
    if (checked.has(key)) continue;
    let bytes: number;
    try {
      bytes = statSync(path).size;
    } catch {
      throw new InputMismatch(
        `${path}: the sweep's input file is missing (planned with ${input.bytes} bytes, sha256 ${input.sha256}); ` +
          "mount it at this path or plan the sweep again",
      );
    }
    const actual = bytes === input.bytes ? fileSha256(path).sha256 : null;
    if (actual !== input.sha256) {
      throw new InputMismatch(
        `${path}: the sweep's input file changed since the plan (planned ${input.bytes} bytes, sha256 ` +
          `${input.sha256}; found ${bytes} bytes${actual === null ? "" : `, sha256 ${actual}`}); plan the sweep again`,
      );
    }
    checked.add(key);
  }
}
