/**
 * One worker role, `engine.workers.<role>` (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`): the same fields for
 * `aggregated`, `prefill` and `decode`, with per-role defaults and the few per-role rules
 * (only P/D roles may set `hardware`; P/D roles run one attention-DP rank).
 * `timing.type: default` and `capacity.type: default` are valid here; `config/resolve/engine.ts` prices
 * them (or refuses what fleetsim cannot price, e.g. the FPM forward model).
 */

import * as z from "zod";
import type { WorkerRole } from "../../util/workerRole.js";
import {
  fail,
  fraction,
  int,
  nonNegInt,
  nonNegNum,
  PATH,
  posInt,
  positiveOr,
  posNum,
  presentExcept,
  pyList,
  rejectKey,
  unsupportedKey,
  up,
} from "./primitives.js";

/**
 * `scheduler.max_sequences` defaults per role (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`): a prefill worker admits one
 * sequence per pass unless told otherwise; aggregated and decode workers batch up to 256.
 */
const DEFAULT_MAX_SEQUENCES: Readonly<Record<WorkerRole, number>> = {
  aggregated: 256,
  prefill: 1,
  decode: 256,
};

/** A GPU system id, as at `engine.hardware` and a P/D role's `hardware`. */
export const HardwareId = z
  .string()
  .min(1)
  .superRefine((id, ctx) => {
    if (id === "auto") {
      fail(ctx, `${PATH}='auto' is only valid for recommend; name a system such as 'h200_sxm'`);
    }
  });

/**
 * Upper bounds on sizes, so a typo cannot ask for 2³¹ workers (each costs memory before the run
 * starts; the preflight prices what passes, docs/resources.md). They sit far above any real
 * deployment: 100,000 workers per role, 4,096 GPUs of one worker in any dimension, a million
 * sequences or a billion tokens per pass, 2³⁰ KV blocks per rank.
 */
export const LIMITS = {
  replicas: 100_000,
  parallelism: 4096,
  maxSequences: 1_048_576,
  maxBatchedTokens: 1 << 30,
  blocks: 1 << 30,
  blockSize: 1 << 20,
} as const;

const bounded = (max: number, what: string) =>
  posInt().max(max, { error: `Input should be at most ${max} (${what})` });

const Parallelism = z
  .strictObject({
    replicas: bounded(LIMITS.replicas, "workers per role").default(1),
    tensor: bounded(LIMITS.parallelism, "GPUs").default(1),
    pipeline: bounded(LIMITS.parallelism, "pipeline stages").default(1),
    attention_data: bounded(LIMITS.parallelism, "attention-DP ranks").default(1),
    moe_tensor: bounded(LIMITS.parallelism, "GPUs").default(1),
    moe_expert: bounded(LIMITS.parallelism, "GPUs").default(1),
    prefill_context: posInt().optional(),
    decode_context: posInt().optional(),
  })
  .superRefine((p, ctx) => {
    // Context-parallel ranks are not modelled yet; accepting them would silently simulate the
    // wrong deployment. (Pipeline stages are priced by the op-level timing model; attention-DP
    // ranks each get their own scheduler and KV cache.)
    for (const key of ["prefill_context", "decode_context"] as const) {
      const value = p[key];
      if (value !== undefined && value > 1) {
        fail(ctx, `${PATH}=${value} is not supported by fleetsim yet (only 1)`, [key]);
      }
    }
    // MoE parallelism repartitions the worker's GPUs; it never adds any (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`).
    const moeGpus = p.moe_tensor * p.moe_expert;
    if (moeGpus !== 1 && moeGpus !== p.tensor * p.attention_data) {
      fail(
        ctx,
        `${PATH}: moe_tensor × moe_expert (${p.moe_tensor} × ${p.moe_expert}) must equal tensor × attention_data ` +
          `(${p.tensor} × ${p.attention_data}): MoE parallelism repartitions the worker's GPUs`,
        ["moe_expert"],
      );
    }
  });

