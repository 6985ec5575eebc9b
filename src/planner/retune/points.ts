/**
 * Retune points (docs/retune.md §5): the full set of retunable values — the three KV-router
 * parameters, the four Planner fields of §2 and the load-predictor fields — with the live names the
 * decision records use (§10) and a canonical key that identifies a configuration.
 */
import type { RouterSpec } from "../../config/runSpec.js";
import type { LoadPredictorFields, PlannerSettings, RetunePlannerField } from "../types.js";

/** The PATCH `/router_policy` parameters (config names). */
export interface RouterParameters {
  readonly overlapScoreCredit: number;
  readonly prefillLoadScale: number;
  readonly temperature: number;
}

/** Every Planner field a grid point may set, all present. */
export type PlannerFieldValues = Readonly<Pick<PlannerSettings, RetunePlannerField>>;

export interface RetunePoint {
  /** null when the run's router has no such parameters (round robin): nothing to search or patch. */
  readonly router: RouterParameters | null;
  readonly planner: PlannerFieldValues;
  /** Family, log1p and only that family's knobs (planner.md §9.2 `predictor_fields`). */
  readonly predictor: LoadPredictorFields;
}

export type LiveValue = number | string | boolean;

/** A point as the records show it: `{router, planner}` keyed by live names (§10). */
export interface LivePoint {
  readonly router: Readonly<Record<string, number>>;
  /** Planner fields and the load-predictor fields. */
  readonly planner: Readonly<Record<string, LiveValue>>;
}

/** Live names in canonical order; temperature is `router_temperature` live (seed 000). */
export const ROUTER_LIVE_NAMES: Readonly<Record<keyof RouterParameters, string>> = {
  overlapScoreCredit: "overlap_score_credit",
  prefillLoadScale: "prefill_load_scale",
  temperature: "router_temperature",
};

export const PLANNER_LIVE_NAMES: Readonly<Record<RetunePlannerField, string>> = {
  loadScalingDownSensitivity: "load_scaling_down_sensitivity",
  loadMinObservations: "load_min_observations",
  maxNumFpmSamples: "max_num_fpm_samples",
  fpmSampleBucketSize: "fpm_sample_bucket_size",
};

export const PREDICTOR_LIVE_NAMES: Readonly<Record<keyof LoadPredictorFields, string>> = {
  loadPredictor: "load_predictor",
  loadPredictorLog1p: "load_predictor_log1p",
  prophetWindowSize: "prophet_window_size",
  kalmanQLevel: "kalman_q_level",
  kalmanQTrend: "kalman_q_trend",
  kalmanR: "kalman_r",
  kalmanMinPoints: "kalman_min_points",
};

/** The router's retunable parameters, or null for a router that has none. */
export function routerParametersOf(router: RouterSpec): RouterParameters | null {
  if (router.policy !== "kv_router") return null;
  const { overlapScoreCredit, prefillLoadScale, temperature } = router;
  return { overlapScoreCredit, prefillLoadScale, temperature };
}

type PredictorSource = Pick<
  PlannerSettings,
  | "loadPredictor"
  | "loadPredictorLog1p"
  | "prophetWindowSize"
  | "kalmanQLevel"
  | "kalmanQTrend"
  | "kalmanR"
  | "kalmanMinPoints"
>;

/**
 * The predictor fields of a configuration, reduced to its family's knobs like a preset, so that a
 * configuration and the preset it equals have the same key (a constant predictor does not differ
 * by an unused `prophet_window_size`).
 */
export function predictorFieldsOf(s: PredictorSource): LoadPredictorFields {
  const base = { loadPredictor: s.loadPredictor, loadPredictorLog1p: s.loadPredictorLog1p };
  switch (s.loadPredictor) {
    case "constant":
    case "arima":
      return base;
    case "prophet":
      return { ...base, prophetWindowSize: s.prophetWindowSize };
    case "kalman":
      return {
        ...base,
        kalmanQLevel: s.kalmanQLevel,
        kalmanQTrend: s.kalmanQTrend,
        kalmanR: s.kalmanR,
        kalmanMinPoints: s.kalmanMinPoints,
      };
  }
}

/** The startup point: the run's `router` section (defaults applied) and its resolved Planner. */
export function startupPoint(router: RouterSpec, planner: PlannerSettings): RetunePoint {
  return {
    router: routerParametersOf(router),
    planner: {
      loadScalingDownSensitivity: planner.loadScalingDownSensitivity,
      loadMinObservations: planner.loadMinObservations,
      maxNumFpmSamples: planner.maxNumFpmSamples,
      fpmSampleBucketSize: planner.fpmSampleBucketSize,
    },
    predictor: predictorFieldsOf(planner),
  };
}

/** Planner fields then predictor fields, live names, canonical order; absent predictor knobs omitted. */
export function livePlannerFields(point: RetunePoint): Record<string, LiveValue> {
  const out: Record<string, LiveValue> = {};
  for (const [field, live] of Object.entries(PLANNER_LIVE_NAMES)) {
    out[live] = point.planner[field as RetunePlannerField];
  }
  return { ...out, ...livePredictorFields(point.predictor) };
}

/** Predictor fields, live names, canonical order; knobs the family does not have are absent. */
export function livePredictorFields(fields: LoadPredictorFields): Record<string, LiveValue> {
  const out: Record<string, LiveValue> = {};
  for (const [field, live] of Object.entries(PREDICTOR_LIVE_NAMES)) {
    const v = fields[field as keyof LoadPredictorFields];
    if (v !== undefined) out[live] = v;
  }
  return out;
}

export function livePoint(point: RetunePoint): LivePoint {
  const router: Record<string, number> = {};
  if (point.router !== null) {
    for (const [field, live] of Object.entries(ROUTER_LIVE_NAMES)) {
      router[live] = point.router[field as keyof RouterParameters];
    }
  }
  return { router, planner: livePlannerFields(point) };
}

/** JSON with object keys sorted at every level: equal values give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The point's identity: canonical JSON of its live form. Two points with the same key are the same
 * configuration (dedup, shared replays, "changes nothing").
 */
export function pointKey(point: RetunePoint): string {
  return canonicalJson(livePoint(point));
}

/** Key of the predictor fields alone: does a decision swap the load predictor? */
export function predictorKey(fields: LoadPredictorFields): string {
  return canonicalJson(fields);
}

/**
 * The Planner fields (predictor fields included) `to` sets differently from `from`, live names →
 * values. A knob `to` has and `from` lacks counts as a change (a family swap carries its knobs); a
 * knob only `from` has is left alone (it is unused by the new family).
 */
export function plannerChanges(from: RetunePoint, to: RetunePoint): Record<string, LiveValue> {
  const before = livePlannerFields(from);
  const changes: Record<string, LiveValue> = {};
  for (const [name, value] of Object.entries(livePlannerFields(to))) {
    if (before[name] !== value) changes[name] = value;
  }
  return changes;
}

/** Whether the router parameters differ (null on both sides = equal). */
export function routerChanged(from: RetunePoint, to: RetunePoint): boolean {
  return canonicalJson(from.router) !== canonicalJson(to.router);
}
