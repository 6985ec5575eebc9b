/**
 * The Planner knob table: one row per key of the YAML `planner` section (`ai-dynamo/aisimulate@a2fa5bb:docs/replay/dynamo.md`, the
 * public `PlannerPredictionConfig` of `ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py` plus fleetsim's extensions), naming it in
 * every place it appears, with its value rule, default and retune role. Everything else derives
 * from the rows:
 *
 * - the section schema's knob fields (config/schema/planner.ts, via `knobShape`), hence
 *   `fleetsim schema`;
 * - the resolved `PlannerSettings` fields (`knobSettingsOf`, the type `KnobSettings`);
 * - the PlannerConfig payload in prediction.json `planner.metadata.planner_config`
 *   (`plannerConfigPayload`);
 * - the library API's `plannerConfig` options and their YAML keys (api/plannerConfig.ts, the type
 *   `KnobOptions`);
 * - `planner.retune.planner`: the grid dimensions, their default domains, the keys retune rejects,
 *   the load-predictor fields of the pre-sweep (config/schema/retune.ts, planner/retune/points.ts).
 *
 * Adding a knob is adding a row (docs/planner.md "Adding a Planner knob"). Rules between keys
 * (easy-mode normalization, the interval schedule, per-role minimums against the engine mode, the
 * SLA targets) stay code in config/schema/planner.ts; settings no key sets (`DerivedPlannerSettings`)
 * are derived by config/resolve/planner.ts.
 *
 * planner/ sits below config/ (docs/architecture.md), so this module uses only zod and
 * util/schemaValues.ts.
 */
import * as z from "zod";
import { fail, int, nonNegInt, PATH, posInt, posNum } from "../util/schemaValues.js";

export const PLANNER_TARGETS = ["throughput", "latency", "load", "sla"] as const;
export const LOAD_PREDICTORS = ["constant", "arima", "prophet", "kalman"] as const;

export type PlannerTarget = (typeof PLANNER_TARGETS)[number];
export type LoadPredictorKind = (typeof LOAD_PREDICTORS)[number];
/** `agg`: one aggregated pool (its counts live in the decode fields); `disagg`: prefill + decode. */
export type PlannerMode = "agg" | "disagg";

/**
 * PlannerConfig interval defaults (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`). An interval may be `null` only for a mode
 * that is off after normalization (`ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`); the settings then carry these defaults.
 */
export const DEFAULT_THROUGHPUT_INTERVAL_S = 180;
export const DEFAULT_LOAD_INTERVAL_S = 5;

/** Longest adjustment interval accepted: a year (beyond it the millisecond gcd overflows). */
export const MAX_INTERVAL_SECONDS = 31_536_000;

// ---------------------------------------------------------------------------------------------
// Value rules of more than one row (`ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py` constraints)

/** An adjustment interval in seconds (`null`, allowed by the row, means the default). */
function intervalSeconds() {
  return posNum().max(MAX_INTERVAL_SECONDS, {
    error: `Input should be at most ${MAX_INTERVAL_SECONDS} seconds (one year)`,
  });
}

/** A GPU budget bound: a positive integer, or -1 for "no bound" (`max_gpu_budget`, `min_gpu_budget`). */
function gpuBound() {
  return int().superRefine((value, ctx) => {
    if (value !== -1 && value < 1) fail(ctx, "Input should be a positive integer or -1");
  });
}

function isPerfectSquare(n: number): boolean {
  const root = Math.round(Math.sqrt(n));
  return root * root === n;
}

/** `fpm_sample_bucket_size`: a positive perfect square (PlannerConfig's `_validate_config`, `ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`). */
function fpmSampleBucketSize() {
  return posInt().superRefine((value, ctx) => {
    // Guarded: a value posInt() already rejected is not reported twice.
    if (value >= 1 && !isPerfectSquare(value)) {
      fail(ctx, `${PATH} must be a perfect square (1, 4, 9, 16, ...), got ${value}`);
    }
  });
}

