/**
 * Public option types of the library API (docs/api.md). Names mirror the reference's Python
 * `dynamo.replay.run_trace_replay` / `run_synthetic_trace_replay` keyword arguments in camelCase;
 * the nested engine and Planner mappings keep the reference's snake_case field names, so a
 * mapping copied from a Python script works unchanged.
 */
import type { Stack } from "../config/runSpec.js";
import type { KvTransferConfig } from "../config/schema/engine.js";
import type { RouterConfig as RouterSection } from "../config/schema/router.js";
import type { TraceFormat } from "../config/traceFormats.js";
import type { KnobOptions } from "../knobs/planner.js";

/** Timing of a simulated engine (`timing_model` of the canonical engine arguments). */
export type TimingModelArgs =
  /** AISimulate / AIConfigurator performance model → fleetsim's op-level model (`timing: {type: default}`). */
  | { readonly type: "external"; readonly provider: "ais" | "aic"; readonly config: ExternalTimingConfig }
  /** The mocker's default polynomial model. */
  | { readonly type: "polynomial" }
  /** Constant pass durations. */
  | { readonly type: "fixed"; readonly prefill_ms: number; readonly decode_ms: number };

/** `timing_model.config` of an external (AISimulate) timing model: the worker's identity. */
export interface ExternalTimingConfig {
  /** Hugging Face model id (`engine.model`). */
  readonly model: string;
  /** GPU system id such as `h200_sxm` (`engine.hardware`). */
  readonly system: string;
  readonly backend?: "vllm";
  readonly backend_version?: string;
  /** The role this engine plays; must match the argument it is passed as. */
  readonly worker_type?: "aggregated" | "prefill" | "decode";
  readonly tp?: number;
  readonly attention_dp?: number;
  readonly pp?: number;
  readonly moe_tp?: number;
  readonly moe_ep?: number;
  /** Must equal `block_size` when both are given. */
  readonly kv_block_size?: number;
}

/**
 * One role's engine arguments (the mocker's `MockEngineArgs`, `ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`, plus the AIC
 * identity fields of the AISimulate lowering). Omitted fields take the mocker's defaults.
 */
export interface EngineArgs {
  /** Only `vllm` is simulated. */
  readonly engine_type?: "vllm";
  /** Same as `engine_type`. */
  readonly backend?: "vllm";
  /** KV block size in tokens (default 64). */
  readonly block_size?: number;
  /** Token budget of one forward pass (default 8192). */
  readonly max_num_batched_tokens?: number;
  /** Sequences per pass (default 256). */
  readonly max_num_seqs?: number;
  readonly enable_prefix_caching?: boolean;
  /** Only `true` (vLLM v1 always chunks prefill). */
  readonly enable_chunked_prefill?: boolean;
  /** Fixed KV capacity in blocks. Default: from GPU memory when the worker's model and GPU are known, else 16384. */
  readonly num_gpu_blocks?: number;
  /** Share of GPU memory for weights + KV when the capacity comes from GPU memory (default 0.9). */
  readonly gpu_memory_utilization?: number;
  /** Attention data-parallel ranks per worker (default 1). */
  readonly dp_size?: number;
  readonly tensor_parallel_size?: number;
  readonly pipeline_parallel_size?: number;
  /** Seconds before a worker the Planner adds becomes ready (default none). */
  readonly startup_time?: number | null;
  /** Context limit. Default: the model's maximum when the model is known, else no limit. */
  readonly max_model_len?: number | null;
  readonly worker_type?: "aggregated" | "prefill" | "decode";
  /** Default: external (op-level) when an AIC identity is given, else polynomial. */
  readonly timing_model?: TimingModelArgs;
  /** Disaggregated: KV bytes per token of the hand-off (default: from the model). */
  readonly kv_bytes_per_token?: number | null;
  /** Disaggregated: KV transfer bandwidth in GB/s; omitted, null or 0 = the hand-off takes no time. */
  readonly kv_transfer_bandwidth?: number | null;
  /** Disaggregated (default `full_prompt`, as the mocker). */
  readonly kv_transfer_timing_mode?: KvTransferConfig["timing_mode"];
  readonly aic_backend?: "vllm";
  readonly aic_system?: string;
  readonly aic_model_path?: string;
  readonly aic_backend_version?: string;
  readonly aic_tp_size?: number;
  readonly aic_attention_dp_size?: number;
  readonly aic_pp_size?: number;
  readonly aic_moe_tp_size?: number;
  readonly aic_moe_ep_size?: number;
  /** Only 1 (no speed-up of modelled durations). */
  readonly speedup_ratio?: number;
  /** Only 1. */
  readonly decode_speedup_ratio?: number;
  /** Only `lifo` (vLLM v1). */
  readonly preemption_mode?: "lifo";
}

