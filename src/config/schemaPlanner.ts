/**
 * `planner` (aisimulate.md §2.4): the Dynamo Planner's public prediction schema
 * (`PlannerPredictionConfig`, planner.md §9.1) with its key names and defaults, plus the
 * `PlannerConfig` rules (planner.md §1.2–§1.3) that apply to those keys.
 *
 * Which rules run where:
 * - key types, ranges, the perfect-square bucket size: the section schema, on every section
 *   (the public schema's own checks);
 * - `advisory: true` with `policy: disabled` (the adapter rejects it) and everything
 *   `PlannerConfig` checks (scaling modes after normalization, intervals, SLA targets, per-role
 *   minimums against the engine mode): `checkPlannerDocument`, on the whole document once
 *   the sections it reads are valid. The PlannerConfig rules run only with `policy: enabled`, since
 *   a disabled section builds no PlannerConfig: `--set planner.policy=disabled` always gives the
 *   fixed-replica baseline of an otherwise valid config.
 *
 * Defaults of the scaling flags: the public schema defaults are `enable_throughput_scaling: true`
 * and `enable_load_scaling: false` (planner.md §9.1, PlannerConfig §1.1). aisimulate.md §2.4's
 * "false (true for sla)" / "true (false for sla)" is what those defaults become after the
 * easy-mode normalization (§1.3 step 8): a target other than `sla` forces load-only scaling, and
 * `sla` keeps the flags, i.e. throughput on and load off unless set (seed 000 says the same).
 * Both readings agree, so the schema keeps the §9.1 defaults and `normalizedScaling` normalizes.
 */
import { z } from "zod";
import {
  fail,
  failAtKey,
  int,
  nonNegInt,
  PATH,
  posInt,
  posNum,
  roundHalfEven,
  unsupportedKey,
  up,
} from "./schemaPrimitives.js";

export const PLANNER_TARGETS = ["throughput", "latency", "load", "sla"] as const;
export const LOAD_PREDICTORS = ["constant", "arima", "prophet", "kalman"] as const;

/**
 * PlannerConfig interval defaults (planner.md §1.1). An interval may be `null` only for a mode
 * that is off after normalization (§9.1); the mapping then carries these defaults.
 */
export const DEFAULT_THROUGHPUT_INTERVAL_S = 180;
export const DEFAULT_LOAD_INTERVAL_S = 5;

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

/** An adjustment interval in seconds; `null` is allowed for a mode that ends up disabled. */
function interval(defaultSeconds: number) {
  return posNum().nullable().default(defaultSeconds);
}

export const Planner = z.strictObject({
  policy: z.enum(["disabled", "enabled"]).default("disabled"),
  target: z.enum(PLANNER_TARGETS).default("throughput"),
  enable_throughput_scaling: z.boolean().default(true),
  enable_load_scaling: z.boolean().default(false),
  throughput_adjustment_interval_seconds: interval(DEFAULT_THROUGHPUT_INTERVAL_S),
  load_adjustment_interval_seconds: interval(DEFAULT_LOAD_INTERVAL_S),
  max_throughput_scaling_replicas: posInt().default(8),
  max_num_fpm_samples: posInt().default(64),
  fpm_sample_bucket_size: posInt()
    .superRefine((value, ctx) => {
      // Guarded: a value posInt() already rejected is not reported twice.
      if (value >= 1 && !isPerfectSquare(value)) {
        fail(ctx, `${PATH} must be a perfect square (1, 4, 9, 16, ...), got ${value}`);
      }
    })
    .default(16),
  load_scaling_down_sensitivity: int().min(0).max(100).default(80),
  load_min_observations: posInt().default(5),
  load_predictor: z.enum(LOAD_PREDICTORS).default("arima"),
  load_predictor_log1p: z.boolean().default(false),
  prophet_window_size: posInt().default(50),
  kalman_q_level: posNum().default(1.0),
  kalman_q_trend: posNum().default(0.1),
  kalman_r: posNum().default(10.0),
  kalman_min_points: posInt().default(5),
  /** Resolved against the config file's directory (like trace paths); must name a file. */
  load_predictor_warmup_trace: z.string().min(1).nullable().default(null),
  /** Predict's default is unlimited (aisimulate.md §2.4); recommend's fixed value is 8. */
  max_num_gpus: gpuBound().default(-1),
  min_num_gpus: gpuBound().default(-1),
  min_workers: nonNegInt().default(1),
  prefill_min_workers: posInt().nullable().default(null),
  decode_min_workers: posInt().nullable().default(null),
  advisory: z.boolean().default(false),
  retune: unsupportedKey("Planner retune"),
});

