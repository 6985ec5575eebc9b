/**
 * GPU memory accounting for `kv_cache.capacity: {type: default}` (`ai-dynamo/aisimulate@3eaf047:docs/perf-model/memory.md`), following
 * AISimulate's native estimator (`aisimulate_core/sdk/memory/kv_cache.py KVCacheEstimator`) over
 * AIConfigurator's memory model (`BaseBackend._get_memory_usage`, vLLM backend):
 *
 *   non_kv   = weights + activations(max_num_tokens) + other_mem + nccl_mem[min(TP, 8)]
 *              + cuda_graph_reserved_bytes
 *   kv_bytes = capacity · memory_fraction − non_kv            (vLLM: fraction of TOTAL memory)
 *   kv_bytes = (capacity − non_kv) · memory_fraction          (TRT-LLM: fraction of FREE memory)
 *   kv_bytes = (capacity − resident) · memory_fraction − weights − cuda_graph_reserved
 *                                                             (SGLang; activations not deducted;
 *                                                              resident = 1.2 · other_mem + nccl_mem)
 *   tokens   = floor(kv_bytes / kv_bytes_per_token);  blocks = floor(tokens / block_size)
 *
 * Every quantity is per GPU (one TP shard of one pipeline stage).
 */
import type { KvDtype } from "../hardware/dtypes.js";
import type { GpuSpec } from "../hardware/gpu.js";
import type { ModelArchitecture } from "./architecture.js";
import { ModelError } from "./errors.js";
import { dtypeBytes } from "./quant.js";
import {
  checkTensorPipeline,
  kvHeadsPerGpu,
  type TensorPipeline,
  type WeightParallelism,
  weightBreakdown,
} from "./weights.js";

export {
  type WeightBreakdown,
  type WeightParallelism,
  weightBreakdown,
  weightBytesPerGpu,
} from "./weights.js";

/**
 * Per-family activation multipliers by TP (clamped to 8), AIConfigurator's TRT-LLM table that its
 * vLLM backend reuses (`TRTLLMBackend.ACTIVATION_COEFFICIENTS`). Dense families are `LLAMA`
 * (Llama, Qwen3; fleetsim also files Mistral here), MoE families `MOE` (Mixtral, Qwen3-MoE).
 */
export const ACTIVATION_COEFFICIENTS: Readonly<Record<"LLAMA" | "MOE", Readonly<Record<number, number>>>> = {
  LLAMA: { 1: 11, 2: 6.5, 4: 5, 8: 5 },
  MOE: { 1: 22, 2: 13, 4: 10, 8: 10 },
};

/**
 * An SGLang role's runtime overhead as a multiple of the system's `other_mem`: the reference's
 * memory estimate reports `runtime_overhead_bytes` = ⌊1.2 × other_mem⌋ for SGLang roles (4,509,715,660
 * bytes on H100 and H200, whose other_mem is 3.5 GiB) and other_mem itself for vLLM and TRT-LLM
 * roles (its `--detail memory`, `npm run conformance`; docs/conformance.md "KV capacity").
 */
export const SGLANG_RUNTIME_OVERHEAD_FACTOR = 1.2;

/** `BaseBackend.MIN_ACTIVATION_BYTES`: the activation estimate is clamped from below. */
export const MIN_ACTIVATION_BYTES = 70 * 1024 * 1024;

/**
 * KV-cache bytes one token occupies on one GPU: 2 (K,V) · layers · ceil(kv_heads / TP) · head_dim
 * · kv_dtype_bytes. KV heads are replicated when TP exceeds their count (ceil, as the reference's
 * `_num_kv_heads_per_gpu`). `pipeline` is validated but does NOT divide the layer count: the
 * reference (`BaseModel.get_kvcache_elements_per_token`, used for the capacity estimate) counts
 * every layer on every rank ("you need to hold all kvcache for stages"). MLA: layers ·
 * (kv_lora_rank + qk_rope_head_dim) · kv_dtype_bytes, not divided by TP.
 */
export function kvBytesPerToken(model: ModelArchitecture, par: TensorPipeline): number {
  checkTensorPipeline(model, par);
  // MLA caches one latent of kv_lora_rank plus the RoPE key per token and layer, the same on
  // every tensor-parallel rank (vLLM's MLAAttentionSpec: one head, no K/V pair).
  const mla = model.mla;
  if (mla !== null) return model.numLayers * (mla.kvLoraRank + mla.qkRopeHeadDim) * dtypeBytes(model.kvDtype);
  return 2 * model.numLayers * kvHeadsPerGpu(model, par.tensor) * model.headDim * dtypeBytes(model.kvDtype);
}

