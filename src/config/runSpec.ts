/**
 * The resolved, validated description of one run. `config/` turns YAML (+ `--set`) into this;
 * every other module reads only this shape, never raw YAML. All times are milliseconds unless
 * a name says otherwise.
 */

import type { GpuSpec } from "../hardware/gpu.js";
import type { ModelArchitecture } from "../model/architecture.js";

export type Stack = "dynamo" | "engine";

/** Forward-pass timing provider of one worker role (aisimulate.md §4.1, mocker.md §2). */
export type TimingSpec =
  | { readonly type: "polynomial" }
  | { readonly type: "fixed"; readonly prefillMs: number; readonly decodeMs: number }
  | {
      /** Op-level model over silicon-measured op tables (aisimulate.md §4.2). */
      readonly type: "default";
      readonly model: ModelArchitecture;
      readonly gpu: GpuSpec;
      /** An AIConfigurator-format perf-data tree to read instead of the built-in tables. */
      readonly perfDatabase: string | null;
    };

/** One worker role (only `aggregated` in this version). */
export interface WorkerRoleSpec {
  readonly replicas: number;
  readonly tensor: number;
  readonly pipeline: number;
  readonly attentionData: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
  /** GPUs one logical worker occupies: tensor × pipeline × attention_data × prefill_context. */
  readonly gpusPerWorker: number;
  readonly maxBatchedTokens: number;
  readonly maxSequences: number;
  /** Engine KV block size in tokens. */
  readonly blockSize: number;
  readonly prefixCaching: boolean;
  /** KV capacity in blocks per attention-DP rank. */
  readonly numGpuBlocks: number;
  readonly timing: TimingSpec;
  readonly startupSeconds: number;
  /** vLLM `max_model_len`; prompts with length ≥ this are rejected. `null` = no limit. */
  readonly maxModelLen: number | null;
}

export interface EngineSpec {
  readonly mode: "aggregated";
  readonly model: string;
  readonly hardware: string;
  readonly backend: "vllm";
  readonly aggregated: WorkerRoleSpec;
}

export type SourceSpec =
  | { readonly type: "synthetic"; readonly inputTokens: number; readonly outputTokens: number }
  | {
      readonly type: "trace";
      readonly format: "mooncake";
      /** Absolute or cwd-relative path as resolved against the config file's directory. */
      readonly path: string;
      /** Tokens per trace hash block (`traffic.source.block_size`, default 512). */
      readonly blockSize: number;
    };

export type LoadSpec =
  | { readonly type: "concurrency"; readonly concurrency: number }
  | { readonly type: "poisson"; readonly requestsPerSecond: number; readonly seed: number }
  | { readonly type: "constant_rate"; readonly requestsPerSecond: number }
  | { readonly type: "trace_timestamps"; readonly speedup: number };

export interface StopSpec {
  /** Synthetic only: number of requests to generate (resolved from `requests` or `requests_per_load_unit`). */
  readonly requests: number | null;
  /** Trace only: soft cap on virtual time (1000 × `max_virtual_time_seconds`). */
  readonly maxVirtualTimeMs: number | null;
}

export interface SlaSpec {
  readonly ttftMs: number | null;
  readonly itlMs: number | null;
  readonly e2eMs: number | null;
}

export interface RouterSpec {
  readonly policy: "round_robin";
}

export interface RunSpec {
  readonly stack: Stack;
  readonly source: SourceSpec;
  readonly load: LoadSpec;
  readonly stop: StopSpec;
  readonly engine: EngineSpec;
  readonly router: RouterSpec;
  /** `null` when `evaluation.sla` is absent or sets no threshold: no goodput keys are reported. */
  readonly sla: SlaSpec | null;
}
