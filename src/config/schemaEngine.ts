/**
 * `engine` (aisimulate.md §2.2). Only what fleetsim can simulate is accepted: aggregated vLLM
 * workers priced by the `polynomial` or `fixed` timing model with `fixed` KV capacity. Every
 * other reference knob is still recognised so that it fails with "not supported by fleetsim
 * yet" rather than as an unknown key. `timing.type: default` and `capacity.type: default` are
 * valid here; `resolve.ts` refuses them, because they are valid config that fleetsim cannot price.
 */
import { z } from "zod";
import {
  fail,
  fraction,
  int,
  nonNegInt,
  nonNegNum,
  oneOf,
  PATH,
  posInt,
  positiveOr,
  presentExcept,
  pyList,
  rejectKey,
  unsupportedKey,
  up,
} from "./schemaPrimitives.js";

/** vLLM's default KV block size; the only backend fleetsim runs. */
export const VLLM_DEFAULT_BLOCK_SIZE = 64;
const VLLM_MIN_BLOCK_SIZE = 2;

const Parallelism = z
  .strictObject({
    replicas: posInt().default(1),
    tensor: posInt().default(1),
    pipeline: posInt().default(1),
    attention_data: posInt().default(1),
    moe_tensor: posInt().default(1),
    moe_expert: posInt().default(1),
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
    // MoE parallelism repartitions the worker's GPUs; it never adds any (aisimulate.md §2.2).
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

const Scheduler = z.strictObject({
  max_batched_tokens: posInt().default(8192),
  max_sequences: posInt().default(256),
  prefill_schedule_interval: posInt().default(1),
  prefill_decode_interval: nonNegInt().default(0),
});

const Capacity = z
  .strictObject({
    type: z.enum(["default", "fixed"]).default("default"),
    memory_fraction: fraction().optional(),
    cuda_graph_reserved_bytes: int()
      .min(0)
      .max(2 ** 53)
      .optional(),
    blocks: posInt().optional(),
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
          memory_fraction: c.memory_fraction ?? 0.9,
          cuda_graph_reserved_bytes: c.cuda_graph_reserved_bytes ?? 0,
        },
  );

const KvCache = z
  .strictObject({
    block_size: posInt().optional(),
    prefix_caching: z.boolean().default(true),
    bytes_per_token: positiveOr("number", "auto").default("auto"),
    capacity: Capacity.prefault({}),
    host_offload: unsupportedKey("KV host offload"),
    g3_offload: unsupportedKey("G3 KV offload"),
    state_cache: unsupportedKey("recurrent state cache"),
  })
  .superRefine((kv, ctx) => {
    if (kv.block_size !== undefined && kv.block_size < VLLM_MIN_BLOCK_SIZE) {
      fail(ctx, `${PATH} must be >= ${VLLM_MIN_BLOCK_SIZE} for backend 'vllm'`, ["block_size"]);
    }
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
    block_size: kv.block_size ?? VLLM_DEFAULT_BLOCK_SIZE,
    prefix_caching: kv.prefix_caching,
    bytes_per_token: kv.bytes_per_token,
    capacity: kv.capacity,
  }));

const Timing = z
  .strictObject({
    type: z.enum(["default", "fixed", "polynomial"]).default("default"),
    prefill_ms: nonNegNum().optional(),
    decode_ms: nonNegNum().optional(),
    forward_model: z.enum(["op_level", "fpm"]).optional(),
    fpm_parquet_path: z.string().min(1).optional(),
  })
  .superRefine((t, ctx) => {
    const allowed = {
      default: ["type", "forward_model", "fpm_parquet_path"],
      fixed: ["type", "prefill_ms", "decode_ms"],
      polynomial: ["type"],
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
    switch (t.type) {
      case "fixed":
        return { type: t.type, prefill_ms: t.prefill_ms!, decode_ms: t.decode_ms! };
      case "polynomial":
        return { type: t.type };
      case "default":
        return {
          type: t.type,
          forward_model: t.forward_model ?? "op_level",
          fpm_parquet_path: t.fpm_parquet_path,
        };
    }
  });

const Role = z.strictObject({
  parallelism: Parallelism.prefault({}),
  scheduler: Scheduler.prefault({}),
  kv_cache: KvCache.prefault({}),
  timing: Timing.prefault({}),
  startup_seconds: nonNegNum().default(0),
  hardware: rejectKey(`${PATH} is only valid on prefill/decode roles; set engine.hardware instead`),
});

const PD_ROLE = `${PATH} requires engine.mode='disaggregated'; engine.mode='aggregated' accepts only workers.aggregated`;

const Workers = z.strictObject({
  aggregated: Role,
  prefill: rejectKey(PD_ROLE),
  decode: rejectKey(PD_ROLE),
  encoder: unsupportedKey("analytical encoder (EPD) workers"),
});

/** Engine-level reference knobs fleetsim does not model yet (perf-database and speculation controls). */
const UNSUPPORTED_ENGINE_KNOBS = [
  "speculation",
  "forward_model",
  "systems_path",
  "estimation_mode",
  "fallback_policy",
  "database_mode",
  "enable_shared_layer",
  "gemm_quant_mode",
  "moe_quant_mode",
  "fmha_quant_mode",
  "kvcache_quant_mode",
  "comm_quant_mode",
  "attention_backend",
  "moe_backend",
  "moe_kernel_source",
  "enable_eplb",
  "wideep_num_slots",
  "nextn",
  "nextn_accepted",
  "enable_chunked_prefill",
] as const;

const unsupportedEngineKnobs = Object.fromEntries(
  UNSUPPORTED_ENGINE_KNOBS.map((k) => [k, unsupportedKey()]),
) as Record<(typeof UNSUPPORTED_ENGINE_KNOBS)[number], ReturnType<typeof unsupportedKey>>;

export const Engine = z
  .strictObject({
    mode: oneOf(["aggregated", "disaggregated", "afd"], ["aggregated"]).default("aggregated"),
    model: z.string().min(1),
    hardware: z.string().min(1),
    backend: oneOf(["vllm", "sglang", "trtllm"], ["vllm"]).default("vllm"),
    backend_version: z.string().min(1).optional(),
    context_length: positiveOr("integer", "max").default("max"),
    /** fleetsim extension: an AIConfigurator-format perf-data tree (`<dir>/<gpu>/vllm/<version>/*.parquet`). */
    perf_database: z.string().min(1).optional(),
    kv_transfer: rejectKey(`${PATH} is only valid with engine.mode='disaggregated'`),
    workers: Workers,
    ...unsupportedEngineKnobs,
  })
  .superRefine((engine, ctx) => {
    if (engine.hardware === "auto") {
      fail(ctx, `${PATH}='auto' is only valid for recommend; name a system such as 'h200_sxm'`, ["hardware"]);
    }
  });

export type EngineConfig = z.output<typeof Engine>;
export type RoleConfig = EngineConfig["workers"]["aggregated"];
