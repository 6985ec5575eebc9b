/** The `planner` section: defaults, normalization, the gcd rule, and the mapping to PlannerSettings. */
import { isAbsolute } from "node:path";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../src/config/schema/index.js";
import { scaleIntervalSeconds } from "../../src/config/schema/planner.js";
import { PLANNER_KNOBS } from "../../src/knobs/planner.js";
import type { PlannerSettings } from "../../src/planner/types.js";
import {
  issueAt,
  loadError,
  loadYaml,
  RUNNABLE_ENGINE,
  RUNNABLE_PD_ENGINE,
} from "../helpers/configHelpers.js";
import { knobDefaults } from "../helpers/planner.js";
import { SEED_001 } from "../helpers/seed001.js";

/** Seed 001 step 1: the planner mapping of planner-aggregated.yaml, verbatim. */
const SEED_AGGREGATED_PLANNER = `${SEED_001.plannerHead}  load_scaling_down_sensitivity: 80
  load_min_observations: 5
  max_num_gpus: 2
  min_workers: 1
`;

/** Seed 001 step 2: the planner mapping of planner-disaggregated.yaml, verbatim. */
const SEED_DISAGGREGATED_PLANNER = `${SEED_001.plannerHead}  load_scaling_down_sensitivity: 80
  load_min_observations: 5
  max_num_gpus: 2
  min_workers: 1
  prefill_min_workers: 1
  decode_min_workers: 1
`;

const files = { [SEED_001.trace]: "" };

/**
 * The PlannerSettings of `planner: {policy: enabled}` on an aggregated engine (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`,
 * `ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`): the reference's defaults pinned here key by key; a knob added later takes its table
 * default (`knobDefaults`), which test/planner/knobs.test.ts checks against the section.
 */
const MINIMAL: PlannerSettings = {
  ...knobDefaults(),
  mode: "agg",
  optimizationTarget: "throughput",
  enableThroughputScaling: false,
  enableLoadScaling: true,
  throughputAdjustmentIntervalS: 180,
  loadAdjustmentIntervalS: 5,
  scaleIntervalS: 5,
  maxThroughputScalingReplicas: 8,
  maxGpuBudget: 8,
  minGpuBudget: -1,
  minEndpoint: 1,
  prefillMinEndpoint: null,
  decodeMinEndpoint: null,
  ttftMs: 500,
  itlMs: 50,
  loadScalingDownSensitivity: 80,
  loadMinObservations: 5,
  maxNumFpmSamples: 64,
  fpmSampleBucketSize: 16,
  prefillScaleUpQueueTokens: null,
  prefillScaleDownQueueTokens: null,
  decodeScaleUpKvRate: null,
  decodeScaleDownKvRate: null,
  speculativeNextn: 0,
  loadPredictor: "arima",
  loadPredictorLog1p: false,
  prophetWindowSize: 50,
  kalmanQLevel: 1.0,
  kalmanQTrend: 0.1,
  kalmanR: 10.0,
  kalmanMinPoints: 5,
  loadPredictorWarmupTrace: null,
  advisory: false,
};

/** The seed's aggregated planner: SLA target with both loops, 300 s / 10 s, at most 2 GPUs. */
const SEED_AGGREGATED_SETTINGS: PlannerSettings = {
  ...MINIMAL,
  optimizationTarget: "sla",
  enableThroughputScaling: true,
  enableLoadScaling: true,
  throughputAdjustmentIntervalS: 300,
  loadAdjustmentIntervalS: 10,
  scaleIntervalS: 10,
  maxGpuBudget: 2,
  ttftMs: 1500,
  itlMs: 50,
};

function plannerOf(yaml: string, sets: readonly string[] = []): PlannerSettings | null {
  return loadYaml(yaml, { files, sets }).planner;
}

const SLA = "evaluation: {sla: {ttft_ms: 800, itl_ms: 40}}\n";