/** Tables have entries for TP 1, 2, 4, 8 and clamp above 8; TP 3, 5, 6, 7 have none in the reference. */
function tableTp(model: ModelArchitecture, tensor: number): number {
  const tp = Math.min(tensor, 8);
  if (tp !== 1 && tp !== 2 && tp !== 4 && tp !== 8) {
    throw new ModelError(
      `${model.id}: tensor=${tensor} has no activation/NCCL memory entry in the reference's tables ` +
        "(entries exist for 1, 2, 4, 8 and above); use a power of two",
    );
  }
  return tp;
}

/**
 * Peak activation bytes for a forward pass of `maxNumTokens` tokens (the scheduler's
 * max_batched_tokens): 2 · tokens · (heads · head_dim) · coefficient[family][min(TP, 8)],
 * at least MIN_ACTIVATION_BYTES. (Only DeepSeek-like families add an MoE dispatch workspace.)
 */
export function activationBytes(model: ModelArchitecture, tensor: number, maxNumTokens: number): number {
  if (!Number.isSafeInteger(maxNumTokens) || maxNumTokens < 1) {
    throw new ModelError(`${model.id}: max_batched_tokens must be a positive integer, got ${maxNumTokens}`);
  }
  const coefficient = ACTIVATION_COEFFICIENTS[model.moe === null ? "LLAMA" : "MOE"][tableTp(model, tensor)]!;
  return Math.max(2 * maxNumTokens * model.numHeads * model.headDim * coefficient, MIN_ACTIVATION_BYTES);
}

/** `misc.nccl_mem[min(TP, 8)]` of the GPU system; a single GPU needs no NCCL buffers. */
export function ncclBytes(model: ModelArchitecture, gpu: GpuSpec, tensor: number): number {
  const key = String(tableTp(model, tensor));
  const value = gpu.ncclMemBytes[key];
  if (value !== undefined) return value;
  if (tensor === 1) return 0;
  throw new ModelError(`${gpu.id}: the system has no nccl_mem entry for tensor=${key}`);
}

/**
 * How `memory_fraction` applies (`ai-dynamo/aisimulate@3eaf047:docs/perf-model/memory.md`): `of_total` (vLLM), `of_free` (TRT-LLM), or
 * SGLang's `mem_fraction_static` of the memory left after the resident runtime overhead (fleetsim
 * takes the runtime and NCCL overheads as that resident overhead; docs/backends.md).
 */
export type KvMemoryRule = "of_total" | "of_free" | "sglang";

export interface KvCapacityInput extends WeightParallelism {
  readonly model: ModelArchitecture;
  readonly gpu: GpuSpec;
  /** Tokens per KV block. */
  readonly blockSize: number;
  /** vLLM `gpu_memory_utilization`: fraction of TOTAL GPU memory the engine may use, in (0, 1]. */
  readonly memoryFraction: number;
  /** Scheduler `max_batched_tokens` (sizes the activation estimate). */
  readonly maxNumTokens: number;
  /** `capacity.cuda_graph_reserved_bytes`; default 0. */
  readonly cudaGraphReservedBytes?: number;
  /** Default `of_total` (vLLM). */
  readonly memoryRule?: KvMemoryRule;
}

export interface KvCapacityBreakdown {
  readonly capacityBytes: number;
  readonly memoryFraction: number;
  readonly weightsBytes: number;
  readonly activationsBytes: number;
  readonly runtimeOverheadBytes: number;
  readonly commOverheadBytes: number;
  readonly cudaGraphReservedBytes: number;
  readonly nonKvBytes: number;
  /** capacity · fraction − non_kv, floored to whole bytes for reporting. */
  readonly kvBudgetBytes: number;
  readonly kvBytesPerToken: number;
  /** The KV cache's element type. */
  readonly kvDtype: KvDtype;
  readonly tokens: number;
  readonly blockSize: number;
  readonly blocks: number;
}

export interface KvCapacity {
  readonly blocks: number;
  readonly breakdown: KvCapacityBreakdown;
}

