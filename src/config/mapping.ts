/** Plain-object helpers for raw (pre-validation) config data. */

export type Mapping = Record<string, unknown>;

export function isMapping(value: unknown): value is Mapping {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Set an own, enumerable property. Plain assignment would treat a `__proto__` key (legal in
 * YAML and `--set`) as a prototype change and drop it silently instead of letting the schema
 * reject it as an unknown key.
 */
export function setOwn(obj: Mapping, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export function getOwn(obj: Mapping, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}
