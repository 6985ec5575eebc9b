/**
 * A token length field of synthetic traffic: a fixed integer (`output_tokens: 128`, the reference
 * form and what a benchmark's `ignore_eos` gives), or a distribution mapping, a fleetsim extension
 * (docs/traffic.md §Lengths):
 *
 *   {distribution: uniform, min, max}
 *   {distribution: normal | lognormal, mean, stddev, min?, max?}
 *   {distribution: exponential, mean, min?, max?}
 *
 * Samples are rounded and clamped to [min, max]; `min` defaults to (and may not go below) the
 * field's floor: 1 for prompt and output lengths, 0 for a shared-prefix question.
 */
import * as z from "zod";
import { type LengthSpec, MAX_LENGTH } from "../../traffic/lengthDistribution.js";
import { describeValue, fail, int, nonNegNum, PATH, posNum, presentExcept, pyList } from "./primitives.js";
import { parseInto } from "./retuneDomains.js";

const DISTRIBUTIONS = ["uniform", "normal", "lognormal", "exponential"] as const;

const FIELDS = {
  uniform: ["distribution", "min", "max"],
  normal: ["distribution", "mean", "stddev", "min", "max"],
  lognormal: ["distribution", "mean", "stddev", "min", "max"],
  exponential: ["distribution", "mean", "min", "max"],
} as const;

const REQUIRED = {
  uniform: ["min", "max"],
  normal: ["mean", "stddev"],
  lognormal: ["mean", "stddev"],
  exponential: ["mean"],
} as const;

function distribution(floor: 0 | 1) {
  const bound = () => int().min(floor).max(MAX_LENGTH);
  return z
    .strictObject({
      distribution: z.enum(DISTRIBUTIONS),
      mean: posNum().optional(),
      stddev: nonNegNum().optional(),
      min: bound().optional(),
      max: bound().optional(),
    })
    .superRefine((d, ctx) => {
      const extra = presentExcept(d, FIELDS[d.distribution]);
      if (extra.length > 0) {
        fail(ctx, `${PATH}.distribution='${d.distribution}' does not accept ${pyList(extra)}`);
        return;
      }
      const missing = REQUIRED[d.distribution].filter((k) => d[k] === undefined);
      if (missing.length > 0) {
        fail(ctx, `${PATH}.distribution='${d.distribution}' requires ${missing.join(", ")}`);
        return;
      }
      if (d.min !== undefined && d.max !== undefined && d.min > d.max) {
        fail(ctx, `${PATH} (${d.max}) must be at least min (${d.min})`, ["max"]);
      }
    })
    .transform((d): LengthSpec => {
      const min = d.min ?? floor;
      const max = d.max ?? MAX_LENGTH;
      switch (d.distribution) {
        case "uniform":
          return { distribution: "uniform", min, max };
        case "normal":
        case "lognormal":
          return { distribution: d.distribution, mean: d.mean!, stddev: d.stddev!, min, max };
        case "exponential":
          return { distribution: "exponential", mean: d.mean!, min, max };
      }
    });
}

/**
 * A length field (optional: the caller applies the reference default). Built once per floor and
 * shared by the fields that use it (zod schemas are immutable): schema construction is start-up
 * time (docs/performance.md "Start-up").
 */
export function lengthField(floor: 0 | 1): LengthField {
  let field = LENGTH_FIELDS.get(floor);
  if (field === undefined) {
    field = buildLengthField(floor);
    LENGTH_FIELDS.set(floor, field);
  }
  return field;
}

type LengthField = ReturnType<typeof buildLengthField>;

const LENGTH_FIELDS = new Map<0 | 1, LengthField>();

function buildLengthField(floor: 0 | 1) {
  const scalar = int()
    .min(floor)
    .max(MAX_LENGTH)
    .transform((value): LengthSpec => ({ distribution: "fixed", value }));
  const mapping = distribution(floor);
  const kind = floor === 1 ? "a positive" : "a non-negative";
  return z
    .unknown()
    .transform((raw, ctx): LengthSpec => {
      if (typeof raw === "number") {
        const r = parseInto(scalar, raw, ctx);
        return r.ok ? r.value : z.NEVER;
      }
      if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
        const r = parseInto(mapping, raw, ctx);
        return r.ok ? r.value : z.NEVER;
      }
      fail(
        ctx,
        `Input should be ${kind} integer or a {distribution: ...} mapping, got ${describeValue(raw)}`,
      );
      return z.NEVER;
    })
    .meta({
      // What `fleetsim schema` shows: the dispatch above is invisible to JSON Schema. A getter:
      // the mapping's JSON Schema is generated when a JSON Schema is, not at every start-up.
      description: `Token length: ${kind.slice(2)} integer, or {distribution: uniform | normal | lognormal | exponential, ...}`,
      get anyOf() {
        return [
          { type: "integer", minimum: floor, maximum: MAX_LENGTH },
          { ...distributionJsonSchema(mapping), description: undefined },
        ];
      },
    })
    .optional();
}

/** The distribution mapping's input side as JSON Schema (keys, enums, bounds). */
function distributionJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...body } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return body;
}
