/**
 * Resident weight bytes per GPU, counted the way AIConfigurator's memory model counts them
 * (`BaseBackend._get_memory_usage`: the sum of `get_weights()` over the model's context ops,
 * divided by the pipeline size; op graphs in `sdk/models/llama.py` and `sdk/models/moe.py`).
 *
 * Per GPU, with integer division as the reference does it:
 * - embedding: (vocab / TP) · hidden · 2 (always BF16)
 * - per layer, attention: qkv ((heads·head_dim)/TP + 2·head_dim·kv_per_gpu) · hidden and
 *   o (hidden · (heads·head_dim)/TP), at the checkpoint's GEMM bytes
 * - per layer, dense MLP: (2·inter/TP) · hidden + hidden · (inter/TP), at GEMM bytes
 * - per layer, MoE: router num_experts · hidden · 2 (BF16, replicated) and experts
 *   hidden · expert_inter · num_experts · bytes · 3 / EP / MoE-TP (num_experts → the expert slots
 *   with `wideep_num_slots`, which AIConfigurator does not count: docs/models.md)
 * - LM head (dense family only): (vocab / TP) · hidden · 2 (kept BF16, as ModelOpt excludes it)
 * - total / PP
 *
 * DeepSeek (MLA; AIC's `sdk/models/deepseek.py` op graph, with the layer layout of the checkpoint):
 * - per layer, attention: the replicated down-projections hidden · (q_lora + kv_lora + rope), and
 *   per TP shard q_b q_lora · heads·(nope + rope) / TP, kv_b kv_lora · heads·(nope + v) / TP and
 *   o heads·v / TP · hidden, at GEMM bytes
 * - the first `first_k_dense_replace` layers a dense MLP of `intermediate_size`; each later layer
 *   a router, the routed experts as above and the shared experts as a dense MLP of
 *   `n_shared × moe_intermediate` split over TP
 * - the LM head counted, as the dense family's (AIC's DeepSeek graph has a context logits GEMM)
 *
 * Reference-parity quirks kept on purpose (documented in docs/models.md): norms and biases are
 * not counted; a tied LM head is still counted separately; the MoE family's op graph has no
 * context LM-head GEMM, so its LM head is not counted at all.
 */
import type { MlaSpec, ModelArchitecture } from "./architecture.js";
import { ModelError } from "./errors.js";

export interface TensorPipeline {
  readonly tensor: number;
  readonly pipeline: number;
}

export interface WeightParallelism extends TensorPipeline {
  /** Expert tensor parallelism; inferred from the attention width when omitted. */
  readonly moeTensor?: number;
  /** Expert parallelism; inferred from the attention width when omitted. */
  readonly moeExpert?: number;
  /** Attention data-parallel ranks of the worker (MoE width = tensor · attentionData). Default 1. */
  readonly attentionData?: number;
  /**
   * Physical expert slots per MoE layer (`engine.wideep_num_slots`): each EP rank holds the
   * weights of slots / EP experts, the redundant ones copies of hot experts. Default: one per expert.
   */
  readonly expertSlots?: number;
}

export interface WeightBreakdown {
  readonly embeddingBytes: number;
  /** All layers, one TP shard, before the pipeline split. */
  readonly attentionBytes: number;
  readonly mlpBytes: number;
  readonly routerBytes: number;
  readonly expertBytes: number;
  readonly lmHeadBytes: number;
  /** Sum of the above / pipeline: what one GPU holds. Not rounded (the reference divides floats). */
  readonly perGpuBytes: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
}

const BF16_BYTES = 2;

/** Positive-integer and head-divisibility checks shared by weights, KV and capacity. */
export function checkTensorPipeline(model: ModelArchitecture, par: TensorPipeline): void {
  for (const [name, value] of [
    ["tensor", par.tensor],
    ["pipeline", par.pipeline],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ModelError(`${model.id}: parallelism.${name} must be a positive integer, got ${value}`);
    }
  }
  // The reference asserts this in BaseModel: attention heads are split evenly over TP ranks.
  if (model.numHeads % par.tensor !== 0) {
    throw new ModelError(
      `${model.id}: ${model.numHeads} attention heads cannot be split over tensor=${par.tensor}; ` +
        "tensor must divide the head count",
    );
  }
}

