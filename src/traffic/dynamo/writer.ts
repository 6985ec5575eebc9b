/**
 * Atomic JSONL output for `fleetsim convert`: lines go to a hidden temporary file beside the
 * destination (gzip-compressed when the destination ends in `.gz`) and are renamed into place by
 * `commit`, so an interrupted or failed conversion never leaves a partial trace under the real name.
 */
import { createWriteStream, mkdirSync, openSync, renameSync, rmSync, type WriteStream } from "node:fs";
import { basename, dirname, join } from "node:path";
import { finished } from "node:stream/promises";
import type { Gzip } from "node:zlib";
import { UserError } from "../../util/userError.js";

/** The output cannot be written (missing permission, full disk, …): a user-facing error, exit 2. */
export class TraceWriteError extends UserError {}

export class AtomicJsonlWriter {
  readonly dest: string;
  private readonly tmp: string;
  private readonly file: WriteStream;
  private readonly gzip: Gzip | null;
  private failure: Error | null = null;
  lines = 0;

  constructor(dest: string) {
    this.dest = dest;
    const dir = dirname(dest);
    this.tmp = join(dir, `.${basename(dest)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
    let fd: number;
    try {
      mkdirSync(dir, { recursive: true });
      // Opened synchronously so the file exists before any abort() can remove it.
      fd = openSync(this.tmp, "w");
    } catch (err) {
      throw new TraceWriteError(`cannot write ${dest}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.file = createWriteStream(this.tmp, { fd });
    // Keep I/O errors for commit() instead of letting an unhandled 'error' event end the process.
    this.file.on("error", (err) => this.fail(err));
    // `node:zlib` loads with the first gzip destination, not with this module (start-up).
    this.gzip = dest.endsWith(".gz") ? process.getBuiltinModule("node:zlib").createGzip() : null;
    if (this.gzip !== null) {
      this.gzip.on("error", (err) => this.fail(err));
      this.gzip.pipe(this.file);
    }
  }

  /** Appends one line (without its newline). */
  write(line: string): void {
    (this.gzip ?? this.file).write(`${line}\n`);
    this.lines++;
  }

  /** Flushes, closes and renames the temporary file onto the destination. */
  async commit(): Promise<void> {
    (this.gzip ?? this.file).end();
    try {
      await finished(this.file);
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
    if (this.failure !== null) {
      this.abort();
      throw new TraceWriteError(`cannot write ${this.dest}: ${this.failure.message}`);
    }
    try {
      renameSync(this.tmp, this.dest);
    } catch (err) {
      this.abort();
      throw new TraceWriteError(
        `cannot write ${this.dest}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** Drops the temporary file (after a failure). Safe to call more than once. */
  abort(): void {
    this.gzip?.destroy();
    this.file.destroy();
    rmSync(this.tmp, { force: true });
  }

  private fail(err: Error): void {
    this.failure ??= err;
  }
}