describe("seed 001: planner walkthrough", () => {
  it("the aggregated planner loads and maps to PlannerSettings", () => {
    const planner = plannerOf(
      SEED_001.traffic + SEED_001.aggregatedEngine + SEED_001.routerAndSla + SEED_AGGREGATED_PLANNER,
    );
    expect(planner).toEqual(SEED_AGGREGATED_SETTINGS);
  });

  it("the disaggregated planner loads and maps with its role minimums", () => {
    const planner = plannerOf(
      SEED_001.traffic + SEED_001.disaggregatedEngine + SEED_001.routerAndSla + SEED_DISAGGREGATED_PLANNER,
    );
    expect(planner).toEqual({
      ...SEED_AGGREGATED_SETTINGS,
      mode: "disagg",
      prefillMinEndpoint: 1,
      decodeMinEndpoint: 1,
    } satisfies PlannerSettings);
  });

  it("seed 000's disaggregated variant (4 GPUs, default sensitivity) maps too", () => {
    const planner = plannerOf(
      `${SEED_001.traffic}${SEED_001.disaggregatedEngine}${SEED_001.routerAndSla}${SEED_001.plannerHead}  max_num_gpus: 4
  prefill_min_workers: 1
  decode_min_workers: 1
`,
    );
    expect(planner).toMatchObject({ mode: "disagg", maxGpuBudget: 4, scaleIntervalS: 10, minEndpoint: 1 });
  });

  it("max_num_gpus at or below the starting GPUs is allowed (the Planner holds every scale-up)", () => {
    // The seed starts 2 one-GPU workers under a 2-GPU ceiling.
    const yaml =
      SEED_001.traffic + SEED_001.aggregatedEngine + SEED_001.routerAndSla + SEED_AGGREGATED_PLANNER;
    expect(plannerOf(yaml)?.maxGpuBudget).toBe(2);
    expect(plannerOf(yaml, ["planner.max_num_gpus=1"])?.maxGpuBudget).toBe(1);
  });

  it("--set planner.policy=disabled gives the fixed-replica baseline", () => {
    const yaml =
      SEED_001.traffic + SEED_001.disaggregatedEngine + SEED_001.routerAndSla + SEED_DISAGGREGATED_PLANNER;
    expect(plannerOf(yaml, ["planner.policy=disabled"])).toBeNull();
  });
});

