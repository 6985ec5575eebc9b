/**
 * When a sweep's decision lands (docs/retune.md §9, seed 003 "Decision Timing").
 *
 * A sweep launched on tick t (the first tick at or after L_k) is ready at t + max(D, Δ) and decides on
 * the first tick at or after that — never in the launch tick. D = `decision_latency_seconds`, or with
 * `measured` the sweep's wall-clock seconds × `decision_latency_scale` (known at launch: virtual time
 * stands still while the sweep runs). Router parameters switch at the decision tick; Planner fields
 * (`planner_changes`) are applied after it, so they take effect from the next tick.
 */
import type { RetuneSettings } from "../types.js";
import { tickAtOrAfter } from "./windows.js";

export interface DecisionTiming {
  /** L_k. */
  readonly asOfS: number;
  /** The launch tick. */
  readonly launchedAtS: number;
  /** D (before the max with Δ). */
  readonly latencyS: number;
  /** launchedAtS + max(D, Δ). */
  readonly readyAtS: number;
  /** The decision tick. */
  readonly decidedAtS: number;
  /** Router parameters switch at the decision tick. */
  readonly routerSwitchAtS: number;
  /** Planner fields take effect from the tick after the decision tick. */
  readonly plannerFieldsFromS: number;
}

type LatencySettings = Pick<RetuneSettings, "decisionLatencyS" | "decisionLatencyScale" | "timeoutS">;

/**
 * D for one sweep. With `measured`, the wall time is capped at `timeout_seconds` — a sweep is stopped
 * there (**fleetsim choice**: a timed-out sweep is charged its timeout), and the config keeps
 * timeout × scale within T, so D ≤ T either way.
 */
export function decisionLatencyS(settings: LatencySettings, sweepWallS: number): number {
  if (settings.decisionLatencyS !== "measured") return settings.decisionLatencyS;
  if (!(sweepWallS >= 0)) throw new RangeError(`sweep wall time must be ≥ 0, got ${sweepWallS}`);
  return Math.min(sweepWallS, settings.timeoutS) * settings.decisionLatencyScale;
}

export function decisionTiming(args: {
  readonly asOfS: number;
  readonly tickS: number;
  readonly latencyS: number;
  readonly s0?: number;
}): DecisionTiming {
  const { asOfS, tickS, latencyS } = args;
  const s0 = args.s0 ?? 0;
  const launchedAtS = tickAtOrAfter(asOfS, tickS, s0);
  const readyAtS = launchedAtS + Math.max(latencyS, tickS);
  const decidedAtS = tickAtOrAfter(readyAtS, tickS, s0);
  return {
    asOfS,
    launchedAtS,
    latencyS,
    readyAtS,
    decidedAtS,
    routerSwitchAtS: decidedAtS,
    plannerFieldsFromS: tickAtOrAfter(decidedAtS + tickS, tickS, s0),
  };
}