export type PlannerSectionConfig = z.output<typeof Planner>;

export interface PlannerScaling {
  readonly throughput: boolean;
  readonly load: boolean;
}

/**
 * The scaling modes after PlannerConfig's easy-mode normalization (planner.md §1.3 step 8):
 * targets other than `sla` run load-based scaling only, whatever the flags say.
 */
export function normalizedScaling(
  p: Pick<PlannerSectionConfig, "target" | "enable_throughput_scaling" | "enable_load_scaling">,
): PlannerScaling {
  if (p.target !== "sla") return { throughput: false, load: true };
  return { throughput: p.enable_throughput_scaling, load: p.enable_load_scaling };
}

/** Whole milliseconds of an interval, as the gcd rule rounds them (Python `round(v * 1000)`). */
function toMs(seconds: number): number {
  return roundHalfEven(seconds * 1000);
}

function gcd(a: number, b: number): number {
  let [x, y] = [a, b];
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}

/**
 * `scheduling.scale_interval_seconds` as PlannerConfig derives it (planner.md §1.2): the
 * millisecond gcd of the enabled adjustment intervals. 0 when every interval is under half a
 * millisecond (the schedule rules report that).
 */
export function scaleIntervalSeconds(intervals: readonly number[]): number {
  return intervals.map(toMs).reduce(gcd, 0) / 1000;
}

/** Python `math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)`. */
function isClose(a: number, b: number): boolean {
  return Math.abs(a - b) <= Math.max(1e-9 * Math.max(Math.abs(a), Math.abs(b)), 1e-9);
}

const SECTION = "planner";
const THROUGHPUT_INTERVAL = "throughput_adjustment_interval_seconds";
const LOAD_INTERVAL = "load_adjustment_interval_seconds";

type Ctx = Pick<z.RefinementCtx, "addIssue">;

/** §1.3 steps 9, 12, 13 and the null-interval rule of §9.1, on an enabled section. */
function checkSchedule(p: PlannerSectionConfig, ctx: Ctx): void {
  const scaling = normalizedScaling(p);
  if (!scaling.throughput && !scaling.load) {
    fail(
      ctx,
      `${PATH}.policy='enabled' needs a scaling mode: with ${PATH}.target='sla', set ` +
        `${PATH}.enable_throughput_scaling or ${PATH}.enable_load_scaling to true`,
      [SECTION],
    );
    return;
  }
  const enabled: { key: string; seconds: number }[] = [];
  let complete = true;
  for (const [key, on, mode] of [
    [LOAD_INTERVAL, scaling.load, "load"],
    [THROUGHPUT_INTERVAL, scaling.throughput, "throughput"],
  ] as const) {
    if (!on) continue;
    const seconds = p[key];
    if (seconds === null) {
      fail(ctx, `${PATH} is null, but ${mode} scaling is enabled; set a number of seconds > 0 or remove it`, [
        SECTION,
        key,
      ]);
      complete = false;
    } else {
      enabled.push({ key, seconds });
    }
  }
  if (!complete) return;

  const scale = scaleIntervalSeconds(enabled.map((e) => e.seconds));
  for (const { key, seconds } of enabled) {
    if (toMs(seconds) === 0) {
      fail(ctx, `${PATH} must be at least 0.001: the Planner schedules in whole milliseconds`, [
        SECTION,
        key,
      ]);
      return;
    }
  }
  for (const { key, seconds } of enabled) {
    const ratio = seconds / scale;
    if (!isClose(ratio, Math.round(ratio))) {
      fail(
        ctx,
        `${PATH} (${seconds}) must be a multiple of the Planner's scale interval ${scale} s ` +
          "(the millisecond gcd of the enabled adjustment intervals)",
        [SECTION, key],
      );
      return;
    }
  }
  const load = p[LOAD_INTERVAL];
  const throughput = p[THROUGHPUT_INTERVAL];
  if (scaling.load && scaling.throughput && load !== null && throughput !== null && load >= throughput) {
    fail(
      ctx,
      `${PATH} (${load}) must be less than ${up(1)}.${THROUGHPUT_INTERVAL} (${throughput}) ` +
        "when both load and throughput scaling are enabled",
      [SECTION, LOAD_INTERVAL],
    );
  }
}

