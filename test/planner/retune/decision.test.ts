/**
 * Retune decisions (docs/retune.md §7–§10): decision timing for a latency of 0, a fixed number and
 * `measured` × scale, every outcome, and the `retune_events` record.
 */
import { describe, expect, it } from "vitest";
import type { KvRouterSpec } from "../../../src/config/runSpec.js";
import {
  type CandidateResult,
  type DecisionEnv,
  type DecisionInput,
  decideWindow,
  decisionId,
  type SweepReport,
} from "../../../src/planner/retune/decision.js";
import { type CandidateSet, candidateSet, withPredictorWinner } from "../../../src/planner/retune/grid.js";
import { livePoint, type RetunePoint, startupPoint } from "../../../src/planner/retune/points.js";
import { LOAD_PREDICTOR_CANDIDATES } from "../../../src/planner/retune/predictorPresweep.js";
import { decisionLatencyS, decisionTiming } from "../../../src/planner/retune/timing.js";
import { retuneWindow } from "../../../src/planner/retune/windows.js";
import { plannerSettings } from "../../helpers/planner.js";

const ROUTER: KvRouterSpec = {
  policy: "kv_router",
  overlapScoreCredit: 1,
  prefillLoadScale: 1,
  temperature: 1,
  prefillLoadModel: "none",
};
const STARTUP = startupPoint(ROUTER, plannerSettings());
const WINDOW_0 = retuneWindow(0, { intervalS: 600, graceS: 60 });

const LATENCY = { decisionLatencyS: 0, decisionLatencyScale: 1, timeoutS: 600 } as const;