function scheduler(kind: WorkerRole) {
  return z.strictObject({
    max_batched_tokens: bounded(LIMITS.maxBatchedTokens, "tokens per pass").default(8192),
    max_sequences: bounded(LIMITS.maxSequences, "sequences per pass").default(DEFAULT_MAX_SEQUENCES[kind]),
    prefill_schedule_interval: posInt().default(1),
    prefill_decode_interval: nonNegInt().default(0),
    /**
     * fleetsim extension: vLLM `--async-scheduling`, SGLang's overlap scheduler (docs/timing.md,
     * "Async scheduling"). Absent: the backend version's default (config/asyncScheduling.ts).
     */
    async_scheduling: z.boolean().optional(),
    /**
     * fleetsim extension, TRT-LLM's `scheduler_config.capacity_scheduler_policy` (backend trtllm
     * only; docs/backends.md). Absent = `GUARANTEED_NO_EVICT`, as the reference.
     */
    capacity_scheduler_policy: z.enum(["GUARANTEED_NO_EVICT", "MAX_UTILIZATION"]).optional(),
  });
}

const Capacity = z
  .strictObject({
    type: z.enum(["default", "fixed"]).default("default"),
    memory_fraction: fraction().optional(),
    cuda_graph_reserved_bytes: int()
      .min(0)
      .max(2 ** 53)
      .optional(),
    blocks: bounded(LIMITS.blocks, "KV blocks per attention-DP rank").optional(),
    bytes: posInt().optional(),
  })
  .superRefine((c, ctx) => {
    const rejected = presentExcept(
      c,
      c.type === "fixed"
        ? ["type", "blocks", "bytes", "cuda_graph_reserved_bytes"]
        : ["type", "memory_fraction", "cuda_graph_reserved_bytes"],
    );
    if (rejected.length > 0) {
      fail(ctx, `${PATH}.type='${c.type}' does not accept ${pyList(rejected)}`);
    }
    if (c.type === "fixed" && (c.blocks === undefined) === (c.bytes === undefined)) {
      fail(ctx, `${PATH}.type='fixed' requires exactly one of blocks or bytes`);
    }
  })
  .transform((c) =>
    c.type === "fixed"
      ? { type: "fixed" as const, blocks: c.blocks, bytes: c.bytes }
      : {
          type: "default" as const,
          // Absent: the backend's default (config/backends.ts), applied where the backend is known.
          memory_fraction: c.memory_fraction,
          cuda_graph_reserved_bytes: c.cuda_graph_reserved_bytes ?? 0,
        },
  );

/**
 * `kv_cache.host_offload` (the reference's G2 tier, `ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`; docs/offload.md): host
 * memory behind the GPU cache. Defaults are the reference's.
 */
const HostOffload = z
  .strictObject({
    num_host_blocks: bounded(LIMITS.blocks, "host KV blocks"),
    scope: z.enum(["dp_rank_local", "cluster_shared"]).default("dp_rank_local"),
    d2h_bandwidth_gbps: posNum().default(32),
    h2d_bandwidth_gbps: posNum().default(32),
    latency_to_first_byte_ms: nonNegNum().default(0),
    shared_d2h_bandwidth_gbps: posNum().default(80),
    shared_h2d_bandwidth_gbps: posNum().default(80),
    /** fleetsim extension: the KV router also counts a worker's host-tier blocks as its own. */
    router_sees_host: z.boolean().default(false),
  })
  .superRefine((h, ctx) => {
    if (h.router_sees_host && h.scope === "cluster_shared") {
      fail(
        ctx,
        `${PATH}.router_sees_host needs scope 'dp_rank_local': a cluster-shared tier is every worker's, so it cannot steer the router`,
        ["router_sees_host"],
      );
    }
  });

/**
 * `kv_cache.g3_offload` (the reference's G3 tier, `ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`; docs/offload.md "Disk
 * tier"): disk or network storage behind the host tier, which it needs. Keys and defaults are the
 * reference's.
 */
const G3Offload = z.strictObject({
  num_g3_blocks: bounded(LIMITS.blocks, "disk KV blocks"),
  scope: z.enum(["worker_local", "cluster_shared"]).default("worker_local"),
  latency_to_first_byte_ms: nonNegNum().default(0.1),
  read_bandwidth_gbps: posNum().default(10),
  write_bandwidth_gbps: posNum().default(10),
  shared_read_bandwidth_gbps: posNum().default(80),
  shared_write_bandwidth_gbps: posNum().default(80),
});

