/**
 * The resolved RunSpec and the YAML schema describe one config; this test ties them where the
 * RunSpec is not derived from the schema (its fields rename, merge, convert units and add
 * defaults that need the model or the GPU). Each table names every field of one RunSpec type
 * (the compiler checks the names: a field added to the type and not to its table, or the
 * reverse, does not compile) with the schema keys it is resolved from; the tests check those
 * keys against the zod schema, and that every key of the sections covered is resolved into some
 * field, refused by the schema (`rejectKey`, read from the schema), or listed in NOT_RESOLVED
 * with the reason.
 *
 * Derived rather than checked: `ResourceSettings`, `SlaSpec` and `DEFAULT_EXECUTION` (the
 * schema's keys in camelCase, config/camelKeys.ts), the Planner's settings (the knob table,
 * test/planner/knobs.test.ts). The API's options are tied to the schema by
 * test/api/configCoverage.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  type ClientSpec,
  type CostSpec,
  DEFAULT_CLIENT,
  type DiskOffloadSpec,
  type EngineSpec,
  type HostOffloadSpec,
  type KvTransferSpec,
  type LoadSpec,
  type RouterSpec,
  type SharedPrefixSpec,
  type SourceSpec,
  type StopSpec,
  type WorkerRoleSpec,
} from "../../src/config/runSpec.js";
import { PredictConfig } from "../../src/config/schema/index.js";
import type { RateStage } from "../../src/traffic/stagedArrivals.js";
import { loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { ROLE as R, refusedKeyPathsByRole, schemaKeyPathsByRole, under } from "../helpers/schemaPaths.js";

/** Every member's fields of a union (a spec with a `type` or `mode`). */
type AllKeys<T> = T extends unknown ? keyof T : never;

/**
 * The schema keys each field of a RunSpec type is resolved from. `[]`: none of its own (derived
 * from other fields, or a spec with its own table).
 */
type Sources<T> = { readonly [K in AllKeys<T>]: readonly string[] };

/** A key and everything below it, resolved into a type of a lower layer (TimingSpec, SglangSpec, …). */
const whole = (path: string): string => `${path}.**`;

const WORKER_ROLE: Sources<WorkerRoleSpec> = {
  replicas: [`${R}.parallelism.replicas`],
  tensor: [`${R}.parallelism.tensor`],
  pipeline: [`${R}.parallelism.pipeline`],
  attentionData: [`${R}.parallelism.attention_data`],
  moeTensor: [`${R}.parallelism.moe_tensor`],
  moeExpert: [`${R}.parallelism.moe_expert`],
  gpusPerWorker: [],
  maxBatchedTokens: [`${R}.scheduler.max_batched_tokens`],
  maxSequences: [`${R}.scheduler.max_sequences`],
  asyncScheduling: [`${R}.scheduler.async_scheduling`, "engine.backend_version"],
  firstTokenAtPrefill: [`${R}.timing.first_token`],
  chunkedPrefill: ["engine.enable_chunked_prefill"],
  prefillScheduleInterval: [`${R}.scheduler.prefill_schedule_interval`],
  prefillDecodeInterval: [`${R}.scheduler.prefill_decode_interval`],
  blockSize: [`${R}.kv_cache.block_size`, `${R}.sglang.page_size`],
  prefixCaching: [`${R}.kv_cache.prefix_caching`],
  numGpuBlocks: [whole(`${R}.kv_cache.capacity`), "engine.wideep_num_slots"],
  kvCapacityEstimate: [`${R}.kv_cache.capacity.type`],
  timing: [whole(`${R}.timing`), "engine.perf_database", "engine.enable_eplb", "engine.wideep_num_slots"],
  startupSeconds: [`${R}.startup_seconds`],
  hardware: [`${R}.hardware`, "engine.hardware"],
  maxModelLen: ["engine.context_length"],
  hostOffload: [`${R}.kv_cache.host_offload`],
  speculation: [whole("engine.speculation"), "engine.nextn", "engine.nextn_accepted"],
  backend: ["engine.backend"],
  capacityPolicy: [`${R}.scheduler.capacity_scheduler_policy`],
  sglang: [whole(`${R}.sglang`)],
};

