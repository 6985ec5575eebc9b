import { IdleGate } from "./idleGate.js";
import type { LoadPredictor } from "./types.js";

/** Forecast = last value (`ConstantPredictor`). Only the last value matters, so only it is kept. */
export class ConstantPredictor implements LoadPredictor {
  readonly minimumDataPoints = 1;
  private readonly gate = new IdleGate();
  private last: number | null = null;

  addDataPoint(value: number): void {
    const v = this.gate.admit(value);
    if (v !== null) this.last = v;
  }

  predictNext(): number {
    return this.getLastValue();
  }

  getLastValue(): number {
    return this.last ?? 0;
  }

  resetIdleSkip(): void {
    this.gate.reset();
  }
}