const KvCache = z
  .strictObject({
    block_size: bounded(LIMITS.blockSize, "tokens per KV block").optional(),
    prefix_caching: z.boolean().default(true),
    bytes_per_token: positiveOr("number", "auto").default("auto"),
    capacity: Capacity.prefault({}),
    host_offload: HostOffload.nullable().optional(),
    g3_offload: G3Offload.nullable().optional(),
    state_cache: unsupportedKey("recurrent state cache"),
  })
  .superRefine((kv, ctx) => {
    const g3 = kv.g3_offload ?? null;
    if (g3 !== null && (kv.host_offload ?? null) === null) {
      fail(ctx, `${PATH} requires ${up(1)}.host_offload: disk blocks are staged through host memory`, [
        "g3_offload",
      ]);
    } else if (g3 !== null && g3.scope === "worker_local" && kv.host_offload?.scope === "cluster_shared") {
      fail(
        ctx,
        `${PATH} 'worker_local' needs ${up(2)}.host_offload.scope 'dp_rank_local': a cluster-shared host tier has no one worker to own a local disk`,
        ["g3_offload", "scope"],
      );
    }
    // The block size's lower bound depends on the backend: checked in config/backends.ts.
    if (kv.capacity.type === "fixed" && kv.capacity.bytes !== undefined) {
      // bytes → blocks needs both factors spelled out: neither the default block size nor an
      // `auto` bytes_per_token (derived from the model) is something the user has agreed to.
      if (kv.block_size === undefined || kv.bytes_per_token === "auto") {
        fail(ctx, `${PATH} requires an explicit ${up(2)}.block_size and a numeric ${up(2)}.bytes_per_token`, [
          "capacity",
          "bytes",
        ]);
      }
    }
  })
  .transform((kv) => ({
    // Absent: the backend's default (config/backends.ts `roleBlockSize`).
    block_size: kv.block_size,
    prefix_caching: kv.prefix_caching,
    bytes_per_token: kv.bytes_per_token,
    capacity: kv.capacity,
    host_offload: kv.host_offload ?? null,
    g3_offload: kv.g3_offload ?? null,
  }));

const Timing = z
  .strictObject({
    type: z.enum(["default", "fixed", "polynomial"]).default("default"),
    prefill_ms: nonNegNum().optional(),
    decode_ms: nonNegNum().optional(),
    forward_model: z.enum(["op_level", "fpm"]).optional(),
    fpm_parquet_path: z.string().min(1).optional(),
    /** fleetsim extension: engine time outside kernels per pass (docs/timing.md, "Host overhead"). */
    host_overhead: z
      .strictObject({
        per_pass_ms: nonNegNum().max(10_000).optional(),
        per_sequence_ms: nonNegNum().max(1_000).optional(),
      })
      .optional(),
    /**
     * fleetsim extension: whose op tables price an SGLang or TRT-LLM role (docs/backends.md
     * "Timing"): `vllm` (default) or `backend`, that backend's own AIConfigurator tables.
     */
    op_tables: z.enum(["vllm", "backend"]).optional(),
    /**
     * fleetsim extension: how a pass that prefills some requests and decodes others is priced
     * (docs/timing.md "Mixed passes"): `one_pass` (default) or `additive`, a prefill pass plus a
     * decode pass, as the reference prices it.
     */
    mixed_passes: z.enum(["one_pass", "additive"]).optional(),
    /**
     * fleetsim extension: context attention beyond the op tables' longest measured sequence
     * (docs/timing.md "Beyond the tables"): `sqrt` (default, AIConfigurator's rule) or `quadratic`,
     * the reference's.
     */
    context_attention_extrapolation: z.enum(["sqrt", "quadratic"]).optional(),
    /**
     * fleetsim extension: whether a request whose prefill completes in a pass is priced as one
     * more row of that pass's decode half (`decode_step`, default) or not (`prefill`, as the
     * reference prices it); docs/timing.md "First token". vLLM and TensorRT-LLM roles only.
     */
    first_token: z.enum(["decode_step", "prefill"]).optional(),
    /**
     * fleetsim extension: whether a vLLM role's passes run as the CUDA graph of the next captured
     * token count (default true; docs/timing.md "CUDA-graph padding"). vLLM roles only.
     */
    cuda_graph_padding: z.boolean().optional(),
  })
  .superRefine((t, ctx) => {
    const allowed = {
      default: [
        "type",
        "forward_model",
        "fpm_parquet_path",
        "host_overhead",
        "op_tables",
        "mixed_passes",
        "context_attention_extrapolation",
        "first_token",
        "cuda_graph_padding",
      ],
      fixed: ["type", "prefill_ms", "decode_ms", "first_token"],
      polynomial: ["type", "first_token"],
    }[t.type];
    const rejected = presentExcept(t, allowed);
    if (rejected.length > 0) {
      fail(ctx, `${PATH}.type='${t.type}' does not accept ${pyList(rejected)}`);
    }
    if (t.type === "fixed") {
      const missing = (["prefill_ms", "decode_ms"] as const).filter((k) => t[k] === undefined);
      if (missing.length > 0) {
        fail(ctx, `${PATH}.type='fixed' requires ${pyList(missing)}`);
      }
    }
  })
  .transform((t) => {
    // Only when set (fleetsim extensions: an effective config without them reads as the reference's).
    const firstToken = t.first_token === undefined ? {} : { first_token: t.first_token };
    switch (t.type) {
      case "fixed":
        return { type: t.type, prefill_ms: t.prefill_ms!, decode_ms: t.decode_ms!, ...firstToken };
      case "polynomial":
        return { type: t.type, ...firstToken };
      case "default":
        return {
          type: t.type,
          forward_model: t.forward_model ?? "op_level",
          fpm_parquet_path: t.fpm_parquet_path,
          host_overhead: t.host_overhead,
          // Absent: the vLLM tables.
          ...(t.op_tables === undefined ? {} : { op_tables: t.op_tables }),
          ...(t.mixed_passes === undefined ? {} : { mixed_passes: t.mixed_passes }),
          ...(t.context_attention_extrapolation === undefined
            ? {}
            : { context_attention_extrapolation: t.context_attention_extrapolation }),
          ...(t.cuda_graph_padding === undefined ? {} : { cuda_graph_padding: t.cuda_graph_padding }),
          ...firstToken,
        };
    }
  });