/** `load_scaling_down_sensitivity`: an integer percentage 0–100 (the AISimulate schema's bound). */
function percentage() {
  return int().min(0).max(100);
}

// ---------------------------------------------------------------------------------------------
// The row type

/**
 * Preset groups of `planner.retune.planner` (`ai-dynamo/dynamo@9a57231:components/src/dynamo/planner/simulation/presets.py`), in the
 * canonical order of the grid: each group's dimension comes right before its knobs' own.
 * planner/retune/presets.ts holds their presets.
 */
export const RETUNE_PRESET_GROUPS = ["load_sensitivity", "fpm_sampling"] as const;
export type RetunePresetGroup = (typeof RETUNE_PRESET_GROUPS)[number];

/** What `planner.retune.planner` may do with a knob (docs/retune.md §2). */
export type KnobRetune =
  /** Not a `retune.planner` key ("Extra inputs are not permitted"). */
  | { readonly kind: "none" }
  /** Rejected by name: it changes the Planner's scaling modes or tick schedule. */
  | { readonly kind: "schedule" }
  /** A grid dimension: a domain of values (`default` = `defaults`), or set by its preset group. */
  | {
      readonly kind: "grid";
      readonly defaults: readonly number[];
      /** A `range` over it steps in integers. */
      readonly integer: boolean;
      readonly group?: RetunePresetGroup;
      /** Only load scaling reads it: searching it without load scaling is an error. */
      readonly loadScalingOnly: boolean;
    }
  /**
   * A load-predictor field: searched only by the pre-sweep's presets, whose candidates carry the
   * `all` fields and their own family's. `load_predictor` itself names the preset list.
   */
  | { readonly kind: "predictor"; readonly family: "all" | "prophet" | "kalman" };

export interface KnobRow {
  /** The key under the YAML `planner` section. */
  readonly yaml: string;
  /** Its PlannerConfig field (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`) in the `planner_config` payload; null = not written. */
  readonly plannerConfig: string | null;
  /** With `notDefault`, the payload carries the field only when it differs from the default. */
  readonly written?: "notDefault";
  /** The library API's `plannerConfig.<name>` (a PlannerConfig field); null = no such option. */
  readonly api: string | null;
  /** PlannerConfig's older names of the API option (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py` aliases). */
  readonly apiAliases?: readonly string[];
  /** The `PlannerSettings` field; null = none (the key decides whether a Planner runs at all). */
  readonly settings: string | null;
  /** The value rule: type, range, enum (without nullability or default). */
  readonly value: z.ZodType;
  readonly default: unknown;
  /** `null` accepted: kept as null in the settings (`keep`), or the default there (`default`). */
  readonly nullable?: "keep" | "default";
  /**
   * Optional in the section schema, filled with the default by its transform: a rule must tell
   * an explicit value from an omitted one (retune-only mode needs both scaling flags explicitly false).
   */
  readonly optional?: true;
  readonly retune: KnobRetune;
  /**
   * A valid value other than the default. The tests set every row to its example at once (the
   * SLA target with load scaling only, on a disaggregated engine with an SLA of ttft 800 / itl
   * 40 ms), so a new row is checked in every derived place without a second list.
   */
  readonly example: unknown;
}

const NO_RETUNE = { kind: "none" } as const;
const SCHEDULE = { kind: "schedule" } as const;

// ---------------------------------------------------------------------------------------------
// The table. Row order is the section's key order (`fleetsim schema`, the order of issues).

