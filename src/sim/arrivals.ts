import type { LoadSpec } from "../config/runSpec.js";
import type { WorkloadInfo } from "../traffic/requestSource.js";
import type { RequestTable } from "../traffic/requests.js";

/** When requests arrive: what the replay asks of an arrival rule. */
export interface Arrivals {
  readonly closedLoop: boolean;
  /**
   * Whether a request's end can make another request ready (a session's later turn, or the next
   * session of a closed loop): then any pass end may schedule an arrival.
   */
  readonly hasDependentArrivals: boolean;
  /** Calls `schedule(row, time)` for every request that is ready at the start. */
  seed(schedule: (row: number, time: number) => void): void;
  /** A request reached a terminal state at `now`: schedules what that makes ready. */
  onTerminal(row: number, now: number, schedule: (row: number, time: number) => void): void;
}

/**
 * The arrivals of a streamed trace (traffic/mooncake/stream.ts): single-turn requests on their own
 * timestamps, each scheduled by the stream as it is read (`RequestSource.onRead`), so nothing is
 * ready at the start and no end makes anything ready.
 */
export class StreamArrivals implements Arrivals {
  readonly closedLoop = false;
  readonly hasDependentArrivals: boolean;

  constructor(info: WorkloadInfo) {
    if (info.hasLaterTurns) throw new Error("internal: a streamed workload has no later session turns");
    this.hasDependentArrivals = false;
  }

  seed(): void {}

  onTerminal(): void {}
}

/**
 * Decides when each request arrives (`ai-dynamo/dynamo@9ce5bc5:lib/mocker/src/loadgen/driver.rs`):
 *  - open loop (`trace_timestamps`, `poisson`, `constant_rate`): a session's first turn arrives
 *    at its authored timestamp ÷ speedup; a later turn arrives `delay ÷ speedup` after the
 *    previous turn of its session finished.
 *  - closed loop (`concurrency: N`): at most N sessions are active; sessions start in file order
 *    as slots free, a session holds its slot through all turns and think time, and a request's
 *    arrival time is its dispatch time. With `warmup_sessions: W` the first W sessions are a
 *    warm-up phase and the rest wait until every one of them has ended, then up to N start at
 *    once (AIPerf's phases: docs/traffic.md "Warm-up phase").
 * It only computes times; the replay loop owns the clock and the event queue.
 */
export class ArrivalPlan implements Arrivals {
  readonly closedLoop: boolean;
  private readonly speedup: number;
  private readonly concurrency: number;
  /** Sessions of the warm-up phase (0: none); the measured sessions wait for all of them to end. */
  private readonly warmupSessions: number;
  /** Warm-up sessions not yet ended. */
  private warmupOpen = 0;
  private nextSession = 0;

  constructor(
    private readonly table: RequestTable,
    load: LoadSpec,
  ) {
    this.closedLoop = load.type === "concurrency";
    this.speedup = load.type === "trace_timestamps" ? load.speedup : 1;
    this.concurrency = load.type === "concurrency" ? load.concurrency : 0;
    this.warmupSessions =
      load.type === "concurrency" ? Math.min(load.warmupSessions ?? 0, table.sessionCount) : 0;
  }

  /**
   * Whether a request's end can make another request ready (a session's later turn, or the next
   * session of a closed loop): then any pass end may schedule an arrival.
   */
  get hasDependentArrivals(): boolean {
    if (this.closedLoop) return true;
    const next = this.table.nextTurnRow;
    for (let r = 0; r < next.length; r++) if (next[r] >= 0) return true;
    return false;
  }

  /** Calls `schedule(row, time)` for every request that is ready at the start. */
  seed(schedule: (row: number, time: number) => void): void {
    const t = this.table;
    if (this.closedLoop) {
      this.warmupOpen = this.warmupSessions;
      const phaseEnd = this.warmupSessions > 0 ? this.warmupSessions : t.sessionCount;
      const n = Math.min(this.concurrency, phaseEnd);
      for (let s = 0; s < n; s++) schedule(t.sessionFirstRow[s], 0);
      this.nextSession = n;
      return;
    }
    for (let s = 0; s < t.sessionCount; s++) {
      const row = t.sessionFirstRow[s];
      schedule(row, t.timestampMs[row] / this.speedup);
    }
    this.nextSession = t.sessionCount;
  }

  /** A request reached a terminal state at `now`: schedules what that makes ready. */
  onTerminal(row: number, now: number, schedule: (row: number, time: number) => void): void {
    const t = this.table;
    const next = t.nextTurnRow[row];
    if (next >= 0) {
      schedule(next, now + t.delayAfterPreviousMs[next] / this.speedup);
      return;
    }
    if (!this.closedLoop) return;
    if (this.warmupOpen > 0) {
      // The warm-up phase: its own sessions fill freed slots; the measured phase starts when the
      // last of them ends, with every slot at once (a burst of up to N arrivals at `now`).
      if (this.nextSession < this.warmupSessions) {
        schedule(t.sessionFirstRow[this.nextSession++], now);
        this.warmupOpen--;
        return;
      }
      if (--this.warmupOpen > 0) return;
      const end = Math.min(t.sessionCount, this.nextSession + this.concurrency);
      while (this.nextSession < end) schedule(t.sessionFirstRow[this.nextSession++], now);
      return;
    }
    if (this.nextSession < t.sessionCount) schedule(t.sessionFirstRow[this.nextSession++], now);
  }
}
