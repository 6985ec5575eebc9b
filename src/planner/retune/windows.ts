/**
 * Retune windows (docs/retune.md §4, seed 003 "Windows").
 *
 * With T = `interval_seconds` and G = `grace_seconds`, window k covers Planner time
 * [s0 + kT, s0 + (k+1)T) and its sweep launches (and its requests are censored) at
 * L_k = s0 + (k+1)T + G. Planner time s is trace time `originMs + s·1000·speedup`, origin = the first
 * trace arrival. Ticks fire at s0 + jΔ, j ≥ 1 (the first one Δ after the start), and a window's sweep
 * launches on the first tick at or after L_k.
 */
import type { RetuneSettings } from "../types.js";

export interface RetuneWindow {
  readonly index: number;
  /** Planner seconds. */
  readonly startS: number;
  readonly endS: number;
  /** L_k: launch and censoring time. */
  readonly asOfS: number;
}

type WindowSettings = Pick<RetuneSettings, "intervalS" | "graceS">;

export function retuneWindow(index: number, settings: WindowSettings, s0 = 0): RetuneWindow {
  if (!(Number.isInteger(index) && index >= 0))
    throw new RangeError(`window index must be ≥ 0, got ${index}`);
  const T = settings.intervalS;
  return {
    index,
    startS: s0 + index * T,
    endS: s0 + (index + 1) * T,
    asOfS: s0 + (index + 1) * T + settings.graceS,
  };
}

/** Relative tolerance for "on the tick grid": interval arithmetic in seconds is not exact in binary. */
const GRID_EPS = 1e-9;

/** Rounds away binary noise (12 significant digits, as the config rules do). */
function tidy(x: number): number {
  return Number(x.toPrecision(12));
}

/** The first tick s0 + jΔ (j ≥ 1) at or after `timeS`; a time within 1e-9 relative of a tick is on it. */
export function tickAtOrAfter(timeS: number, tickS: number, s0 = 0): number {
  if (!(tickS > 0)) throw new RangeError(`tick must be positive, got ${tickS}`);
  const r = (timeS - s0) / tickS;
  const nearest = Math.round(r);
  const j = Math.abs(r - nearest) <= GRID_EPS * Math.max(1, Math.abs(r)) ? nearest : Math.ceil(r);
  return tidy(s0 + Math.max(1, j) * tickS);
}

/** The tick on which window k's sweep launches: the first tick at or after L_k. */
export function launchTickS(window: RetuneWindow, tickS: number, s0 = 0): number {
  return tickAtOrAfter(window.asOfS, tickS, s0);
}

/**
 * The window whose sweep launches on the tick at `tickTimeS`, or null. T ≥ Δ, so at most one window
 * comes due per tick.
 */
export function windowDueAtTick(
  tickTimeS: number,
  settings: WindowSettings,
  tickS: number,
  s0 = 0,
): RetuneWindow | null {
  const r = (tickTimeS - s0 - settings.graceS) / settings.intervalS;
  const k = Math.floor(r + GRID_EPS * Math.max(1, Math.abs(r))) - 1;
  if (k < 0) return null;
  const w = retuneWindow(k, settings, s0);
  const launch = launchTickS(w, tickS, s0);
  return Math.abs(launch - tickTimeS) <= GRID_EPS * Math.max(1, Math.abs(launch)) ? w : null;
}

/** Planner clock ↔ trace clock. */
export interface TraceClock {
  /** The first trace arrival, trace milliseconds. */
  readonly originMs: number;
  /** `traffic.load.speedup`: trace seconds per Planner second. */
  readonly speedup: number;
}

export function plannerToTraceMs(s: number, clock: TraceClock): number {
  return clock.originMs + s * 1000 * clock.speedup;
}

export function traceMsToPlanner(ms: number, clock: TraceClock): number {
  return (ms - clock.originMs) / (1000 * clock.speedup);
}

/** The request columns window membership reads (trace milliseconds). */
export interface WindowRows {
  readonly arrivalMs: ArrayLike<number>;
  /**
   * `request_received_ms + total_time_ms`, or the event time when `request_received_ms` is absent;
   * NaN when the row has no `total_time_ms`: its completion is unknown and it cannot be censored.
   */
  readonly completionMs: ArrayLike<number>;
  /** Optional: a repeated id keeps its first row (in column order, anywhere in the columns). */
  readonly requestId?: ArrayLike<string>;
}

