/**
 * Retune points (docs/retune.md §5): the full set of retunable values — the three KV-router
 * parameters, the Planner fields of docs/retune.md §2 and the load-predictor fields (the knob table's grid and
 * predictor rows, knobs/planner.ts) — with the live names the decision records use (docs/retune.md §10) and a
 * canonical key that identifies a configuration.
 */
import { RETUNE_GRID_KNOBS, RETUNE_PREDICTOR_KNOBS } from "../../knobs/planner.js";
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
  /** Family, log1p and only that family's knobs (`ai-dynamo/dynamo@9a57231:components/src/dynamo/planner/simulation/presets.py` `predictor_fields`). */
  readonly predictor: LoadPredictorFields;
}

export type LiveValue = number | string | boolean;

/** A point as the records show it: `{router, planner}` keyed by live names (docs/retune.md §10). */
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

/** The live name of a knob: its PlannerConfig field. */
function liveName(row: { readonly yaml: string; readonly plannerConfig: string | null }): string {
  if (row.plannerConfig === null)
    throw new Error(`internal: retunable knob ${row.yaml} has no PlannerConfig name`);
  return row.plannerConfig;
}

/** Grid fields → live names, in the canonical order of the grid dimensions. */
export const PLANNER_LIVE_NAMES: Readonly<Record<RetunePlannerField, string>> = Object.fromEntries(
  RETUNE_GRID_KNOBS.map((row) => [row.settings, liveName(row)]),
) as Record<RetunePlannerField, string>;

/** Load-predictor fields → live names, in row order. */
export const PREDICTOR_LIVE_NAMES: Readonly<Record<keyof LoadPredictorFields, string>> = Object.fromEntries(
  RETUNE_PREDICTOR_KNOBS.map((row) => [row.settings, liveName(row)]),
) as Record<keyof LoadPredictorFields, string>;

/**
 * The run's router as retune reads it: structurally config's `RouterSpec` (planner/ sits below
 * config/ and does not import it).
 */
export type RetuneRouterSource =
  | { readonly policy: "round_robin" }
  | ({ readonly policy: "kv_router" } & RouterParameters);

/** The router's retunable parameters, or null for a router that has none. */
export function routerParametersOf(router: RetuneRouterSource): RouterParameters | null {
  if (router.policy !== "kv_router") return null;
  const { overlapScoreCredit, prefillLoadScale, temperature } = router;
  return { overlapScoreCredit, prefillLoadScale, temperature };
}

type PredictorSource = Pick<PlannerSettings, keyof LoadPredictorFields>;

/**
 * The predictor fields of a configuration, reduced to its family's knobs like a preset, so that a
 * configuration and the preset it equals have the same key (a constant predictor does not differ
 * by an unused `prophet_window_size`).
 */
export function predictorFieldsOf(s: PredictorSource): LoadPredictorFields {
  const values = s as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const row of RETUNE_PREDICTOR_KNOBS) {
    if (row.retune.family === "all" || row.retune.family === s.loadPredictor)
      out[row.settings!] = values[row.settings!];
  }
  return out as unknown as LoadPredictorFields;
}

/** The startup point: the run's `router` section (defaults applied) and its resolved Planner. */
export function startupPoint(router: RetuneRouterSource, planner: PlannerSettings): RetunePoint {
  const values = planner as unknown as Readonly<Record<string, unknown>>;
  return {
    router: routerParametersOf(router),
    planner: Object.fromEntries(
      RETUNE_GRID_KNOBS.map((row) => [row.settings, values[row.settings!]]),
    ) as unknown as PlannerFieldValues,
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
