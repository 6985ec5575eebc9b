/**
 * Building blocks shared by the section schemas: strict numbers, "reference value fleetsim does
 * not support yet" enums and keys, and the message placeholders that `issues.ts` expands.
 *
 * Zod refinements cannot see where in the document they run, so messages that must name their
 * own dotted path use the placeholders below; `issues.ts` substitutes them.
 *
 * Every custom issue is raised with `continue: false`: otherwise Zod still runs the enclosing
 * objects' refinements, handing them the *untransformed* value of the failed part, which yields
 * follow-on errors (and would break their typed assumptions).
 */
import { z } from "zod";

/** Replaced by the issue's full dotted path. */
export const PATH = "{path}";
/** Replaced by the issue's dotted path without its last `n` segments. */
export function up(n: number): string {
  return `{path-${n}}`;
}

/** Issue params marking an issue as being about a key (position = the key, not its value). */
export const AT_KEY = { at: "key" } as const;

/**
 * Raise a custom issue from a refinement, at `path` relative to the refined value. Never
 * continuable: see the module comment.
 */
export function fail(ctx: Pick<z.RefinementCtx, "addIssue">, message: string, path?: PropertyKey[]): void {
  ctx.addIssue({ code: "custom", continue: false, message, ...(path === undefined ? {} : { path }) });
}

/** `fail` for an issue about a key (its position is the key, not its value). */
export function failAtKey(
  ctx: Pick<z.RefinementCtx, "addIssue">,
  message: string,
  path: PropertyKey[],
): void {
  ctx.addIssue({ code: "custom", continue: false, message, path, params: AT_KEY });
}

/** `'a', 'b' or 'c'` */
export function orList(values: readonly unknown[]): string {
  const quoted = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v)));
  if (quoted.length <= 1) return quoted.join("");
  return `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}

/** Python list repr of strings, as the reference prints it: `['concurrency', 'seed']`. */
export function pyList(values: readonly string[]): string {
  return `[${values.map((v) => `'${v}'`).join(", ")}]`;
}

/** Short human description of a raw YAML value for type errors. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return ".nan";
    if (!Number.isFinite(value)) return value > 0 ? ".inf" : "-.inf";
    return `number ${value}`;
  }
  if (typeof value === "string") return `string '${value}'`;
  if (typeof value === "boolean") return `boolean ${value}`;
  if (typeof value === "object") return "a mapping";
  return typeof value;
}

/** Integer schema: a YAML integer, never a string or a float (reference `strict=True`). */
export function int() {
  return z.int({
    error: (iss) =>
      iss.code === "invalid_type" && iss.input !== undefined
        ? `Input should be a valid integer, got ${describeValue(iss.input)}`
        : undefined,
  });
}

export const posInt = () => int().min(1);
export const nonNegInt = () => int().min(0);
/** Finite (Zod numbers reject ±inf and NaN) and > 0. */
export const posNum = () => z.number().gt(0);
export const nonNegNum = () => z.number().min(0);
/** (0, 1] */
export const fraction = () => z.number().gt(0).lte(1);

/**
 * A positive integer/number or one keyword (`context_length: max`, `cpu_limit: auto`). One
 * message for every failure: Zod would otherwise report only the numeric branch's complaint.
 */
export function positiveOr<const L extends string>(kind: "integer" | "number", keyword: L) {
  const message = `Input should be a positive ${kind} or '${keyword}'`;
  const numeric =
    kind === "integer" ? z.int().min(1, { error: message }) : z.number().gt(0, { error: message });
  return z.union([numeric, z.literal(keyword)], { error: () => message });
}

/**
 * An enum of every value the reference accepts, of which fleetsim implements `supported`.
 * Values outside the reference set fail as ordinary enum errors; reference-only values fail with
 * a "not supported by fleetsim yet" message, so a reference config gets a clear answer.
 */
export function oneOf<const A extends readonly [string, ...string[]], const S extends A[number]>(
  all: A,
  supported: readonly S[],
) {
  const supportedSet: ReadonlySet<string> = new Set(supported);
  return z
    .enum(all, {
      error: (iss) => (iss.code === "invalid_value" ? `Input should be ${orList(supported)}` : undefined),
    })
    .transform((value, ctx): S => {
      if (supportedSet.has(value)) return value as S;
      ctx.addIssue({
        code: "custom",
        continue: false,
        input: value,
        message: `${PATH}='${value}' is not supported by fleetsim yet (supported: ${orList(supported)})`,
      });
      return z.NEVER;
    });
}

/** A key whose mere presence is an error (any value, including null). */
export function rejectKey(message: string) {
  return z
    .unknown()
    .transform((_value, ctx) => {
      ctx.addIssue({ code: "custom", continue: false, message, params: AT_KEY });
      return z.NEVER;
    })
    .optional();
}

/** A reference key fleetsim does not implement yet. */
export function unsupportedKey(what?: string) {
  const detail = what === undefined ? "" : ` (${what})`;
  return rejectKey(`${PATH} is not supported by fleetsim yet${detail}`);
}

/** Keys of `obj` that are set (not undefined) and not in `allowed`, in declaration order. */
export function presentExcept(obj: Readonly<Record<string, unknown>>, allowed: readonly string[]): string[] {
  return Object.keys(obj).filter((k) => obj[k] !== undefined && !allowed.includes(k));
}

/** Python's `round()` (ties to even), which the reference uses for derived integers. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor; // exact: x and floor(x) are within a factor of two (or floor is 0)
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