/** Row counts of one window read that membership decides (the reader adds `dropped` and stripped rows). */
export interface WindowMembershipCounts {
  /** Rows in the read range dropped because they completed after L_k. */
  readonly censored: number;
  /** Rows in the read range that repeat an earlier `request_id`. */
  readonly duplicate: number;
  /** Rows kept (window or history) without a known completion. */
  readonly censorUnavailable: number;
  /** Rows kept as history. */
  readonly historyRequests: number;
}

/** What `selectWindowRows` decided for one window: its rows, its history rows, the counts and bounds. */
export interface WindowMembership {
  /** Row indices of the window's requests, in column order. */
  readonly window: readonly number[];
  /** Row indices of the history before the window (empty without `historyS`), in column order. */
  readonly history: readonly number[];
  readonly counts: WindowMembershipCounts;
  /** The bounds used, trace ms: history from `historyStartMs`, window [startMs, endMs), cutoff. */
  readonly historyStartMs: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly cutoffMs: number;
}

/**
 * Which rows window k replays (and which are its history): a row is in the window when it arrived in
 * [start, end) and completed at or before L_k, all in trace time. **fleetsim choice**: the history
 * (arrivals in [start − historyS, start), Planner seconds mapped like every other time) is censored
 * the same way — a row is written when its request ends, so a row that completed after L_k is not in
 * the trace yet when the sweep reads it. The read range is checked first, then duplicates, then the
 * cutoff, so each row counts at most once.
 */
export function selectWindowRows(
  rows: WindowRows,
  window: RetuneWindow,
  clock: TraceClock,
  historyS: number | null = null,
): WindowMembership {
  const n = rows.arrivalMs.length;
  if (rows.completionMs.length !== n || (rows.requestId !== undefined && rows.requestId.length !== n)) {
    throw new RangeError("window columns must have one entry per row");
  }
  const startMs = plannerToTraceMs(window.startS, clock);
  const endMs = plannerToTraceMs(window.endS, clock);
  const cutoffMs = plannerToTraceMs(window.asOfS, clock);
  const historyStartMs = historyS === null ? startMs : plannerToTraceMs(window.startS - historyS, clock);
  const seen = new Set<string>();
  const inWindow: number[] = [];
  const inHistory: number[] = [];
  let censored = 0;
  let duplicate = 0;
  let censorUnavailable = 0;
  for (let i = 0; i < n; i++) {
    // Duplicates are judged over all rows: the first row of an id wins even outside the range.
    let repeated = false;
    if (rows.requestId !== undefined) {
      const id = rows.requestId[i];
      repeated = seen.has(id);
      seen.add(id);
    }
    const arrival = rows.arrivalMs[i];
    if (!(arrival >= historyStartMs && arrival < endMs)) continue;
    if (repeated) {
      duplicate++;
      continue;
    }
    const completion = rows.completionMs[i];
    if (completion > cutoffMs) {
      censored++;
      continue;
    }
    if (Number.isNaN(completion)) censorUnavailable++;
    (arrival >= startMs ? inWindow : inHistory).push(i);
  }
  return {
    window: inWindow,
    history: inHistory,
    counts: { censored, duplicate, censorUnavailable, historyRequests: inHistory.length },
    historyStartMs,
    startMs,
    endMs,
    cutoffMs,
  };
}

/** Every count the sweep logs per window (§4): membership counts plus the reader's own. */
export interface WindowLogCounts extends WindowMembershipCounts {
  /** `request_end` rows without `output_tokens`. */
  readonly dropped: number;
  /** Rows whose `agent_context` was stripped. */
  readonly agentContextStripped: number;
}

const LOG_NAMES: readonly [keyof WindowLogCounts, string][] = [
  ["dropped", "dropped"],
  ["censored", "censored"],
  ["duplicate", "duplicate"],
  ["censorUnavailable", "censor_unavailable"],
  ["agentContextStripped", "agent_context_stripped"],
  ["historyRequests", "history_requests"],
];

/** The window's log line: its request count and non-zero counts (an empty window logs too). */
export function formatWindowCounts(
  window: RetuneWindow,
  numRequests: number,
  counts: WindowLogCounts,
): string {
  const parts = LOG_NAMES.filter(([k]) => counts[k] !== 0).map(([k, name]) => `${name}=${counts[k]}`);
  const range = `[${window.startS}, ${window.endS}) s`;
  return `retune window ${window.index} ${range}: ${numRequests} requests${parts.length ? `, ${parts.join(", ")}` : ""}`;
}
