/**
 * `planner.retune` (experimental, simulation only; seed 000 "Simulate Retune", seed 003
 * "Retune"): the section schema with its defaults and the rules between its own keys, and the
 * rules that relate it to the rest of the document (`checkRetuneDocument`, called by
 * `checkPlannerDocument`). docs/retune.md states the semantics and marks the fleetsim choices.
 *
 * Defaults the seeds state: `grace_seconds` 60, `timeout_seconds` = `interval_seconds`,
 * `decision_latency_seconds` 0, `min_improvement_percentage` 3, `objective` GoodputPerGPU.
 * Fleetsim choices (the seeds give none): `interval_seconds` is required, `max_parallel` 4,
 * `max_candidates` 128, `decision_latency_scale` 1.
 */
import * as z from "zod";
import {
  type GridKnobRow,
  PLANNER_KNOBS,
  RETUNE_GRID_KNOBS,
  RETUNE_PREDICTOR_KNOBS,
  RETUNE_PRESET_GROUPS,
  type RetunePresetGroup,
} from "../../knobs/planner.js";
import { RETUNE_OBJECTIVES } from "../../output/run.js";
import { LOAD_PREDICTOR_PRESETS, RETUNE_PRESETS } from "../../planner/retune/presets.js";
import type {
  LoadPredictorCandidate,
  RetuneObjective,
  RetunePlannerDimension,
  RetunePlannerPoint,
  RetuneRouterDomain,
} from "../../planner/types.js";
import { isMapping } from "../mapping.js";
import {
  describeValue,
  fail,
  failAtKey,
  nonNegNum,
  PATH,
  posInt,
  posNum,
  pyList,
  rejectKey,
  up,
} from "./primitives.js";
import { DEFAULT_KEYWORD, type KnobSpec, knobDomain, parseInto, presetGroup } from "./retuneDomains.js";
import { ROUTER_DEFAULT_DOMAINS } from "./retunePresets.js";

/** Objectives ranked lowest first (seed 003 "Scoring and Outcomes"). */
export const MINIMIZED_OBJECTIVES: ReadonlySet<RetuneObjective> = new Set(["TTFT", "E2ELatency"]);
/** The only objectives that use the scoring SLA. */
export const GOODPUT_OBJECTIVES: ReadonlySet<RetuneObjective> = new Set(["Goodput", "GoodputPerGPU"]);

export const RETUNE_DEFAULTS = {
  grace_seconds: 60,
  max_parallel: 4,
  decision_latency_seconds: 0,
  decision_latency_scale: 1,
  min_improvement_percentage: 3,
  max_candidates: 128,
  objective: "GoodputPerGPU",
} as const;

const MEASURED = "measured";

/** `decision_latency_seconds`: a number ≥ 0 or `measured`, one message for every failure. */
function nonNegativeOrMeasured() {
  const message = `Input should be a number greater than or equal to 0 or '${MEASURED}'`;
  return z.union([z.number().min(0, { error: message }), z.literal(MEASURED)], { error: () => message });
}

// ---------------------------------------------------------------------------------------------
// retune.router

type RouterKnob = keyof typeof ROUTER_DEFAULT_DOMAINS;

/** The KV-router knobs with the value rules of `router` (config/schema/router.ts). */
const ROUTER_KNOBS: Readonly<Record<RouterKnob, KnobSpec>> = {
  overlap_score_credit: {
    value: z.number().min(0).max(1),
    defaults: ROUTER_DEFAULT_DOMAINS.overlap_score_credit,
    integer: false,
  },
  prefill_load_scale: {
    value: nonNegNum(),
    defaults: ROUTER_DEFAULT_DOMAINS.prefill_load_scale,
    integer: false,
  },
  temperature: { value: nonNegNum(), defaults: ROUTER_DEFAULT_DOMAINS.temperature, integer: false },
};

const CACHE_WEIGHT =
  `${PATH} cannot be retuned: the startup router configuration also uses it to count cached tokens, ` +
  "which a runtime router update does not change";