/** Engine arguments flat, or in the canonical form `{ engine: {...} }` of the reference's Python examples. */
export type EngineArgsInput = EngineArgs | { readonly engine: EngineArgs };

/** The startup KV router (`KvRouterConfig`); fields only meaningful with `routerMode: "kv_router"`. */
export interface RouterConfig {
  /** Credit per cached overlapping block, 0…1 (default 1.0). */
  readonly overlap_score_credit?: number;
  /** Weight of the prefill term of the cost (default 1.0). */
  readonly prefill_load_scale?: number;
  /** 0: lowest cost wins; > 0: softmax sampling (default 0). */
  readonly router_temperature?: number;
  /** Same as `router_temperature` (the YAML name). */
  readonly temperature?: number;
  /** `aic`: predicted prefill durations decay each worker's prefill load (default `none`). */
  readonly router_prefill_load_model?: RouterSection["prefill_load_model"]["type"];
}

/**
 * The Planner's `PlannerConfig` (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`), with the reference's field names. The knob
 * fields (`KnobOptions`) come from the knob table (knobs/planner.ts, docs/planner.md: each row's
 * PlannerConfig name and value rule); the fields below are the ones the API handles itself.
 */
export interface PlannerConfig extends KnobOptions {
  /** `agg` with `extraEngineArgs`, `disagg` with prefill/decode arguments; omitted = follows the engine arguments. */
  readonly mode?: "agg" | "disagg";
  /** The Planner's TTFT target with `optimization_target: "sla"` (default 500). */
  readonly ttft_ms?: number;
  /** The Planner's ITL target with `optimization_target: "sla"` (default 50). */
  readonly itl_ms?: number;
  /** Experimental retune (docs/retune.md), the YAML `planner.retune` section. */
  readonly retune?: Readonly<Record<string, unknown>> | null;
  /** GPUs per decode (or aggregated) worker; must match the engine arguments when given. */
  readonly decode_engine_num_gpu?: number | null;
  /** GPUs per prefill worker; must match the engine arguments when given. */
  readonly prefill_engine_num_gpu?: number | null;
  /** Hours between HTML reports (default 24): any positive value writes one report of the run; null writes none. */
  readonly report_interval_hours?: number | null;
  /** Accepted as PlannerConfig takes it (a port 0–65535, default 8080); an offline replay starts no dashboard. */
  readonly live_dashboard_port?: number;
  /**
   * A deployment's batch scheduling (seed 000 "Replay in Advisory Mode"): replay runs none, so
   * `{enabled: false}` is accepted and ignored; `enabled: true` only with `advisory: true`.
   */
  readonly batch_scheduling?: { readonly enabled?: boolean; readonly [key: string]: unknown } | null;
  /** `SchedulingConfig`: `scale_interval_seconds` sets the tick; `tick_max_duration_seconds` has no effect offline. */
  readonly scheduling?: {
    readonly scale_interval_seconds?: number;
    readonly tick_max_duration_seconds?: number;
    readonly external_plugins?: readonly unknown[];
    readonly gateway?: { readonly enabled?: boolean; readonly [key: string]: unknown } | null;
  } | null;
  /** Accepted and ignored offline. */
  readonly backend?: "vllm" | "sglang" | "trtllm" | "mocker";
  /** Accepted and ignored offline. */
  readonly environment?: "kubernetes" | "virtual" | "global-planner";
  /** Accepted and ignored offline. */
  readonly throughput_metrics_source?: "frontend" | "router";
  /** Accepted and ignored offline. */
  readonly control_api_port?: number;
  /** Accepted and ignored offline. */
  readonly pre_deployment_sweeping_mode?: "none" | "rapid" | "thorough" | null;
}

