import type { RunWindow } from "../engine/workerEngine.js";
import type { TimelineSampler } from "../metrics/timeline.js";
import type { EventQueue } from "./eventQueue.js";
import type { RequestLifecycle } from "./requestLifecycle.js";

/**
 * Where a run of plain decode passes of a worker may go (docs/architecture.md "Decode-run
 * merging"): pass ends strictly before the next event that could change the worker's batch — any
 * queued event but the pass completions of pools outside the worker's `passPoolMask` (with
 * independent runs; otherwise every pass completion), the next time-series boundary (it samples
 * the state before its events) and the next client deadline — and never when a scaling tick is
 * due at this timestamp (it observes the state first).
 */
export class DecodeRunWindow {
  /** The window handed to each run (one object, refilled: nothing allocated per run). */
  private readonly window: RunWindow;
  /** The latest pass end delivered within a run (the run's end time counts it). */
  endMs = 0;

  constructor(
    private readonly events: EventQueue,
    private readonly lifecycle: RequestLifecycle,
    private readonly timeline: TimelineSampler,
    /** Decode-run merging is on (not the reference stepper). */
    private readonly enabled: boolean,
    /** Workers may run ahead of each other (`Replay.runsIndependent`). */
    private readonly independent: boolean,
    capMs: number,
  ) {
    this.window = {
      limitMs: Number.NEGATIVE_INFINITY,
      capMs,
      deadlineMs: Number.POSITIVE_INFINITY,
      responseMs: lifecycle.responseMs,
    };
  }

  /** The window of a run starting now; `tickDue`: a scaling tick is due at this timestamp. */
  next(passPoolMask: number, tickDue: boolean): RunWindow {
    const w = this.window;
    if (tickDue || !this.enabled) {
      w.limitMs = Number.NEGATIVE_INFINITY;
      return w;
    }
    const deadline = this.lifecycle.nextDeadline();
    let limit = Math.min(this.events.heap.peekTime(), this.timeline.nextBoundaryMs, deadline);
    const passHeaps = this.events.passHeaps;
    for (let q = 0; q < passHeaps.length; q++) {
      if (this.independent && (passPoolMask & (1 << q)) === 0) continue;
      const p = passHeaps[q].peekTime();
      if (p < limit) limit = p;
    }
    w.limitMs = limit;
    w.deadlineMs = deadline;
    return w;
  }

  /** A run delivered pass ends up to `t`. */
  noteEnd(t: number): void {
    if (t > this.endMs) this.endMs = t;
  }
}
