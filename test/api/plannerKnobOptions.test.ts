/**
 * The library API's `plannerConfig` knob options come from the knob table (src/knobs/planner.ts):
 * the former hand-kept RENAMED / SAME / ALIASES lists of api/plannerConfig.ts are now derived, so
 * they cannot drift from the YAML keys; every option lands on its row's YAML key and errors name
 * the option the caller wrote.
 */
import { describe, expect, it } from "vitest";
import { ALIASES, RENAMED, SAME } from "../../src/api/plannerConfig.js";
import { translateTraceReplay } from "../../src/api/translate.js";
import type { PlannerConfig } from "../../src/index.js";
import { type KnobRow, PLANNER_KNOBS } from "../../src/knobs/planner.js";
import { KNOB_SAMPLE } from "../helpers/plannerKnobSample.js";

const OPTIONS = (PLANNER_KNOBS as readonly KnobRow[]).filter((r) => r.api !== null);

function translate(plannerConfig: PlannerConfig) {
  return translateTraceReplay("trace.jsonl", { modelName: "Qwen/Qwen3-8B", plannerConfig }, process.cwd())
    .draft;
}

/** Whether `part` appears in `whole` in the same order (other entries may come between). */
function isSubsequence(part: readonly string[], whole: readonly string[]): boolean {
  let i = 0;
  for (const x of whole) if (x === part[i]) i++;
  return i === part.length;
}

describe("plannerConfig options from the knob table", () => {
  it("each option row is renamed or same-named, never both; the lists hold nothing else but retune", () => {
    expect(Object.keys(RENAMED)).toEqual(OPTIONS.filter((r) => r.api !== r.yaml).map((r) => r.api));
    for (const row of OPTIONS.filter((r) => r.api !== r.yaml)) expect(RENAMED[row.api!]).toBe(row.yaml);
    expect(SAME).toEqual([...OPTIONS.filter((r) => r.api === r.yaml).map((r) => r.yaml), "retune"]);
    const rowAliases = OPTIONS.flatMap((r) => (r.apiAliases ?? []).map((a) => [a, r.api]));
    expect(Object.entries(ALIASES)).toEqual([...rowAliases, ["ttft", "ttft_ms"], ["itl", "itl_ms"]]);
  });

  it("the derived lists keep every entry of the former hand-kept lists, in their order", () => {
    expect(
      isSubsequence(
        [
          "optimization_target",
          "max_gpu_budget",
          "min_gpu_budget",
          "min_endpoint",
          "prefill_min_endpoint",
          "decode_min_endpoint",
        ],
        Object.keys(RENAMED),
      ),
    ).toBe(true);
    expect(RENAMED).toMatchObject({
      optimization_target: "target",
      max_gpu_budget: "max_num_gpus",
      min_gpu_budget: "min_num_gpus",
      min_endpoint: "min_workers",
      prefill_min_endpoint: "prefill_min_workers",
      decode_min_endpoint: "decode_min_workers",
    });
    const formerSame = [
      "enable_throughput_scaling",
      "enable_load_scaling",
      "throughput_adjustment_interval_seconds",
      "load_adjustment_interval_seconds",
      "max_throughput_scaling_replicas",
      "max_num_fpm_samples",
      "fpm_sample_bucket_size",
      "load_scaling_down_sensitivity",
      "load_min_observations",
      "load_predictor",
      "load_predictor_log1p",
      "prophet_window_size",
      "kalman_q_level",
      "kalman_q_trend",
      "kalman_r",
      "kalman_min_points",
      "load_predictor_warmup_trace",
      "advisory",
      "retune",
    ];
    expect(isSubsequence(formerSame, SAME)).toBe(true);
    expect(ALIASES).toMatchObject({
      throughput_adjustment_interval: "throughput_adjustment_interval_seconds",
      load_adjustment_interval: "load_adjustment_interval_seconds",
      ttft: "ttft_ms",
      itl: "itl_ms",
    });
  });

  it("every option sets its row's YAML key, and the config path maps back to the option", () => {
    const options = Object.fromEntries(OPTIONS.map((r) => [r.api, KNOB_SAMPLE[r.yaml]])) as PlannerConfig;
    const draft = translate(options);
    const planner = draft.doc["planner"] as Record<string, unknown>;
    for (const row of OPTIONS) {
      expect(planner[row.yaml], row.api!).toEqual(KNOB_SAMPLE[row.yaml]);
      expect(draft.optionFor(["planner", row.yaml])).toBe(`plannerConfig.${row.api}`);
    }
  });

  it("an alias sets the row's YAML key and is named as written", () => {
    for (const row of OPTIONS) {
      for (const alias of row.apiAliases ?? []) {
        const draft = translate({ [alias]: KNOB_SAMPLE[row.yaml] } as PlannerConfig);
        expect((draft.doc["planner"] as Record<string, unknown>)[row.yaml], alias).toEqual(
          KNOB_SAMPLE[row.yaml],
        );
        expect(draft.optionFor(["planner", row.yaml])).toBe(`plannerConfig.${alias}`);
      }
    }
  });
});
