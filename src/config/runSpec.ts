/**
 * The resolved, validated description of one run. `config/` turns YAML (+ `--set`) into this;
 * every other module reads only this shape, never raw YAML. All times are milliseconds unless
 * a name says otherwise.
 */

import type { CapacityPolicy } from "../engine/capacityPolicy.js";
import type { SglangSpec } from "../engine/engineConfig.js";
import type { SpeculationSpec } from "../engine/speculation.js";
import type { KvCapacityBreakdown } from "../model/memory.js";
import type { PlannerSettings } from "../planner/types.js";
import type { TimingSpec } from "../timing/timingSpec.js";
import type { WekaTimestampBasis } from "../traffic/weka.js";
import type {
  LoadSpec,
  StopSpec,
  SyntheticSessionSourceSpec,
  SyntheticSourceSpec,
} from "../traffic/workloadSpec.js";
import type { Backend } from "./backends.js";
import { type CamelKeys, camelKeys } from "./camelKeys.js";
import { CONFIG_PARSE } from "./issues.js";
import type { KvTransferConfig } from "./schema/engine.js";
import type { SlaConfig } from "./schema/evaluation.js";
import { Execution, type ResourcesConfig } from "./schema/execution.js";
import type { G3OffloadConfig, HostOffloadConfig } from "./schema/role.js";
import type { SingleFileFormat } from "./traceFormats.js";

// The parts of a RunSpec that lower layers read are defined there and re-exported here, so a
// RunSpec stays one shape to its readers while timing/ and traffic/ do not depend on config/.
export type { TimingSpec } from "../timing/timingSpec.js";
export type {
  LoadSpec,
  SharedPrefixSpec,
  StopSpec,
  SyntheticSessionSourceSpec,
  SyntheticSourceSpec,
} from "../traffic/workloadSpec.js";

export type Stack = "dynamo" | "engine";

/** One worker role: the aggregated pool, or the prefill or decode pool of a disaggregated deployment. */
export interface WorkerRoleSpec {
  readonly replicas: number;
  readonly tensor: number;
  readonly pipeline: number;
  readonly attentionData: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
  /** GPUs a worker counts for budgets and `gpu_hours`: tensor × attention_data (docs/architecture.md). */
  readonly gpusPerWorker: number;
  readonly maxBatchedTokens: number;
  readonly maxSequences: number;
  /** vLLM `--async-scheduling`: arrivals join one pass later while passes run back to back. */
  readonly asyncScheduling: boolean;
  /** `timing.first_token: prefill`: a request is not priced in the decode half of the pass that completes its prefill (vLLM core). Absent = false. */
  readonly firstTokenAtPrefill?: true;
  /** `engine.enable_chunked_prefill`: false = a prompt is prefilled in one pass or waits. Absent = true. */
  readonly chunkedPrefill?: boolean;
  /**
   * `scheduler.prefill_schedule_interval`: with attention DP, a worker admits waiting requests
   * only every N-th pass (1 = every pass; docs/timing.md "Prefill schedule interval"). Absent in
   * specs built in code = 1.
   */
  readonly prefillScheduleInterval?: number;
  /**
   * `scheduler.prefill_decode_interval` (SGLang's `--prefill-decode-interval`): after a pass that
   * prefilled, at least N passes without prefill while anything decodes (docs/backends.md). Absent
   * = 0, off.
   */
  readonly prefillDecodeInterval?: number;
  /** Engine KV block size in tokens. */
  readonly blockSize: number;
  readonly prefixCaching: boolean;
  /** KV capacity in blocks per attention-DP rank. */
  readonly numGpuBlocks: number;
  /**
   * The memory estimate `numGpuBlocks` comes from (`kv_cache.capacity.type: default`: weights,
   * activations, overheads and the KV budget per rank; `--detail memory` reports it); absent when
   * the capacity is configured.
   */
  readonly kvCapacityEstimate?: KvCapacityBreakdown;
  readonly timing: TimingSpec;
  readonly startupSeconds: number;
  /** The role's GPU system id (its own `hardware` or `engine.hardware`); absent in specs built in code. */
  readonly hardware?: string;
  /** vLLM `max_model_len`; prompts with length ≥ this are rejected. `null` = no limit. */
  readonly maxModelLen: number | null;
  /** `kv_cache.host_offload` (docs/offload.md); absent or null: no host tier. */
  readonly hostOffload?: HostOffloadSpec | null;
  /**
   * `engine.speculation` (docs/speculation.md), the same for every role (a prefill worker never
   * speculates); absent (specs built in code) or null = off.
   */
  readonly speculation?: SpeculationSpec | null;
  /**
   * `engine.backend` (docs/backends.md), the same for every role; absent (specs built in code and
   * every vLLM run, whose specs stay as they were) = `vllm`.
   */
  readonly backend?: Backend;
  /** TRT-LLM's `scheduler.capacity_scheduler_policy`; present only with backend trtllm. */
  readonly capacityPolicy?: CapacityPolicy;
  /** `engine.workers.<role>.sglang` after defaults; present only with backend sglang. */
  readonly sglang?: SglangSpec;
}