export const PLANNER_KNOBS = [
  {
    yaml: "policy",
    plannerConfig: null,
    api: null,
    settings: null,
    value: z.enum(["disabled", "enabled"]),
    default: "disabled",
    retune: NO_RETUNE,
    example: "enabled",
  },
  {
    yaml: "target",
    plannerConfig: "optimization_target",
    api: "optimization_target",
    settings: "optimizationTarget",
    value: z.enum(PLANNER_TARGETS),
    default: "throughput",
    retune: NO_RETUNE,
    example: "sla",
  },
  {
    // The public schema's default (`ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`); `normalizedScaling` applies PlannerConfig's easy-mode normalization.
    yaml: "enable_throughput_scaling",
    plannerConfig: "enable_throughput_scaling",
    api: "enable_throughput_scaling",
    settings: "enableThroughputScaling",
    value: z.boolean(),
    default: true,
    optional: true,
    retune: SCHEDULE,
    example: false,
  },
  {
    yaml: "enable_load_scaling",
    plannerConfig: "enable_load_scaling",
    api: "enable_load_scaling",
    settings: "enableLoadScaling",
    value: z.boolean(),
    default: false,
    optional: true,
    retune: SCHEDULE,
    example: true,
  },
  {
    yaml: "throughput_adjustment_interval_seconds",
    plannerConfig: "throughput_adjustment_interval_seconds",
    api: "throughput_adjustment_interval_seconds",
    apiAliases: ["throughput_adjustment_interval"],
    settings: "throughputAdjustmentIntervalS",
    value: intervalSeconds(),
    default: DEFAULT_THROUGHPUT_INTERVAL_S,
    nullable: "default",
    retune: SCHEDULE,
    example: 240,
  },
  {
    yaml: "load_adjustment_interval_seconds",
    plannerConfig: "load_adjustment_interval_seconds",
    api: "load_adjustment_interval_seconds",
    apiAliases: ["load_adjustment_interval"],
    settings: "loadAdjustmentIntervalS",
    value: intervalSeconds(),
    default: DEFAULT_LOAD_INTERVAL_S,
    nullable: "default",
    retune: SCHEDULE,
    example: 10,
  },
  {
    yaml: "max_throughput_scaling_replicas",
    plannerConfig: "max_throughput_scaling_replicas",
    api: "max_throughput_scaling_replicas",
    settings: "maxThroughputScalingReplicas",
    value: posInt(),
    default: 8,
    retune: NO_RETUNE,
    example: 4,
  },
  {
    yaml: "max_num_fpm_samples",
    plannerConfig: "max_num_fpm_samples",
    api: "max_num_fpm_samples",
    settings: "maxNumFpmSamples",
    value: posInt(),
    default: 64,
    retune: {
      kind: "grid",
      defaults: [32, 64, 128],
      integer: true,
      group: "fpm_sampling",
      loadScalingOnly: false,
    },
    example: 32,
  },
  {
    yaml: "fpm_sample_bucket_size",
    plannerConfig: "fpm_sample_bucket_size",
    api: "fpm_sample_bucket_size",
    settings: "fpmSampleBucketSize",
    value: fpmSampleBucketSize(),
    default: 16,
    retune: {
      kind: "grid",
      defaults: [4, 16, 64],
      integer: true,
      group: "fpm_sampling",
      loadScalingOnly: false,
    },
    example: 9,
  },
  {
    yaml: "load_scaling_down_sensitivity",
    plannerConfig: "load_scaling_down_sensitivity",
    api: "load_scaling_down_sensitivity",
    settings: "loadScalingDownSensitivity",
    value: percentage(),
    default: 80,
    retune: {
      kind: "grid",
      defaults: [70, 80, 90],
      integer: true,
      group: "load_sensitivity",
      loadScalingOnly: true,
    },
    example: 70,
  },
  {
    yaml: "load_min_observations",
    plannerConfig: "load_min_observations",
    api: "load_min_observations",
    settings: "loadMinObservations",
    value: posInt(),
    default: 5,
    retune: {
      kind: "grid",
      defaults: [3, 5, 8],
      integer: true,
      group: "load_sensitivity",
      loadScalingOnly: true,
    },
    example: 3,
  },
  {
    yaml: "load_predictor",
    plannerConfig: "load_predictor",
    api: "load_predictor",
    settings: "loadPredictor",
    value: z.enum(LOAD_PREDICTORS),
    default: "arima",
    retune: { kind: "predictor", family: "all" },
    example: "kalman",
  },
  {
    yaml: "load_predictor_log1p",
    plannerConfig: "load_predictor_log1p",
    api: "load_predictor_log1p",
    settings: "loadPredictorLog1p",
    value: z.boolean(),
    default: false,
    retune: { kind: "predictor", family: "all" },
    example: true,
  },
  {
    yaml: "prophet_window_size",
    plannerConfig: "prophet_window_size",
    api: "prophet_window_size",
    settings: "prophetWindowSize",
    value: posInt(),
    default: 50,
    retune: { kind: "predictor", family: "prophet" },
    example: 20,
  },
  {
    yaml: "kalman_q_level",
    plannerConfig: "kalman_q_level",
    api: "kalman_q_level",
    settings: "kalmanQLevel",
    value: posNum(),
    default: 1.0,
    retune: { kind: "predictor", family: "kalman" },
    example: 2,
  },
  {
    yaml: "kalman_q_trend",
    plannerConfig: "kalman_q_trend",
    api: "kalman_q_trend",
    settings: "kalmanQTrend",
    value: posNum(),
    default: 0.1,
    retune: { kind: "predictor", family: "kalman" },
    example: 0.2,
  },
  {
    yaml: "kalman_r",
    plannerConfig: "kalman_r",
    api: "kalman_r",
    settings: "kalmanR",
    value: posNum(),
    default: 10.0,
    retune: { kind: "predictor", family: "kalman" },
    example: 5,
  },
  {
    yaml: "kalman_min_points",
    plannerConfig: "kalman_min_points",
    api: "kalman_min_points",
    settings: "kalmanMinPoints",
    value: posInt(),
    default: 5,
    retune: { kind: "predictor", family: "kalman" },
    example: 3,
  },
  {
    // A file, directory of shards or pattern; resolvePlanner resolves it against the working
    // directory (seed 000) and checks it. The AISimulate payload has no such field.
    yaml: "load_predictor_warmup_trace",
    plannerConfig: null,
    api: "load_predictor_warmup_trace",
    settings: "loadPredictorWarmupTrace",
    value: z.string().min(1),
    default: null,
    nullable: "keep",
    retune: NO_RETUNE,
    example: "warm/up.jsonl",
  },
  {
    // PlannerConfig's `max_gpu_budget` default, 8 (seed 000: omitted keys take the PlannerConfig
    // defaults; ai-dynamo/dynamo `planner/config/defaults.py` and the public schema
    // `planner/simulation/config.py` both say 8). -1 (no ceiling, PlannerConfig's meaning) is
    // accepted too (docs/planner.md "Known differences").
    yaml: "max_num_gpus",
    plannerConfig: "max_gpu_budget",
    api: "max_gpu_budget",
    settings: "maxGpuBudget",
    value: gpuBound(),
    default: 8,
    retune: NO_RETUNE,
    example: 16,
  },
  {
    yaml: "min_num_gpus",
    plannerConfig: "min_gpu_budget",
    api: "min_gpu_budget",
    settings: "minGpuBudget",
    value: gpuBound(),
    default: -1,
    retune: NO_RETUNE,
    example: 2,
  },
  {
    yaml: "min_workers",
    plannerConfig: "min_endpoint",
    api: "min_endpoint",
    settings: "minEndpoint",
    value: nonNegInt(),
    default: 1,
    retune: NO_RETUNE,
    example: 2,
  },
  {
    yaml: "prefill_min_workers",
    plannerConfig: "prefill_min_endpoint",
    api: "prefill_min_endpoint",
    settings: "prefillMinEndpoint",
    value: posInt(),
    default: null,
    nullable: "keep",
    retune: NO_RETUNE,
    example: 2,
  },
  {
    yaml: "decode_min_workers",
    plannerConfig: "decode_min_endpoint",
    api: "decode_min_endpoint",
    settings: "decodeMinEndpoint",
    value: posInt(),
    default: null,
    nullable: "keep",
    retune: NO_RETUNE,
    example: 3,
  },
  {
    // PlannerConfig's fallback speculative-decoding depth (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`): the SLA load loop
    // clamps the observed accept length to [1, nextn + 1] when a worker advertises no depth
    // (`ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py`). A fleetsim extension of the public schema, so written only when set. Workers with
    // `engine.speculation` advertise their own depth, which wins (docs/speculation.md); without
    // it the observed accept length is 1, which no clamp changes.
    yaml: "speculative_nextn",
    plannerConfig: "speculative_nextn",
    written: "notDefault",
    api: "speculative_nextn",
    settings: "speculativeNextn",
    value: nonNegInt(),
    default: 0,
    retune: NO_RETUNE,
    example: 1,
  },
  {
    yaml: "advisory",
    plannerConfig: "advisory",
    api: "advisory",
    settings: "advisory",
    value: z.boolean(),
    default: false,
    retune: NO_RETUNE,
    example: true,
  },
] as const satisfies readonly KnobRow[];

