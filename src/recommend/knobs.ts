/**
 * Which fields of a recommendation input may be search domains (`ai-dynamo/aisimulate@a307cef:docs/sweeper/search-space.md`, the "Default
 * Range" column of the reference's knob tables), the values each accepts, and the default domain
 * a knob gets when the input omits it. Everything else (model, concrete hardware, traffic source,
 * stop condition, SLA, optimization, optimizer, Planner) stays concrete.
 *
 * A domain is `{choices: [...]}` (non-empty, unique, each a valid value) or
 * `{range: {min, max, step?, scale: linear|log}}` over a numeric knob (integer linear ranges need a
 * step; log needs min > 0 and takes no step). A bare YAML list is never a domain.
 */
import * as z from "zod";
import type { PathIssue, PathSegment } from "../config/issues.js";
import { zodMessage } from "../config/issues.js";
import { isMapping } from "../config/mapping.js";
import { describeValue, fraction, nonNegNum, posInt, posNum } from "../config/schema/primitives.js";
import type { WorkerRole } from "../util/workerRole.js";
import type { Dimension } from "./space.js";

export const ROLES: readonly WorkerRole[] = ["aggregated", "prefill", "decode"];

/** One searchable knob: its value rule and, for a numeric knob, whether values are integers. */
export interface KnobRule {
  readonly value: z.ZodType;
  /** Numeric knob (a range is allowed); integer knobs materialize integers. */
  readonly numeric: "integer" | "number" | null;
  /** Default domain when the knob is omitted, per role for role knobs; undefined = its concrete default. */
  readonly defaults?: (role: WorkerRole | null) => readonly unknown[] | undefined;
}

const integerKnob = (defaults?: KnobRule["defaults"]): KnobRule => ({
  value: posInt(),
  numeric: "integer",
  defaults,
});
const numberKnob = (value: z.ZodType<number>): KnobRule => ({ value, numeric: "number" });
const enumKnob = (values: readonly [string, ...string[]]): KnobRule => ({
  value: z.enum(values),
  numeric: null,
});

/** Engine and traffic knobs, by dotted path below the document root. */
export const GLOBAL_KNOBS: Readonly<Record<string, KnobRule>> = {
  "engine.mode": enumKnob(["aggregated", "disaggregated"]),
  "engine.backend": enumKnob(["vllm", "sglang", "trtllm"]),
  "traffic.load.concurrency": integerKnob(),
  "traffic.load.requests_per_second": numberKnob(posNum()),
  "traffic.load.sessions_per_second": numberKnob(posNum()),
  "traffic.load.speedup": numberKnob(posNum()),
  "router.policy": enumKnob(["round_robin", "kv_router"]),
  "router.prefill_load_model.type": enumKnob(["none", "aic"]),
  "router.overlap_score_credit": numberKnob(z.number().min(0).max(1)),
  "router.prefill_load_scale": numberKnob(nonNegNum()),
  "router.temperature": numberKnob(nonNegNum()),
};

/** The reference's default scheduler ranges (user guide §12.1): searched when the knob is omitted. */
const MAX_SEQUENCE_LADDER = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** Knobs of one worker role, by dotted path below `engine.workers.<role>`. */
export const ROLE_KNOBS: Readonly<Record<string, KnobRule>> = {
  "scheduler.max_batched_tokens": integerKnob((role) =>
    role === "decode" ? undefined : [8192, 16384, 32768],
  ),
  "scheduler.max_sequences": integerKnob((role) =>
    role === "prefill" ? MAX_SEQUENCE_LADDER : [256, 512, 1024],
  ),
  "kv_cache.block_size": integerKnob(),
  "kv_cache.capacity.memory_fraction": numberKnob(fraction()),
};

/** The parallelism knobs, searchable one by one with `preset: false` (or written without a preset). */
export const PARALLELISM_KNOBS = [
  "replicas",
  "tensor",
  "pipeline",
  "attention_data",
  "moe_tensor",
  "moe_expert",
] as const;
export type ParallelismKnob = (typeof PARALLELISM_KNOBS)[number];

