/**
 * What `engine.backend` changes in the config (docs/backends.md): per-backend defaults
 * (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`: block size vLLM 64 / SGLang 1 / TRT-LLM 32, memory fraction vLLM/TRT 0.9 /
 * SGLang 0.88) and the rules that need the backend, which a role's own schema cannot see (the
 * backend is an engine-level key): block sizes, backend-only settings (`sglang`, TRT-LLM's
 * `capacity_scheduler_policy`), and what a backend does not support (TRT-LLM disaggregated,
 * which the reference rejects too; host offload and speculation are vLLM-only there).
 */
import type * as z from "zod";
import type { KvMemoryRule } from "../model/memory.js";
import { fail, failAtKey, PATH, up } from "./schema/primitives.js";
import type { RoleConfig } from "./schema/role.js";

export const BACKENDS = ["vllm", "sglang", "trtllm"] as const;
export type Backend = (typeof BACKENDS)[number];

interface BackendDefaults {
  readonly blockSize: number;
  readonly memoryFraction: number;
  /** How `memory_fraction` applies (`ai-dynamo/aisimulate@3eaf047:docs/perf-model/memory.md`): of total memory, or of what is free. */
  readonly memoryRule: KvMemoryRule;
  /** Smallest `kv_cache.block_size` the backend takes. */
  readonly minBlockSize: number;
}

export const BACKEND_DEFAULTS: Readonly<Record<Backend, BackendDefaults>> = {
  vllm: { blockSize: 64, memoryFraction: 0.9, memoryRule: "of_total", minBlockSize: 2 },
  sglang: { blockSize: 1, memoryFraction: 0.88, memoryRule: "sglang", minBlockSize: 1 },
  trtllm: { blockSize: 32, memoryFraction: 0.9, memoryRule: "of_free", minBlockSize: 2 },
};

/** A role's KV block size: its own, else (SGLang) its `sglang.page_size`, else the backend's default. */
export function roleBlockSize(role: RoleConfig, backend: Backend): number {
  return role.kv_cache.block_size ?? role.sglang?.page_size ?? BACKEND_DEFAULTS[backend].blockSize;
}

/** A role's `capacity.memory_fraction` (default capacity): its own, else the backend's default. */
export function roleMemoryFraction(given: number | undefined, backend: Backend): number {
  return given ?? BACKEND_DEFAULTS[backend].memoryFraction;
}

interface EngineShape {
  readonly mode: "aggregated" | "disaggregated";
  readonly backend: Backend;
  readonly speculation?: unknown;
  readonly enable_chunked_prefill?: boolean;
  readonly workers: Readonly<Record<string, RoleConfig | undefined>>;
}

/**
 * The backend rules of a parsed `engine` (superRefine of each mode's schema): issue paths are
 * relative to `engine`.
 */
export function checkBackendRules(engine: EngineShape, ctx: z.RefinementCtx): void {
  const backend = engine.backend;
  if (backend === "trtllm" && engine.mode === "disaggregated") {
    fail(
      ctx,
      `${PATH}='trtllm' does not support engine.mode='disaggregated' (the reference rejects it too); ` +
        "use engine.mode='aggregated', or backend 'vllm' or 'sglang'",
      ["backend"],
    );
    return;
  }
  if (backend !== "vllm" && engine.speculation !== undefined && engine.speculation !== null) {
    fail(ctx, `${PATH} is only supported with engine.backend='vllm' (as in the reference)`, ["speculation"]);
  }
  if (backend === "sglang" && engine.enable_chunked_prefill === false) {
    // SGLang chunks by sglang.chunked_prefill_size; the vLLM-core switch has no meaning there.
    fail(
      ctx,
      `${PATH}=false is not supported with engine.backend='sglang' (set sglang.chunked_prefill_size instead)`,
      ["enable_chunked_prefill"],
    );
  }
  for (const [name, role] of Object.entries(engine.workers)) {
    if (role === undefined) continue;
    checkRole(role, backend, ctx, ["workers", name]);
  }
  if (engine.mode === "disaggregated") {
    const prefill = roleBlockSize(engine.workers["prefill"]!, backend);
    const decode = roleBlockSize(engine.workers["decode"]!, backend);
    // The hand-off moves whole KV blocks and the router hashes prompts in engine blocks, so both
    // roles must cut prompts the same way (the reference requires it too; `ai-dynamo/dynamo@4c3ac77:lib/mocker/src/common/utils.rs`).
    if (prefill !== decode) {
      fail(
        ctx,
        `${PATH} (${decode}) must equal ${up(3)}.prefill.kv_cache.block_size (${prefill}): ` +
          "prefill and decode workers hand KV over in whole blocks",
        ["workers", "decode", "kv_cache", "block_size"],
      );
    }
  }
}