const RetuneRouter = z
  .strictObject({
    overlap_score_credit: knobDomain(ROUTER_KNOBS.overlap_score_credit),
    prefill_load_scale: knobDomain(ROUTER_KNOBS.prefill_load_scale),
    temperature: knobDomain(ROUTER_KNOBS.temperature),
    host_cache_hit_weight: rejectKey(CACHE_WEIGHT),
    disk_cache_hit_weight: rejectKey(CACHE_WEIGHT),
    shared_cache_multiplier: rejectKey(
      `${PATH} cannot be retuned: the replay reports no shared cache hits, so no candidate could show its effect`,
    ),
  })
  .transform(
    (r): RetuneRouterDomain => ({
      overlapScoreCredit: r.overlap_score_credit ?? [...ROUTER_DEFAULT_DOMAINS.overlap_score_credit],
      prefillLoadScale: r.prefill_load_scale ?? [...ROUTER_DEFAULT_DOMAINS.prefill_load_scale],
      temperature: r.temperature ?? [...ROUTER_DEFAULT_DOMAINS.temperature],
    }),
  );

// ---------------------------------------------------------------------------------------------
// retune.planner

/** The knob table's grid knobs (knobs/planner.ts), in the canonical order of their dimensions. */
const GRID_KNOBS: ReadonlyMap<string, GridKnobRow> = new Map(RETUNE_GRID_KNOBS.map((row) => [row.yaml, row]));

/** A grid knob's value rule (its row's), default domain and step kind. */
function knobSpec(row: GridKnobRow): KnobSpec {
  return {
    value: row.value as z.ZodType<number>,
    defaults: row.retune.defaults,
    integer: row.retune.integer,
  };
}

/** Preset groups and the knobs each sets (`ai-dynamo/dynamo@9a57231:components/src/dynamo/planner/simulation/presets.py`), from the rows' `group`. */
const PRESET_GROUP_KNOBS: Readonly<Record<RetunePresetGroup, readonly string[]>> = Object.fromEntries(
  RETUNE_PRESET_GROUPS.map((g) => [
    g,
    RETUNE_GRID_KNOBS.filter((r) => r.retune.group === g).map((r) => r.yaml),
  ]),
) as unknown as Record<RetunePresetGroup, readonly string[]>;

const isPresetGroup = (key: string): key is RetunePresetGroup =>
  (RETUNE_PRESET_GROUPS as readonly string[]).includes(key);

/** Canonical order of the Planner dimensions (fleetsim choice): each group, then its knobs; knobs of no group last. */
const PLANNER_DIMENSION_ORDER: readonly string[] = [
  ...RETUNE_PRESET_GROUPS.flatMap((g) => [g, ...PRESET_GROUP_KNOBS[g]]),
  ...RETUNE_GRID_KNOBS.filter((r) => r.retune.group === undefined).map((r) => r.yaml),
];

/** `retune.planner` keys that only load scaling reads: such knobs and the groups of such knobs. */
export const LOAD_SCALING_KEYS: readonly string[] = PLANNER_DIMENSION_ORDER.filter((key) =>
  isPresetGroup(key)
    ? PRESET_GROUP_KNOBS[key].some((k) => GRID_KNOBS.get(k)!.retune.loadScalingOnly)
    : GRID_KNOBS.get(key)!.retune.loadScalingOnly,
);

export const LOAD_PREDICTOR_KEY = "load_predictor";

const SCHEDULE_FIELD = `${PATH} cannot be retuned: it changes the Planner's scaling modes or tick schedule`;
const PRESWEEP_ONLY =
  `${PATH} is searched only by the load-predictor pre-sweep, never as a grid dimension; ` +
  `use ${up(1)}.load_predictor: default or {preset: [...]}`;

/**
 * The keys of `retune.planner`, from the table: grid knobs (domains), preset groups, the
 * load-predictor preset list, and the rejected knobs — schedule knobs and the predictor fields
 * only the pre-sweep sets. `scaling_policy` (a reference sweep key fleetsim has no row for) is
 * rejected like a schedule knob.
 */
