/**
 * Value schemas of Planner fields that both `planner` and its `retune.planner` domains validate
 * (planner.md §9.1 constraints), kept apart so that the two section schemas share one definition.
 */
import { fail, int, PATH, posInt } from "./schemaPrimitives.js";

function isPerfectSquare(n: number): boolean {
  const root = Math.round(Math.sqrt(n));
  return root * root === n;
}

/** `fpm_sample_bucket_size`: a positive perfect square. */
export function fpmSampleBucketSize() {
  return posInt().superRefine((value, ctx) => {
    // Guarded: a value posInt() already rejected is not reported twice.
    if (value >= 1 && !isPerfectSquare(value)) {
      fail(ctx, `${PATH} must be a perfect square (1, 4, 9, 16, ...), got ${value}`);
    }
  });
}

/** `load_scaling_down_sensitivity`: an integer percentage 0–100. */
export function loadScalingDownSensitivity() {
  return int().min(0).max(100);
}
