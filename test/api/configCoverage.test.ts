/**
 * The library API's options and the YAML schema describe one config; this test ties them so that
 * neither can gain a key the other does not account for. The schema's keys are read from the zod
 * schema itself; the keys the API writes, and the option each comes from, are read from the
 * translations (ConfigDraft records both). A schema key the API cannot set must be listed in
 * YAML_ONLY with the reason, unless the schema refuses it (`rejectKey`, read from the schema);
 * an option that sets no config key, in API_ONLY.
 */
import { describe, expect, it } from "vitest";
import { ENGINE_ARG_KEYS, EXTERNAL_CONFIG_KEYS } from "../../src/api/engineArgs.js";
import { PLANNER_CONFIG_KEYS } from "../../src/api/plannerConfig.js";
import {
  ROUTER_CONFIG_KEYS,
  SYNTHETIC_KEYS,
  TRACE_KEYS,
  type Translation,
  translateSyntheticReplay,
  translateTraceReplay,
} from "../../src/api/translate.js";
import { isMapping } from "../../src/config/mapping.js";
import { PredictConfig } from "../../src/config/schema/index.js";
import { type KnobRow, PLANNER_KNOBS } from "../../src/knobs/planner.js";
import { byRole, refusedKeyPathsByRole, schemaKeyPathsByRole, under } from "../helpers/schemaPaths.js";

const KNOBS = PLANNER_KNOBS as readonly KnobRow[];

/** Option paths with the engine-argument option and its `{engine: …}` wrapper made one name. */
const byOption = (option: string): string =>
  option.replace(/^(extra|prefill|decode)EngineArgs(\.engine)?(?=\.|$)/, "engineArgs");

// Every knob, with a dummy value: the translation only copies values; the config validation
// (not run here) would check them.
const knobFields = (names: (row: KnobRow) => readonly string[]) =>
  Object.fromEntries(KNOBS.flatMap((row) => names(row).map((name) => [name, 1])));

/** PlannerConfig's older names of its targets (not part of the public type). */
const TARGET_ALIASES = { ttft: 400, itl: 40 };

const translations: Translation[] = [
  translateTraceReplay(
    "trace.jsonl",
    {
      traceFormat: "mooncake",
      traceBlockSize: 16,
      arrivalSpeedupRatio: 2,
      maxSimTimeMs: 1000,
      modelName: "Qwen/Qwen3-8B",
      numWorkers: 2,
      extraEngineArgs: {
        engine: {
          backend: "vllm",
          block_size: 16,
          max_num_batched_tokens: 4096,
          max_num_seqs: 64,
          enable_prefix_caching: true,
          num_gpu_blocks: 1000,
          tensor_parallel_size: 2,
          dp_size: 1,
          pipeline_parallel_size: 1,
          aic_moe_tp_size: 1,
          aic_moe_ep_size: 1,
          startup_time: 30,
          max_model_len: 4096,
          timing_model: { type: "fixed", prefill_ms: 10, decode_ms: 2 },
        },
      },
      routerMode: "kv_router",
      routerConfig: {
        overlap_score_credit: 1,
        prefill_load_scale: 1,
        router_temperature: 0,
        router_prefill_load_model: "aic",
      },
      slaTtftMs: 500,
      slaItlMs: 50,
      plannerConfig: {
        ...knobFields((row) => (row.api === null ? [] : [row.api])),
        optimization_target: "sla",
      },
    },
    ".",
  ),
  translateTraceReplay(
    "trace.jsonl",
    {
      traceFormat: "dynamo",
      numPrefillWorkers: 1,
      numDecodeWorkers: 1,
      prefillEngineArgs: {
        engine_type: "vllm",
        gpu_memory_utilization: 0.8,
        kv_bytes_per_token: 1000,
        kv_transfer_bandwidth: 100,
        kv_transfer_timing_mode: "full_prompt",
        timing_model: {
          type: "external",
          provider: "ais",
          config: {
            model: "Qwen/Qwen3-8B",
            system: "h200_sxm",
            backend: "vllm",
            backend_version: "0.12.0",
            tp: 1,
            attention_dp: 1,
            pp: 1,
            moe_tp: 1,
            moe_ep: 1,
          },
        },
      },
      decodeEngineArgs: {
        aic_backend: "vllm",
        aic_model_path: "Qwen/Qwen3-8B",
        aic_system: "h100_sxm",
        aic_backend_version: "0.12.0",
        aic_tp_size: 1,
        aic_attention_dp_size: 1,
        aic_pp_size: 1,
      },
      routerMode: "kv_router",
      routerConfig: { temperature: 0 },
      plannerConfig: {
        mode: "disagg",
        optimization_target: "sla",
        ttft_ms: 400,
        itl_ms: 40,
        retune: { interval_seconds: 30 },
      },
    },
    ".",
  ),
  translateSyntheticReplay(
    {
      inputTokens: 100,
      outputTokens: 10,
      requestCount: 10,
      requestRate: 1,
      arrivalSeed: 7,
      // The aliases of PlannerConfig's older names.
      plannerConfig: {
        ...knobFields((row) => row.apiAliases ?? []),
        ...TARGET_ALIASES,
        optimization_target: "sla",
      },
    },
    ".",
  ),
  translateSyntheticReplay(
    { inputTokens: 100, outputTokens: 10, requestCount: 10, arrivalIntervalMs: 100, slaE2eMs: 1000 },
    ".",
  ),
  translateSyntheticReplay(
    { inputTokens: 100, outputTokens: 10, requestCount: 10, replayConcurrency: 4 },
    ".",
  ),
  translateTraceReplay("trace.jsonl", { replayConcurrency: 4 }, "."),
  // The names `first()` passes over above when an earlier name of the same thing is given.
  translateTraceReplay(
    "trace.jsonl",
    {
      extraEngineArgs: {
        aic_backend: "vllm",
        aic_model_path: "Qwen/Qwen3-8B",
        aic_system: "h200_sxm",
        aic_backend_version: "0.12.0",
      },
    },
    ".",
  ),
  translateTraceReplay(
    "trace.jsonl",
    {
      extraEngineArgs: {
        timing_model: {
          type: "external",
          provider: "aic",
          config: { model: "Qwen/Qwen3-8B", system: "h200_sxm", backend: "vllm" },
        },
      },
    },
    ".",
  ),
];