export const PARALLELISM_RULE: KnobRule = integerKnob();

/** Whether `value` is written as a domain (a mapping whose keys include `choices` or `range`). */
export function isDomain(value: unknown): boolean {
  return isMapping(value) && (Object.hasOwn(value, "choices") || Object.hasOwn(value, "range"));
}

/** At most this many values in one expanded domain: a guard against runaway ranges. */
export const MAX_CHOICES = 10_000;

const Range = z.strictObject({
  min: z.number(),
  max: z.number(),
  step: z.number().gt(0).optional(),
  scale: z.enum(["linear", "log"]).default("linear"),
});

/**
 * Parses the domain written at `path` for `rule` into a dimension named `name`; issues are
 * pushed to `issues` (and undefined returned).
 */
export function parseDomain(
  raw: Record<string, unknown>,
  rule: KnobRule,
  name: string,
  path: readonly PathSegment[],
  issues: PathIssue[],
): Dimension | undefined {
  const at = (rel: PathSegment[], message: string, where: "key" | "value" = "value"): undefined => {
    issues.push({ path: [...path, ...rel], message, at: where });
    return undefined;
  };
  for (const key of Object.keys(raw)) {
    if (key !== "choices" && key !== "range") return at([key], "Extra inputs are not permitted", "key");
  }
  if (Object.hasOwn(raw, "choices") && Object.hasOwn(raw, "range")) {
    return at([], "a domain sets exactly one of choices or range");
  }
  if (Object.hasOwn(raw, "choices")) {
    const list = raw["choices"];
    if (!Array.isArray(list) || list.length === 0) {
      return at(["choices"], `Input should be a non-empty list, got ${describeValue(list)}`);
    }
    const values: unknown[] = [];
    const keys = new Set<string>();
    for (const [i, item] of list.entries()) {
      const parsed = rule.value.safeParse(item, { error: zodMessage });
      if (!parsed.success) return at(["choices", i], parsed.error.issues[0].message);
      const key = JSON.stringify(parsed.data);
      if (keys.has(key))
        return at(["choices", i], `${describeValue(item)} is repeated: choices must be unique`);
      keys.add(key);
      values.push(parsed.data);
    }
    return { kind: "categorical", name, values };
  }
  if (rule.numeric === null) return at(["range"], "a range needs a numeric field; use {choices: [...]}");
  const parsed = Range.safeParse(raw["range"], { error: zodMessage });
  if (!parsed.success) {
    const iss = parsed.error.issues[0];
    return at(["range", ...iss.path.map((p) => (typeof p === "number" ? p : String(p)))], iss.message);
  }
  const r = parsed.data;
  for (const key of ["min", "max"] as const) {
    const check = rule.value.safeParse(r[key], { error: zodMessage });
    if (!check.success) return at(["range", key], check.error.issues[0].message);
  }
  if (r.min > r.max) return at(["range"], `min (${r.min}) must be no greater than max (${r.max})`);
  const integer = rule.numeric === "integer";
  if (r.scale === "log") {
    if (r.step !== undefined) return at(["range", "step"], "a log range takes no step");
    if (r.min <= 0) return at(["range", "min"], "a log range needs min > 0");
    return { kind: "numeric", name, min: r.min, max: r.max, log: true, integer, step: null };
  }
  if (integer && r.step === undefined) return at(["range"], "an integer linear range needs a step");
  if (integer && r.step !== undefined && !Number.isInteger(r.step)) {
    return at(["range", "step"], `Input should be a valid integer, got ${describeValue(r.step)}`);
  }
  const step = r.step ?? null;
  if (step !== null && (r.max - r.min) / step + 1 > MAX_CHOICES) {
    return at(["range"], `expands to more than ${MAX_CHOICES} values; use a larger step`);
  }
  return { kind: "numeric", name, min: r.min, max: r.max, log: false, integer, step };
}
