import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ExecutionFailure, UserError } from "../util/userError.js";

/** A user mistake about the output directory (exit code 2). */
export class OutputDirError extends UserError {}

/** The run was stopped by a signal before its results were committed (exit 130 / 143). */
export class OutputCancelled extends Error {
  constructor() {
    super("output cancelled");
  }
}

/**
 * Files fleetsim (or aisimulate) may write into an output directory. `--overwrite` deletes only
 * these, never anything else the user keeps there (`ai-dynamo/aisimulate@f8f4b93:docs/reference/cli.md`).
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
  "sweep.csv",
  "compare.html",
] as const;

const RECOMMENDATION_FILE = /^[0-9]{4}\.yaml$/;

/** The lock a run holds on its output directory (one run per directory). */
export const LOCK_FILE = ".fleetsim.lock";
/** fleetsim's own temporaries: staging and backup folders of a commit, and the older `.NAME.PID.tmp` files. */
const TEMPORARY = /^(\.fleetsim-(stage|old)\.\d+|\.[a-z0-9-]+(\.[a-z0-9-]+)*\.\d+\.tmp)$/;

/** Whether `name` is one of fleetsim's own temporaries (left by a run that was killed). */
export function isFleetsimTemporary(name: string): boolean {
  return TEMPORARY.test(name);
}

/**
 * Checks, before any work, that results can go to `dir`: it is absent (and its nearest existing
 * parent is a writable directory), or an empty writable directory, or `overwrite` is set; no
 * known output name in it is a directory. fleetsim's lock and temporaries do not count as
 * content. Nothing is changed on disk.
 */
export function checkOutputDir(dir: string, overwrite: boolean): void {
  if (dir.trim() === "") throw new OutputDirError("the output directory (--output-dir) must not be empty");
  let entries: string[];
  try {
    const st = statSync(dir);
    if (!st.isDirectory()) throw new OutputDirError(`output path ${dir} exists and is not a directory`);
    entries = readdirSync(dir);
  } catch (err) {
    if (err instanceof OutputDirError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      checkCreatable(dir);
      return;
    }
    throw new OutputDirError(`cannot read output directory ${dir}: ${describeFsError(err)}`);
  }
  checkWritable(dir, dir);
  // The lock, the private files runs link it from, and temporaries of killed runs are not content.
  const content = entries.filter(
    (name) => name !== LOCK_FILE && !name.startsWith(`${LOCK_FILE}.`) && !isFleetsimTemporary(name),
  );
  if (content.length > 0 && !overwrite) {
    throw new OutputDirError(
      `output directory ${dir} is not empty; pass --overwrite to replace fleetsim's own files in it`,
    );
  }
  for (const name of KNOWN_OUTPUT_FILES) {
    const path = join(dir, name);
    let isDir = false;
    try {
      isDir = lstatSync(path).isDirectory();
    } catch {
      continue; // absent
    }
    if (isDir) throw new OutputDirError(`${path} is a directory; fleetsim writes a file there`);
  }
}

/** An absent output directory: its nearest existing ancestor must be a directory we may write. */
function checkCreatable(dir: string): void {
  let parent = dirname(resolve(dir));
  for (;;) {
    if (existsSync(parent)) break;
    const up = dirname(parent);
    if (up === parent) break;
    parent = up;
  }
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(parent);
  } catch (err) {
    throw new OutputDirError(`cannot create output directory ${dir}: ${describeFsError(err)}`);
  }
  if (!st.isDirectory())
    throw new OutputDirError(`cannot create output directory ${dir}: ${parent} is not a directory`);
  checkWritable(parent, dir);
}

function checkWritable(path: string, dir: string): void {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new OutputDirError(`cannot write to output directory ${dir}: ${describeFsError(err)}`);
  }
}

function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case "EROFS":
      return "read-only file system";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ENOTDIR":
      return "a path component is not a directory";
    case "ENOSPC":
      return "no space left on device";
    case "EDQUOT":
      return "disk quota exceeded";
    default:
      return e.code ?? e.message;
  }
}

/**
 * Holds an output directory for one run (a lock file created with O_EXCL), so a second run into
 * the same directory fails at once with exit 2 instead of mixing its files with the first one's.
 * A lock whose process is gone is stale and taken over. `release` removes the lock, and the
 * directory too when this run created it and left it empty.
 */
