/**
 * The supervised phases of a run (docs/resources.md §3): start-up lasts from the command's start
 * until the replay begins, shutdown from the replay's end until the outputs are ready to write.
 * Each is bounded by its `execution.resources` timeout; an overrun stops the run with exit 124,
 * the reference's supervisor timeout (aisimulate.md §1.3). The limits are checked at the phase
 * boundaries: fleetsim has no separate supervisor process to kill a phase midway.
 */
import type { PhaseTimes } from "./runtime.js";

export interface PhaseLimits {
  readonly initializationTimeoutSeconds: number;
  readonly shutdownTimeoutSeconds: number;
}

export class PhaseClock {
  private replayStartMs: number | null = null;
  private replayEndMs: number | null = null;
  private shutdownEndMs: number | null = null;

  constructor(
    private readonly limits: PhaseLimits,
    private readonly startMs: number = performance.now(),
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The replay begins; true when start-up took longer than its limit. */
  replayStarted(): boolean {
    this.replayStartMs = this.now();
    return this.initializationOverran();
  }

  initializationOverran(): boolean {
    return (
      this.replayStartMs !== null &&
      this.replayStartMs - this.startMs > this.limits.initializationTimeoutSeconds * 1000
    );
  }

  replayEnded(): void {
    this.replayEndMs = this.now();
  }

  /** The outputs are ready to write; true when shutdown took longer than its limit. */
  shutdownFinished(): boolean {
    this.shutdownEndMs = this.now();
    return this.shutdownOverran();
  }

  shutdownOverran(): boolean {
    return (
      this.replayEndMs !== null &&
      this.shutdownEndMs !== null &&
      this.shutdownEndMs - this.replayEndMs > this.limits.shutdownTimeoutSeconds * 1000
    );
  }

  times(): PhaseTimes {
    const span = (from: number | null, to: number | null): number | null =>
      from === null || to === null ? null : (to - from) / 1000;
    return {
      initializationSeconds: span(this.startMs, this.replayStartMs),
      initializationTimeoutSeconds: this.limits.initializationTimeoutSeconds,
      shutdownSeconds: span(this.replayEndMs, this.shutdownEndMs),
      shutdownTimeoutSeconds: this.limits.shutdownTimeoutSeconds,
    };
  }
}