export type { CapacityPolicy } from "../engine/capacityPolicy.js";
export type { SglangSpec } from "../engine/engineConfig.js";
export type { Backend } from "./backends.js";

/** The host-memory KV tier of a role (`kv_cache.host_offload`, the reference's G2). */
export interface HostOffloadSpec {
  /** Host blocks per attention-DP rank (`dp_rank_local`) or for the whole pool (`cluster_shared`). */
  readonly numHostBlocks: number;
  readonly scope: HostOffloadConfig["scope"];
  readonly d2hBandwidthGBps: number;
  readonly h2dBandwidthGBps: number;
  readonly latencyToFirstByteMs: number;
  /** The shared link of a cluster-shared tier (decimal GB/s). */
  readonly sharedD2hBandwidthGBps: number;
  readonly sharedH2dBandwidthGBps: number;
  /** KV bytes of one block on one GPU (model, KV dtype and TP, or `kv_cache.bytes_per_token`). */
  readonly bytesPerBlock: number;
  /** fleetsim extension: the KV router also sees the blocks of a worker's own host tier. */
  readonly routerSeesHost: boolean;
  /** `kv_cache.g3_offload`: the disk tier behind this one; absent or null = none. */
  readonly disk?: DiskOffloadSpec | null;
}

/** The disk KV tier of a role (`kv_cache.g3_offload`, the reference's G3; docs/offload.md "Disk tier"). */
export interface DiskOffloadSpec {
  /** Disk blocks per worker (`worker_local`: per attention-DP rank) or for the pool (`cluster_shared`). */
  readonly numBlocks: number;
  readonly scope: G3OffloadConfig["scope"];
  readonly latencyToFirstByteMs: number;
  /** Each worker's own link (decimal GB/s). */
  readonly readBandwidthGBps: number;
  readonly writeBandwidthGBps: number;
  /** The shared storage backend of a cluster-shared tier; null for worker-local disks. */
  readonly sharedReadBandwidthGBps: number | null;
  readonly sharedWriteBandwidthGBps: number | null;
}

interface EngineCommon {
  readonly model: string;
  /** Engine-level `hardware`; a disaggregated role may override it (its timing spec carries the GPU). */
  readonly hardware: string;
  readonly backend: Backend;
}

export interface AggregatedEngineSpec extends EngineCommon {
  readonly mode: "aggregated";
  readonly aggregated: WorkerRoleSpec;
}

/** KV hand-off from a prefill worker to a decode worker (`ai-dynamo/aisimulate@26191a9:docs/replay/engine/kv-transfer.md`, `ai-dynamo/dynamo@4c3ac77:lib/mocker/src/common/utils.rs`). */
export interface KvTransferSpec {
  /** Bytes per prompt token moved per GPU (`auto`: the model's KV bytes per token at the prefill role's TP). */
  readonly bytesPerToken: number;
  /** Decimal GB/s; `null` = no transfer delay. */
  readonly bandwidthGBps: number | null;
  /** `destination_missing`: only prompt blocks the decode worker lacks; `full_prompt`: the whole prompt. */
  readonly timingMode: KvTransferConfig["timing_mode"];
}

export interface DisaggregatedEngineSpec extends EngineCommon {
  readonly mode: "disaggregated";
  readonly prefill: WorkerRoleSpec;
  readonly decode: WorkerRoleSpec;
  readonly kvTransfer: KvTransferSpec;
}

export type EngineSpec = AggregatedEngineSpec | DisaggregatedEngineSpec;

/** The engine's roles in order, by name: `aggregated`, or `prefill` then `decode`. */
export function engineRoles(
  engine: EngineSpec,
): ReadonlyArray<readonly ["aggregated" | "prefill" | "decode", WorkerRoleSpec]> {
  return engine.mode === "aggregated"
    ? [["aggregated", engine.aggregated]]
    : [
        ["prefill", engine.prefill],
        ["decode", engine.decode],
      ];
}

