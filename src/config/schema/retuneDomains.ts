/**
 * Search domains of `planner.retune.router` and `planner.retune.planner`: the AISimulate
 * recommendation syntax (`ai-dynamo/aisimulate@a307cef:docs/sweeper/search-space.md`, seed 003 "Candidates and the Sweep") reduced to
 * what a finite grid can hold, each expanded to an explicit list of values in canonical order.
 *
 * A knob is one of:
 * - a scalar: pins that value (one point);
 * - `default`: the knob's default domain;
 * - `{choices: [...]}`: those values, in the order written (non-empty, unique);
 * - `{range: {min, max, step, scale: linear}}`: min, min + step, ... up to max (fleetsim needs
 *   `step` and a linear scale: retune searches a grid, not a continuous space).
 * A bare YAML list is never a domain. A preset group takes `default` or `{preset: [names]}`.
 */
import * as z from "zod";
import type { Preset } from "../../planner/retune/presets.js";
import { CONFIG_PARSE } from "../issues.js";
import { isMapping } from "../mapping.js";
import { describeValue, fail, failAtKey, orList, PATH } from "./primitives.js";

type Ctx = Pick<z.RefinementCtx, "addIssue">;

/** Most values one domain may expand to (fleetsim choice: a guard against runaway ranges). */
export const MAX_DOMAIN_VALUES = 10_000;

export const DEFAULT_KEYWORD = "default";

/**
 * Parse `raw` with `schema` and re-raise its issues at `path` below the current value, with the
 * messages they already have. Never continuable, like every custom issue (config/schema/primitives.ts).
 */
export function parseInto<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  ctx: Ctx,
  path: readonly PropertyKey[] = [],
): { readonly ok: true; readonly value: T } | { readonly ok: false } {
  const result = schema.safeParse(raw, CONFIG_PARSE);
  if (result.success) return { ok: true, value: result.data };
  for (const iss of result.error.issues) {
    ctx.addIssue({ ...iss, path: [...path, ...iss.path], continue: false } as z.core.$ZodRawIssue);
  }
  return { ok: false };
}

/** A knob's value schema, its default domain, and whether a range over it steps in integers. */
export interface KnobSpec {
  readonly value: z.ZodType<number>;
  readonly defaults: readonly number[];
  readonly integer: boolean;
}

const RangeSpec = z.strictObject({
  min: z.number(),
  max: z.number(),
  step: z.number().gt(0).optional(),
  scale: z.enum(["linear", "log"]).default("linear"),
});

const DOMAIN_KEYS = ["choices", "range"] as const;

/** A knob domain → its values, or undefined after reporting issues. */
export function expandDomain(raw: unknown, spec: KnobSpec, ctx: Ctx): number[] | undefined {
  if (raw === DEFAULT_KEYWORD) return [...spec.defaults];
  if (Array.isArray(raw)) {
    fail(ctx, `${PATH} is a bare YAML list, which is never a domain; write {choices: [...]}`);
    return undefined;
  }
  if (!isMapping(raw)) {
    const pinned = parseInto(spec.value, raw, ctx);
    return pinned.ok ? [pinned.value] : undefined;
  }
  let ok = true;
  for (const key of Object.keys(raw)) {
    if (!(DOMAIN_KEYS as readonly string[]).includes(key)) {
      failAtKey(ctx, "Extra inputs are not permitted", [key]);
      ok = false;
    }
  }
  if (!ok) return undefined;
  const present = DOMAIN_KEYS.filter((k) => raw[k] !== undefined);
  if (present.length !== 1) {
    fail(ctx, `${PATH} must set exactly one of choices or range`);
    return undefined;
  }
  return present[0] === "choices" ? expandChoices(raw.choices, spec, ctx) : expandRange(raw.range, spec, ctx);
}

function expandChoices(raw: unknown, spec: KnobSpec, ctx: Ctx): number[] | undefined {
  const list = parseInto(z.array(z.unknown()).min(1), raw, ctx, ["choices"]);
  if (!list.ok) return undefined;
  const values: number[] = [];
  let ok = true;
  for (const [i, item] of list.value.entries()) {
    const parsed = parseInto(spec.value, item, ctx, ["choices", i]);
    if (!parsed.ok) {
      ok = false;
    } else if (values.includes(parsed.value)) {
      fail(ctx, `${PATH} repeats ${parsed.value}: choices must be unique`, ["choices", i]);
      ok = false;
    } else {
      values.push(parsed.value);
    }
  }
  return ok ? values : undefined;
}