const PLANNER_FIELD_SHAPE: Readonly<Record<string, z.ZodType>> = {
  ...Object.fromEntries(RETUNE_GRID_KNOBS.map((row) => [row.yaml, knobDomain(knobSpec(row))])),
  ...Object.fromEntries(RETUNE_PRESET_GROUPS.map((g) => [g, presetGroup(RETUNE_PRESETS[g])])),
  [LOAD_PREDICTOR_KEY]: presetGroup(
    LOAD_PREDICTOR_PRESETS,
    " (the pre-sweep chooses the load predictor; it is never a grid dimension)",
  ),
  scaling_policy: rejectKey(SCHEDULE_FIELD),
  ...Object.fromEntries(
    PLANNER_KNOBS.filter((row) => row.retune.kind === "schedule").map((row) => [
      row.yaml,
      rejectKey(SCHEDULE_FIELD),
    ]),
  ),
  ...Object.fromEntries(
    RETUNE_PREDICTOR_KNOBS.filter((row) => row.yaml !== LOAD_PREDICTOR_KEY).map((row) => [
      row.yaml,
      rejectKey(PRESWEEP_ONLY),
    ]),
  ),
};

const PlannerFields = z
  .strictObject(PLANNER_FIELD_SHAPE)
  .superRefine((p, ctx) => {
    for (const [group, knobs] of Object.entries(PRESET_GROUP_KNOBS)) {
      if (p[group] === undefined) continue;
      const alsoSet = knobs.filter((k) => p[k] !== undefined);
      if (alsoSet.length > 0) {
        failAtKey(ctx, `${PATH} cannot be combined with ${pyList(alsoSet)}: the preset sets them`, [group]);
      }
    }
  })
  .transform((p): RetunePlannerDomainConfig => {
    const dimensions: RetunePlannerDimension[] = [];
    for (const key of PLANNER_DIMENSION_ORDER) {
      if (isPresetGroup(key)) {
        const presets = p[key] as readonly RetunePlannerPoint[] | undefined;
        if (presets !== undefined) dimensions.push({ key, points: presets });
        continue;
      }
      const values = p[key] as readonly number[] | undefined;
      if (values === undefined) continue;
      const field = GRID_KNOBS.get(key)!.settings!;
      dimensions.push({ key, points: values.map((v): RetunePlannerPoint => ({ [field]: v })) });
    }
    const loadPredictor = p[LOAD_PREDICTOR_KEY] as readonly LoadPredictorCandidate[] | undefined;
    return { kind: "fields", dimensions, loadPredictor: loadPredictor ?? null };
  });

/** A parsed `retune.planner`: `default` (expanded against the scaling modes) or explicit domains. */
export type RetunePlannerDomainConfig =
  | { readonly kind: "default" }
  | {
      readonly kind: "fields";
      readonly dimensions: readonly RetunePlannerDimension[];
      readonly loadPredictor: readonly LoadPredictorCandidate[] | null;
    };

const RetunePlanner = z.unknown().transform((raw, ctx): RetunePlannerDomainConfig => {
  if (raw === DEFAULT_KEYWORD) return { kind: "default" };
  if (Array.isArray(raw)) {
    fail(ctx, `${PATH} is a bare YAML list, which is never a domain; write 'default' or a mapping of fields`);
    return z.NEVER;
  }
  if (!isMapping(raw)) {
    fail(
      ctx,
      `Input should be 'default' or a mapping of Planner fields to domains, got ${describeValue(raw)}`,
    );
    return z.NEVER;
  }
  if (Object.keys(raw).length === 0) {
    fail(ctx, `${PATH} searches no Planner field; name the fields to search or use 'default'`);
    return z.NEVER;
  }
  const parsed = parseInto(PlannerFields, raw, ctx);
  return parsed.ok ? parsed.value : z.NEVER;
});

// ---------------------------------------------------------------------------------------------
// The section

/** Python `math.isclose`-style tolerance for the interval comparisons. */
function atMost(a: number, b: number): boolean {
  return a <= b + 1e-9 * Math.max(Math.abs(a), Math.abs(b), 1);
}

