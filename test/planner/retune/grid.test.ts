/**
 * Retune points and the candidate set (docs/retune.md §5): grid order and size, deduplication of the
 * startup and current points, the max_candidates + 2 bound, canonical keys, the pre-sweep winner and
 * shared replays.
 */
import { describe, expect, it } from "vitest";
import type { KvRouterSpec } from "../../../src/config/runSpec.js";
import { ROUTER_DEFAULT_DOMAINS } from "../../../src/config/schema/retunePresets.js";
import {
  candidateSet,
  expandGrid,
  replayGroups,
  withPredictorWinner,
} from "../../../src/planner/retune/grid.js";
import {
  canonicalJson,
  livePoint,
  plannerChanges,
  pointKey,
  predictorFieldsOf,
  type RetunePoint,
  routerChanged,
  startupPoint,
} from "../../../src/planner/retune/points.js";
import { LOAD_PREDICTOR_CANDIDATES } from "../../../src/planner/retune/predictorPresweep.js";
import type { RetunePlannerDimension, RetuneRouterDomain } from "../../../src/planner/types.js";
import { plannerSettings } from "../../helpers/planner.js";

function kvRouter(over: Partial<KvRouterSpec> = {}): KvRouterSpec {
  return {
    policy: "kv_router",
    overlapScoreCredit: 1,
    prefillLoadScale: 1,
    temperature: 1,
    prefillLoadModel: "none",
    ...over,
  };
}

/** Seed 000 Scenario 1: overlap pinned at 1.0, prefill_load_scale {0.5, 1, 2}, temperature {0, 1}. */
const SCENARIO_1_ROUTER: RetuneRouterDomain = {
  overlapScoreCredit: [1],
  prefillLoadScale: [0.5, 1, 2],
  temperature: [0, 1],
};

const STARTUP = startupPoint(kvRouter(), plannerSettings());

function withRouter(p: RetunePoint, overlap: number, prefill: number, temperature: number): RetunePoint {
  return { ...p, router: { overlapScoreCredit: overlap, prefillLoadScale: prefill, temperature } };
}

const routerTuples = (points: readonly RetunePoint[]) =>
  points.map((p) => [p.router?.overlapScoreCredit, p.router?.prefillLoadScale, p.router?.temperature]);

describe("points", () => {
  it("builds the startup point from the router and Planner settings", () => {
    expect(STARTUP).toEqual({
      router: { overlapScoreCredit: 1, prefillLoadScale: 1, temperature: 1 },
      planner: {
        loadScalingDownSensitivity: 80,
        loadMinObservations: 5,
        maxNumFpmSamples: 64,
        fpmSampleBucketSize: 16,
      },
      predictor: { loadPredictor: "constant", loadPredictorLog1p: false },
    });
    expect(startupPoint({ policy: "round_robin" }, plannerSettings()).router).toBeNull();
  });

  it("keeps only the predictor family's own knobs, so a configuration equals its preset", () => {
    const kalman = predictorFieldsOf(
      plannerSettings({
        loadPredictor: "kalman",
        kalmanQLevel: 10,
        kalmanQTrend: 1,
        kalmanR: 5,
        kalmanMinPoints: 3,
      }),
    );
    const preset = LOAD_PREDICTOR_CANDIDATES.find((c) => c.name === "kalman_reactive_raw");
    expect(canonicalJson(kalman)).toBe(canonicalJson(preset?.fields));
    expect(
      predictorFieldsOf(plannerSettings({ loadPredictor: "prophet", loadPredictorLog1p: true })),
    ).toEqual({
      loadPredictor: "prophet",
      loadPredictorLog1p: true,
      prophetWindowSize: 50,
    });
  });

  it("shows live names and keys by canonical JSON", () => {
    expect(livePoint(STARTUP)).toEqual({
      router: { overlap_score_credit: 1, prefill_load_scale: 1, router_temperature: 1 },
      planner: {
        load_scaling_down_sensitivity: 80,
        load_min_observations: 5,
        max_num_fpm_samples: 64,
        fpm_sample_bucket_size: 16,
        load_predictor: "constant",
        load_predictor_log1p: false,
      },
    });
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 1 }] })).toBe('{"a":[{"c":1,"d":2}],"b":1}');
    const reordered: RetunePoint = {
      predictor: STARTUP.predictor,
      planner: { ...STARTUP.planner },
      router: { temperature: 1, prefillLoadScale: 1, overlapScoreCredit: 1 },
    };
    expect(pointKey(reordered)).toBe(pointKey(STARTUP));
    expect(pointKey(withRouter(STARTUP, 1, 1, 0))).not.toBe(pointKey(STARTUP));
  });

  it("lists Planner changes with a swapped predictor's knobs, and router changes apart", () => {
    const to: RetunePoint = {
      ...withRouter(STARTUP, 1, 2, 1),
      planner: { ...STARTUP.planner, loadScalingDownSensitivity: 90 },
      predictor: {
        loadPredictor: "kalman",
        loadPredictorLog1p: false,
        kalmanQLevel: 10,
        kalmanQTrend: 1,
        kalmanR: 5,
        kalmanMinPoints: 3,
      },
    };
    expect(plannerChanges(STARTUP, to)).toEqual({
      load_scaling_down_sensitivity: 90,
      load_predictor: "kalman",
      kalman_q_level: 10,
      kalman_q_trend: 1,
      kalman_r: 5,
      kalman_min_points: 3,
    });
    // Back to constant: the Kalman knobs are left alone (unused), only the family changes.
    expect(plannerChanges(to, STARTUP)).toEqual({
      load_scaling_down_sensitivity: 80,
      load_predictor: "constant",
    });
    expect(routerChanged(STARTUP, to)).toBe(true);
    expect(routerChanged(STARTUP, { ...STARTUP })).toBe(false);
  });
});

