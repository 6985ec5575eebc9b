/**
 * `planner.retune` (seed 000 "Simulate Retune", seed 003 "Retune", docs/retune.md): the two seed
 * scenarios, defaults, domain expansion and the mapping to RetuneSettings.
 */
import { describe, expect, it } from "vitest";
import type { PlannerSettings, RetuneSettings } from "../../src/planner/types.js";
import { loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { dynamoRow } from "../helpers/dynamoTraces.js";
import { LOAD_PREDICTOR_PRESETS } from "../helpers/planner.js";
import { RETUNE_ONLY_PLANNER } from "../helpers/retuneProject.js";
import { seedAggregatedEngine } from "../helpers/seed001.js";

const T0 = 1_760_000_000_000;
const SEED_FILES = {
  "traces/toolagent-history.jsonl": `${dynamoRow("toolagent-0", T0)}\n`,
  "traces/toolagent-replay.jsonl": `${dynamoRow("toolagent-1", T0 + 1_200_000)}\n`,
};

/** Seed 000 Scenario 1 (`retune-router.yaml`), verbatim. */
const SCENARIO_1 = `traffic:
  source: {type: trace, format: dynamo, paths: [traces/toolagent-replay.jsonl]}
  load: {type: trace_timestamps}
${seedAggregatedEngine(3, false)}router: {policy: kv_router, temperature: 1.0}
${RETUNE_ONLY_PLANNER}    interval_seconds: 600
    max_parallel: 4
    router:
      overlap_score_credit: 1.0
      prefill_load_scale: {choices: [0.5, 1.0, 2.0]}
      temperature: {choices: [0.0, 1.0]}
evaluation:
  sla: {ttft_ms: 1500, itl_ms: 50}
`;

/** Seed 000 Scenario 2 (`retune-joint.yaml`): Scenario 1 with 2 replicas and the joint planner section. */
const SCENARIO_2 = SCENARIO_1.replace("replicas: 3", "replicas: 2").replace(
  /planner:\n(?: {2}.*\n)+/,
  `planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: true
  enable_load_scaling: true
  max_num_gpus: 6
  load_predictor_warmup_trace: traces/toolagent-history.jsonl
  retune:
    interval_seconds: 600
    max_parallel: 8
    router:
      overlap_score_credit: 1.0
      prefill_load_scale: 1.0
      temperature: {choices: [0.0, 1.0]}
    planner: default
`,
);

type Files = Readonly<Record<string, string>>;

function plannerOf(
  yaml: string,
  sets: readonly string[] = [],
  files: Files = SEED_FILES,
): PlannerSettings | null {
  return loadYaml(yaml, { files, sets }).planner;
}

function retuneOf(yaml: string, sets: readonly string[] = [], files: Files = SEED_FILES): RetuneSettings {
  const retune = plannerOf(yaml, sets, files)?.retune;
  if (retune === undefined || retune === null) throw new Error("expected retune settings");
  return retune;
}

/** Scenario 1's settings: fixed replicas, a 1 × 3 × 2 router grid. */
const SCENARIO_1_RETUNE: RetuneSettings = {
  intervalS: 600,
  graceS: 60,
  maxParallel: 4,
  timeoutS: 600,
  decisionLatencyS: 0,
  decisionLatencyScale: 1,
  minImprovementPercentage: 3,
  maxCandidates: 128,
  objective: "GoodputPerGPU",
  objectiveSense: "max",
  slaTtftMs: 1500,
  slaItlMs: 50,
  retuneOnly: true,
  historyS: null,
  router: { overlapScoreCredit: [1.0], prefillLoadScale: [0.5, 1.0, 2.0], temperature: [0.0, 1.0] },
  plannerDimensions: [],
  loadPredictorCandidates: null,
  gridSize: 6,
};

describe("seed 000: the two retune scenarios", () => {
  it("Scenario 1 (router only, fixed replicas) loads in retune-only mode", () => {
    const planner = plannerOf(SCENARIO_1);
    expect(planner).toMatchObject({
      optimizationTarget: "throughput",
      // Retune-only mode: the Planner never scales and ticks every load interval (5 s).
      enableThroughputScaling: false,
      enableLoadScaling: false,
      loadAdjustmentIntervalS: 5,
      scaleIntervalS: 5,
      // No evaluation.sla reaches the Planner of an easy target; retune scores with evaluation.sla.
      ttftMs: 500,
      itlMs: 50,
    });
    expect(planner?.retune).toEqual(SCENARIO_1_RETUNE);
  });

  it("Scenario 2 (autoscaling, router and planner: default) loads with the pre-sweep", () => {
    const planner = plannerOf(SCENARIO_2);
    expect(planner).toMatchObject({
      optimizationTarget: "sla",
      enableThroughputScaling: true,
      enableLoadScaling: true,
      scaleIntervalS: 5,
      maxGpuBudget: 6,
    });
    expect(planner?.loadPredictorWarmupTrace?.endsWith("traces/toolagent-history.jsonl")).toBe(true);
    const retune = planner?.retune;
    expect(retune).toMatchObject({
      maxParallel: 8,
      retuneOnly: false,
      // 180 s throughput interval × 50, the largest prophet_window_size among the presets.
      historyS: 9000,
      router: { overlapScoreCredit: [1.0], prefillLoadScale: [1.0], temperature: [0.0, 1.0] },
      // "load_scaling_down_sensitivity in {70, 80, 90}, because load scaling is on".
      plannerDimensions: [
        {
          key: "load_scaling_down_sensitivity",
          points: [
            { loadScalingDownSensitivity: 70 },
            { loadScalingDownSensitivity: 80 },
            { loadScalingDownSensitivity: 90 },
          ],
        },
      ],
      // "With two temperatures, the grid has 6 points."
      gridSize: 6,
      slaTtftMs: 1500,
      slaItlMs: 50,
    });
    expect(retune?.loadPredictorCandidates?.map((c) => c.name)).toEqual(LOAD_PREDICTOR_PRESETS);
    expect(retune?.loadPredictorCandidates?.[10]).toEqual({
      name: "kalman_reactive_log1p",
      fields: {
        loadPredictor: "kalman",
        loadPredictorLog1p: true,
        kalmanQLevel: 10.0,
        kalmanQTrend: 1.0,
        kalmanR: 5.0,
        kalmanMinPoints: 3,
      },
    });
  });

  it("decision_latency_seconds=measured and advisory=true are accepted (Decision Latency, Measure the Gain)", () => {
    expect(retuneOf(SCENARIO_1, ["planner.retune.decision_latency_seconds=measured"]).decisionLatencyS).toBe(
      "measured",
    );
    expect(plannerOf(SCENARIO_1, ["planner.advisory=true"])).toMatchObject({ advisory: true });
  });

  it("Measure the Gain: the baselines of both scenarios", () => {
    // Scenario 1: replace the whole planner section.
    expect(plannerOf(SCENARIO_1, ["planner={policy: disabled}"])).toBeNull();
    // Removing only retune: the two false flags no longer select retune-only mode.
    const withoutRetune = plannerOf(SCENARIO_1, ["planner.retune=null"]);
    expect(withoutRetune).toMatchObject({ enableLoadScaling: true, enableThroughputScaling: false });
    expect(withoutRetune?.retune).toBeUndefined();
    // Scenario 2: remove retune with --set planner.retune=null.
    const joint = plannerOf(SCENARIO_2, ["planner.retune=null"]);
    expect(joint).toMatchObject({ enableThroughputScaling: true, enableLoadScaling: true });
    expect(joint?.retune).toBeUndefined();
  });
});

const TRACE = "traces/replay.jsonl";
const FILES = { [TRACE]: `${dynamoRow("r0", T0)}\n` };
const TRAFFIC = `traffic:
  source: {type: trace, format: dynamo, paths: [${TRACE}]}
  load: {type: trace_timestamps, speedup: 2.0}
`;
const KV = "router: {policy: kv_router}\n";
const SLA = "evaluation: {sla: {ttft_ms: 800, itl_ms: 40}}\n";

/** A retune-only Planner with `retune` as given (a flow mapping). */
function retuneOnly(retune: string, extra = ""): string {
  return `${TRAFFIC}${KV}${extra}planner:
  policy: enabled
  enable_load_scaling: false
  enable_throughput_scaling: false
  retune: ${retune}
${RUNNABLE_ENGINE}`;
}

/** A `target: sla` Planner with the given flags and `retune`. */
function slaPlanner(flags: string, retune: string, extra = ""): string {
  return `${TRAFFIC}${KV}${SLA}${extra}planner:
  policy: enabled
  target: sla
  ${flags}
  retune: ${retune}
${RUNNABLE_ENGINE}`;
}

describe("retune defaults", () => {
  it("a minimal section: the seeds' defaults and fleetsim's, and every router knob on its default domain", () => {
    const retune = retuneOf(retuneOnly("{interval_seconds: 600, router: {}}"), [], FILES);
    expect(retune).toEqual({
      ...SCENARIO_1_RETUNE,
      slaTtftMs: 500,
      slaItlMs: 50,
      router: {
        overlapScoreCredit: [0.0, 0.5, 1.0],
        prefillLoadScale: [0, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
        temperature: [0.0, 0.2, 0.5, 1.0],
      },
      gridSize: 108,
    } satisfies RetuneSettings);
  });

  it("every key set explicitly passes through", () => {
    const retune = retuneOf(
      retuneOnly(`
    interval_seconds: 300
    grace_seconds: 0
    max_parallel: 2
    timeout_seconds: 100
    decision_latency_seconds: measured
    decision_latency_scale: 2.5
    min_improvement_percentage: 0
    max_candidates: 6
    objective: Goodput
    sla_ttft_ms: 1000
    sla_itl_ms: 30
    router: {overlap_score_credit: 0.5, prefill_load_scale: 2, temperature: {choices: [0.5, 0.0]}}`),
      [],
      FILES,
    );
    expect(retune).toMatchObject({
      intervalS: 300,
      graceS: 0,
      maxParallel: 2,
      timeoutS: 100,
      decisionLatencyS: "measured",
      decisionLatencyScale: 2.5,
      minImprovementPercentage: 0,
      maxCandidates: 6,
      objective: "Goodput",
      objectiveSense: "max",
      slaTtftMs: 1000,
      slaItlMs: 30,
      router: { overlapScoreCredit: [0.5], prefillLoadScale: [2], temperature: [0.5, 0.0] },
      gridSize: 2,
    });
  });

  it("the scoring SLA: retune.sla_*, else evaluation.sla, else the Planner's targets", () => {
    const base = retuneOnly("{interval_seconds: 600, router: {}}");
    expect(retuneOf(base, [], FILES)).toMatchObject({ slaTtftMs: 500, slaItlMs: 50 });
    expect(retuneOf(base, ["evaluation.sla={ttft_ms: 900}"], FILES)).toMatchObject({
      slaTtftMs: 900,
      slaItlMs: 50,
    });
    expect(
      retuneOf(base, ["evaluation.sla={ttft_ms: 900, itl_ms: 20}", "planner.retune.sla_itl_ms=25"], FILES),
    ).toMatchObject({ slaTtftMs: 900, slaItlMs: 25 });
  });

  it("TTFT and E2ELatency are minimized", () => {
    const base = retuneOnly("{interval_seconds: 600, router: {}}");
    expect(retuneOf(base, ["planner.retune.objective=TTFT"], FILES).objectiveSense).toBe("min");
    expect(retuneOf(base, ["planner.retune.objective=E2ELatency"], FILES).objectiveSense).toBe("min");
    expect(retuneOf(base, ["planner.retune.objective=ThroughputPerUser"], FILES).objectiveSense).toBe("max");
  });

  it("a decision latency and a timeout equal to the interval are allowed", () => {
    const retune = retuneOf(
      retuneOnly("{interval_seconds: 600, router: {}, decision_latency_seconds: 600, timeout_seconds: 600}"),
      [],
      FILES,
    );
    expect(retune).toMatchObject({ decisionLatencyS: 600, timeoutS: 600 });
    const measured = retuneOf(
      retuneOnly(
        "{interval_seconds: 600, router: {}, decision_latency_seconds: measured, decision_latency_scale: 1.5, timeout_seconds: 400}",
      ),
      [],
      FILES,
    );
    expect(measured).toMatchObject({ decisionLatencyScale: 1.5, timeoutS: 400 });
  });

  it("retune-only mode needs both flags explicitly false; one explicit false keeps the easy-target scaling", () => {
    const yaml = `${TRAFFIC}${KV}planner:
  policy: enabled
  enable_throughput_scaling: false
  retune: {interval_seconds: 600, planner: default}
${RUNNABLE_ENGINE}`;
    const planner = plannerOf(yaml, [], FILES);
    expect(planner).toMatchObject({
      enableLoadScaling: true,
      enableThroughputScaling: false,
      scaleIntervalS: 5,
    });
    expect(planner?.retune).toMatchObject({ retuneOnly: false, historyS: null, gridSize: 3 });
  });

  it("the retune-only tick is the load interval, whatever the throughput interval", () => {
    const planner = plannerOf(
      retuneOnly("{interval_seconds: 70, router: {}}", "").replace(
        "  enable_throughput_scaling: false\n",
        "  enable_throughput_scaling: false\n  load_adjustment_interval_seconds: 7\n  throughput_adjustment_interval_seconds: null\n",
      ),
      [],
      FILES,
    );
    expect(planner).toMatchObject({ scaleIntervalS: 7, loadAdjustmentIntervalS: 7 });
    expect(planner?.retune?.intervalS).toBe(70);
  });

  it("an interval that is a multiple of the gcd tick of both loops", () => {
    const retune = retuneOf(
      slaPlanner(
        "enable_throughput_scaling: true\n  enable_load_scaling: true\n  load_adjustment_interval_seconds: 10\n  throughput_adjustment_interval_seconds: 300",
        "{interval_seconds: 610, router: {temperature: 1.0}}",
      ),
      [],
      FILES,
    );
    expect(retune).toMatchObject({ intervalS: 610, historyS: 300 * 50 });
  });
});

describe("retune domain expansion", () => {
  const router = (domain: string): RetuneSettings["router"] =>
    retuneOf(
      retuneOnly(
        `{interval_seconds: 600, router: {overlap_score_credit: 1, prefill_load_scale: 1, temperature: ${domain}}}`,
      ),
      [],
      FILES,
    ).router;

  it("a scalar pins the knob; choices keep their order; default is the knob's default domain", () => {
    expect(router("0.7")?.temperature).toEqual([0.7]);
    expect(router("{choices: [1.0, 0.0, 0.5]}")?.temperature).toEqual([1.0, 0.0, 0.5]);
    expect(router("default")?.temperature).toEqual([0.0, 0.2, 0.5, 1.0]);
  });

  it("a linear range with a step lists min, min + step, ... up to max", () => {
    expect(router("{range: {min: 0, max: 1, step: 0.25}}")?.temperature).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(router("{range: {min: 0.1, max: 0.35, step: 0.1, scale: linear}}")?.temperature).toEqual([
      0.1, 0.2, 0.3,
    ]);
  });

  it("the grid is the product of every dimension", () => {
    const retune = retuneOf(
      slaPlanner(
        "enable_throughput_scaling: false\n  enable_load_scaling: true",
        `
    interval_seconds: 600
    router: {overlap_score_credit: {choices: [0.5, 1.0]}, prefill_load_scale: 1, temperature: {choices: [0, 1]}}
    planner:
      fpm_sampling: {preset: [small, fine]}
      load_scaling_down_sensitivity: {choices: [60, 90]}
      load_min_observations: {range: {min: 3, max: 7, step: 2}}`,
      ),
      [],
      FILES,
    );
    expect(retune.plannerDimensions).toEqual([
      {
        key: "load_scaling_down_sensitivity",
        points: [{ loadScalingDownSensitivity: 60 }, { loadScalingDownSensitivity: 90 }],
      },
      {
        key: "load_min_observations",
        points: [{ loadMinObservations: 3 }, { loadMinObservations: 5 }, { loadMinObservations: 7 }],
      },
      {
        key: "fpm_sampling",
        points: [
          { maxNumFpmSamples: 32, fpmSampleBucketSize: 4 },
          { maxNumFpmSamples: 128, fpmSampleBucketSize: 64 },
        ],
      },
    ]);
    expect(retune.loadPredictorCandidates).toBeNull();
    expect(retune.historyS).toBeNull();
    expect(retune.gridSize).toBe(2 * 1 * 2 * 2 * 3 * 2);
  });

  it("load_sensitivity: default lists the three presets", () => {
    const retune = retuneOf(
      slaPlanner(
        "enable_throughput_scaling: false\n  enable_load_scaling: true",
        "{interval_seconds: 600, planner: {load_sensitivity: default, max_num_fpm_samples: default}}",
      ),
      [],
      FILES,
    );
    expect(retune.plannerDimensions).toEqual([
      {
        key: "load_sensitivity",
        points: [
          { loadScalingDownSensitivity: 70, loadMinObservations: 3 },
          { loadScalingDownSensitivity: 80, loadMinObservations: 5 },
          { loadScalingDownSensitivity: 90, loadMinObservations: 8 },
        ],
      },
      {
        key: "max_num_fpm_samples",
        points: [{ maxNumFpmSamples: 32 }, { maxNumFpmSamples: 64 }, { maxNumFpmSamples: 128 }],
      },
    ]);
    expect(retune.router).toBeNull();
    expect(retune.gridSize).toBe(9);
  });

  it("planner: default follows the scaling modes", () => {
    // SLA, throughput only (a 180 s tick): the pre-sweep only; the grid is the one point of current fields.
    const throughputOnly = retuneOf(
      slaPlanner(
        "enable_throughput_scaling: true\n  enable_load_scaling: false",
        "{interval_seconds: 720, planner: default}",
      ),
      [],
      FILES,
    );
    expect(throughputOnly.plannerDimensions).toEqual([]);
    expect(throughputOnly.loadPredictorCandidates?.length).toBe(11);
    expect(throughputOnly.gridSize).toBe(1);
    // Load only (SLA): the sensitivity only.
    const loadOnly = retuneOf(
      slaPlanner(
        "enable_throughput_scaling: false\n  enable_load_scaling: true",
        "{interval_seconds: 600, planner: default}",
      ),
      [],
      FILES,
    );
    expect(loadOnly.plannerDimensions.map((d) => d.key)).toEqual(["load_scaling_down_sensitivity"]);
    expect(loadOnly.loadPredictorCandidates).toBeNull();
  });

  it("a chosen subset of predictor presets, and an explicit history", () => {
    const retune = retuneOf(
      slaPlanner(
        "enable_throughput_scaling: true\n  enable_load_scaling: false\n  prophet_window_size: 80",
        "{interval_seconds: 720, history_seconds: 3600, planner: {load_predictor: {preset: [kalman_reactive_raw, arima_log1p]}}}",
      ),
      [],
      FILES,
    );
    expect(retune.loadPredictorCandidates?.map((c) => c.name)).toEqual([
      "kalman_reactive_raw",
      "arima_log1p",
    ]);
    expect(retune.historyS).toBe(3600);
    // Without history_seconds: the current Planner's larger prophet window counts too.
    const derived = retuneOf(
      slaPlanner(
        "enable_throughput_scaling: true\n  enable_load_scaling: false\n  prophet_window_size: 80",
        "{interval_seconds: 720, planner: {load_predictor: default}}",
      ),
      [],
      FILES,
    );
    expect(derived.historyS).toBe(180 * 80);
  });
});