/** KV heads per GPU: ceil(kv_heads / TP), i.e. replicated when TP exceeds the KV head count. */
export function kvHeadsPerGpu(model: ModelArchitecture, tensor: number): number {
  return Math.ceil(model.numKvHeads / tensor);
}

/**
 * A config's `moe_tensor` × `moe_expert` as the engine runs it. Both at 1 (their defaults) means
 * "not set": the reference passes `moe_tp_size`/`moe_ep_size` to its estimator only when their
 * product exceeds 1 (`ai-dynamo/aisimulate@791ea8e:python/aisimulate/src/aisimulate/compiler.py`), and vLLM shards the experts over the tensor-parallel
 * ranks unless expert parallelism is enabled — so a MoE model under TP is never priced unsharded.
 */
export function configuredMoeParallelism(
  model: ModelArchitecture,
  par: TensorPipeline & {
    readonly attentionData: number;
    readonly moeTensor: number;
    readonly moeExpert: number;
  },
): { moeTensor: number; moeExpert: number } {
  const unset = par.moeTensor * par.moeExpert === 1;
  return resolveMoeParallelism(model, {
    ...par,
    moeTensor: unset ? undefined : par.moeTensor,
    moeExpert: unset ? undefined : par.moeExpert,
  });
}

/**
 * Expert parallel layout, as AIConfigurator's `ModelConfig.resolve_moe_parallelism` resolves it:
 * one of moeTensor/moeExpert given → the other is inferred from the width; both given → checked.
 * With neither (the reference refuses that), fleetsim assumes vLLM's default without
 * `--enable-expert-parallel`: experts sharded by TP (moeTensor = width, moeExpert = 1).
 */
export function resolveMoeParallelism(
  model: ModelArchitecture,
  par: WeightParallelism,
): { moeTensor: number; moeExpert: number } {
  const width = par.tensor * (par.attentionData ?? 1);
  if (model.moe === null) return { moeTensor: par.moeTensor ?? 1, moeExpert: par.moeExpert ?? 1 };
  let moeTensor = par.moeTensor;
  let moeExpert = par.moeExpert;
  if (moeTensor === undefined && moeExpert === undefined) {
    moeTensor = width;
    moeExpert = 1;
  } else if (moeTensor === undefined) {
    moeTensor = divideWidth(model, width, "moe_expert", moeExpert!);
  } else if (moeExpert === undefined) {
    moeExpert = divideWidth(model, width, "moe_tensor", moeTensor);
  }
  const mt = moeTensor!;
  const me = moeExpert!;
  if (!Number.isSafeInteger(mt) || mt < 1 || !Number.isSafeInteger(me) || me < 1 || mt * me !== width) {
    throw new ModelError(
      `${model.id}: moe_tensor (${mt}) × moe_expert (${me}) must equal tensor × attention_data (${width})`,
    );
  }
  if (me > model.moe.numExperts) {
    throw new ModelError(`${model.id}: moe_expert=${me} exceeds the ${model.moe.numExperts} experts`);
  }
  return { moeTensor: mt, moeExpert: me };
}

function divideWidth(model: ModelArchitecture, width: number, name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1 || width % value !== 0) {
    throw new ModelError(`${model.id}: ${name}=${value} does not divide tensor × attention_data (${width})`);
  }
  return width / value;
}

