/**
 * The candidate set of one sweep (docs/retune.md §5 "Grid", "Candidate set").
 *
 * Grid: the Cartesian product of the dimensions in canonical order — the router knobs
 * `overlap_score_credit`, `prefill_load_scale`, `temperature` (when `retune.router` is set), then the
 * Planner dimensions in the order `RetuneSettings.plannerDimensions` already holds them
 * (`load_sensitivity`, `load_scaling_down_sensitivity`, `load_min_observations`, `fpm_sampling`,
 * `max_num_fpm_samples`, `fpm_sample_bucket_size`) — values in domain order, the last dimension
 * varying fastest. Every grid point starts from the current point, so it keeps the current values
 * (the load predictor included) for everything it does not search; no dimension = one point.
 *
 * Candidates: grid points in grid order, then the startup point, then the current point; a point
 * whose key was already listed is dropped (first occurrence wins). So a grid point equal to the
 * current point takes the current point's place (it is the baseline and wins ties), and a startup
 * point equal to the current point appears once, at the startup position.
 */
import type { LoadPredictorFields, RetuneSettings } from "../types.js";
import { pointKey, type RetunePoint, type RouterParameters } from "./points.js";

export interface RetuneCandidate {
  readonly point: RetunePoint;
  /** `pointKey(point)`. */
  readonly key: string;
}

export interface CandidateSet {
  readonly candidates: readonly RetuneCandidate[];
  /** Index of the current point (the baseline). */
  readonly currentIndex: number;
  /** Index of the startup point (it may coincide with the current point or a grid point). */
  readonly startupIndex: number;
  /** Points of the grid before deduplication. */
  readonly gridSize: number;
}

type GridSettings = Pick<RetuneSettings, "router" | "plannerDimensions">;
type Setter = (point: RetunePoint) => RetunePoint;

function routerDimension(values: readonly number[], knob: keyof RouterParameters): Setter[] {
  return values.map((v) => (p) => {
    // retune.router requires a KV router (config rule), so the point has router parameters.
    if (p.router === null) throw new Error("retune.router is set but the run's router has no parameters");
    return { ...p, router: { ...p.router, [knob]: v } };
  });
}

function dimensions(retune: GridSettings): Setter[][] {
  const dims: Setter[][] = [];
  const router = retune.router;
  if (router !== null) {
    dims.push(routerDimension(router.overlapScoreCredit, "overlapScoreCredit"));
    dims.push(routerDimension(router.prefillLoadScale, "prefillLoadScale"));
    dims.push(routerDimension(router.temperature, "temperature"));
  }
  for (const d of retune.plannerDimensions) {
    dims.push(
      d.points.map((fields) => (p) => {
        const planner = { ...p.planner };
        // A preset value sets two fields; copy only the defined ones over the current values.
        for (const [k, v] of Object.entries(fields)) if (v !== undefined) Object.assign(planner, { [k]: v });
        return { ...p, planner };
      }),
    );
  }
  return dims;
}

/** The grid points in canonical order (first dimension slowest, last fastest). */
export function expandGrid(retune: GridSettings, current: RetunePoint): RetunePoint[] {
  let points: RetunePoint[] = [current];
  for (const dim of dimensions(retune)) points = points.flatMap((p) => dim.map((set) => set(p)));
  return points;
}

/**
 * Grid + startup + current, deduplicated (see the module comment). At most `maxCandidates + 2`
 * points: a grid larger than `maxCandidates` is a config error, so it throws here.
 */
export function candidateSet(
  retune: GridSettings & Pick<RetuneSettings, "maxCandidates">,
  startup: RetunePoint,
  current: RetunePoint,
): CandidateSet {
  const grid = expandGrid(retune, current);
  if (grid.length > retune.maxCandidates) {
    throw new RangeError(
      `retune grid has ${grid.length} points, more than max_candidates (${retune.maxCandidates})`,
    );
  }
  const candidates: RetuneCandidate[] = [];
  const index = new Map<string, number>();
  const add = (point: RetunePoint): number => {
    const key = pointKey(point);
    const at = index.get(key);
    if (at !== undefined) return at;
    candidates.push({ point, key });
    index.set(key, candidates.length - 1);
    return candidates.length - 1;
  };
  for (const p of grid) add(p);
  const startupIndex = add(startup);
  const currentIndex = add(current);
  return { candidates, currentIndex, startupIndex, gridSize: grid.length };
}

/**
 * After the load-predictor pre-sweep (§6): every candidate except the current point uses the
 * winner's predictor fields; the current point keeps the current predictor. No winner (null)
 * leaves every candidate as it is. Keys are recomputed, so two candidates may now share one.
 */
export function withPredictorWinner(
  set: CandidateSet,
  winner: LoadPredictorFields | null,
): readonly RetuneCandidate[] {
  if (winner === null) return set.candidates;
  return set.candidates.map((c, i) => {
    if (i === set.currentIndex) return c;
    const point = { ...c.point, predictor: winner };
    return { point, key: pointKey(point) };
  });
}

/** Candidates that resolve to the same configuration share one replay: indices per key, first-seen order. */
export function replayGroups(candidates: readonly RetuneCandidate[]): { key: string; indices: number[] }[] {
  const groups = new Map<string, number[]>();
  candidates.forEach((c, i) => {
    const g = groups.get(c.key);
    if (g === undefined) groups.set(c.key, [i]);
    else g.push(i);
  });
  return [...groups].map(([key, indices]) => ({ key, indices }));
}