function checkRole(role: RoleConfig, backend: Backend, ctx: z.RefinementCtx, at: string[]): void {
  const defaults = BACKEND_DEFAULTS[backend];
  const given = role.kv_cache.block_size;
  if (given !== undefined && given < defaults.minBlockSize) {
    fail(ctx, `${PATH} must be >= ${defaults.minBlockSize} for backend '${backend}'`, [
      ...at,
      "kv_cache",
      "block_size",
    ]);
  }
  if (role.scheduler.capacity_scheduler_policy !== undefined && backend !== "trtllm") {
    failAtKey(ctx, `${PATH} is only valid with engine.backend='trtllm'`, [
      ...at,
      "scheduler",
      "capacity_scheduler_policy",
    ]);
  }
  if (backend !== "vllm" && role.kv_cache.host_offload !== null) {
    fail(ctx, `${PATH} is only supported with engine.backend='vllm' (as in the reference)`, [
      ...at,
      "kv_cache",
      "host_offload",
    ]);
  }
  if (role.timing.first_token !== undefined && backend === "sglang") {
    // SGLang's prefill batch is a pass of its own that emits its requests' first tokens.
    failAtKey(ctx, `${PATH} is only valid with engine.backend 'vllm' or 'trtllm'`, [
      ...at,
      "timing",
      "first_token",
    ]);
  }
  if (role.scheduler.prefill_schedule_interval !== 1 && backend !== "vllm") {
    // The reference: "vLLM attn-DP only: admit prefill every N-th pass" (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`).
    fail(
      ctx,
      `${PATH}=${role.scheduler.prefill_schedule_interval} is only supported with engine.backend='vllm' (as in the reference)`,
      [...at, "scheduler", "prefill_schedule_interval"],
    );
  }
  if (role.scheduler.prefill_decode_interval > 0 && backend !== "sglang") {
    // The reference: "SGLang only" (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`); it is SGLang's --prefill-decode-interval.
    fail(
      ctx,
      `${PATH}=${role.scheduler.prefill_decode_interval} is only supported with engine.backend='sglang' (as in the reference)`,
      [...at, "scheduler", "prefill_decode_interval"],
    );
  }
  const sg = role.sglang;
  if (sg === undefined) return;
  if (backend !== "sglang") {
    failAtKey(ctx, `${PATH} is only valid with engine.backend='sglang'`, [...at, "sglang"]);
    return;
  }
  // `ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`: the page is the block; both set must agree, and chunks are whole pages.
  if (given !== undefined && sg.page_size !== undefined && given !== sg.page_size) {
    fail(ctx, `${PATH} (${sg.page_size}) must equal ${up(2)}.kv_cache.block_size (${given})`, [
      ...at,
      "sglang",
      "page_size",
    ]);
    return;
  }
  const page = roleBlockSize(role, backend);
  if (sg.chunked_prefill_size !== undefined && sg.chunked_prefill_size % page !== 0) {
    fail(ctx, `${PATH} (${sg.chunked_prefill_size}) must be a multiple of the page size (${page})`, [
      ...at,
      "sglang",
      "chunked_prefill_size",
    ]);
  }
}

/**
 * Fills each role's backend defaults into a parsed `engine` (its block size and default-capacity
 * memory fraction), so the validated config shows the values that run. Mutates the fresh parse
 * output in place and returns it.
 */
export function withBackendDefaults<E extends EngineShape>(engine: E): E {
  for (const role of Object.values(engine.workers)) {
    if (role === undefined) continue;
    role.kv_cache.block_size = roleBlockSize(role, engine.backend);
    const capacity = role.kv_cache.capacity;
    if (capacity.type === "default") {
      capacity.memory_fraction = roleMemoryFraction(capacity.memory_fraction, engine.backend);
    }
  }
  return engine;
}
