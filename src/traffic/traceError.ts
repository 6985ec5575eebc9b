import { UserError } from "../util/userError.js";

/**
 * A trace that cannot be loaded: unreadable file, bad gzip, invalid JSON or a malformed field.
 * The CLI prints `message` and exits 2. `line` is 1-based; 0 means the error concerns the whole file
 * (missing, unreadable, corrupt gzip, no rows).
 */
export class TraceError extends UserError {
  readonly file: string;
  readonly line: number;
  readonly field: string | undefined;

  constructor(file: string, line: number, detail: string, field?: string) {
    const where = line > 0 ? `${file}:${line}` : file;
    super(field === undefined ? `${where}: ${detail}` : `${where}: field '${field}': ${detail}`);
    this.name = "TraceError";
    this.file = file;
    this.line = line;
    this.field = field;
  }
}

/** Short JSON rendering of an offending value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  // JSON.parse turns 1e400 into Infinity, which JSON.stringify would print as null.
  if (typeof value === "number" && !Number.isFinite(value)) {
    return Number.isNaN(value) ? "NaN" : "a number too large to represent (overflows to infinity)";
  }
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** A trace line parsed as a JSON object; a TraceError at its line when it is not one. */
export function parseJsonObject(path: string, line: number, text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new TraceError(path, line, `invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new TraceError(path, line, `expected a JSON object, got ${describeValue(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}
