/**
 * Structured clone copies class instances as plain objects and silently drops their prototypes,
 * so a job input that holds one would reach the worker changed. Inputs must therefore be plain
 * data: primitives, arrays, plain objects and typed arrays. This finds the first violation.
 */

/** The path of the first value that is not plain data (`$` is the root), or null. */
export function firstNonPlain(value: unknown, path = "$", seen = new Set<object>()): string | null {
  const t = typeof value;
  if (t === "function" || t === "symbol") return `${path} (a ${t})`;
  if (t !== "object" || value === null) return null;
  const obj = value as object;
  if (ArrayBuffer.isView(obj)) return null;
  if (seen.has(obj)) return null; // cycles and shared subtrees clone fine
  seen.add(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) {
      const bad = firstNonPlain(obj[i], `${path}[${i}]`, seen);
      if (bad !== null) return bad;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(obj);
  if (proto !== Object.prototype && proto !== null) {
    return `${path} (an instance of ${proto?.constructor?.name ?? "a class"})`;
  }
  for (const [key, v] of Object.entries(obj)) {
    const bad = firstNonPlain(v, `${path}.${key}`, seen);
    if (bad !== null) return bad;
  }
  return null;
}