export class OutputDirLock {
  private released = false;
  private readonly onExit = (): void => this.release();

  private constructor(
    readonly dir: string,
    private readonly createdDir: boolean,
  ) {
    // A process.exit() (a second Ctrl-C) still removes the lock.
    process.once("exit", this.onExit);
  }

  static acquire(dir: string): OutputDirLock {
    const created = !existsSync(dir);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new OutputDirError(`cannot create output directory ${dir}: ${describeFsError(err)}`);
    }
    const path = join(dir, LOCK_FILE);
    // The lock appears with its pid already in it (written to a private file, then hard-linked
    // into place, which fails if a lock exists): a second run never reads a half-written lock
    // and mistakes it for a stale one.
    const mine = join(dir, `${LOCK_FILE}.${process.pid}`);
    try {
      const fd = openSync(mine, "w");
      try {
        writeFully(fd, Buffer.from(`${process.pid}\n`));
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      rmSync(mine, { force: true });
      throw new OutputDirError(`cannot write to output directory ${dir}: ${describeFsError(err)}`);
    }
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          linkSync(mine, path);
          return new OutputDirLock(dir, created);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code !== "EEXIST") {
            throw new OutputDirError(`cannot write to output directory ${dir}: ${describeFsError(err)}`);
          }
          const holder = lockHolder(path);
          // This process's own pid: another run in the same process (library callers) holds it.
          if (holder === null || holder === process.pid || processAlive(holder)) {
            throw new OutputDirError(
              holder === null
                ? `output directory ${dir} holds a lock file that names no process (${path}); if no fleetsim run ` +
                    "is using the directory, remove it"
                : `output directory ${dir} is in use by another fleetsim run (pid ${holder}); ` +
                    "wait for it to finish or choose another --output-dir",
            );
          }
          // Stale: its run is gone. Move it aside under a name of our own (atomic), then retry.
          try {
            renameSync(path, `${mine}.stale`);
          } catch {
            // another run moved it first
          }
          rmSync(`${mine}.stale`, { force: true });
        }
      }
      throw new OutputDirError(`output directory ${dir} is in use by another fleetsim run`);
    } finally {
      rmSync(mine, { force: true });
    }
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.off("exit", this.onExit);
    try {
      unlinkSync(join(this.dir, LOCK_FILE));
    } catch {
      // already gone
    }
    if (this.createdDir) {
      try {
        rmdirSync(this.dir); // only when empty
      } catch {
        // results (or someone's files) are in it: keep it
      }
    }
  }
}

function lockHolder(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
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

/** Removes temporaries that killed runs left in `dir` (the caller holds the directory's lock). */
export function removeStaleTemporaries(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names)
    if (isFleetsimTemporary(name)) rmSync(join(dir, name), { recursive: true, force: true });
}

export interface OutputFile {
  readonly name: string;
  /** Content as chunks, so large JSONL files need not be one string. */
  readonly chunks: Iterable<string>;
}

export interface WriteOptions {
  /** Polled while writing; true stops the write before its commit and rolls it back (a signal). */
  readonly cancelled?: () => boolean;
  /** Writes one buffer at a file position; tests inject short writes and ENOSPC here. */
  readonly write?: (fd: number, buffer: Buffer, offset: number, length: number) => number;
}

/** Host time between two yields to the event loop while writing, so a signal handler can run. */
const YIELD_EVERY_MS = 20;

/**
 * Writes every file as one transaction. The files are written in full (a short write is resumed,
 * a failed one throws) and fsynced into a private staging folder; the previous outputs (with
 * `overwrite`) move into a backup folder; the staged files are renamed into place; then the
 * backup is deleted. Any failure or a cancellation before the end restores the previous
 * outputs and leaves nothing of this run behind. Returns the written paths.
 */