describe("planner defaults", () => {
  it("`planner: {policy: enabled}` runs load-only scaling on the production defaults", () => {
    expect(plannerOf(`planner: {policy: enabled}\n${RUNNABLE_ENGINE}`)).toEqual(MINIMAL);
  });

  it("an omitted max_num_gpus caps at PlannerConfig's 8 GPUs; -1 still means no ceiling", () => {
    expect(plannerOf(`planner: {policy: enabled}\n${RUNNABLE_ENGINE}`)?.maxGpuBudget).toBe(8);
    expect(plannerOf(`planner: {policy: enabled, max_num_gpus: -1}\n${RUNNABLE_ENGINE}`)?.maxGpuBudget).toBe(
      -1,
    );
  });

  it("an omitted section, an empty one and `policy: disabled` build no Planner", () => {
    expect(plannerOf(RUNNABLE_ENGINE)).toBeNull();
    expect(plannerOf(`planner: {}\n${RUNNABLE_ENGINE}`)).toBeNull();
    expect(plannerOf(`planner: {policy: disabled}\n${RUNNABLE_ENGINE}`)).toBeNull();
  });

  it("the schema fills in the PlannerConfig defaults (max_num_gpus 8, as the reference's source; not unlimited)", () => {
    const result = validateConfig(
      { engine: { model: "Qwen/Qwen3-8B", hardware: "h200_sxm", workers: { aggregated: {} } } },
      "dynamo",
    );
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const planner = result.config.planner as unknown as Record<string, unknown>;
    const reference = {
      policy: "disabled",
      target: "throughput",
      enable_throughput_scaling: true,
      enable_load_scaling: false,
      throughput_adjustment_interval_seconds: 180,
      load_adjustment_interval_seconds: 5,
      max_throughput_scaling_replicas: 8,
      max_num_fpm_samples: 64,
      fpm_sample_bucket_size: 16,
      load_scaling_down_sensitivity: 80,
      load_min_observations: 5,
      load_predictor: "arima",
      load_predictor_log1p: false,
      prophet_window_size: 50,
      kalman_q_level: 1.0,
      kalman_q_trend: 0.1,
      kalman_r: 10.0,
      kalman_min_points: 5,
      load_predictor_warmup_trace: null,
      max_num_gpus: 8,
      min_num_gpus: -1,
      min_workers: 1,
      prefill_min_workers: null,
      decode_min_workers: null,
      advisory: false,
    };
    expect(planner).toMatchObject(reference);
    // The other keys are fleetsim extensions, rows of the knob table: at their defaults.
    expect(Object.keys(planner).sort()).toEqual([...PLANNER_KNOBS.map((r) => r.yaml), "retune"].sort());
    expect(planner["retune"]).toBeUndefined();
    for (const row of PLANNER_KNOBS.filter((r) => !(r.yaml in reference))) {
      expect(planner[row.yaml], row.yaml).toEqual(row.default);
    }
  });

  it("a disabled section skips the rules that need an enabled Planner", () => {
    // Each of these is an error with policy: enabled (test/config/rules.test.ts).
    for (const section of [
      "planner: {prefill_min_workers: 1}",
      "planner: {target: sla}",
      "planner: {target: sla, enable_throughput_scaling: false}",
      "planner: {load_adjustment_interval_seconds: null}",
      "planner: {load_predictor_warmup_trace: missing.jsonl}",
    ]) {
      expect(plannerOf(`${section}\n${RUNNABLE_ENGINE}`), section).toBeNull();
    }
  });

  it("the predictor and FPM keys pass through", () => {
    const planner = plannerOf(
      `planner:
  policy: enabled
  max_throughput_scaling_replicas: 3
  max_num_fpm_samples: 128
  fpm_sample_bucket_size: 64
  load_scaling_down_sensitivity: 0
  load_min_observations: 8
  load_predictor: kalman
  load_predictor_log1p: true
  prophet_window_size: 20
  kalman_q_level: 2.5
  kalman_q_trend: 0.5
  kalman_r: 4
  kalman_min_points: 3
  min_num_gpus: 1
  max_num_gpus: 16
  min_workers: 0
  advisory: true
${RUNNABLE_ENGINE}`,
    );
    expect(planner).toEqual({
      ...MINIMAL,
      maxThroughputScalingReplicas: 3,
      maxNumFpmSamples: 128,
      fpmSampleBucketSize: 64,
      loadScalingDownSensitivity: 0,
      loadMinObservations: 8,
      loadPredictor: "kalman",
      loadPredictorLog1p: true,
      prophetWindowSize: 20,
      kalmanQLevel: 2.5,
      kalmanQTrend: 0.5,
      kalmanR: 4,
      kalmanMinPoints: 3,
      minGpuBudget: 1,
      maxGpuBudget: 16,
      minEndpoint: 0,
      advisory: true,
    } satisfies PlannerSettings);
  });

  it("the warmup trace resolves to an absolute path (test/planner/warmup.trace.test.ts: the working directory)", () => {
    const spec = loadYaml(
      `planner: {policy: enabled, load_predictor_warmup_trace: warm/up.jsonl}\n${RUNNABLE_ENGINE}`,
      {
        files: { "warm/up.jsonl": "" },
      },
    );
    const path = spec.planner?.loadPredictorWarmupTrace ?? "";
    expect(isAbsolute(path)).toBe(true);
    expect(path.endsWith("/warm/up.jsonl")).toBe(true);
  });
});