/** Blocks per rank for `capacity.type: default` with the vLLM backend (`ai-dynamo/aisimulate@3eaf047:docs/perf-model/memory.md`). */
export function defaultKvCapacityBlocks(input: KvCapacityInput): KvCapacity {
  const { model, gpu, blockSize, memoryFraction, maxNumTokens } = input;
  const cudaGraphReservedBytes = input.cudaGraphReservedBytes ?? 0;
  checkCapacityInput(model, blockSize, memoryFraction, cudaGraphReservedBytes);

  const weightsBytes = weightBreakdown(model, input).perGpuBytes;
  const activationsBytes = activationBytes(model, input.tensor, maxNumTokens);
  const rule = input.memoryRule ?? "of_total";
  const runtimeOverheadBytes =
    rule === "sglang" ? Math.floor(gpu.otherMemBytes * SGLANG_RUNTIME_OVERHEAD_FACTOR) : gpu.otherMemBytes;
  const commOverheadBytes = ncclBytes(model, gpu, input.tensor);
  const nonKvBytes =
    weightsBytes + activationsBytes + runtimeOverheadBytes + commOverheadBytes + cudaGraphReservedBytes;
  const capacityBytes = gpu.memCapacityBytes;
  const budget = kvBudget(rule, {
    capacityBytes,
    memoryFraction,
    nonKvBytes,
    weightsBytes,
    residentBytes: runtimeOverheadBytes + commOverheadBytes,
    cudaGraphReservedBytes,
  });
  const perToken = kvBytesPerToken(model, input);
  const tokens = budget > 0 ? pyFloorDiv(budget, perToken) : 0;
  const blocks = Math.floor(tokens / blockSize);

  const breakdown: KvCapacityBreakdown = {
    capacityBytes,
    memoryFraction,
    weightsBytes,
    activationsBytes,
    runtimeOverheadBytes,
    commOverheadBytes,
    cudaGraphReservedBytes,
    nonKvBytes,
    kvBudgetBytes: Math.floor(budget),
    kvBytesPerToken: perToken,
    kvDtype: model.kvDtype,
    tokens,
    blockSize,
    blocks,
  };
  // The reference raises "no KV budget" when the budget is not positive; a positive budget below
  // one block would leave an engine that can never admit a request, so that is refused too.
  if (blocks < 1) throw new ModelError(doesNotFitMessage(model, gpu, input, breakdown));
  return { blocks, breakdown };
}

interface BudgetTerms {
  readonly capacityBytes: number;
  readonly memoryFraction: number;
  readonly nonKvBytes: number;
  readonly weightsBytes: number;
  readonly residentBytes: number;
  readonly cudaGraphReservedBytes: number;
}

/** KV bytes per GPU under each backend's rule, in the reference's float expressions (so the floors match). */
function kvBudget(rule: KvMemoryRule, t: BudgetTerms): number {
  switch (rule) {
    case "of_total":
      return t.capacityBytes * t.memoryFraction - t.nonKvBytes;
    case "of_free":
      return (t.capacityBytes - t.nonKvBytes) * t.memoryFraction;
    case "sglang":
      return (
        (t.capacityBytes - t.residentBytes) * t.memoryFraction - t.weightsBytes - t.cudaGraphReservedBytes
      );
  }
}

function checkCapacityInput(
  model: ModelArchitecture,
  blockSize: number,
  memoryFraction: number,
  cudaGraphReservedBytes: number,
): void {
  if (!Number.isSafeInteger(blockSize) || blockSize < 1) {
    throw new ModelError(`${model.id}: kv_cache.block_size must be a positive integer, got ${blockSize}`);
  }
  if (!(memoryFraction > 0 && memoryFraction <= 1)) {
    throw new ModelError(`${model.id}: memory_fraction must be in (0, 1], got ${memoryFraction}`);
  }
  if (!Number.isSafeInteger(cudaGraphReservedBytes) || cudaGraphReservedBytes < 0) {
    throw new ModelError(
      `${model.id}: cuda_graph_reserved_bytes must be a non-negative integer, got ${cudaGraphReservedBytes}`,
    );
  }
}

/** Python's float `a // b` for positive operands (fmod-based, as CPython computes it). */
function pyFloorDiv(a: number, b: number): number {
  const mod = a % b;
  const div = (a - mod) / b;
  let floor = Math.floor(div);
  if (div - floor > 0.5) floor += 1;
  return floor;
}

const GB = 1e9;
const GIB = 2 ** 30;

function doesNotFitMessage(
  model: ModelArchitecture,
  gpu: GpuSpec,
  par: WeightParallelism,
  b: KvCapacityBreakdown,
): string {
  const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`;
  const dtype = model.weightDtype === "bfloat16" ? "BF16" : model.weightDtype.toUpperCase();
  const usable = b.capacityBytes * b.memoryFraction;
  const head =
    `${model.id} (${dtype}) needs ${(b.weightsBytes / GB).toFixed(1)} GB of weights per GPU at ` +
    `tensor=${par.tensor}, pipeline=${par.pipeline}; ${gpu.id} has ${gib(b.capacityBytes)} ` +
    `(${gib(usable)} at memory_fraction ${b.memoryFraction})`;
  const rest =
    `activations ${gib(b.activationsBytes)}, runtime ${gib(b.runtimeOverheadBytes)}, ` +
    `NCCL ${gib(b.commOverheadBytes)} and CUDA graphs ${gib(b.cudaGraphReservedBytes)}`;
  const verdict =
    b.kvBudgetBytes <= 0
      ? `; with ${rest} no memory is left for the KV cache`
      : `; with ${rest} only ${b.tokens} KV tokens fit, less than one block of ${b.blockSize}`;
  return `${head}${verdict}; raise tensor or pipeline`;
}