function tidy(x: number): number {
  return Number(x.toPrecision(12));
}

export const Retune = z
  .strictObject({
    interval_seconds: posNum(),
    grace_seconds: nonNegNum().default(RETUNE_DEFAULTS.grace_seconds),
    max_parallel: posInt().default(RETUNE_DEFAULTS.max_parallel),
    /** Omitted = `interval_seconds`. */
    timeout_seconds: posNum().optional(),
    decision_latency_seconds: nonNegativeOrMeasured().default(RETUNE_DEFAULTS.decision_latency_seconds),
    /** Omitted = 1; only with `decision_latency_seconds: measured`. */
    decision_latency_scale: posNum().optional(),
    min_improvement_percentage: nonNegNum().default(RETUNE_DEFAULTS.min_improvement_percentage),
    max_candidates: posInt().default(RETUNE_DEFAULTS.max_candidates),
    objective: z.enum(RETUNE_OBJECTIVES).default(RETUNE_DEFAULTS.objective),
    /** Omitted = `evaluation.sla`, else the Planner's `ttft_ms` / `itl_ms`. */
    sla_ttft_ms: posNum().optional(),
    sla_itl_ms: posNum().optional(),
    /** Omitted/null = throughput interval × the largest `prophet_window_size` (seed 000 Scenario 2). */
    history_seconds: posNum().nullable().optional(),
    /** Omitted/null: router parameters are not searched. */
    router: RetuneRouter.nullable().optional(),
    /** Omitted/null: no Planner field is searched. */
    planner: RetunePlanner.nullable().optional(),
  })
  .superRefine((r, ctx) => {
    const interval = r.interval_seconds;
    const timeoutOk = r.timeout_seconds === undefined || atMost(r.timeout_seconds, interval);
    if (!timeoutOk) {
      fail(
        ctx,
        `${PATH} (${r.timeout_seconds}) must be at most ${up(1)}.interval_seconds (${interval}), ` +
          "so that at most one sweep is in flight",
        ["timeout_seconds"],
      );
    }
    const latency = r.decision_latency_seconds;
    if (latency !== MEASURED) {
      if (!atMost(latency, interval)) {
        fail(
          ctx,
          `${PATH} (${latency}) must be at most ${up(1)}.interval_seconds (${interval}), ` +
            "so that at most one sweep is in flight",
          ["decision_latency_seconds"],
        );
      }
      if (r.decision_latency_scale !== undefined) {
        fail(
          ctx,
          `${PATH} applies only with ${up(1)}.decision_latency_seconds='${MEASURED}'; ` +
            `remove it or set decision_latency_seconds: ${MEASURED}`,
          ["decision_latency_scale"],
        );
      }
    } else if (timeoutOk) {
      // A measured latency is the sweep's wall time × scale, and the timeout bounds that wall time.
      const scale = r.decision_latency_scale ?? RETUNE_DEFAULTS.decision_latency_scale;
      const limit = tidy(interval / scale);
      const timeout = r.timeout_seconds ?? interval;
      if (!atMost(timeout * scale, interval)) {
        if (r.timeout_seconds !== undefined) {
          fail(
            ctx,
            `${PATH} (${timeout}) must be at most ${up(1)}.interval_seconds / ${up(1)}.decision_latency_scale ` +
              `(${interval} / ${scale} = ${limit}) with decision_latency_seconds='${MEASURED}'`,
            ["timeout_seconds"],
          );
        } else {
          fail(
            ctx,
            `${PATH}=${scale} rejects the default ${up(1)}.timeout_seconds (= interval_seconds, ${interval}): ` +
              `with decision_latency_seconds='${MEASURED}', lower timeout_seconds to at most ` +
              `interval_seconds / decision_latency_scale (${limit})`,
            ["decision_latency_scale"],
          );
        }
      }
    }
    if (!GOODPUT_OBJECTIVES.has(r.objective)) {
      for (const key of ["sla_ttft_ms", "sla_itl_ms"] as const) {
        if (r[key] !== undefined) {
          fail(
            ctx,
            `${PATH} has no effect with ${up(1)}.objective='${r.objective}': only the Goodput objectives use the scoring SLA`,
            [key],
          );
        }
      }
    }
  });

