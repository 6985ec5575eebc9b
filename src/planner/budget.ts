/**
 * GPU-budget math of the Dynamo Planner (`ai-dynamo/dynamo@6c21864:components/src/dynamo/planner/core/budget.py`). Pure functions over integer replica counts and
 * per-replica GPU costs (`gpuCostPerReplica ?? numGpu`). A negative `minGpus` / `maxGpus` disables that
 * bound. The ceiling is a hard hardware bound and is never relaxed; the tolerance only relaxes the floor,
 * because integer replica widths cannot always land exactly on it.
 */

export type BudgetReason = "gpu_budget_guard_hold" | "gpu_budget_reconcile";

export interface GuardResult<T> {
  readonly value: T;
  readonly reason: BudgetReason | null;
}

const HOLD: BudgetReason = "gpu_budget_guard_hold";
const RECONCILE: BudgetReason = "gpu_budget_reconcile";

/** Largest positive step size among the pools that may change (0 when none). */
export function computeTolerance(costs: readonly number[]): number {
  let tol = 0;
  for (const c of costs) if (c > 0 && c > tol) tol = c;
  return tol;
}

/** null when `total` lies in `[minGpus - tolerance, maxGpus]`, else why not. */
export function boundsForTotal(
  total: number,
  minGpus: number,
  maxGpus: number,
  tolerance: number,
): string | null {
  if (maxGpus >= 0 && total > maxGpus) return `total ${total} exceeds ceiling (${maxGpus})`;
  if (minGpus >= 0 && total < minGpus - tolerance) {
    const tol = tolerance ? ` - tol ${tolerance}` : "";
    return `total ${total} below floor (${minGpus}${tol})`;
  }
  return null;
}

function inBand(total: number, minGpus: number, maxGpus: number, tolerance: number): boolean {
  return boundsForTotal(total, minGpus, maxGpus, tolerance) === null;
}

function between(current: number, proposed: number, value: number): boolean {
  return Math.min(current, proposed) <= value && value <= Math.max(current, proposed);
}

/**
 * Single-pool (agg / single-role) clamp into the band. Returns 0 when `minEndpoint` replicas cannot fit
 * the ceiling (infeasible configuration, surfaced by the caller).
 */
export function proportionalClampSingle(
  desired: number,
  gpu: number,
  minGpus: number,
  maxGpus: number,
  minEndpoint: number,
): number {
  if ((minGpus < 0 && maxGpus < 0) || gpu <= 0) return desired;
  const total = desired * gpu;
  const tolerance = minGpus >= 0 && maxGpus >= 0 ? gpu : 0;
  if (inBand(total, minGpus, maxGpus, tolerance)) return desired;

  const largestFit = (): number =>
    maxGpus < minEndpoint * gpu ? 0 : Math.max(minEndpoint, Math.floor(maxGpus / gpu));
  if (maxGpus >= 0 && total > maxGpus) return largestFit();

  // Below the floor: grow, but a rounded-up floor push must not overshoot the hard ceiling; the largest
  // whole-replica count under it still lands inside the tolerance band.
  const grown = Math.max(minEndpoint, Math.ceil(minGpus / gpu));
  if (maxGpus >= 0 && grown * gpu > maxGpus) return largestFit();
  return grown;
}

/**
 * Two-pool proportional clamp into the band (tolerance `max(pg, dg)` only when both bounds are set).
 * The ceiling path only shrinks; the floor path grows and falls back to the inputs when that would
 * overshoot the ceiling. `(0, 0)` when the minimum footprint cannot fit the ceiling.
 */