describe("decision timing", () => {
  const at = (latencyS: number, asOfS = 660) => decisionTiming({ asOfS, tickS: 5, latencyS });

  it("decides one tick after launch with D = 0 (Scenario 1: launch 660, decide 665)", () => {
    expect(at(0)).toEqual({
      asOfS: 660,
      launchedAtS: 660,
      latencyS: 0,
      readyAtS: 665,
      decidedAtS: 665,
      routerSwitchAtS: 665,
      plannerFieldsFromS: 670,
    });
  });

  it("waits max(D, Δ), then for the next tick, with a fixed D", () => {
    expect(at(3).decidedAtS).toBe(665);
    expect(at(5).decidedAtS).toBe(665);
    expect(at(12)).toMatchObject({ readyAtS: 672, decidedAtS: 675, plannerFieldsFromS: 680 });
    // D = T: the decision lands on the next window's launch tick.
    expect(at(600).decidedAtS).toBe(1260);
    // L_0 = 607 is off the grid: launch at 610.
    expect(decisionTiming({ asOfS: 607, tickS: 5, latencyS: 0 })).toMatchObject({
      launchedAtS: 610,
      decidedAtS: 615,
    });
  });

  it("charges the measured sweep time × scale (seed 000: an 11 s sweep decides at 675)", () => {
    const measured = { ...LATENCY, decisionLatencyS: "measured" as const };
    expect(decisionLatencyS(measured, 11)).toBe(11);
    expect(at(decisionLatencyS(measured, 11)).decidedAtS).toBe(675);
    const slowHost = { ...measured, decisionLatencyScale: 5, timeoutS: 120 };
    expect(decisionLatencyS(slowHost, 2.2)).toBeCloseTo(11, 12);
    expect(at(decisionLatencyS(slowHost, 2.2)).decidedAtS).toBe(675);
    expect(at(decisionLatencyS({ ...measured, decisionLatencyScale: 0.5 }, 11)).decidedAtS).toBe(670);
    // A sweep stopped at its timeout is charged the timeout: 120 × 5 = 600.
    expect(decisionLatencyS(slowHost, 700)).toBe(600);
  });

  it("ignores the wall time with a fixed D", () => {
    expect(decisionLatencyS({ ...LATENCY, decisionLatencyS: 7 }, 123)).toBe(7);
    expect(decisionLatencyS(LATENCY, 123)).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Outcomes

const ENV: DecisionEnv = {
  settings: { ...LATENCY, intervalS: 600, minImprovementPercentage: 3, objective: "Throughput" },
  tickS: 5,
  advisory: false,
  predictorBase: plannerSettings(),
};

/** Scenario 1's candidates: (1, p, t) for p ∈ {0.5, 1, 2}, t ∈ {0, 1}; the current point (1, 1, 1) is 3. */
const SCENARIO_1: CandidateSet = candidateSet(
  {
    router: { overlapScoreCredit: [1], prefillLoadScale: [0.5, 1, 2], temperature: [0, 1] },
    plannerDimensions: [],
    maxCandidates: 6,
  },
  STARTUP,
  STARTUP,
);

type Score = number | null | "timeout";

function result(s: Score): CandidateResult {
  if (s === "timeout") return { status: "timeout" };
  if (s === null) return { status: "failed", error: "replay crashed" };
  return { status: "ok", summary: { output_throughput_tok_s: s } };
}

function sweep(scores: readonly Score[], over: Partial<SweepReport> = {}, set = SCENARIO_1): SweepReport {
  return {
    wallS: 2,
    timedOut: false,
    error: null,
    candidates: set.candidates,
    currentIndex: set.currentIndex,
    results: scores.map(result),
    presweep: null,
    predictorWarmupObservations: null,
    ...over,
  };
}

function input(s: SweepReport | DecisionInput["attempt"], over: Partial<DecisionInput> = {}): DecisionInput {
  const attempt = "kind" in s ? s : { kind: "swept" as const, sweep: s };
  return { ordinal: 1, window: WINDOW_0, numRequests: 4100, previous: STARTUP, attempt, ...over };
}

const point = (i: number): RetunePoint => SCENARIO_1.candidates[i].point;

describe("outcomes", () => {
  it("applied: the best candidate clears the threshold and changes the router", () => {
    const d = decideWindow(input(sweep([100, 100, 100, 100, 110, 100])), ENV);
    expect(d.record).toEqual({
      decision_id: "retune-1-w0",
      outcome: "applied",
      reason: null,
      window_index: 0,
      window_start_s: 0,
      window_end_s: 600,
      as_of_s: 660,
      launched_at_s: 660,
      decided_at_s: 665,
      num_requests: 4100,
      num_candidates: 6,
      previous: livePoint(STARTUP),
      chosen: livePoint(point(4)),
      planner_changes: {},
      baseline_score: 100,
      best_score: 110,
      // Ties after the best: the current point (3), then canonical order.
      top: [4, 3, 0, 1, 2].map((i) => [livePoint(point(i)), i === 4 ? 110 : 100]),
      failed_candidates: [],
      predictor_presweep: null,
      predictor_warmup: null,
      sweep_wall_s: 2,
      decision_latency_s: 0,
    });
    expect(d.record.chosen?.router).toEqual({
      overlap_score_credit: 1,
      prefill_load_scale: 2,
      router_temperature: 0,
    });
    expect(d.current).toEqual(point(4));
    expect(d.routerParameters).toEqual({ overlapScoreCredit: 1, prefillLoadScale: 2, temperature: 0 });
    expect(d.plannerChanges).toEqual({});
    expect(d.timing).toMatchObject({ routerSwitchAtS: 665, plannerFieldsFromS: 670 });
  });

  it("a candidate whose replay failed (a killed worker) is listed with its reason, not dropped silently", () => {
    const d = decideWindow(input(sweep([100, null, 100, 100, 110, 100])), ENV);
    expect(d.record.outcome).toBe("applied");
    expect(d.record.top.map(([p]) => p)).not.toContainEqual(livePoint(point(1)));
    expect(d.record.failed_candidates).toEqual([[livePoint(point(1)), "replay crashed"]]);
    const timedOut = decideWindow(input(sweep([100, 100, 100, 100, 110, "timeout"])), ENV);
    expect(timedOut.record.outcome).toBe("timeout");
    expect(timedOut.record.failed_candidates).toEqual([[livePoint(point(5)), "timed out"]]);
  });

  it("kept: the best does not beat the current score by more than min_improvement_percentage", () => {
    const d = decideWindow(input(sweep([100, 100, 100, 100, 103, 100])), ENV);
    expect(d.record.outcome).toBe("kept");
    expect(d.record.reason).toMatch(/by 3%, not more than min_improvement_percentage \(3%\)/);
    expect(d.record.chosen).toEqual(livePoint(point(4)));
    expect(d.record.planner_changes).toEqual({});
    expect(d.current).toBe(STARTUP);
    expect(d.routerParameters).toBeNull();
  });

  it("kept: a tie goes to the current point", () => {
    const d = decideWindow(input(sweep([100, 100, 100, 100, 100, 100])), ENV);
    expect(d.record).toMatchObject({
      outcome: "kept",
      reason: "the current point ranks best",
      best_score: 100,
    });
    expect(d.record.chosen).toEqual(livePoint(STARTUP));
  });

  it("kept: an empty window", () => {
    const d = decideWindow(input(sweep([]), { numRequests: 0 }), ENV);
    expect(d.record).toMatchObject({
      outcome: "kept",
      reason: "empty window",
      num_requests: 0,
      chosen: null,
      baseline_score: null,
      best_score: null,
      top: [],
      launched_at_s: 660,
      decided_at_s: 665,
    });
  });

  it("advisory: would apply, changes nothing", () => {
    const d = decideWindow(input(sweep([100, 100, 100, 100, 110, 100])), { ...ENV, advisory: true });
    expect(d.record.outcome).toBe("advisory");
    expect(d.record.chosen).toEqual(livePoint(point(4)));
    expect(d.current).toBe(STARTUP);
    expect(d.routerParameters).toBeNull();
    expect(d.plannerChanges).toEqual({});
  });

  it("busy: no sweep for a window that came due while one was in flight", () => {
    const d = decideWindow(input({ kind: "busy" }, { numRequests: 0 }), ENV);
    expect(d.record).toMatchObject({
      outcome: "busy",
      reason: null,
      launched_at_s: null,
      decided_at_s: 660,
      num_candidates: 0,
      chosen: null,
      sweep_wall_s: null,
      decision_latency_s: null,
    });
    expect(d.timing).toBeNull();
    expect(d.current).toBe(STARTUP);
  });

  it("stale: the deployed point changed while the sweep ran", () => {
    const s = sweep([100, 100, 100, 100, 110, 100]);
    const d = decideWindow(input({ kind: "swept", sweep: s, currentAtHarvest: point(0) }), ENV);
    expect(d.record).toMatchObject({ outcome: "stale", reason: null, best_score: 110 });
    expect(d.current).toBe(STARTUP);
    expect(d.routerParameters).toBeNull();
    // The same point at harvest is not stale.
    const same = decideWindow(input({ kind: "swept", sweep: s, currentAtHarvest: { ...STARTUP } }), ENV);
    expect(same.record.outcome).toBe("applied");
  });

  it("timeout: the sweep ran past timeout_seconds; nothing is scored", () => {
    for (const s of [
      sweep([100, 100, 100, 100, 110, 100], { timedOut: true }),
      sweep([100, 100, 100, 100, 110, 100], { wallS: 601 }),
      sweep([100, 100, 100, 100, 110, "timeout"]),
    ]) {
      const d = decideWindow(input(s), ENV);
      expect(d.record).toMatchObject({
        outcome: "timeout",
        reason: null,
        chosen: null,
        baseline_score: null,
        top: [],
      });
      expect(d.current).toBe(STARTUP);
    }
  });

  it("failed: not launched, a sweep error, or the current point failed to score", () => {
    const notLaunched = decideWindow(
      input({ kind: "not_launched", reason: "no ready worker counts at the window start" }),
      ENV,
    );
    expect(notLaunched.record).toMatchObject({
      outcome: "failed",
      reason: "no ready worker counts at the window start",
      launched_at_s: null,
      decided_at_s: 660,
      sweep_wall_s: null,
    });
    const readError = decideWindow(input(sweep([], { error: "traces/a.jsonl:3: invalid JSON" })), ENV);
    expect(readError.record).toMatchObject({
      outcome: "failed",
      reason: "traces/a.jsonl:3: invalid JSON",
      chosen: null,
    });
    const noBaseline = decideWindow(input(sweep([100, 100, 100, null, 110, 100])), ENV);
    expect(noBaseline.record.outcome).toBe("failed");
    expect(noBaseline.record.reason).toBe("current point failed to score: replay crashed");
    expect(noBaseline.record.baseline_score).toBeNull();
    expect(noBaseline.record.best_score).toBe(110);
    expect(noBaseline.current).toBe(STARTUP);
  });

  it("numbers decisions retune-<n>-w<k>", () => {
    expect(decisionId(3, 7)).toBe("retune-3-w7");
    const d = decideWindow(
      input(sweep([100, 100, 100, 100, 100, 100]), {
        ordinal: 2,
        window: retuneWindow(1, { intervalS: 600, graceS: 60 }),
      }),
      ENV,
    );
    expect(d.record).toMatchObject({
      decision_id: "retune-2-w1",
      as_of_s: 1260,
      launched_at_s: 1260,
      decided_at_s: 1265,
    });
  });
});

describe("Planner changes and a predictor swap (Scenario 2 shape)", () => {
  // temperature {0, 1} × load_scaling_down_sensitivity {80, 90}; current (1, 1, 1) at 80 with the
  // constant predictor is candidate 2; the pre-sweep picked kalman_reactive_raw (min_points 3).
  const kalman = LOAD_PREDICTOR_CANDIDATES[9];
  const set = candidateSet(
    {
      router: { overlapScoreCredit: [1], prefillLoadScale: [1], temperature: [0, 1] },
      plannerDimensions: [
        {
          key: "load_scaling_down_sensitivity",
          points: [{ loadScalingDownSensitivity: 80 }, { loadScalingDownSensitivity: 90 }],
        },
      ],
      maxCandidates: 4,
    },
    STARTUP,
    STARTUP,
  );
  const candidates = withPredictorWinner(set, kalman.fields);
  const presweep = {
    winner: kalman.name,
    fields: { load_predictor: "kalman" },
    losses: {},
    eval_steps: 4,
    warmup_steps: 10,
    wall_s: 0.1,
  };
  const swept = (observations: number | null): SweepReport => ({
    ...sweep([100, 100, 100, 120], { predictorWarmupObservations: observations, presweep }, set),
    candidates,
  });
  const CHANGES = {
    load_scaling_down_sensitivity: 90,
    load_predictor: "kalman",
    kalman_q_level: 10,
    kalman_q_trend: 1,
    kalman_r: 5,
    kalman_min_points: 3,
  };

  it("applies the Planner fields with the winner's predictor and carries its warm-up", () => {
    expect(set.currentIndex).toBe(2);
    const d = decideWindow(input(swept(14)), ENV);
    expect(d.record).toMatchObject({
      outcome: "applied",
      planner_changes: CHANGES,
      predictor_warmup: 14,
      predictor_presweep: presweep,
    });
    expect(d.plannerChanges).toEqual(CHANGES);
    expect(d.routerParameters).toEqual({ overlapScoreCredit: 1, prefillLoadScale: 1, temperature: 1 });
    expect(d.current.predictor).toEqual(kalman.fields);
    expect(d.current.planner.loadScalingDownSensitivity).toBe(90);
  });

  it("fails a swap without enough warm-up observations", () => {
    for (const obs of [2, null]) {
      const d = decideWindow(input(swept(obs)), ENV);
      expect(d.record.outcome).toBe("failed");
      expect(d.record.reason).toBe(`predictor warm-up too short: ${obs ?? 0} observations, kalman needs 3`);
      expect(d.record.planner_changes).toEqual({});
      expect(d.record.predictor_warmup).toBeNull();
      expect(d.current).toBe(STARTUP);
    }
    expect(decideWindow(input(swept(3)), ENV).record.outcome).toBe("applied");
  });

  it("fails Planner changes that no longer validate", () => {
    let seen: unknown = null;
    const env = {
      ...ENV,
      validatePlannerChanges: (changes: Readonly<Record<string, unknown>>) => {
        seen = changes;
        return "load_scaling_down_sensitivity out of range";
      },
    };
    const d = decideWindow(input(swept(14)), env);
    expect(seen).toEqual(CHANGES);
    expect(d.record).toMatchObject({
      outcome: "failed",
      reason: "Planner changes no longer validate: load_scaling_down_sensitivity out of range",
      planner_changes: {},
    });
  });

  it("advisory: shows the Planner changes it would apply, no predictor warm-up", () => {
    const d = decideWindow(input(swept(14)), { ...ENV, advisory: true });
    expect(d.record).toMatchObject({ outcome: "advisory", planner_changes: CHANGES, predictor_warmup: null });
    expect(d.plannerChanges).toEqual({});
    expect(d.current).toBe(STARTUP);
  });

  it("minimizes a latency objective", () => {
    const env: DecisionEnv = { ...ENV, settings: { ...ENV.settings, objective: "TTFT" } };
    const ttft = (ms: number): CandidateResult => ({
      status: "ok",
      summary: { mean_ttft_ms: ms, num_ttft_samples: 10 },
    });
    const s = { ...swept(14), results: [ttft(90), ttft(100), ttft(100), ttft(80)] };
    const d = decideWindow(input(s), env);
    expect(d.record).toMatchObject({ outcome: "applied", baseline_score: 100, best_score: 80 });
    expect(d.record.top.map(([, v]) => v)).toEqual([80, 90, 100, 100]);
  });
});
