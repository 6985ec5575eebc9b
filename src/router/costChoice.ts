/**
 * Choosing a candidate from its cost, as Dynamo's default worker picker does
 * (`ai-dynamo/dynamo@a4bdb9b:lib/kv-router/src/scheduling/selector/default.rs`).
 * Candidates come in worker-id order, which is also the order the seeded reference uses.
 */

import type { Prng } from "../util/prng.js";

const TWO_POW_32 = 4294967296;

/**
 * Temperature 0: index of the lowest cost. Equal minima are broken by reservoir sampling: the k-th
 * tie seen replaces the current pick with probability 1/k, so each tied candidate wins with equal
 * chance. The PRNG is drawn once per extra tie, never when the minimum is unique.
 */
export function pickLowestCost(costs: Float64Array, n: number, prng: Prng): number {
  let best = -1;
  let bestCost = Number.POSITIVE_INFINITY;
  let ties = 0;
  for (let i = 0; i < n; i++) {
    const c = costs[i];
    if (c < bestCost) {
      best = i;
      bestCost = c;
      ties = 1;
    } else if (c === bestCost) {
      ties++;
      if (Math.floor((prng.nextUint32() * ties) / TWO_POW_32) === 0) best = i;
    }
  }
  return best;
}

/**
 * Temperature T > 0: samples index i with p_i ∝ exp(−(c_i − c_min) / ((c_max − c_min)·T)), uniform
 * when all costs are equal, by walking the CDF with one uniform draw (first i with u ≤ CDF_i, the
 * last index if rounding leaves u above the total). `probabilities` is caller-owned scratch (≥ n).
 */
export function pickSoftmax(
  costs: Float64Array,
  n: number,
  temperature: number,
  prng: Prng,
  probabilities: Float64Array,
): number {
  if (n <= 0) return -1;
  const u = prng.nextFloat();
  softmaxProbabilities(costs, n, temperature, probabilities);
  let cumulative = 0;
  for (let i = 0; i < n; i++) {
    cumulative += probabilities[i];
    if (u <= cumulative) return i;
  }
  return n - 1;
}

/** Writes the normalized softmax probabilities of `costs[0 .. n)` into `out` (see {@link pickSoftmax}). */
export function softmaxProbabilities(
  costs: Float64Array,
  n: number,
  temperature: number,
  out: Float64Array,
): void {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    if (costs[i] < lo) lo = costs[i];
    if (costs[i] > hi) hi = costs[i];
  }
  if (lo === hi) {
    out.fill(1 / n, 0, n);
    return;
  }
  const scale = -1 / ((hi - lo) * temperature);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const w = Math.exp((costs[i] - lo) * scale);
    out[i] = w;
    sum += w;
  }
  for (let i = 0; i < n; i++) out[i] /= sum;
}