export function proportionalClampPair(
  p: number,
  d: number,
  pg: number,
  dg: number,
  minGpus: number,
  maxGpus: number,
  pmin: number,
  dmin: number = pmin,
): [number, number] {
  if (minGpus < 0 && maxGpus < 0) return [p, d];
  if (pg <= 0 || dg <= 0) return [p, d];

  const total = p * pg + d * dg;
  const tolerance = minGpus >= 0 && maxGpus >= 0 ? computeTolerance([pg, dg]) : 0;
  if (inBand(total, minGpus, maxGpus, tolerance)) return [p, d];

  if (maxGpus >= 0 && total > maxGpus) {
    if (maxGpus < pmin * pg + dmin * dg) return [0, 0];
    const scale = maxGpus / total;
    const maxP = Math.floor((maxGpus - dmin * dg) / pg);
    const newP = Math.max(pmin, Math.min(maxP, Math.floor(p * scale)));
    // A shrink must not seat decode replicas nobody asked for with the headroom the prefill cut freed
    // (upstream's test pins "never grows either pool"), yet it keeps the decode minimum.
    const newD = Math.max(dmin, Math.min(d, Math.floor((maxGpus - newP * pg) / dg)));
    return [newP, newD];
  }

  // Floor path. With nothing allocated, split the floor roughly evenly (remainder to decode).
  const newP =
    total <= 0
      ? Math.max(pmin, Math.ceil(minGpus / 2 / pg))
      : Math.max(pmin, Math.ceil(p * (minGpus / total)));
  const remaining = Math.max(0, minGpus - newP * pg);
  const newD = Math.max(dmin, Math.ceil(remaining / dg));
  if (maxGpus >= 0 && newP * pg + newD * dg > maxGpus) return [p, d];
  return [newP, newD];
}

/**
 * What the two pair guards take, as upstream orders it: the current and proposed (prefill, decode)
 * counts, each pool's GPUs per replica, the band (-1: unbounded) and each pool's minimum replicas.
 */
type PairBudgetArgs = [
  cp: number,
  cd: number,
  pp: number,
  pd: number,
  pg: number,
  dg: number,
  minGpus: number,
  maxGpus: number,
  pmin: number,
  dmin: number,
];

/**
 * Fit a bounded proposal into the band without changing its directions: each returned component lies
 * between its current and proposed counts, and in an opposing rebalance (one up, one down) both legs move
 * or neither does, so a width mismatch can never execute only the donor's removal. Returns the current pair
 * when nothing fits. Only the shorter component range is enumerated; for each value the closest in-band
 * point of the other component is the only candidate that can minimise the distance score.
 */
export function fitDirectionalBudgetPair(
  ...[cp, cd, pp, pd, pg, dg, minGpus, maxGpus, pmin, dmin]: PairBudgetArgs
): [number, number] {
  if (pg <= 0 || dg <= 0) return [pp, pd];

  const tolerance = minGpus >= 0 && maxGpus >= 0 ? computeTolerance([pg, dg]) : 0;
  const opposing = (pp < cp && pd > cd) || (pp > cp && pd < cd);
  const reqP = Math.abs(pp - cp);
  const reqD = Math.abs(pd - cd);

  let pLow = Math.max(Math.min(cp, pp), pmin);
  let pHigh = Math.max(cp, pp);
  let dLow = Math.max(Math.min(cd, pd), dmin);
  let dHigh = Math.max(cd, pd);
  // Tighten to the resource envelope so an extreme proposal cannot blow up the scan.
  if (maxGpus >= 0) {
    pHigh = Math.min(pHigh, Math.floor((maxGpus - dLow * dg) / pg));
    dHigh = Math.min(dHigh, Math.floor((maxGpus - pLow * pg) / dg));
  }
  const effectiveMin = minGpus >= 0 ? minGpus - tolerance : null;
  if (effectiveMin !== null) {
    pLow = Math.max(pLow, Math.ceil((effectiveMin - dHigh * dg) / pg));
    dLow = Math.max(dLow, Math.ceil((effectiveMin - pHigh * pg) / dg));
  }
  if (pLow > pHigh || dLow > dHigh) return [cp, cd];

  if (pp >= pmin && pd >= dmin && inBand(pp * pg + pd * dg, minGpus, maxGpus, tolerance)) return [pp, pd];

  // A holder object, because control-flow narrowing does not see assignments made inside closures.
  const found: { best: { score: number[]; pair: [number, number] } | null } = { best: null };
  const consider = (p: number, d: number): void => {
    if (!inBand(p * pg + d * dg, minGpus, maxGpus, tolerance)) return;
    const progP = Math.abs(p - cp);
    const progD = Math.abs(d - cd);
    const score = [
      Math.abs(pp - p) + Math.abs(pd - d),
      Math.abs(progP * reqD - progD * reqP),
      -(progP + progD),
      p,
      d,
    ];
    if (found.best === null || lexLess(score, found.best.score)) found.best = { score, pair: [p, d] };
  };

  // Scan one component ("outer") and place the other ("inner") at its closest admissible value.
  const scan = (
    outerLow: number,
    outerHigh: number,
    outerCost: number,
    outerCurrent: number,
    innerLow: number,
    innerHigh: number,
    innerCost: number,
    innerCurrent: number,
    innerProposed: number,
    emit: (outer: number, inner: number) => void,
  ): void => {
    for (let outer = outerLow; outer <= outerHigh; outer++) {
      let lo = innerLow;
      let hi = innerHigh;
      const spent = outer * outerCost;
      if (effectiveMin !== null) lo = Math.max(lo, Math.ceil((effectiveMin - spent) / innerCost));
      if (maxGpus >= 0) hi = Math.min(hi, Math.floor((maxGpus - spent) / innerCost));
      if (opposing) {
        // The outer leg not moving means the inner leg must not move either.
        if (outer === outerCurrent) {
          if (lo <= innerCurrent && innerCurrent <= hi) emit(outer, innerCurrent);
          continue;
        }
        if (innerProposed > innerCurrent) lo = Math.max(lo, innerCurrent + 1);
        else hi = Math.min(hi, innerCurrent - 1);
      }
      if (lo <= hi) emit(outer, Math.min(Math.max(innerProposed, lo), hi));
    }
  };

  if (pHigh - pLow <= dHigh - dLow) {
    scan(pLow, pHigh, pg, cp, dLow, dHigh, dg, cd, pd, (p, d) => consider(p, d));
  } else {
    scan(dLow, dHigh, dg, cd, pLow, pHigh, pg, cp, pp, (d, p) => consider(p, d));
  }
  return found.best === null ? [cp, cd] : found.best.pair;
}

function lexLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i] < b[i];
  }
  return false;
}

/**
 * Apply the band to one bounded proposal without reversing its direction. An out-of-band current count is
 * reconciled from the current count (not the proposal); at the floor a scale-down and at the ceiling a
 * scale-up are held; a clamp that would leave the current→proposed interval is held.
 */
export function guardSingleScalingBudget(
  current: number,
  proposed: number,
  gpu: number,
  minGpus: number,
  maxGpus: number,
  minEndpoint: number,
): GuardResult<number> {
  if (gpu <= 0) return { value: proposed, reason: null };
  const tolerance = minGpus >= 0 && maxGpus >= 0 ? gpu : 0;
  const currentTotal = current * gpu;
  if (!inBand(currentTotal, minGpus, maxGpus, tolerance)) {
    return { value: proportionalClampSingle(current, gpu, minGpus, maxGpus, minEndpoint), reason: RECONCILE };
  }
  if (minGpus >= 0 && currentTotal <= minGpus && proposed < current) return { value: current, reason: HOLD };
  if (maxGpus >= 0 && currentTotal >= maxGpus && proposed > current) return { value: current, reason: HOLD };

  const final = proportionalClampSingle(proposed, gpu, minGpus, maxGpus, minEndpoint);
  if (!between(current, proposed, final)) return { value: current, reason: HOLD };
  return { value: final, reason: null };
}

/**
 * Apply the band to a bounded disaggregated proposal. `minGpus` is a scale-down guard, never a source of
 * scale-up intent; at the ceiling a scale-up is admitted only as an explicit opposing rebalance whose
 * legs are fitted together. The tolerance here depends on the ceiling alone (as upstream does).
 */