export type Knob = (typeof PLANNER_KNOBS)[number];

/** A row's value as the resolved settings hold it. */
type SettingsValue<R extends Knob> = R extends { readonly nullable: "keep" }
  ? z.output<R["value"]> | null
  : z.output<R["value"]>;

/** The `PlannerSettings` fields the rows set; a row's `settings` name is its field. */
export type KnobSettings = { readonly [R in Knob as R["settings"] & string]: SettingsValue<R> };

/** The validated `planner` section's knob keys (after the section transform fills `optional` rows). */
export type KnobSection = {
  readonly [R in Knob as R["yaml"]]: R extends { readonly nullable: "keep" | "default" }
    ? z.output<R["value"]> | null
    : z.output<R["value"]>;
};

/** One knob's field schema in the section: nullable, defaulted or left optional as its row says. */
type FieldSchema<R extends Knob> = R extends { readonly optional: true }
  ? z.ZodOptional<R["value"]>
  : R extends { readonly nullable: "keep" | "default" }
    ? z.ZodDefault<z.ZodNullable<R["value"]>>
    : z.ZodDefault<R["value"]>;

export type KnobShape = { [R in Knob as R["yaml"]]: FieldSchema<R> };

/** `fieldSchema` of every row, keyed by YAML key in row order: the section schema's knob fields. */
export function knobShape(): KnobShape {
  return Object.fromEntries(PLANNER_KNOBS.map((row) => [row.yaml, fieldSchema(row)])) as KnobShape;
}