export async function writeOutputs(
  dir: string,
  files: readonly OutputFile[],
  overwrite: boolean,
  opts: WriteOptions = {},
): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const stage = join(dir, `.fleetsim-stage.${process.pid}`);
  const backup = join(dir, `.fleetsim-old.${process.pid}`);
  const cleanup = (): void => {
    rmSync(stage, { recursive: true, force: true });
  };
  process.once("exit", cleanup);
  const moved: string[] = []; // previous outputs now in the backup folder
  const placed: string[] = []; // this run's files now in place
  const cancelled = opts.cancelled ?? (() => false);
  const write = opts.write ?? writeSync;
  try {
    rmSync(stage, { recursive: true, force: true });
    mkdirSync(stage);
    let sliceEnd = performance.now() + YIELD_EVERY_MS;
    for (const file of files) {
      // A name may hold one folder level (recommendations/NNNN.yaml).
      mkdirSync(dirname(join(stage, file.name)), { recursive: true });
      const fd = openSync(join(stage, file.name), "w");
      try {
        for (const chunk of file.chunks) {
          writeFully(fd, Buffer.from(chunk, "utf8"), write);
          if (performance.now() >= sliceEnd) {
            await new Promise<void>((r) => setImmediate(r));
            if (cancelled()) throw new OutputCancelled();
            sliceEnd = performance.now() + YIELD_EVERY_MS;
          }
        }
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    // Let a signal that arrived during the last synchronous stretch be seen before the commit.
    await new Promise<void>((r) => setImmediate(r));
    if (cancelled()) throw new OutputCancelled();
    // Commit: move the previous outputs aside, put this run's in place.
    // Temporaries of killed runs are fleetsim's own: the lock says none of them is live.
    removeStaleTemporariesExcept(dir, [stage, backup]);
    if (overwrite) {
      mkdirSync(backup, { recursive: true });
      for (const rel of previousOutputs(dir)) {
        const to = join(backup, rel.replace(/\//g, "__"));
        renameSync(join(dir, rel), to);
        moved.push(rel);
      }
    }
    for (const file of files) {
      const dest = join(dir, file.name);
      if (!overwrite && existsSync(dest)) throw new OutputDirError(`${dest} appeared during the run`);
      mkdirSync(dirname(dest), { recursive: true });
      renameSync(join(stage, file.name), dest);
      placed.push(dest);
    }
    if (cancelled()) throw new OutputCancelled();
    rmSync(backup, { recursive: true, force: true });
    return placed;
  } catch (err) {
    // Roll back: this run's files out, the previous ones back.
    for (const dest of placed) rmSync(dest, { force: true });
    for (const rel of moved) {
      try {
        renameSync(join(backup, rel.replace(/\//g, "__")), join(dir, rel));
      } catch {
        // best effort: the backup folder keeps what could not be restored
      }
    }
    if (moved.length === 0 || previousRestored(backup)) rmSync(backup, { recursive: true, force: true });
    throw err instanceof OutputCancelled || err instanceof OutputDirError ? err : writeError(dir, err);
  } finally {
    cleanup();
    process.off("exit", cleanup);
  }
}

/** A write failure (disk full, I/O error): an execution failure (exit 1) that names the directory. */
function writeError(dir: string, err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code !== "string") return e instanceof Error ? e : new Error(String(err));
  return new ExecutionFailure(
    `could not write the results to ${dir}: ${describeFsError(err)}; nothing of this run was kept and ` +
      "earlier results there are unchanged",
  );
}

function previousRestored(backup: string): boolean {
  try {
    return readdirSync(backup).length === 0;
  } catch {
    return true;
  }
}

/** Known outputs present in `dir`, as paths relative to it (recommendations/NNNN.yaml included). */
function previousOutputs(dir: string): string[] {
  const out: string[] = [];
  for (const name of KNOWN_OUTPUT_FILES) if (existsSync(join(dir, name))) out.push(name);
  try {
    for (const name of readdirSync(join(dir, "recommendations"))) {
      if (RECOMMENDATION_FILE.test(name)) out.push(`recommendations/${name}`);
    }
  } catch {
    // no recommendations/ folder
  }
  return out;
}

function removeStaleTemporariesExcept(dir: string, keep: readonly string[]): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (isFleetsimTemporary(name) && !keep.includes(path)) rmSync(path, { recursive: true, force: true });
  }
}

/** Writes all of `buffer`: a short write (a nearly full disk) is resumed; an error throws. */
export function writeFully(
  fd: number,
  buffer: Buffer,
  write: (fd: number, buffer: Buffer, offset: number, length: number) => number = writeSync,
): void {
  let offset = 0;
  while (offset < buffer.length) {
    const n = write(fd, buffer, offset, buffer.length - offset);
    if (!(n > 0)) {
      const err = new Error("no space left on device") as NodeJS.ErrnoException;
      err.code = "ENOSPC";
      throw err;
    }
    offset += n;
  }
}
