import { readFileSync, statSync } from "node:fs";

/** Why a file could not be read: its errno code (`ENOENT`, `EISDIR`, …) and the error's message. */
export interface ReadFailure {
  readonly code: string | undefined;
  readonly message: string;
}

/** A file's UTF-8 text, or why it could not be read: each caller words the failure its own way. */
export function readTextFile(path: string): string | ReadFailure {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code, message: (err as Error).message };
  }
}

/** Whether `path` is a regular file (false when it is anything else or cannot be looked at). */
export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whether `path` is a directory (false when it is anything else or cannot be looked at). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