export function fieldSchema(row: KnobRow): z.ZodType {
  if (row.optional) return row.value.optional();
  const value = row.nullable === undefined ? row.value : row.value.nullable();
  // Typed by `KnobShape`; the test of the table checks each default against its own schema.
  return value.default(row.default as never);
}

type OptionalKnob = Extract<Knob, { readonly optional: true }>;

/** The defaults of the `optional` rows a section leaves unset (the section transform applies them). */
export function unsetKnobDefaults(section: Readonly<Record<string, unknown>>): {
  readonly [R in OptionalKnob as R["yaml"]]: z.output<R["value"]>;
} {
  const out: Record<string, unknown> = {};
  for (const row of PLANNER_KNOBS as readonly KnobRow[]) {
    if (row.optional) out[row.yaml] = section[row.yaml] ?? row.default;
  }
  return out as { [R in OptionalKnob as R["yaml"]]: z.output<R["value"]> };
}

/**
 * Every row's settings field from the validated section: the value as written, a `nullable:
 * default` null replaced by the default. Rules between keys (the scaling flags' normalization,
 * the warm-up trace's path) are the resolver's, which overrides those fields.
 */
export function knobSettingsOf(section: KnobSection): KnobSettings {
  const values = section as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const row of PLANNER_KNOBS as readonly KnobRow[]) {
    if (row.settings === null) continue;
    const v = values[row.yaml];
    out[row.settings] = v === null && row.nullable === "default" ? row.default : v;
  }
  return out as KnobSettings;
}

