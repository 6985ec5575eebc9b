/**
 * A YAML section's snake_case keys as the resolved spec's camelCase fields. Where a spec field is
 * the schema key renamed and nothing more, its type is derived with `CamelKeys` (and its value
 * with `camelKeys`), so a key added to the schema section is a field of the spec without anyone
 * writing it twice.
 */

/** `memory_limit_gb` → `memoryLimitGb`. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** An object type with its keys in camelCase and its fields read-only. */
export type CamelKeys<T> = { readonly [K in keyof T as K extends string ? CamelCase<K> : K]: T[K] };

function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, next: string) => next.toUpperCase());
}

/** The object with its keys in camelCase (one level; values are kept as they are). */
export function camelKeys<T extends object>(section: T): CamelKeys<T> {
  return Object.fromEntries(
    Object.entries(section).map(([key, value]) => [camelCase(key), value]),
  ) as CamelKeys<T>;
}