describe("expandGrid", () => {
  it("is the product in canonical order, the last dimension fastest (Scenario 1: 1 × 3 × 2)", () => {
    const grid = expandGrid({ router: SCENARIO_1_ROUTER, plannerDimensions: [] }, STARTUP);
    expect(routerTuples(grid)).toEqual([
      [1, 0.5, 0],
      [1, 0.5, 1],
      [1, 1, 0],
      [1, 1, 1],
      [1, 2, 0],
      [1, 2, 1],
    ]);
    // Everything not searched keeps the current values.
    for (const p of grid) {
      expect(p.planner).toEqual(STARTUP.planner);
      expect(p.predictor).toEqual(STARTUP.predictor);
    }
  });

  it("searches 3 × 9 × 4 = 108 points with the default router domains", () => {
    const router = {
      overlapScoreCredit: [...ROUTER_DEFAULT_DOMAINS.overlap_score_credit],
      prefillLoadScale: [...ROUTER_DEFAULT_DOMAINS.prefill_load_scale],
      temperature: [...ROUTER_DEFAULT_DOMAINS.temperature],
    };
    const grid = expandGrid({ router, plannerDimensions: [] }, STARTUP);
    expect(grid).toHaveLength(108);
    expect(routerTuples([grid[0], grid[1], grid[4], grid[36], grid[107]])).toEqual([
      [0, 0, 0],
      [0, 0, 0.2],
      [0, 0.25, 0],
      [0.5, 0, 0],
      [1, 32, 1],
    ]);
  });

  it("puts Planner dimensions after the router and merges preset values over the current fields", () => {
    const dims: RetunePlannerDimension[] = [
      {
        key: "load_sensitivity",
        points: [
          { loadScalingDownSensitivity: 70, loadMinObservations: 3 },
          { loadScalingDownSensitivity: 90, loadMinObservations: 8 },
        ],
      },
      { key: "fpm_sample_bucket_size", points: [{ fpmSampleBucketSize: 4 }, { fpmSampleBucketSize: 64 }] },
    ];
    const grid = expandGrid(
      {
        router: { overlapScoreCredit: [1], prefillLoadScale: [1], temperature: [0, 1] },
        plannerDimensions: dims,
      },
      STARTUP,
    );
    expect(grid).toHaveLength(8);
    expect(
      grid.map((p) => [
        p.router?.temperature,
        p.planner.loadScalingDownSensitivity,
        p.planner.loadMinObservations,
        p.planner.fpmSampleBucketSize,
        p.planner.maxNumFpmSamples,
      ]),
    ).toEqual([
      [0, 70, 3, 4, 64],
      [0, 70, 3, 64, 64],
      [0, 90, 8, 4, 64],
      [0, 90, 8, 64, 64],
      [1, 70, 3, 4, 64],
      [1, 70, 3, 64, 64],
      [1, 90, 8, 4, 64],
      [1, 90, 8, 64, 64],
    ]);
  });

  it("is the single current point without any dimension", () => {
    expect(expandGrid({ router: null, plannerDimensions: [] }, STARTUP)).toEqual([STARTUP]);
  });

  it("needs router parameters to search them", () => {
    const rr = startupPoint({ policy: "round_robin" }, plannerSettings());
    expect(() => expandGrid({ router: SCENARIO_1_ROUTER, plannerDimensions: [] }, rr)).toThrow(/router/);
  });
});