// ---------------------------------------------------------------------------------------------
// Settings no key sets

/**
 * `PlannerSettings` fields that no knob sets: config/resolve/planner.ts derives them (the mode
 * from `engine.mode`, the targets from `evaluation.sla`, the `load` thresholds from the target,
 * the tick from the intervals).
 */
export interface DerivedPlannerSettings {
  readonly mode: PlannerMode;
  /** gcd of the enabled intervals (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`). */
  readonly scaleIntervalS: number;
  readonly ttftMs: number;
  readonly itlMs: number;
  readonly prefillScaleUpQueueTokens: number | null;
  readonly prefillScaleDownQueueTokens: number | null;
  /** Percent 0–100. */
  readonly decodeScaleUpKvRate: number | null;
  readonly decodeScaleDownKvRate: number | null;
}

/**
 * The PlannerConfig names of the derived settings in the payload, with the value each carries
 * (`scaleIntervalS` goes under `scheduling`).
 */
export const DERIVED_PLANNER_CONFIG = {
  mode: { name: "mode", value: z.enum(["agg", "disagg"]) },
  ttftMs: { name: "ttft_ms", value: z.number() },
  itlMs: { name: "itl_ms", value: z.number() },
  prefillScaleUpQueueTokens: { name: "prefill_scale_up_queue_tokens", value: z.number().nullable() },
  prefillScaleDownQueueTokens: { name: "prefill_scale_down_queue_tokens", value: z.number().nullable() },
  decodeScaleUpKvRate: { name: "decode_scale_up_kv_rate", value: z.number().nullable() },
  decodeScaleDownKvRate: { name: "decode_scale_down_kv_rate", value: z.number().nullable() },
} as const satisfies Record<
  Exclude<keyof DerivedPlannerSettings, "scaleIntervalS">,
  { readonly name: string; readonly value: z.ZodType }
>;

/**
 * PlannerConfig fields with neither a key nor a derivation: the PlannerConfig default every
 * resolved Planner gets, written nowhere. None today (`speculative_nextn` was one until its row).
 */
export const FIXED_PLANNER_SETTINGS: Readonly<Record<never, never>> = {};
export type FixedPlannerSettings = typeof FIXED_PLANNER_SETTINGS;

/** The Planner settings the payload reads. */
export type PayloadSettings = KnobSettings & DerivedPlannerSettings;

type PayloadKnob = Exclude<Knob, { readonly plannerConfig: null }>;
type Derived = (typeof DERIVED_PLANNER_CONFIG)[keyof typeof DERIVED_PLANNER_CONFIG];

/** A row's field schema in the payload: as the settings hold it, optional when written only if set. */
type PayloadFieldSchema<R extends Knob> = R extends { readonly written: "notDefault" }
  ? z.ZodOptional<R["value"]>
  : R extends { readonly nullable: "keep" }
    ? z.ZodNullable<R["value"]>
    : R["value"];

export type PlannerConfigPayloadShape = {
  [R in PayloadKnob as R["plannerConfig"]]: PayloadFieldSchema<R>;
} & {
  [D in Derived as D["name"]]: D["value"];
} & { scheduling: z.ZodObject<{ scale_interval_seconds: z.ZodNumber }, z.core.$strict> };

/**
 * The shape of the PlannerConfig payload in prediction.json (`planner.metadata.planner_config`),
 * derived from the rows like everything else: output/planner.ts builds the contract's schema
 * from it, so a new row is in the contract without a second list.
 */