export type RetuneConfig = z.output<typeof Retune>;

/** The parsed section plus what only the enclosing `planner` section knows. */
export type RetuneSectionConfig = RetuneConfig & {
  /** Both scaling flags explicitly `false` (seed 003 "Engine Integration"). */
  readonly retune_only: boolean;
};

// ---------------------------------------------------------------------------------------------
// The grid

export interface RetuneScaling {
  readonly throughput: boolean;
  readonly load: boolean;
}

export interface RetuneGrid {
  readonly router: RetuneRouterDomain | null;
  readonly plannerDimensions: readonly RetunePlannerDimension[];
  readonly loadPredictorCandidates: readonly LoadPredictorCandidate[] | null;
  /** Dimension sizes, router knobs first, in canonical order. */
  readonly sizes: readonly number[];
  /** The product of `sizes` (1 for no dimension: the grid is then the one point of current fields). */
  readonly size: number;
}

/**
 * `planner: default` (seed 000 Scenario 2): `load_scaling_down_sensitivity` in {70, 80, 90} with
 * load scaling, and the pre-sweep over the 11 predictor presets with throughput scaling.
 */
function expandPlanner(
  planner: RetunePlannerDomainConfig | null | undefined,
  scaling: RetuneScaling,
): Pick<RetuneGrid, "plannerDimensions" | "loadPredictorCandidates"> {
  if (planner === null || planner === undefined)
    return { plannerDimensions: [], loadPredictorCandidates: null };
  if (planner.kind === "fields") {
    return { plannerDimensions: planner.dimensions, loadPredictorCandidates: planner.loadPredictor };
  }
  const key = "load_scaling_down_sensitivity";
  const sensitivity = GRID_KNOBS.get(key)!;
  return {
    plannerDimensions: scaling.load
      ? [{ key, points: sensitivity.retune.defaults.map((v) => ({ [sensitivity.settings!]: v })) }]
      : [],
    loadPredictorCandidates: scaling.throughput ? LOAD_PREDICTOR_PRESETS.map((p) => p.value) : null,
  };
}

/** The expanded grid of a valid section under the normalized scaling modes. */
export function retuneGrid(retune: RetuneConfig, scaling: RetuneScaling): RetuneGrid {
  const router = retune.router ?? null;
  const planner = expandPlanner(retune.planner, scaling);
  const sizes = [
    ...(router === null
      ? []
      : [router.overlapScoreCredit.length, router.prefillLoadScale.length, router.temperature.length]),
    ...planner.plannerDimensions.map((d) => d.points.length),
  ];
  return { router, ...planner, sizes, size: sizes.reduce((a, b) => a * b, 1) };
}

// ---------------------------------------------------------------------------------------------
// Rules across sections

/** The parts of the document the retune rules read. */
export interface RetuneDocument {
  readonly retune: RetuneSectionConfig;
  readonly traffic: {
    readonly source: { readonly type: string; readonly format?: string };
    readonly load: { readonly type: string };
    readonly stop?: { readonly max_virtual_time_seconds?: number };
  };
  readonly router: { readonly policy: string };
}

/** The Planner's tick, or null when the schedule rules already failed. */
export interface RetuneTick {
  readonly seconds: number;
  /** What sets it, for the message. */
  readonly what: string;
}

type Ctx = Pick<z.RefinementCtx, "addIssue" | "issues">;

const RETUNE = ["planner", "retune"];

function hasIssuesUnder(ctx: Ctx, section: string): boolean {
  return ctx.issues.some((iss) => iss.path !== undefined && iss.path[0] === section);
}

/**
 * The seeds' Requirements (seed 000 "Simulate Retune") and the rules that need the scaling modes
 * and the tick: run on an enabled Planner whose schedule is valid. Traffic and router rules are
 * skipped when those sections have issues of their own.
 */
