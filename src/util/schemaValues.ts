/**
 * Zod value schemas and refinement helpers shared by every schema of user input: the config
 * sections (config/) and the Planner knob table (knobs/planner.ts), which sits below config/ and
 * so cannot take them from there. config/schema/primitives.ts re-exports them.
 *
 * Zod refinements cannot see where in the document they run, so messages that must name their
 * own dotted path use the placeholders below; config/issues.ts substitutes them.
 *
 * Every custom issue is raised with `continue: false`: otherwise Zod still runs the enclosing
 * objects' refinements, handing them the *untransformed* value of the failed part, which yields
 * follow-on errors (and would break their typed assumptions).
 */
import * as z from "zod";

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

/**
 * The value schemas below are built once and shared by every field that uses them: a Zod schema
 * is immutable (each refinement or wrapper a field adds is a new schema around it), and building
 * one per field, ~190 of them, was a measurable part of every start (docs/performance.md).
 */
const INT = z.int({
  error: (iss) =>
    iss.code === "invalid_type" && iss.input !== undefined
      ? `Input should be a valid integer, got ${describeValue(iss.input)}`
      : undefined,
});
const POS_INT = INT.min(1);
const NON_NEG_INT = INT.min(0);
const POS_NUM = z.number().gt(0);
const NON_NEG_NUM = z.number().min(0);
const FRACTION = z.number().gt(0).lte(1);

/** Integer schema: a YAML integer, never a string or a float (reference `strict=True`). */
export function int() {
  return INT;
}

export const posInt = () => POS_INT;
export const nonNegInt = () => NON_NEG_INT;
/** Finite (Zod numbers reject ±inf and NaN) and > 0. */
export const posNum = () => POS_NUM;
export const nonNegNum = () => NON_NEG_NUM;
/** (0, 1] */
export const fraction = () => FRACTION;
