/**
 * Building blocks shared by the section schemas: strict numbers, "reference value fleetsim does
 * not support yet" enums and keys, and the message placeholders that `issues.ts` expands. The
 * value schemas and placeholders live in util/schemaValues.ts (the Planner knob table below
 * config/ uses them too) and are re-exported here; see that module for the placeholder and
 * `continue: false` rules.
 */
import * as z from "zod";
import { AT_KEY, PATH } from "../../util/schemaValues.js";

export * from "../../util/schemaValues.js";

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

/**
 * Every key `rejectKey` makes, so that code reading the schema's shape (the tests that tie the
 * RunSpec and the library API to it) can tell a refused key from one that has to be resolved.
 */
export const REFUSED_KEYS = z.registry<{ readonly message: string }>();

/** A key whose mere presence is an error (any value, including null). */
export function rejectKey(message: string) {
  const key = z
    .unknown()
    .transform((_value, ctx) => {
      ctx.addIssue({ code: "custom", continue: false, message, params: AT_KEY });
      return z.NEVER;
    })
    .optional();
  REFUSED_KEYS.add(key, { message });
  return key;
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