export function checkRetuneDocument(
  doc: RetuneDocument,
  ctx: Ctx,
  scaling: RetuneScaling,
  tick: RetuneTick | null,
): void {
  const r = doc.retune;
  if (!hasIssuesUnder(ctx, "traffic")) {
    const { source, load, stop } = doc.traffic;
    if (source.type !== "trace" || source.format !== "dynamo") {
      const got = source.type !== "trace" ? `type '${source.type}'` : `format '${source.format}'`;
      fail(
        ctx,
        `${PATH} requires a Dynamo request trace: traffic.source.type='trace' with ` +
          `traffic.source.format='dynamo' (got ${got})`,
        RETUNE,
      );
    }
    if (load.type !== "trace_timestamps") {
      fail(
        ctx,
        `${PATH} requires traffic.load.type='trace_timestamps' (got '${load.type}'); speedup is allowed`,
        RETUNE,
      );
    }
    if (stop?.max_virtual_time_seconds !== undefined) {
      failAtKey(ctx, `${PATH} is rejected with planner.retune: retune replays the trace to its end`, [
        "traffic",
        "stop",
        "max_virtual_time_seconds",
      ]);
    }
  }
  const router = r.router ?? null;
  const planner = r.planner ?? null;
  if (router === null && planner === null) {
    fail(ctx, `${PATH} needs router or planner: with neither there is nothing to search`, RETUNE);
  }
  if (router !== null && !hasIssuesUnder(ctx, "router") && doc.router.policy !== "kv_router") {
    fail(
      ctx,
      `${PATH} requires router.policy='kv_router' (got '${doc.router.policy}'): retune searches KV-router parameters`,
      [...RETUNE, "router"],
    );
  }
  let plannerOk = true;
  if (planner !== null && r.retune_only) {
    fail(
      ctx,
      `${PATH} has no effect in retune-only mode (planner.enable_load_scaling and ` +
        "planner.enable_throughput_scaling both false: the Planner never scales); remove it or enable a scaling mode",
      [...RETUNE, "planner"],
    );
    plannerOk = false;
  } else if (planner?.kind === "fields") {
    for (const dimension of planner.dimensions) {
      if (LOAD_SCALING_KEYS.includes(dimension.key) && !scaling.load) {
        failAtKey(
          ctx,
          `${PATH} has no effect without load scaling; remove it or set planner.enable_load_scaling: true`,
          [...RETUNE, "planner", dimension.key],
        );
        plannerOk = false;
      }
    }
    if (planner.loadPredictor !== null && !scaling.throughput) {
      failAtKey(
        ctx,
        `${PATH} needs throughput scaling (planner.target='sla' with planner.enable_throughput_scaling: true): ` +
          "only throughput scaling uses the load predictor",
        [...RETUNE, "planner", LOAD_PREDICTOR_KEY],
      );
      plannerOk = false;
    }
  }
  if (r.history_seconds !== undefined && r.history_seconds !== null && !scaling.throughput) {
    failAtKey(
      ctx,
      `${PATH} needs throughput scaling: retune reads trace history only for an inner Planner that scales on throughput`,
      [...RETUNE, "history_seconds"],
    );
  }
  if (tick !== null) {
    const ratio = r.interval_seconds / tick.seconds;
    if (ratio < 1 - 1e-9 || Math.abs(ratio - Math.round(ratio)) > 1e-9 * Math.max(1, ratio)) {
      fail(
        ctx,
        `${PATH} (${r.interval_seconds}) must be a multiple of the Planner's tick, ${tick.seconds} s (${tick.what})`,
        [...RETUNE, "interval_seconds"],
      );
    }
  }
  if (plannerOk) {
    const grid = retuneGrid(r, scaling);
    if (grid.size > r.max_candidates) {
      fail(
        ctx,
        `${PATH} searches ${grid.size} grid points (${grid.sizes.join(" × ")}), more than ` +
          `${PATH}.max_candidates (${r.max_candidates}); narrow the domains or raise max_candidates`,
        RETUNE,
      );
    }
  }
}