/** The parts of the validated document the planner rules read besides the section itself. */
export interface PlannerDocument {
  readonly planner: PlannerSectionConfig;
  readonly engine: { readonly mode: "aggregated" | "disaggregated" };
  readonly evaluation: {
    readonly sla?: { readonly ttft_ms?: number; readonly itl_ms?: number; readonly e2e_ms?: number };
  };
}

const SLA_KEYS = ["ttft_ms", "itl_ms"] as const;

/**
 * The rules beyond single keys: the adapter's (`advisory` needs an enabled Planner; §9.1
 * `compile_prediction`) and PlannerConfig's (§1.3 steps 2, 8, 9, 12, 13 and the SLA targets),
 * which relate keys of the section to each other and to `engine` and `evaluation`. They refine
 * the whole document, at paths from its root, so that they are all reported together.
 */
export function checkPlannerDocument(doc: PlannerDocument, ctx: Ctx): void {
  const p = doc.planner;
  if (p.policy === "disabled") {
    if (p.advisory) {
      fail(ctx, `${PATH}=true requires ${up(1)}.policy='enabled' (policy 'disabled' runs no Planner)`, [
        SECTION,
        "advisory",
      ]);
    }
    return;
  }
  if (p.target === "sla") {
    const sla = doc.evaluation.sla ?? {};
    const missing = SLA_KEYS.filter((k) => sla[k] === undefined).map((k) => `evaluation.sla.${k}`);
    if (missing.length > 0) {
      const why =
        sla.e2e_ms !== undefined
          ? "an SLA with only evaluation.sla.e2e_ms cannot set them"
          : `missing: ${missing.join(", ")}`;
      fail(
        ctx,
        `${PATH}='sla' requires evaluation.sla.ttft_ms and evaluation.sla.itl_ms as the Planner's targets; ${why}`,
        [SECTION, "target"],
      );
    }
  }
  if (doc.engine.mode === "aggregated") {
    // PlannerConfig `mode=agg` forbids both role minimums (§1.3 step 2).
    for (const key of ["prefill_min_workers", "decode_min_workers"] as const) {
      if (p[key] !== null) {
        failAtKey(
          ctx,
          `${PATH} requires engine.mode='disaggregated'; with engine.mode='aggregated' use ${up(1)}.min_workers`,
          [SECTION, key],
        );
      }
    }
  }
  checkSchedule(p, ctx);
}

/**
 * Sections whose issues make `checkPlannerDocument` skip: it would judge unvalidated values.
 * (Zod also skips it, regardless, after any rule error elsewhere: those issues abort.)
 */
const PLANNER_DOCUMENT_SECTIONS: ReadonlySet<unknown> = new Set(["planner", "engine", "evaluation"]);

export const plannerDocumentWhen = {
  when: (payload: z.core.ParsePayload) =>
    !payload.issues.some((iss) => iss.path !== undefined && PLANNER_DOCUMENT_SECTIONS.has(iss.path[0])),
};
