/**
 * Deterministic JSON: object keys sorted at every level (like Python's `sort_keys=True`),
 * non-finite numbers written as null.
 */
export function stableStringify(value: unknown, indent = 2): string {
  return JSON.stringify(sortKeys(value), null, indent);
}

/** One compact line with sorted keys (JSONL records). */
export function stableLine(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return isFiniteNumbers(value) ? value : value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(src).sort()) {
      const v = src[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** Whether every element is a finite number: such an array (a time series) is written as it is, not copied. */
function isFiniteNumbers(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== "number" || !Number.isFinite(v)) return false;
  }
  return true;
}