/** Options both replay functions take. */
export interface CommonReplayOptions {
  /** Engine arguments of an aggregated deployment. */
  readonly extraEngineArgs?: EngineArgsInput;
  /** Prefill engine arguments of a disaggregated deployment (with `decodeEngineArgs`). */
  readonly prefillEngineArgs?: EngineArgsInput;
  /** Decode engine arguments of a disaggregated deployment (with `prefillEngineArgs`). */
  readonly decodeEngineArgs?: EngineArgsInput;
  /** Aggregated workers at the start (default 1). */
  readonly numWorkers?: number;
  /** Prefill workers at the start (default 1). */
  readonly numPrefillWorkers?: number;
  /** Decode workers at the start (default 1). */
  readonly numDecodeWorkers?: number;
  /** Default `round_robin`. */
  readonly routerMode?: RouterSection["policy"];
  readonly routerConfig?: RouterConfig;
  /** Only `offline`. */
  readonly replayMode?: "offline";
  /** Model id used when the engine arguments name none (context length `max`, model-derived sizes). */
  readonly modelName?: string;
  /** Enables the Planner: a mapping, inline JSON, or the path of a `.json`, `.yaml` or `.yml` file. */
  readonly plannerConfig?: PlannerConfig | string;
  /** SLA of the report's goodput metrics. */
  readonly slaTtftMs?: number;
  readonly slaItlMs?: number;
  readonly slaE2eMs?: number;
  /** false: drop the Planner's `ticks`, `lifecycle_operations` and the HTML report (default true). */
  readonly capturePlannerDetails?: boolean;
  /** Fill `perRequest` (default false). */
  readonly capturePerRequest?: boolean;
  /** fleetsim: where the HTML report goes (default `planner_reports/planner-report-<UTC time>.html`). */
  readonly htmlReportPath?: string;
  /** fleetsim: aborting stops the replay at its next yield point; the call rejects with ReplayAborted. */
  readonly signal?: AbortSignal;
}

/** Options of `runTraceReplay`. */
export interface TraceReplayOptions extends CommonReplayOptions {
  /** Default `mooncake`; any `traffic.source.format` fleetsim reads (docs/traces.md). */
  readonly traceFormat?: TraceFormat;
  /** Tokens per `hash_ids` entry of a Mooncake trace (default 512); a Dynamo trace embeds its own. */
  readonly traceBlockSize?: number;
  /** Closed loop: at most this many requests in flight; trace timestamps are ignored. */
  readonly replayConcurrency?: number;
  /** Divides trace timestamps (default 1). */
  readonly arrivalSpeedupRatio?: number;
  /** Soft cap on virtual time: no arrival after it. */
  readonly maxSimTimeMs?: number;
}

/** Options of `runSyntheticTraceReplay`. Exactly one of `requestRate`, `arrivalIntervalMs`, `replayConcurrency`. */
export interface SyntheticReplayOptions extends CommonReplayOptions {
  /** Prompt tokens of every request. */
  readonly inputTokens: number;
  /** Output tokens of every request. */
  readonly outputTokens: number;
  /** Requests to generate. */
  readonly requestCount: number;
  /** Poisson arrivals, requests per second. */
  readonly requestRate?: number;
  /** Seed of the Poisson arrivals (default 42). */
  readonly arrivalSeed?: number;
  /** Constant spacing between arrivals, ms. */
  readonly arrivalIntervalMs?: number;
  /** Closed loop: at most this many requests in flight. */
  readonly replayConcurrency?: number;
}

/** Options of `predict`. */
export interface PredictOptions {
  /** Relative paths of the config (traces, warm-up trace, perf data) resolve against it (default: working directory). */
  readonly baseDir?: string;
  /** Default `dynamo`: the library API runs the Dynamo stack (`fleetsim predict` defaults to `engine`). */
  readonly stack?: Stack;
  readonly capturePerRequest?: boolean;
  /** Also write the HTML report to this path (`fleetsim predict` writes none). */
  readonly htmlReportPath?: string;
  readonly signal?: AbortSignal;
}