describe("planner normalization (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`)", () => {
  it.each(["throughput", "latency", "load"] as const)(
    "target %s forces load-only scaling, whatever the flags say",
    (target) => {
      const planner = plannerOf(
        `planner: {policy: enabled, target: ${target}, enable_throughput_scaling: true, enable_load_scaling: false}\n${RUNNABLE_ENGINE}`,
      );
      expect(planner).toMatchObject({
        optimizationTarget: target,
        enableThroughputScaling: false,
        enableLoadScaling: true,
        scaleIntervalS: 5,
        // Not an SLA target: the PlannerConfig defaults, not evaluation.sla.
        ttftMs: 500,
        itlMs: 50,
      });
    },
  );

  it("an easy target ignores the throughput interval (gcd, ordering and null)", () => {
    const base = `planner: {policy: enabled, target: latency, load_adjustment_interval_seconds: 7`;
    expect(
      plannerOf(`${base}, throughput_adjustment_interval_seconds: 5}\n${RUNNABLE_ENGINE}`),
    ).toMatchObject({ scaleIntervalS: 7, loadAdjustmentIntervalS: 7, throughputAdjustmentIntervalS: 5 });
    expect(
      plannerOf(`${base}, throughput_adjustment_interval_seconds: null}\n${RUNNABLE_ENGINE}`),
    ).toMatchObject({ scaleIntervalS: 7, throughputAdjustmentIntervalS: 180 });
  });

  it("target sla keeps the flags: throughput on and load off unless set", () => {
    const planner = plannerOf(`planner: {policy: enabled, target: sla}\n${SLA}${RUNNABLE_ENGINE}`);
    expect(planner).toMatchObject({
      enableThroughputScaling: true,
      enableLoadScaling: false,
      scaleIntervalS: 180,
      ttftMs: 800,
      itlMs: 40,
    });
  });

  it("target sla with load scaling only takes the load interval, and a null throughput interval", () => {
    const planner = plannerOf(
      `planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: false
  enable_load_scaling: true
  throughput_adjustment_interval_seconds: null
  load_adjustment_interval_seconds: 2.5
${SLA}${RUNNABLE_ENGINE}`,
    );
    expect(planner).toMatchObject({
      enableThroughputScaling: false,
      enableLoadScaling: true,
      scaleIntervalS: 2.5,
      throughputAdjustmentIntervalS: 180,
    });
  });

  it.each([
    [5, 180, 5],
    [10, 300, 10],
    [7, 180, 1],
    [0.5, 60, 0.5],
    [0.25, 0.6, 0.05],
  ])("sla with load %s s and throughput %s s schedules every %s s", (load, throughput, scale) => {
    const planner = plannerOf(
      `planner:
  policy: enabled
  target: sla
  enable_load_scaling: true
  load_adjustment_interval_seconds: ${load}
  throughput_adjustment_interval_seconds: ${throughput}
${SLA}${RUNNABLE_ENGINE}`,
    );
    expect(planner?.scaleIntervalS).toBe(scale);
  });

  it("scaleIntervalSeconds is the millisecond gcd", () => {
    expect(scaleIntervalSeconds([5])).toBe(5);
    expect(scaleIntervalSeconds([7, 180])).toBe(1);
    expect(scaleIntervalSeconds([0.1, 0.15])).toBe(0.05);
    expect(scaleIntervalSeconds([])).toBe(0);
  });
});

describe("target load thresholds (`ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`)", () => {
  it("aggregated: decode KV rates 90 % / 70 %, no prefill queue thresholds", () => {
    expect(plannerOf(`planner: {policy: enabled, target: load}\n${RUNNABLE_ENGINE}`)).toMatchObject({
      mode: "agg",
      prefillScaleUpQueueTokens: null,
      prefillScaleDownQueueTokens: null,
      decodeScaleUpKvRate: 90,
      decodeScaleDownKvRate: 70,
    });
  });

  it("disaggregated: prefill queue 1 / 0 tokens as well", () => {
    expect(plannerOf(`planner: {policy: enabled, target: load}\n${RUNNABLE_PD_ENGINE}`)).toMatchObject({
      mode: "disagg",
      prefillScaleUpQueueTokens: 1,
      prefillScaleDownQueueTokens: 0,
      decodeScaleUpKvRate: 90,
      decodeScaleDownKvRate: 70,
    });
  });

  it("other targets set no thresholds", () => {
    expect(plannerOf(`planner: {policy: enabled, target: latency}\n${RUNNABLE_PD_ENGINE}`)).toMatchObject({
      prefillScaleUpQueueTokens: null,
      prefillScaleDownQueueTokens: null,
      decodeScaleUpKvRate: null,
      decodeScaleDownKvRate: null,
    });
  });
});

describe("planner rules across sections", () => {
  it("are reported together, each at its key", () => {
    const err = loadError(
      `planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: false
  prefill_min_workers: 2
evaluation: {sla: {e2e_ms: 9000}}
${RUNNABLE_ENGINE}`,
    );
    expect(err.issues.map((i) => i.path)).toEqual([
      "planner",
      "planner.target",
      "planner.prefill_min_workers",
    ]);
    expect(issueAt(err, "planner.target")).toMatchObject({ line: 3, column: 11 });
    expect(issueAt(err, "planner.prefill_min_workers")).toMatchObject({ line: 5, column: 3 });
  });

  it("do not judge a section whose keys are invalid", () => {
    const err = loadError(
      `planner: {policy: enabled, target: sla, load_adjustment_interval_seconds: -5}\n${RUNNABLE_ENGINE}`,
    );
    expect(err.issues).toHaveLength(1);
    expect(issueAt(err, "planner.load_adjustment_interval_seconds").message).toBe(
      "Input should be greater than 0",
    );
  });
});
