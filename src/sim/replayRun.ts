import type { RequestLogOptions } from "../metrics/requestLog.js";
import type { RequestSource } from "../traffic/requestSource.js";
import type { ScalingPolicy } from "./scaling.js";

/**
 * How a replay is run: its options, and the drivers that call its `step` until the run is over,
 * doing between steps what the event loop itself cannot — reading a streamed workload's next
 * chunk, awaiting a scaling policy's asynchronous work, yielding to Node so that Ctrl-C lands.
 */

export interface ReplayOptions {
  readonly capturePerRequest: boolean;
  /** Drives scaling ticks (the Planner); null for a fixed deployment. */
  readonly scaling?: ScalingPolicy | null;
  /** Check bookkeeping invariants while running (sim/invariants.ts); default: FLEETSIM_CHECK_INVARIANTS. */
  readonly checkInvariants?: boolean;
  /**
   * Step every pass through the event queue (the reference stepper) instead of merging runs of
   * plain decode passes (docs/architecture.md "Decode-run merging"); the results are identical.
   * Default: FLEETSIM_REFERENCE_STEPPER.
   */
  readonly referenceStepper?: boolean;
  /** Where the request log keeps its rows (tests: a small resident size to exercise the spill file). */
  readonly requestLog?: RequestLogOptions;
}

/** Whether replays use the pass-by-pass reference stepper by default (FLEETSIM_REFERENCE_STEPPER=1). */
export function referenceStepperByEnv(): boolean {
  const v = process.env.FLEETSIM_REFERENCE_STEPPER;
  return v !== undefined && v !== "" && v !== "0";
}

/** Thrown out of `run` when `abort()` was called (Ctrl-C). */
export class ReplayAborted extends Error {
  constructor() {
    super("replay aborted");
  }
}

/** What the run drivers see of a replay (`Replay.stepper`). */
export interface Stepper {
  /** Processes up to `maxTimestamps` distinct timestamps; false when the run is over. */
  step(maxTimestamps: number): boolean;
  /** The time up to which the source must be read before the next step (NaN when none); cleared by reading. */
  takeFillUntil(): number;
  /** The work the last scaling tick started (a retune sweep), handed over once; null when none. */
  takeWork(): Promise<void> | null;
  /** Whether `abort()` was called. */
  aborted(): boolean;
}

/** Host time between yields to the Node event loop, ms. */
const SLICE_MS = 50;

/** Steps to the end, yielding to the Node event loop about every 50 ms of host time; throws ReplayAborted. */
export async function stepToEnd(stepper: Stepper, source: RequestSource): Promise<void> {
  let sliceEnd = performance.now() + SLICE_MS;
  if (stepper.aborted()) throw new ReplayAborted();
  while (stepper.step(4096)) {
    const until = stepper.takeFillUntil();
    if (!Number.isNaN(until)) {
      // Rows up to the clock's next timestamp must be read before it is processed.
      await source.fill(until);
      if (stepper.aborted()) throw new ReplayAborted();
      continue;
    }
    const work = stepper.takeWork();
    if (work !== null) {
      // Virtual time stands still while the policy's work (a retune sweep) runs.
      await work;
      if (stepper.aborted()) throw new ReplayAborted();
      sliceEnd = performance.now() + SLICE_MS;
      continue;
    }
    if (performance.now() >= sliceEnd) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (stepper.aborted()) throw new ReplayAborted();
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
}

/** Steps to the end without yielding (tests, benchmarks): a streamed workload or a policy's asynchronous work is an error. */
export function stepToEndSync(stepper: Stepper): void {
  while (stepper.step(1 << 30)) {
    if (!Number.isNaN(stepper.takeFillUntil())) {
      throw new Error(
        "internal: a streamed workload is read asynchronously; use Replay.run(), not runSync()",
      );
    }
    const work = stepper.takeWork();
    if (work !== null) {
      work.catch(() => {}); // reported by the error below, not as an unhandled rejection
      throw new Error(
        "internal: the scaling policy started asynchronous work (a retune sweep); use Replay.run(), not runSync()",
      );
    }
  }
}