const HOST_OFFLOAD: Sources<HostOffloadSpec> = {
  numHostBlocks: [`${R}.kv_cache.host_offload.num_host_blocks`],
  scope: [`${R}.kv_cache.host_offload.scope`],
  d2hBandwidthGBps: [`${R}.kv_cache.host_offload.d2h_bandwidth_gbps`],
  h2dBandwidthGBps: [`${R}.kv_cache.host_offload.h2d_bandwidth_gbps`],
  latencyToFirstByteMs: [`${R}.kv_cache.host_offload.latency_to_first_byte_ms`],
  sharedD2hBandwidthGBps: [`${R}.kv_cache.host_offload.shared_d2h_bandwidth_gbps`],
  sharedH2dBandwidthGBps: [`${R}.kv_cache.host_offload.shared_h2d_bandwidth_gbps`],
  bytesPerBlock: [`${R}.kv_cache.bytes_per_token`, `${R}.kv_cache.block_size`],
  routerSeesHost: [`${R}.kv_cache.host_offload.router_sees_host`],
  disk: [`${R}.kv_cache.g3_offload`],
};

/** A table whose every field is resolved from one key below `prefix`. */
function oneKeyEach<T>(prefix: string, keys: { readonly [K in keyof T]-?: string }): Sources<T> {
  return Object.fromEntries(
    Object.entries<string>(keys).map(([field, key]) => [field, [`${prefix}.${key}`]]),
  ) as unknown as Sources<T>;
}

const DISK_OFFLOAD = oneKeyEach<DiskOffloadSpec>(`${R}.kv_cache.g3_offload`, {
  numBlocks: "num_g3_blocks",
  scope: "scope",
  latencyToFirstByteMs: "latency_to_first_byte_ms",
  readBandwidthGBps: "read_bandwidth_gbps",
  writeBandwidthGBps: "write_bandwidth_gbps",
  sharedReadBandwidthGBps: "shared_read_bandwidth_gbps",
  sharedWriteBandwidthGBps: "shared_write_bandwidth_gbps",
});

const ENGINE: Sources<EngineSpec> = {
  mode: ["engine.mode"],
  model: ["engine.model"],
  hardware: ["engine.hardware"],
  backend: ["engine.backend"],
  aggregated: [],
  prefill: [],
  decode: [],
  kvTransfer: [],
};

const KV_TRANSFER: Sources<KvTransferSpec> = {
  bytesPerToken: ["engine.kv_transfer.bytes_per_token"],
  bandwidthGBps: ["engine.kv_transfer.bandwidth_gb_per_second"],
  timingMode: ["engine.kv_transfer.timing_mode"],
};

const ROUTER: Sources<RouterSpec> = {
  policy: ["router.policy"],
  overlapScoreCredit: ["router.overlap_score_credit"],
  prefillLoadScale: ["router.prefill_load_scale"],
  temperature: ["router.temperature"],
  prefillLoadModel: ["router.prefill_load_model.type"],
};

const CLIENT: Sources<ClientSpec> = {
  requestMs: ["client.overhead.request_ms"],
  responseMs: ["client.overhead.response_ms"],
  timeoutMs: ["client.timeout_seconds"],
  profile: ["client.profile"],
};

const COST: Sources<CostSpec> = { usdPerGpuHour: [whole("cost.usd_per_gpu_hour")] };

const T = "traffic";

const SOURCE: Sources<SourceSpec> = {
  type: [`${T}.source.type`],
  inputTokens: [
    `${T}.source.input_tokens`,
    `${T}.source.system_prompt_tokens`,
    `${T}.source.question_tokens`,
  ],
  outputTokens: [`${T}.source.output_tokens`],
  input: [`${T}.source.input_tokens`, `${T}.source.question_tokens`],
  output: [`${T}.source.output_tokens`, `${T}.source.output_tokens_per_turn`],
  seed: [`${T}.source.seed`],
  sharedPrefix: [],
  newInputTokensPerTurn: [`${T}.source.new_input_tokens_per_turn`],
  outputTokensPerTurn: [`${T}.source.output_tokens_per_turn`],
  newInput: [`${T}.source.new_input_tokens_per_turn`],
  turns: [`${T}.source.session.turns`],
  sharedPrefixRatio: [`${T}.source.session.shared_prefix_ratio`],
  prefixGroups: [`${T}.source.session.prefix_groups`],
  interTurnDelayMs: [`${T}.source.session.inter_turn_delay_ms`],
  format: [`${T}.source.format`],
  path: [`${T}.source.paths`],
  paths: [`${T}.source.paths`],
  blockSize: [`${T}.source.block_size`],
  nestedTimestampBasis: [`${T}.source.nested_timestamp_basis`],
};