describe("candidateSet", () => {
  const retune = { router: SCENARIO_1_ROUTER, plannerDimensions: [], maxCandidates: 6 };

  it("makes a grid point equal to the current point the current point (startup == current)", () => {
    // Startup (1, 1, 1) is grid point 3.
    const set = candidateSet(retune, STARTUP, STARTUP);
    expect(set.candidates).toHaveLength(6);
    expect(set.gridSize).toBe(6);
    expect(set.currentIndex).toBe(3);
    expect(set.startupIndex).toBe(3);
    expect(set.candidates.map((c) => c.key)).toEqual(set.candidates.map((c) => pointKey(c.point)));
  });

  it("appends a startup point outside the grid once when it is also the current point", () => {
    const startup = withRouter(STARTUP, 1, 1, 0.7);
    const set = candidateSet(retune, startup, startup);
    expect(set.candidates).toHaveLength(7);
    expect(set.startupIndex).toBe(6);
    expect(set.currentIndex).toBe(6);
  });

  it("lists grid, startup, current: at most max_candidates + 2 points", () => {
    const startup = withRouter(STARTUP, 1, 1, 0.7);
    const current = withRouter(STARTUP, 1, 4, 0);
    const set = candidateSet(retune, startup, current);
    expect(set.candidates).toHaveLength(8);
    expect([set.startupIndex, set.currentIndex]).toEqual([6, 7]);
    expect(set.candidates[6].point).toEqual(startup);
    expect(set.candidates[7].point).toEqual(current);
  });

  it("keeps the grid position of a current point the grid holds, startup appended", () => {
    // After an applied decision: current = grid point 4 (1, 2, 0); startup (1, 1, 0.7) is outside.
    const startup = withRouter(STARTUP, 1, 1, 0.7);
    const set = candidateSet(retune, startup, withRouter(STARTUP, 1, 2, 0));
    expect(set.candidates).toHaveLength(7);
    expect([set.currentIndex, set.startupIndex]).toEqual([4, 6]);
  });

  it("rejects a grid larger than max_candidates", () => {
    expect(() => candidateSet({ ...retune, maxCandidates: 5 }, STARTUP, STARTUP)).toThrow(/max_candidates/);
  });
});

describe("pre-sweep winner and shared replays", () => {
  const kalman = LOAD_PREDICTOR_CANDIDATES[9].fields; // kalman_reactive_raw
  const retune = {
    router: { overlapScoreCredit: [1], prefillLoadScale: [1], temperature: [0, 1] },
    plannerDimensions: [],
    maxCandidates: 2,
  };

  it("gives every candidate but the current point the winner's predictor", () => {
    const set = candidateSet(retune, STARTUP, STARTUP);
    const out = withPredictorWinner(set, kalman);
    expect(set.currentIndex).toBe(1);
    expect(out[0].point.predictor).toEqual(kalman);
    expect(out[0].key).toBe(pointKey(out[0].point));
    expect(out[1]).toBe(set.candidates[1]);
    expect(withPredictorWinner(set, null)).toBe(set.candidates);
  });

  it("lets candidates that resolve to the same configuration share one replay", () => {
    // The current point runs Kalman (an applied swap); the startup point, otherwise equal, runs the
    // constant predictor. With Kalman winning the pre-sweep, startup becomes the current configuration.
    const current: RetunePoint = { ...STARTUP, predictor: kalman };
    const set = candidateSet(retune, STARTUP, current);
    expect(set.candidates).toHaveLength(3);
    expect([set.currentIndex, set.startupIndex]).toEqual([1, 2]);
    const out = withPredictorWinner(set, kalman);
    expect(replayGroups(out).map((g) => g.indices)).toEqual([[0], [1, 2]]);
    expect(replayGroups(set.candidates).map((g) => g.indices)).toEqual([[0], [1], [2]]);
  });
});