export function weightBreakdown(model: ModelArchitecture, par: WeightParallelism): WeightBreakdown {
  checkTensorPipeline(model, par);
  const { moeTensor, moeExpert } = resolveMoeParallelism(model, par);
  const tp = par.tensor;
  const h = model.hiddenSize;
  const wb = model.weightBytes;
  const layers = model.numLayers;
  const qWidth = Math.floor((model.numHeads * model.headDim) / tp);

  const embeddingBytes = Math.floor(model.vocabSize / tp) * h * BF16_BYTES;
  const attentionBytes =
    model.mla === null
      ? layers * ((qWidth + model.headDim * kvHeadsPerGpu(model, tp) * 2) * h * wb + h * qWidth * wb)
      : layers * mlaAttentionBytes(model, model.mla, tp);

  let mlpBytes = 0;
  let routerBytes = 0;
  let expertBytes = 0;
  let lmHeadBytes = 0;
  if (model.moe === null) {
    const inter = model.intermediateSize;
    mlpBytes = layers * (Math.floor((2 * inter) / tp) * h * wb + h * Math.floor(inter / tp) * wb);
    lmHeadBytes = Math.floor(model.vocabSize / tp) * h * BF16_BYTES;
  } else {
    const { numExperts, expertIntermediateSize, moeLayers, sharedIntermediateSize } = model.moe;
    routerBytes = moeLayers * numExperts * h * BF16_BYTES;
    // Redundant slots (EPLB) hold whole copies of experts: the rank's weights grow with them,
    // the router still scores the logical experts.
    const allExperts = h * expertIntermediateSize * expertSlotsOf(model, par, moeExpert) * wb * 3;
    expertBytes = moeLayers * Math.floor(Math.floor(allExperts / moeExpert) / moeTensor);
    // Dense first layers and the shared experts are plain tensor-parallel MLPs.
    const denseMlp = (inter: number): number =>
      Math.floor((2 * inter) / tp) * h * wb + h * Math.floor(inter / tp) * wb;
    mlpBytes =
      (layers - moeLayers) * denseMlp(model.intermediateSize) + moeLayers * denseMlp(sharedIntermediateSize);
    if (model.mla !== null) lmHeadBytes = Math.floor(model.vocabSize / tp) * h * BF16_BYTES;
  }
  const total = embeddingBytes + attentionBytes + mlpBytes + routerBytes + expertBytes + lmHeadBytes;
  return {
    embeddingBytes,
    attentionBytes,
    mlpBytes,
    routerBytes,
    expertBytes,
    lmHeadBytes,
    perGpuBytes: total / par.pipeline,
    moeTensor,
    moeExpert,
  };
}

/** The expert slots of a MoE layer: `par.expertSlots`, checked, else one per expert. */
function expertSlotsOf(model: ModelArchitecture, par: WeightParallelism, moeExpert: number): number {
  const experts = model.moe!.numExperts;
  const slots = par.expertSlots ?? experts;
  if (!Number.isSafeInteger(slots) || slots < experts || slots % moeExpert !== 0) {
    throw new ModelError(
      `${model.id}: ${slots} expert slots must be a whole number per EP rank (moe_expert ${moeExpert}), at least the ${experts} experts`,
    );
  }
  return slots;
}

/** One MLA layer's attention weights on one TP shard (see the module comment). */
function mlaAttentionBytes(model: ModelArchitecture, mla: MlaSpec, tp: number): number {
  const h = model.hiddenSize;
  const heads = model.numHeads;
  const qHead = mla.qkNopeHeadDim + mla.qkRopeHeadDim;
  // Replicated on every rank; without a q_lora (V2-Lite) the queries come straight from the
  // hidden state through q_up.
  const down = h * (mla.qLoraRank + mla.kvLoraRank + mla.qkRopeHeadDim);
  const qUp = (mla.qLoraRank > 0 ? mla.qLoraRank : h) * Math.floor((heads * qHead) / tp);
  const kvUp = mla.kvLoraRank * Math.floor((heads * (mla.qkNopeHeadDim + mla.vHeadDim)) / tp);
  const o = Math.floor((heads * mla.vHeadDim) / tp) * h;
  return (down + qUp + kvUp + o) * model.weightBytes;
}

/** Weight bytes resident on one GPU of the given parallel shape. */
export function weightBytesPerGpu(model: ModelArchitecture, par: WeightParallelism): number {
  return weightBreakdown(model, par).perGpuBytes;
}