const SHARED_PREFIX = oneKeyEach<SharedPrefixSpec>(`${T}.source`, {
  groups: "groups",
  promptsPerGroup: "prompts_per_group",
  systemPromptTokens: "system_prompt_tokens",
});

const LOAD: Sources<LoadSpec> = {
  type: [`${T}.load.type`],
  concurrency: [`${T}.load.concurrency`],
  warmupSessions: [`${T}.load.warmup_sessions`],
  requestsPerSecond: [`${T}.load.requests_per_second`, `${T}.load.sessions_per_second`],
  seed: [`${T}.load.seed`],
  stages: [],
  speedup: [`${T}.load.speedup`],
};

const RATE_STAGE = oneKeyEach<RateStage>(`${T}.load.stages[]`, {
  requestsPerSecond: "requests_per_second",
  durationMs: "duration_seconds",
  requests: "requests",
});

const STOP: Sources<StopSpec> = {
  requests: [`${T}.stop.requests`, `${T}.stop.requests_per_load_unit`],
  sessions: [`${T}.stop.sessions`, `${T}.stop.sessions_per_load_unit`],
  maxVirtualTimeMs: [`${T}.stop.max_virtual_time_seconds`],
};

const TABLES = {
  ENGINE,
  WORKER_ROLE,
  HOST_OFFLOAD,
  DISK_OFFLOAD,
  KV_TRANSFER,
  ROUTER,
  CLIENT,
  COST,
  SOURCE,
  SHARED_PREFIX,
  LOAD,
  RATE_STAGE,
  STOP,
};

/** The sections these tables cover, and the ones whose spec is derived from the schema. */
const COVERED = ["traffic", "engine", "router", "client", "cost"];
const DERIVED = ["planner", "execution", "evaluation"];

/** Keys of the covered sections that no RunSpec field is resolved from (other than refused ones), and why. */
const NOT_RESOLVED: readonly (readonly [reason: string, paths: readonly string[]])[] = [
  [
    "context parallelism: accepted only at 1, which fleetsim simulates",
    [`${R}.parallelism.prefill_context`, `${R}.parallelism.decode_context`],
  ],
];

const SCHEMA = schemaKeyPathsByRole(PredictConfig);
const REFUSED = refusedKeyPathsByRole(PredictConfig);
/** Keys with no key below them: containers are covered through their keys. */
const LEAVES = SCHEMA.filter((path) => !SCHEMA.some((other) => other !== path && under(other, path)));
const LISTED = Object.values(TABLES).flatMap((table) => Object.values(table).flat());
const NOT_RESOLVED_PATHS = NOT_RESOLVED.flatMap(([, paths]) => paths);

const section = (path: string): string => path.split(".")[0];

describe("RunSpec fields and the YAML schema", () => {
  it("every key a table names is a schema key", () => {
    const keys = [...LISTED.map((entry) => entry.replace(/\.\*\*$/, "")), ...NOT_RESOLVED_PATHS];
    expect(keys.filter((key) => !SCHEMA.includes(key))).toEqual([]);
  });

  it("every key of the covered sections is resolved into a field, refused, or listed in NOT_RESOLVED", () => {
    const resolved = (path: string): boolean =>
      LISTED.some((entry) =>
        entry.endsWith(".**") ? under(path, entry.slice(0, -".**".length)) : entry === path,
      ) ||
      REFUSED.includes(path) ||
      NOT_RESOLVED_PATHS.some((other) => under(path, other));
    const unaccounted = LEAVES.filter((path) => COVERED.includes(section(path)) && !resolved(path));
    expect(unaccounted).toEqual([]);
  });

  it("every top-level section is covered here or derived", () => {
    const sections = [...new Set(SCHEMA.map(section))];
    expect(sections.filter((s) => ![...COVERED, ...DERIVED].includes(s))).toEqual([]);
  });

  it("DEFAULT_CLIENT is what a config without a client section resolves to", () => {
    expect(loadYaml(RUNNABLE_ENGINE).client).toEqual(DEFAULT_CLIENT);
  });
});
