/**
 * The supervised phases of a run (docs/resources.md §3): start-up lasts from the command's start
 * until the replay begins, shutdown from the replay's end until the outputs are ready to write.
 * Each is bounded by its `execution.resources` timeout; an overrun stops the run with exit 124,
 * the reference's supervisor timeout (`ai-dynamo/aisimulate@9339d0b:docs/cli/user-guide.md`). Start-up is watched by a timer
 * (`startupRemainingMs` / `expireStartup`, armed by the predict command): start-up is asynchronous
 * (the trace is streamed), so the timer fires while it is still under way. Shutdown is
 * synchronous work (building and serializing the report) that no timer can interrupt, so it is
 * checked when it ends.
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
  /** When the start-up watchdog fired (start-up still under way), else null. */
  private startupExpiredMs: number | null = null;

  constructor(
    private readonly limits: PhaseLimits,
    private readonly startMs: number = performance.now(),
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The replay begins; true when start-up took longer than its limit. */
  replayStarted(): boolean {
    if (this.startupExpiredMs !== null) return true;
    this.replayStartMs = this.now();
    return this.initializationOverran();
  }

  initializationOverran(): boolean {
    if (this.startupExpiredMs !== null) return true;
    return (
      this.replayStartMs !== null &&
      this.replayStartMs - this.startMs > this.limits.initializationTimeoutSeconds * 1000
    );
  }

  /** Milliseconds of start-up left before its limit (at least 0). */
  startupRemainingMs(): number {
    return Math.max(0, this.startMs + this.limits.initializationTimeoutSeconds * 1000 - this.now());
  }

  /**
   * The start-up watchdog fired. True when start-up was still under way (the run must stop); false
   * when the replay had already begun, which makes the expiry moot.
   */
  expireStartup(): boolean {
    if (this.replayStartMs !== null) return false;
    this.startupExpiredMs = this.now();
    return true;
  }

  /** Whether the replay began (start-up is over). */
  get replayBegan(): boolean {
    return this.replayStartMs !== null;
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
      initializationSeconds: span(this.startMs, this.startupExpiredMs ?? this.replayStartMs),
      initializationTimeoutSeconds: this.limits.initializationTimeoutSeconds,
      shutdownSeconds: span(this.replayEndMs, this.shutdownEndMs),
      shutdownTimeoutSeconds: this.limits.shutdownTimeoutSeconds,
    };
  }
}
