/**
 * `planner` (`ai-dynamo/aisimulate@a2fa5bb:docs/replay/dynamo.md`): the Dynamo Planner's public prediction schema
 * (`PlannerPredictionConfig`, `ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`) with its key names and defaults, plus the
 * `PlannerConfig` rules (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`) that apply to those keys.
 *
 * Which rules run where:
 * - key types, ranges, the perfect-square bucket size, defaults: the rows of the knob table
 *   (knobs/planner.ts), which the section schema is built from, on every section (the public
 *   schema's own checks);
 * - `advisory: true` or `retune` with `policy: disabled` (the adapter rejects them) and everything
 *   `PlannerConfig` checks (scaling modes after normalization, intervals, SLA targets, per-role
 *   minimums against the engine mode): `checkPlannerDocument`, on the whole document once
 *   the sections it reads are valid. The PlannerConfig rules run only with `policy: enabled`, since
 *   a disabled section builds no PlannerConfig: `--set planner.policy=disabled` gives the
 *   fixed-replica baseline of an otherwise valid config without `retune` (with it, replace the
 *   whole section: `--set 'planner={policy: disabled}'`, as seed 000 "Measure the Gain" does);
 * - `retune`: its own keys and domains in its section schema (config/schema/retune.ts), its requirements
 *   and the rules that need the scaling modes and the tick in `checkRetuneDocument`, called last.
 *
 * Defaults of the scaling flags: the public schema defaults are `enable_throughput_scaling: true`
 * and `enable_load_scaling: false` (`ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`; `PlannerConfig`: `ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`). `ai-dynamo/aisimulate@a2fa5bb:docs/replay/dynamo.md`'s
 * "false (true for sla)" / "true (false for sla)" is what those defaults become after the
 * easy-mode normalization (`PlannerConfig`): a target other than `sla` forces load-only scaling, and
 * `sla` keeps the flags, i.e. throughput on and load off unless set (seed 000 says the same).
 * Both readings agree, so the schema keeps the public schema's defaults and `normalizedScaling` normalizes.
 *
 * `retune` (config/schema/retune.ts, docs/retune.md) is the one exception to that normalization: with
 * `retune` set and both scaling flags explicitly `false`, the Planner runs in retune-only mode
 * (seed 000 "Targets and Scaling Modes", seed 003 "Engine Integration"): it never scales and
 * ticks every `load_adjustment_interval_seconds`. The flags therefore stay optional in the object
 * schema, and the section's transform records whether they were written before filling defaults.
 */
import * as z from "zod";
import {
  DEFAULT_LOAD_INTERVAL_S,
  DEFAULT_THROUGHPUT_INTERVAL_S,
  knobShape,
  unsetKnobDefaults,
} from "../../knobs/planner.js";
import { fail, failAtKey, PATH, roundHalfEven, up } from "./primitives.js";
import { checkRetuneDocument, Retune, type RetuneSectionConfig, type RetuneTick } from "./retune.js";

/** Re-exported for the limits test, which pins the interval bound's message. */
export { MAX_INTERVAL_SECONDS } from "../../knobs/planner.js";

/**
 * The section's keys: every row of the knob table (knobs/planner.ts: value rule, default,
 * nullability, in row order), then `retune`.
 */
const PlannerFields = z.strictObject({
  ...knobShape(),
  /** Experimental, simulation only (config/schema/retune.ts); omitted or null = no retune. */
  retune: Retune.nullable().optional(),
});

export const Planner = PlannerFields.transform(({ retune, ...p }) => ({
  ...p,
  // The scaling flags' defaults, applied after the schema could tell an explicit `false`.
  ...unsetKnobDefaults(p),
  retune:
    retune === null || retune === undefined
      ? undefined
      : ({
          ...retune,
          retune_only: p.enable_throughput_scaling === false && p.enable_load_scaling === false,
        } satisfies RetuneSectionConfig),
}));

export type PlannerSectionConfig = z.output<typeof Planner>;

export interface PlannerScaling {
  readonly throughput: boolean;
  readonly load: boolean;
}

/**
 * The scaling modes after PlannerConfig's easy-mode normalization (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`):
 * targets other than `sla` run load-based scaling only, whatever the flags say, except in
 * retune-only mode (both off; see the module comment).
 */
export function normalizedScaling(
  p: Pick<PlannerSectionConfig, "target" | "enable_throughput_scaling" | "enable_load_scaling"> & {
    readonly retune?: { readonly retune_only: boolean } | undefined;
  },
): PlannerScaling {
  if (p.retune?.retune_only) return { throughput: false, load: false };
  if (p.target !== "sla") return { throughput: false, load: true };
  return { throughput: p.enable_throughput_scaling, load: p.enable_load_scaling };
}

/**
 * The seconds between Planner ticks: in retune-only mode the load interval, otherwise the
 * millisecond gcd of the enabled intervals. Defined for a section the schedule rules accept.
 */