/** 12 significant digits: `0.1 + 2 × 0.1` is listed as 0.3. */
function tidy(x: number): number {
  return Number(x.toPrecision(12));
}

function expandRange(raw: unknown, spec: KnobSpec, ctx: Ctx): number[] | undefined {
  const path = ["range"];
  const parsed = parseInto(RangeSpec, raw, ctx, path);
  if (!parsed.ok) return undefined;
  const range = parsed.value;
  const min = parseInto(spec.value, range.min, ctx, [...path, "min"]);
  const max = parseInto(spec.value, range.max, ctx, [...path, "max"]);
  if (!min.ok || !max.ok) return undefined;
  if (range.scale === "log") {
    fail(ctx, `${PATH}='log' has no finite grid; use scale: linear with a step, or {choices: [...]}`, [
      ...path,
      "scale",
    ]);
    return undefined;
  }
  if (range.step === undefined) {
    fail(ctx, `${PATH} needs step: retune searches a finite grid`, path);
    return undefined;
  }
  if (spec.integer && !Number.isInteger(range.step)) {
    fail(ctx, `Input should be a valid integer, got ${describeValue(range.step)}`, [...path, "step"]);
    return undefined;
  }
  if (min.value > max.value) {
    fail(ctx, `${PATH}.min (${min.value}) must be at most ${PATH}.max (${max.value})`, path);
    return undefined;
  }
  const count = Math.floor((max.value - min.value) / range.step + 1e-9) + 1;
  if (count > MAX_DOMAIN_VALUES) {
    fail(ctx, `${PATH} expands to ${count} values, more than ${MAX_DOMAIN_VALUES}; use a larger step`, path);
    return undefined;
  }
  const values: number[] = [];
  for (let i = 0; i < count; i++) {
    const value = tidy(min.value + i * range.step);
    const check = spec.value.safeParse(value, CONFIG_PARSE);
    if (!check.success) {
      fail(ctx, `${PATH} expands to ${value}, which is invalid: ${check.error.issues[0].message}`, path);
      return undefined;
    }
    values.push(value);
  }
  return values;
}

/** A knob of a domain mapping: optional, expanded to its values. */
export function knobDomain(spec: KnobSpec) {
  return z
    .unknown()
    .transform((raw, ctx): number[] => expandDomain(raw, spec, ctx) ?? z.NEVER)
    .optional();
}

/**
 * A preset group: `default` (every preset, in table order) or `{preset: default | [names]}` (those
 * presets, in the order written). `hint` ends the message for any other shape.
 */
export function presetGroup<P>(presets: readonly Preset<P>[], hint = "") {
  const names = presets.map((p) => p.name);
  const shape = `Input should be 'default' or {preset: [...]} with preset names ${orList(names)}${hint}`;
  const Names = z.array(z.enum(names as [string, ...string[]])).min(1);
  return z
    .unknown()
    .transform((raw, ctx): P[] => {
      if (raw === DEFAULT_KEYWORD) return presets.map((p) => p.value);
      if (Array.isArray(raw)) {
        fail(ctx, `${PATH} is a bare YAML list, which is never a domain; write {preset: [...]}`);
        return z.NEVER;
      }
      if (!isMapping(raw) || DOMAIN_KEYS.some((k) => raw[k] !== undefined)) {
        fail(ctx, `${shape}, got ${isMapping(raw) ? "a knob domain" : describeValue(raw)}`);
        return z.NEVER;
      }
      let ok = true;
      for (const key of Object.keys(raw)) {
        if (key !== "preset") {
          failAtKey(ctx, "Extra inputs are not permitted", [key]);
          ok = false;
        }
      }
      if (!ok) return z.NEVER;
      if (raw.preset === undefined) {
        fail(ctx, "Field required", ["preset"]);
        return z.NEVER;
      }
      if (raw.preset === DEFAULT_KEYWORD) return presets.map((p) => p.value);
      const chosen = parseInto(Names, raw.preset, ctx, ["preset"]);
      if (!chosen.ok) return z.NEVER;
      const seen = new Set<string>();
      for (const [i, name] of chosen.value.entries()) {
        if (seen.has(name)) {
          fail(ctx, `${PATH} repeats '${name}': presets must be unique`, ["preset", i]);
          return z.NEVER;
        }
        seen.add(name);
      }
      return chosen.value.map((name) => presets.find((p) => p.name === name)!.value);
    })
    .optional();
}