export function plannerConfigPayloadShape(): PlannerConfigPayloadShape {
  const shape: Record<string, z.ZodType> = {};
  for (const d of Object.values(DERIVED_PLANNER_CONFIG)) shape[d.name] = d.value;
  for (const row of PLANNER_KNOBS as readonly KnobRow[]) {
    if (row.plannerConfig === null) continue;
    const value = row.nullable === "keep" ? row.value.nullable() : row.value;
    shape[row.plannerConfig] = row.written === "notDefault" ? value.optional() : value;
  }
  shape["scheduling"] = z.strictObject({ scale_interval_seconds: z.number() });
  return shape as unknown as PlannerConfigPayloadShape;
}

export type PlannerConfigPayload = z.infer<z.ZodObject<PlannerConfigPayloadShape, z.core.$strict>>;

/**
 * The PlannerConfig (field names of `ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`) a run used: every row with a PlannerConfig
 * name, the derived settings and `scheduling`. Its digest is in the report's metadata; key order
 * is free (prediction.json sorts keys, the digest hashes canonical JSON).
 */
export function plannerConfigPayload(s: PayloadSettings): PlannerConfigPayload {
  const values = s as unknown as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const [field, d] of Object.entries(DERIVED_PLANNER_CONFIG)) out[d.name] = values[field];
  for (const row of PLANNER_KNOBS as readonly KnobRow[]) {
    if (row.plannerConfig === null || row.settings === null) continue;
    const v = values[row.settings];
    if (row.written === "notDefault" && v === row.default) continue;
    out[row.plannerConfig] = v;
  }
  out["scheduling"] = { scale_interval_seconds: s.scaleIntervalS };
  return out as PlannerConfigPayload;
}

// ---------------------------------------------------------------------------------------------
// The library API's options

type OptionKnob = Exclude<Knob, { readonly api: null }>;

/** The `plannerConfig` options the rows define, as a caller writes them. */
export type KnobOptions = {
  readonly [R in OptionKnob as R["api"]]?: R extends { readonly nullable: "keep" | "default" }
    ? z.input<R["value"]> | null
    : z.input<R["value"]>;
};

// ---------------------------------------------------------------------------------------------
// Retune

type GridKnob = Extract<Knob, { readonly retune: { readonly kind: "grid" } }>;
type PredictorKnob = Extract<Knob, { readonly retune: { readonly kind: "predictor" } }>;

/** The Planner fields a retune grid point may set. */
export type RetunePlannerField = GridKnob["settings"];

type PredictorField<F extends string> = Extract<
  PredictorKnob,
  { readonly retune: { readonly family: F } }
>["settings"];

/** A load predictor's fields: family and log1p, plus that family's own knobs (`ai-dynamo/dynamo@9a57231:components/src/dynamo/planner/simulation/presets.py` `predictor_fields`). */
export type LoadPredictorFields = Readonly<
  Pick<KnobSettings, PredictorField<"all">> &
    Partial<Pick<KnobSettings, PredictorField<"prophet" | "kalman">>>
>;

/** A row that is a retune grid dimension, narrowed. */
export type GridKnobRow = KnobRow & { readonly retune: Extract<KnobRetune, { kind: "grid" }> };

/**
 * The grid knobs in the canonical order of their dimensions: each preset group's knobs in group
 * order (row order within a group), then the knobs of no group (row order).
 */
export const RETUNE_GRID_KNOBS: readonly GridKnobRow[] = (() => {
  const grid = (PLANNER_KNOBS as readonly KnobRow[]).filter(
    (r): r is GridKnobRow => r.retune.kind === "grid",
  );
  return [
    ...RETUNE_PRESET_GROUPS.flatMap((g) => grid.filter((r) => r.retune.group === g)),
    ...grid.filter((r) => r.retune.group === undefined),
  ];
})();

/** The load-predictor rows, in row order. */
export const RETUNE_PREDICTOR_KNOBS: readonly (KnobRow & {
  readonly retune: Extract<KnobRetune, { kind: "predictor" }>;
})[] = (PLANNER_KNOBS as readonly KnobRow[]).filter(
  (r): r is KnobRow & { readonly retune: Extract<KnobRetune, { kind: "predictor" }> } =>
    r.retune.kind === "predictor",
);