/** The reference mocker's SGLang scheduler defaults (`ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`). */
export const SGLANG_DEFAULTS = {
  maxPrefillTokens: 16384,
  chunkedPrefillSize: 8192,
  clipMaxNewTokens: 4096,
  scheduleConservativeness: 1.0,
} as const;

/**
 * `sglang` (backend sglang only; docs/backends.md): the reference mocker's `sglang.*` engine
 * arguments (`ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`, `ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`) with its defaults. `fcfs` is the reference's alias of `fifo`.
 */
const Sglang = z
  .strictObject({
    schedule_policy: z.enum(["fifo", "fcfs", "lpm"]).default("fifo"),
    page_size: bounded(LIMITS.blockSize, "tokens per KV page").optional(),
    max_prefill_tokens: bounded(LIMITS.maxBatchedTokens, "tokens per prefill batch").default(
      SGLANG_DEFAULTS.maxPrefillTokens,
    ),
    /** Absent: 8192 / attention_data (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`), resolved in config/resolve/engine.ts. */
    chunked_prefill_size: bounded(LIMITS.maxBatchedTokens, "tokens per prefill chunk").optional(),
    clip_max_new_tokens: bounded(LIMITS.maxBatchedTokens, "output tokens reserved per request").default(
      SGLANG_DEFAULTS.clipMaxNewTokens,
    ),
    schedule_conservativeness: posNum().max(1000).default(SGLANG_DEFAULTS.scheduleConservativeness),
    /** SGLang's `--enable-mixed-chunk` (fleetsim extension; the reference mocker has it off). */
    enable_mixed_chunk: z.boolean().default(false),
  })
  .transform((s) => ({ ...s, schedule_policy: s.schedule_policy === "fcfs" ? "fifo" : s.schedule_policy }));

function roleFields(kind: WorkerRole) {
  return {
    parallelism: Parallelism.prefault({}),
    scheduler: scheduler(kind).prefault({}),
    kv_cache: KvCache.prefault({}),
    timing: Timing.prefault({}),
    startup_seconds: nonNegNum().default(0),
    sglang: Sglang.optional(),
  };
}

/** `engine.workers.aggregated`: runs on `engine.hardware`. */
export const AggregatedRole = z.strictObject({
  ...roleFields("aggregated"),
  hardware: rejectKey(`${PATH} is only valid on prefill/decode roles; set engine.hardware instead`),
});

/** `engine.workers.prefill` / `decode`: may run on other hardware than `engine.hardware`. */
export function disaggregatedRole(kind: "prefill" | "decode") {
  return z.strictObject({
    ...roleFields(kind),
    hardware: HardwareId.optional(),
  });
}

export type AggregatedRoleConfig = z.output<typeof AggregatedRole>;
export type HostOffloadConfig = z.output<typeof HostOffload>;
export type G3OffloadConfig = z.output<typeof G3Offload>;
export type DisaggregatedRoleConfig = z.output<ReturnType<typeof disaggregatedRole>>;
/** What resolution needs of any role; `hardware` is only ever set on a P/D role. */
export type RoleConfig = AggregatedRoleConfig | DisaggregatedRoleConfig;