/** Config paths the API writes (with every key inside a value it writes whole), by role. */
function writtenPaths(): Set<string> {
  const paths = new Set<string>();
  const add = (path: string, value: unknown): void => {
    paths.add(byRole(path));
    if (isMapping(value)) for (const [key, inner] of Object.entries(value)) add(`${path}.${key}`, inner);
  };
  for (const { draft } of translations) for (const [key, value] of Object.entries(draft.doc)) add(key, value);
  return paths;
}

function usedOptions(): Set<string> {
  return new Set(translations.flatMap(({ draft }) => draft.recordedPaths().map((o) => byOption(o.option))));
}

/** Written by the API as the caller gave it: every key of the section is an option. */
const PASSED_WHOLE = ["planner.retune"];

/**
 * Schema keys (with everything below them) the API does not set, and why. The API offers the
 * reference's replay arguments (docs/api.md); everything else is `predict(config)`'s.
 */
const YAML_ONLY: readonly (readonly [reason: string, paths: readonly string[]])[] = [
  [
    "workloads the reference's replay arguments do not describe (sessions, prefix groups, staged loads, Weka corpora)",
    [
      "traffic.source.seed",
      "traffic.source.new_input_tokens_per_turn",
      "traffic.source.output_tokens_per_turn",
      "traffic.source.session",
      "traffic.source.groups",
      "traffic.source.prompts_per_group",
      "traffic.source.system_prompt_tokens",
      "traffic.source.question_tokens",
      "traffic.source.nested_timestamp_basis",
      "traffic.load.warmup_sessions",
      "traffic.load.sessions_per_second",
      "traffic.load.stages",
      "traffic.stop.requests_per_load_unit",
      "traffic.stop.sessions",
      "traffic.stop.sessions_per_load_unit",
    ],
  ],
  [
    "op-level model settings: an external timing model takes only the worker's identity (model, GPU, parallelism)",
    [
      "engine.perf_database",
      "engine.enable_eplb",
      "engine.wideep_num_slots",
      "engine.workers.<role>.timing.forward_model",
      "engine.workers.<role>.timing.fpm_parquet_path",
      "engine.workers.<role>.timing.host_overhead",
      "engine.workers.<role>.timing.op_tables",
      "engine.workers.<role>.timing.mixed_passes",
      "engine.workers.<role>.timing.context_attention_extrapolation",
      "engine.workers.<role>.timing.cuda_graph_padding",
      "engine.workers.<role>.kv_cache.bytes_per_token",
      "engine.workers.<role>.kv_cache.capacity.cuda_graph_reserved_bytes",
      "engine.workers.<role>.kv_cache.capacity.bytes",
    ],
  ],
  [
    "engine features MockEngineArgs has no field for (first-token pricing, speculation, context parallelism, scheduler extensions, KV offload tiers, other backends)",
    [
      "engine.workers.<role>.timing.first_token",
      "engine.speculation",
      "engine.nextn",
      "engine.nextn_accepted",
      "engine.workers.<role>.parallelism.prefill_context",
      "engine.workers.<role>.parallelism.decode_context",
      "engine.workers.<role>.scheduler.prefill_schedule_interval",
      "engine.workers.<role>.scheduler.prefill_decode_interval",
      "engine.workers.<role>.scheduler.async_scheduling",
      "engine.workers.<role>.scheduler.capacity_scheduler_policy",
      "engine.workers.<role>.kv_cache.host_offload",
      "engine.workers.<role>.kv_cache.g3_offload",
      "engine.workers.<role>.sglang",
    ],
  ],
  ["enable_chunked_prefill is accepted only at its default, true", ["engine.enable_chunked_prefill"]],
  [
    "fleetsim's own sections (host limits, client overhead, GPU prices): no reference argument",
    ["execution", "client", "cost"],
  ],
];