export function guardDisaggScalingBudget(
  ...[cp, cd, pp, pd, pg, dg, minGpus, maxGpus, pmin, dmin]: PairBudgetArgs
): GuardResult<[number, number]> {
  if (pg <= 0 || dg <= 0) {
    return { value: proportionalClampPair(pp, pd, pg, dg, minGpus, maxGpus, pmin, dmin), reason: null };
  }
  const tolerance = maxGpus >= 0 ? computeTolerance([pg, dg]) : 0;
  const currentTotal = cp * pg + cd * dg;
  if (!inBand(currentTotal, minGpus, maxGpus, tolerance)) {
    // Recovery is reconciled from the observed allocation so a stale proposal cannot pick the receiver.
    return { value: proportionalClampPair(cp, cd, pg, dg, minGpus, maxGpus, pmin, dmin), reason: RECONCILE };
  }

  const pDown = pp < cp;
  const pUp = pp > cp;
  const dDown = pd < cd;
  const dUp = pd > cd;
  const anyDown = pDown || dDown;
  const anyUp = pUp || dUp;
  const opposing = (pDown && dUp) || (pUp && dDown);
  const current: [number, number] = [cp, cd];
  const fitOrHold = (): GuardResult<[number, number]> => {
    const fitted = fitDirectionalBudgetPair(cp, cd, pp, pd, pg, dg, minGpus, maxGpus, pmin, dmin);
    if (fitted[0] === cp && fitted[1] === cd) return { value: current, reason: HOLD };
    return { value: fitted, reason: null };
  };

  // The nominal floor (not the tolerance-relaxed one) guards repeated scale-down-only actions.
  const atFloor = currentTotal <= minGpus;
  if (atFloor && anyDown && !anyUp) return { value: current, reason: HOLD };
  if (atFloor && opposing) return fitOrHold();
  if (maxGpus >= 0 && currentTotal >= maxGpus && anyUp) {
    // No free capacity: never invent a donor from a pool whose own signal said hold or up.
    if (!opposing) return { value: current, reason: HOLD };
    return fitOrHold();
  }

  const [np, nd] = proportionalClampPair(pp, pd, pg, dg, minGpus, maxGpus, pmin, dmin);
  if (!between(cp, pp, np) || !between(cd, pd, nd)) return { value: current, reason: HOLD };
  if (!inBand(np * pg + nd * dg, minGpus, maxGpus, tolerance)) return { value: current, reason: HOLD };
  return { value: [np, nd], reason: null };
}

/** A (prefill, decode) pair: counts, GPUs per replica or minimum replicas; or a band (min, max GPUs). */
type Pair = readonly [number, number];

/**
 * Endpoint recovery: a pool below its minimum replicas is explicit runtime policy, reconciled from the
 * proposal raised to the minimums even if that needs a donor the scaling signal did not nominate; null
 * when both pools hold their minimums.
 */
function recoverMinimums(
  current: Pair,
  proposed: Pair,
  gpu: Pair,
  band: Pair,
  mins: Pair,
): [number, number] | null {
  const [pmin, dmin] = mins;
  if (current[0] >= pmin && current[1] >= dmin) return null;
  const [p, d] = proposed;
  return proportionalClampPair(
    Math.max(p, pmin),
    Math.max(d, dmin),
    gpu[0],
    gpu[1],
    band[0],
    band[1],
    pmin,
    dmin,
  );
}

/**
 * Fit a bounded disagg target under the hard ceiling only: `min_gpu_budget` guards real scale-downs and
 * must never inflate a throughput bound. Endpoint recovery may pick a donor; otherwise the fit keeps each
 * pool's direction. Both loops' wrappers (throughputScaling.ts, loadScaling/budget.ts) end here.
 */
export function fitPairUnderCeiling(
  current: Pair,
  proposed: Pair,
  gpu: Pair,
  maxGpus: number,
  mins: Pair,
): [number, number] {
  const [cp, cd] = current;
  const [p, d] = proposed;
  return (
    recoverMinimums(current, proposed, gpu, [-1, maxGpus], mins) ??
    fitDirectionalBudgetPair(cp, cd, p, d, gpu[0], gpu[1], -1, maxGpus, mins[0], mins[1])
  );
}

/**
 * The full band (`band`: min and max GPUs) for a disagg throughput or load decision: endpoint recovery
 * reconciles (may pick a donor), anything else goes through the direction-preserving guard.
 */
export function guardPairBudget(
  current: Pair,
  proposed: Pair,
  gpu: Pair,
  band: Pair,
  mins: Pair,
): GuardResult<[number, number]> {
  const recovered = recoverMinimums(current, proposed, gpu, band, mins);
  if (recovered !== null) return { value: recovered, reason: RECONCILE };
  const [cp, cd] = current;
  const [p, d] = proposed;
  return guardDisaggScalingBudget(cp, cd, p, d, gpu[0], gpu[1], band[0], band[1], mins[0], mins[1]);
}
