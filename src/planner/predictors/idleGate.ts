/**
 * Input rules every upstream predictor applies before buffering (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py` `BasePredictor`):
 * non-finite readings count as zero load, and zeros are dropped until the first non-zero since
 * construction or the last reset, so a deployment's initial idle period (also right after a
 * warm-up) does not drag forecasts to zero.
 */
export class IdleGate {
  private seenNonzero = false;

  /** Returns the value to buffer, or null when it is a leading zero to skip. */
  admit(value: number): number | null {
    const v = Number.isFinite(value) ? value : 0;
    if (v === 0 && !this.seenNonzero) return null;
    if (v !== 0) this.seenNonzero = true;
    return v;
  }

  reset(): void {
    this.seenNonzero = false;
  }
}
