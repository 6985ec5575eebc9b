/**
 * Tolerant readers for the parts of a prediction.json the report draws. The report also opens
 * files written by older fleetsim versions (no `timeseries`) or edited by hand, so every field is
 * checked on the way in: a missing or malformed part drops its chart instead of failing the page.
 */

export type Json = unknown;

export function isRecord(v: Json): v is Record<string, Json> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function record(v: Json): Record<string, Json> | null {
  return isRecord(v) ? v : null;
}

export function finite(v: Json): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export function text(v: Json): string | null {
  return typeof v === "string" ? v : null;
}

/** A numeric array (nulls allowed), or null when `v` is not one of length `length` (when given). */
export function nullableNumbers(v: Json, length?: number): (number | null)[] | null {
  if (!Array.isArray(v)) return null;
  if (length !== undefined && v.length !== length) return null;
  const out: (number | null)[] = [];
  for (const x of v) {
    if (x === null) out.push(null);
    else if (typeof x === "number" && Number.isFinite(x)) out.push(x);
    else return null;
  }
  return out;
}

/** Like `nullableNumbers` with nulls refused. */
export function numbers(v: Json, length?: number): number[] | null {
  const xs = nullableNumbers(v, length);
  if (xs === null || xs.some((x) => x === null)) return null;
  return xs as number[];
}

export function list(v: Json): Json[] {
  return Array.isArray(v) ? v : [];
}
