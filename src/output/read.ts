/**
 * Reading a prediction.json that may not be fleetsim's current output (docs/output.md "Reading"):
 * `predictionFileSchema` is what identifies a prediction (an object with a `summary` object);
 * `predictionReadSchema` is the strict contract made tolerant (src/output/tolerant.ts), so the
 * HTML report draws what an older or foreign file has and leaves out what it lacks. The summary
 * is read as every finite number it holds, whatever its keys (foreign files have their own).
 */
import * as z from "zod";
import { type Prediction, predictionSchema } from "./prediction.js";
import { summarySchema } from "./summary.js";
import { type Tolerant, tolerantShape } from "./tolerant.js";

/** The least a document must be to be read as a prediction. */
export const predictionFileSchema = z.looseObject({ summary: z.looseObject({}) });

/** Every finite number of a summary object, by key. */
const readSummarySchema = z.record(z.string(), z.unknown()).transform((r) => {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(r)) if (typeof v === "number" && Number.isFinite(v)) out[k] = v;
  return out;
});

/** A prediction as the report reads it: every part optional, parts that do not read left out. */
export type ReadPrediction = Tolerant<Omit<Prediction, "summary">> & { summary?: Record<string, number> };

let readSchema: z.ZodType<ReadPrediction> | null = null;

/**
 * The tolerant read schema, built on first use: deriving it walks the whole output contract
 * (hundreds of zod schemas), which `predict` — it only writes — should not pay at start-up
 * (docs/performance.md "Start-up").
 */
export function predictionReadSchema(): z.ZodType<ReadPrediction> {
  readSchema ??= z
    .object({
      ...tolerantShape(predictionSchema.shape),
      summary: readSummarySchema.optional().catch(undefined),
    })
    .catch({}) as unknown as z.ZodType<ReadPrediction>;
  return readSchema;
}

/**
 * The contract with every field optional and unknown keys allowed, but each field that is there
 * of its contract's type: what a summary must not break to be read at all. A summary time of
 * `"12"` or `null` is a broken file, not a missing value.
 */
function presentFields(s: z.ZodType): z.ZodType {
  if (s instanceof z.ZodOptional) return presentFields(s.unwrap() as z.ZodType).optional();
  if (s instanceof z.ZodNullable) return presentFields(s.unwrap() as z.ZodType).nullable();
  if (s instanceof z.ZodReadonly) return presentFields(s.unwrap() as z.ZodType);
  if (s instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    for (const [k, field] of Object.entries(s.shape as Record<string, z.ZodType>)) {
      shape[k] = presentFields(field).optional();
    }
    return z.looseObject(shape);
  }
  if (s instanceof z.ZodRecord) return z.record(z.string(), presentFields(s.valueType as z.ZodType));
  if (s instanceof z.ZodArray) return z.array(presentFields(s.element as z.ZodType));
  return s;
}

/** A section's kind alone (object, array, or null where the contract allows it), not its fields. */
function sectionKind(s: z.ZodType): z.ZodType {
  if (s instanceof z.ZodOptional) return sectionKind(s.unwrap() as z.ZodType).optional();
  if (s instanceof z.ZodNullable) return sectionKind(s.unwrap() as z.ZodType).nullable();
  if (s instanceof z.ZodArray) return z.array(z.unknown());
  if (s instanceof z.ZodObject || s instanceof z.ZodRecord) return z.record(z.string(), z.unknown());
  return s;
}

let presentSchema: z.ZodType | null = null;

/**
 * Summary keys of the contract that hold counts, times, rates and costs, never negative. The
 * backlog's growth rate is a slope (negative while a backlog drains; docs/metrics.md).
 */
const SIGNED_SUMMARY_KEYS = new Set(["saturation_backlog_growth"]);
const NUMERIC_SUMMARY_KEYS = Object.keys(summarySchema.shape).filter((key) => !SIGNED_SUMMARY_KEYS.has(key));

/**
 * The first place where `doc` breaks the output contract, as `key: what is wrong`, or null. The
 * summary is checked key by key: a contract key of the wrong type, or a negative count, duration,
 * rate or cost, breaks it. Every other section is checked for its kind only (an object, an array,
 * null where allowed): below that, a foreign file's fields that do not read are left out of what
 * is drawn (the reference writes some with its own types, e.g. null queue times per request).
 * Missing keys and sections never break it: older fleetsim and the reference leave some out.
 */
export function contractBreach(doc: unknown): string | null {
  presentSchema ??= z.looseObject(
    Object.fromEntries(
      Object.entries(predictionSchema.shape).map(([key, field]) => [
        key,
        (key === "summary" ? presentFields(field) : sectionKind(field)).optional(),
      ]),
    ),
  );
  const read = presentSchema.safeParse(doc);
  if (!read.success) {
    const issue = read.error.issues[0];
    const key = issue.path.map(String).join(".");
    return `${key === "" ? "the document" : key}: ${issue.message.replace(/^Invalid input: /, "")}`;
  }
  const summary = (doc as { summary?: Record<string, unknown> }).summary ?? {};
  for (const key of NUMERIC_SUMMARY_KEYS) {
    const value = summary[key];
    if (typeof value === "number" && value < 0) {
      return `summary.${key}: ${value} is negative (a count, a duration, a rate or a cost)`;
    }
  }
  return null;
}

/** The contract's sections (top-level keys every fleetsim run writes) that `doc` lacks. */
export function missingSections(doc: Record<string, unknown>): string[] {
  return Object.entries(predictionSchema.shape)
    .filter(([key, field]) => !(field instanceof z.ZodOptional) && !(key in doc))
    .map(([key]) => key);
}

/** Top-level keys of aisimulate's flat engine-stack prediction.json that are not summary keys. */
const FLAT_LAYOUT_SECTIONS: ReadonlySet<string> = new Set([
  "per_request",
  "details",
  "memory_diagnostics",
  "power_diagnostics",
]);

/**
 * aisimulate's engine stack writes its summary keys at the top level of prediction.json, beside
 * `per_request`, `details` and its diagnostics (its `ReplayReport` serialized flat:
 * `ai-dynamo/aisimulate@73f0fb9:python/aisimulate/src/aisimulate/runner.py`). Such a document,
 * nested as fleetsim reads predictions (`{summary, per_request}`), or null when `doc` is not one:
 * an object without a `summary` key whose `num_requests` is a number.
 */
export function nestFlatLayout(doc: unknown): Record<string, unknown> | null {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return null;
  const flat = doc as Record<string, unknown>;
  if ("summary" in flat || typeof flat["num_requests"] !== "number") return null;
  const summary: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) if (!FLAT_LAYOUT_SECTIONS.has(key)) summary[key] = value;
  return "per_request" in flat ? { summary, per_request: flat["per_request"] } : { summary };
}