export function plannerTickSeconds(p: PlannerSectionConfig): number {
  const scaling = normalizedScaling(p);
  const load = p.load_adjustment_interval_seconds ?? DEFAULT_LOAD_INTERVAL_S;
  if (!scaling.throughput && !scaling.load) return load;
  const throughput = p.throughput_adjustment_interval_seconds ?? DEFAULT_THROUGHPUT_INTERVAL_S;
  return scaleIntervalSeconds([...(scaling.load ? [load] : []), ...(scaling.throughput ? [throughput] : [])]);
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
 * `scheduling.scale_interval_seconds` as PlannerConfig derives it (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`): the
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

type Ctx = Pick<z.RefinementCtx, "addIssue" | "issues">;

/**
 * Retune-only mode ticks every load interval (seed 000 Scenario 1), so that interval must be a
 * usable number even though load scaling is off. Returns whether it is.
 */
function checkRetuneOnlySchedule(p: PlannerSectionConfig, ctx: Ctx): boolean {
  const seconds = p[LOAD_INTERVAL];
  if (seconds === null) {
    fail(
      ctx,
      `${PATH} is null, but retune-only mode ticks every ${PATH}; set a number of seconds > 0 or remove it`,
      [SECTION, LOAD_INTERVAL],
    );
    return false;
  }
  if (toMs(seconds) === 0) {
    fail(ctx, `${PATH} must be at least 0.001: the Planner schedules in whole milliseconds`, [
      SECTION,
      LOAD_INTERVAL,
    ]);
    return false;
  }
  return true;
}

/** PlannerConfig's interval rules and the public schema's null-interval rule, on an enabled section. Returns whether they pass. */
function checkSchedule(p: PlannerSectionConfig, ctx: Ctx): boolean {
  const scaling = normalizedScaling(p);
  if (!scaling.throughput && !scaling.load) {
    if (p.retune?.retune_only) return checkRetuneOnlySchedule(p, ctx);
    const retuneHint =
      p.retune === undefined
        ? ""
        : `; for retune-only mode set both ${PATH}.enable_throughput_scaling and ${PATH}.enable_load_scaling ` +
          "to false explicitly";
    fail(
      ctx,
      `${PATH}.policy='enabled' needs a scaling mode: with ${PATH}.target='sla', set ` +
        `${PATH}.enable_throughput_scaling or ${PATH}.enable_load_scaling to true${retuneHint}`,
      [SECTION],
    );
    return false;
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
  if (!complete) return false;

  const scale = scaleIntervalSeconds(enabled.map((e) => e.seconds));
  for (const { key, seconds } of enabled) {
    if (toMs(seconds) === 0) {
      fail(ctx, `${PATH} must be at least 0.001: the Planner schedules in whole milliseconds`, [
        SECTION,
        key,
      ]);
      return false;
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
      return false;
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
    return false;
  }
  return true;
}

/** The parts of the validated document the planner rules read besides the section itself. */
export interface PlannerDocument {
  readonly planner: PlannerSectionConfig;
  readonly engine: { readonly mode: "aggregated" | "disaggregated" };
  readonly evaluation: {
    readonly sla?: { readonly ttft_ms?: number; readonly itl_ms?: number; readonly e2e_ms?: number };
  };
  /** Read by the retune rules only, and only when these sections have no issues of their own. */
  readonly traffic: {
    readonly source: { readonly type: string; readonly format?: string };
    readonly load: { readonly type: string };
    readonly stop?: { readonly max_virtual_time_seconds?: number };
  };
  readonly router: { readonly policy: string };
}

const SLA_KEYS = ["ttft_ms", "itl_ms"] as const;

/**
 * The rules beyond single keys: the adapter's (`advisory` needs an enabled Planner; `compile_prediction`,
 * `ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/provider.py`) and PlannerConfig's (`_validate_config`, `ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`: mode, normalization, intervals, SLA targets),
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
    if (p.retune !== undefined) {
      // Like `advisory`: retune runs inside the Planner (seed 000 "Requirements").
      failAtKey(ctx, `${PATH} requires ${up(1)}.policy='enabled' (policy 'disabled' runs no Planner)`, [
        SECTION,
        "retune",
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
    // PlannerConfig `mode=agg` forbids both role minimums (`_validate_config`).
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
  const scheduleOk = checkSchedule(p, ctx);
  if (p.retune !== undefined) {
    const scaling = normalizedScaling(p);
    const tick: RetuneTick | null = scheduleOk
      ? {
          seconds: plannerTickSeconds(p),
          what:
            !scaling.throughput && !scaling.load
              ? `${SECTION}.${LOAD_INTERVAL} in retune-only mode`
              : "the millisecond gcd of the enabled adjustment intervals",
        }
      : null;
    checkRetuneDocument({ retune: p.retune, traffic: doc.traffic, router: doc.router }, ctx, scaling, tick);
  }
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