export type SourceSpec =
  | SyntheticSourceSpec
  | SyntheticSessionSourceSpec
  | {
      readonly type: "trace";
      /** A one-file trace with hash ids of `blockSize` tokens (docs/traces.md). */
      readonly format: SingleFileFormat;
      /** Absolute or cwd-relative path as resolved against the config file's directory. */
      readonly path: string;
      /** Tokens per trace hash block (`traffic.source.block_size`, default 512). */
      readonly blockSize: number;
    }
  | {
      /** A Dynamo request trace (`dynamo.request.trace.v1`), possibly in several shards. */
      readonly type: "trace";
      readonly format: "dynamo";
      /** The files to read, in order: directories and patterns already expanded (absolute). */
      readonly paths: readonly string[];
      /** `paths[0]`, so code that names "the trace file" works for every trace format. */
      readonly path: string;
      /** Explicit `traffic.source.block_size`, which must equal the embedded size; null = take the embedded one. */
      readonly blockSize: number | null;
    }
  | {
      /** An AgentX / Weka corpus: one JSON file, or a directory of them (docs/traces.md "Weka"). */
      readonly type: "trace";
      readonly format: "weka";
      readonly path: string;
      /** Explicit `traffic.source.block_size`, which must equal the corpus's; null = the corpus's. */
      readonly blockSize: number | null;
      readonly nestedTimestampBasis: WekaTimestampBasis;
    };

/** `evaluation.sla` with its keys in camelCase, every one present: `null` = no threshold. */
export type SlaSpec = {
  readonly [K in keyof CamelKeys<SlaConfig>]-?: Exclude<CamelKeys<SlaConfig>[K], undefined> | null;
};

// The router settings are router/routerSpec.ts's (router/ sits below config/).
export type { KvRouterSpec, RouterSpec } from "../router/routerSpec.js";

import type { RouterSpec } from "../router/routerSpec.js";

export interface RunSpec {
  readonly stack: Stack;
  readonly source: SourceSpec;
  readonly load: LoadSpec;
  readonly stop: StopSpec;
  readonly engine: EngineSpec;
  readonly router: RouterSpec;
  /** `null` when `evaluation.sla` is absent or sets no threshold: no goodput keys are reported. */
  readonly sla: SlaSpec | null;
  /** The Planner in the loop (`--stack dynamo`, `planner.policy: enabled`); `null` = fixed replicas. */
  readonly planner: PlannerSettings | null;
  /**
   * `execution.resources` (host limits; no effect on results). Absent (specs built in code) =
   * `DEFAULT_EXECUTION`.
   */
  readonly execution?: ExecutionSpec;
  /**
   * `cost:` (fleetsim extension, docs/cost.md): USD per GPU-hour of each GPU system, the defaults
   * with the config's overrides. Absent (specs built in code) = the defaults.
   */
  readonly cost?: CostSpec;
  /** `client:` (fleetsim extension, docs/client.md). Absent (specs built in code) = `DEFAULT_CLIENT`. */
  readonly client?: ClientSpec;
}

/** What the benchmark client adds and when it gives up (docs/client.md). */
export interface CostSpec {
  readonly usdPerGpuHour: Readonly<Record<string, number>>;
}

export interface ClientSpec {
  /** Client send → the request reaches the router, ms: the fleet sees it this much later. */
  readonly requestMs: number;
  /** An engine's output → the client has it, ms: every token and the end arrive this much later. */
  readonly responseMs: number;
  /** A request not finished this long after the client sent it is abandoned; null = never. */
  readonly timeoutMs: number | null;
  /** The calibration profile `client.profile` applied (docs/calibrate.md), by name; absent = none. */
  readonly profile?: string;
}

/** The schema's defaults for `client`: nothing added, no timeout (the reference's behaviour). */
export const DEFAULT_CLIENT: ClientSpec = { requestMs: 0, responseMs: 0, timeoutMs: null };

/**
 * `execution.resources` after defaults (`ai-dynamo/aisimulate@adc8645:docs/reference/local-resources.md`, docs/resources.md): the schema's
 * keys in camelCase (config/schema/execution.ts documents them).
 */
export type ResourceSettings = CamelKeys<ResourcesConfig>;

export interface ExecutionSpec {
  readonly resources: ResourceSettings;
}

/** The schema's defaults for `execution`, read from the schema itself. */
export const DEFAULT_EXECUTION: ExecutionSpec = {
  resources: camelKeys(Execution.parse({}, CONFIG_PARSE).resources),
};