/** Options that set no config key, and why. Engine arguments are named `engineArgs.<field>`. */
const API_ONLY: readonly (readonly [reason: string, options: readonly string[]])[] = [
  [
    "they shape the call or its report, not the config",
    ["replayMode", "capturePlannerDetails", "capturePerRequest", "htmlReportPath", "signal"],
  ],
  [
    "accepted only at the value fleetsim simulates, or checked against another setting",
    [
      "engineArgs.enable_chunked_prefill",
      "engineArgs.speedup_ratio",
      "engineArgs.decode_speedup_ratio",
      "engineArgs.preemption_mode",
      "engineArgs.worker_type",
      "engineArgs.timing_model.config.worker_type",
      "engineArgs.timing_model.config.kv_block_size",
      "plannerConfig.mode",
      "plannerConfig.decode_engine_num_gpu",
      "plannerConfig.prefill_engine_num_gpu",
    ],
  ],
  [
    "applied to the run or the resolved Planner settings rather than written (the HTML report, the tick)",
    ["plannerConfig.report_interval_hours", "plannerConfig.scheduling"],
  ],
  [
    "deployment settings with no effect on an offline replay",
    [
      "plannerConfig.live_dashboard_port",
      "plannerConfig.batch_scheduling",
      "plannerConfig.backend",
      "plannerConfig.environment",
      "plannerConfig.throughput_metrics_source",
      "plannerConfig.control_api_port",
      "plannerConfig.pre_deployment_sweeping_mode",
    ],
  ],
];

const SCHEMA = schemaKeyPathsByRole(PredictConfig);
/** Keys the schema refuses wherever they occur: no option can set them. */
const REFUSED = refusedKeyPathsByRole(PredictConfig);
const WRITTEN = writtenPaths();
const YAML_ONLY_PATHS = YAML_ONLY.flatMap(([, paths]) => paths);
const USED = usedOptions();
const API_ONLY_OPTIONS = API_ONLY.flatMap(([, options]) => options);
const OPTIONS = [
  ...new Set([...TRACE_KEYS, ...SYNTHETIC_KEYS].map(byOption)),
  ...ENGINE_ARG_KEYS.map((k) => `engineArgs.${k}`),
  ...EXTERNAL_CONFIG_KEYS.map((k) => `engineArgs.timing_model.config.${k}`),
  ...ROUTER_CONFIG_KEYS.map((k) => `routerConfig.${k}`),
  ...PLANNER_CONFIG_KEYS.map((k) => `plannerConfig.${k}`),
];
/** An option sets a config key itself, or through a field inside it. */
const sets = (option: string): boolean =>
  [...USED].some((used) => used.split(" + ").some((one) => under(one, option)));

describe("the API options and the YAML schema", () => {
  it("finds the schema's keys (the walk reaches every section)", () => {
    for (const path of [
      "traffic.load.stages[].requests",
      "engine.workers.<role>.kv_cache.block_size",
      "cost.usd_per_gpu_hour.h200_sxm",
    ]) {
      expect(SCHEMA).toContain(path);
    }
  });

  it("every schema key is set by an option, refused by the schema, or listed in YAML_ONLY", () => {
    const unaccounted = SCHEMA.filter(
      (path) =>
        !WRITTEN.has(path) &&
        !REFUSED.includes(path) &&
        !PASSED_WHOLE.some((whole) => under(path, whole)) &&
        !YAML_ONLY_PATHS.some((only) => under(path, only)),
    );
    expect(unaccounted).toEqual([]);
  });

  it("every YAML_ONLY entry is a schema key the API does not set", () => {
    expect(YAML_ONLY_PATHS.filter((path) => !SCHEMA.includes(path))).toEqual([]);
    expect(YAML_ONLY_PATHS.filter((path) => [...WRITTEN].some((w) => under(w, path)))).toEqual([]);
  });

  it("every key the API writes is a schema key", () => {
    expect([...WRITTEN].filter((path) => !SCHEMA.includes(path))).toEqual([]);
  });

  it("every option sets a config key, or is listed in API_ONLY with the reason", () => {
    expect(OPTIONS.filter((option) => !sets(option) && !API_ONLY_OPTIONS.includes(option))).toEqual([]);
  });

  it("every API_ONLY entry is an option that sets no config key", () => {
    expect(API_ONLY_OPTIONS.filter((option) => !OPTIONS.includes(option) || sets(option))).toEqual([]);
  });
});
