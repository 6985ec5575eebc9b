import type { KvDtype, WeightDtype } from "./dtypes.js";
import { HardwareError } from "./errors.js";
import type { AxisRule, GridRules } from "./grid.js";
import type { MoeShape } from "./sol.js";

/**
 * The measured op tables of one GPU as plain, JSON-able data — the common input of both
 * `OpPerfTables` backends. The parquet backend fills it with every measured row it uses; the
 * compact backend with a thinned subset (`compact.ts`). Latencies are milliseconds.
 */

/** Knots per axis and row-major latencies (last axis fastest); `null` = not measured. */
export interface GridData {
  readonly axes: readonly (readonly number[])[];
  readonly latencyMs: readonly (number | null)[];
}

/**
 * Attention timings of one head configuration. `kvHeads` is the number of KV heads, or 0 for MHA
 * (KV heads = query heads, AIConfigurator's `kv_n = 0` key). Axes: [query heads, batch, isl] for
 * context attention, [query heads, batch, cached KV length] for generation attention.
 */
export interface AttentionGroup {
  readonly kvDtype: KvDtype;
  readonly headDim: number;
  readonly kvHeads: number;
  readonly grid: GridData;
}

/** Custom all-reduce of one GPU count. Axis: [message size in BF16 elements]. */
export interface AllReduceTable {
  readonly numGpus: number;
  readonly grid: GridData;
}

/** Fused MoE of one shape (unsharded hidden/expert sizes + MoE parallelism). Axis: [num tokens]. */
export interface MoeTable extends MoeShape {
  readonly grid: GridData;
}

export interface OpTableData {
  readonly gpu: string;
  /**
   * The serving backend the tables were measured on, when not vLLM (AIConfigurator's SGLang and
   * TensorRT-LLM tables, docs/backends.md "Timing"). Absent: vLLM.
   */
  readonly backend?: "sglang" | "trtllm";
  /**
   * Groups these tables lacked, taken from the same GPU's vLLM tables (`backendTables.ts`), e.g.
   * `gemm fp8` or `moe bfloat16`. Absent or empty: none.
   */
  readonly filledFromVllm?: readonly string[];
  readonly perfDataVersion: string;
  /** Axes [m, n, k]. */
  readonly gemm: readonly { readonly dtype: WeightDtype; readonly grid: GridData }[];
  readonly contextAttention: readonly AttentionGroup[];
  readonly generationAttention: readonly AttentionGroup[];
  /** Where the all-reduce rows came from, e.g. `custom_allreduce:vllm_graph`. */
  readonly allReduceSource: string;
  readonly allReduce: readonly AllReduceTable[];
  /** The MoE token-routing distribution the rows were measured with. */
  readonly moeDistribution: string;
  readonly moe: readonly MoeTable[];
  /**
   * The same MoE shapes measured with perfectly balanced expert load (AIC's `balanced`
   * distribution), which `engine.enable_eplb` prices (docs/models.md "Expert load balance");
   * absent where the tables have none.
   */
  readonly moeBalanced?: readonly MoeTable[];
}

/** AIC's MoE workload with every expert given the same tokens: what EPLB approaches. */
export const BALANCED_MOE_DISTRIBUTION = "balanced";

/**
 * `data` with the MoE rows a run prices: the default (power-law routing) ones, or with
 * `engine.enable_eplb` the balanced ones (docs/models.md "Expert load balance").
 */
export function moeDistributionOf(data: OpTableData, balancedMoe: boolean, gpu: string): OpTableData {
  if (!balancedMoe) return data;
  const balanced = balancedOf(data);
  if (balanced === null) {
    throw new HardwareError(
      `engine.enable_eplb needs MoE tables measured with balanced expert load, and ${gpu}'s tables have none`,
    );
  }
  return balanced;
}

function balancedOf(data: OpTableData): OpTableData | null {
  const balanced = data.moeBalanced;
  if (balanced === undefined || balanced.length === 0) return null;
  return { ...data, moeDistribution: BALANCED_MOE_DISTRIBUTION, moe: balanced };
}

export const WEIGHT_DTYPES: readonly WeightDtype[] = ["bfloat16", "fp8", "fp8_block"];
export const KV_DTYPES: readonly KvDtype[] = ["bfloat16", "fp8"];

/**
 * AIConfigurator's default MoE workload for the generic MoE family (Qwen3-MoE, Mixtral, …):
 * `workload_distribution: power_law` with `_power_law_alpha = 1.2` (`sdk/models/moe.py`).
 */
export const DEFAULT_MOE_DISTRIBUTION = "power_law_1.2";

/** Log-log, clamped below the first knot, proportional above the last (bound by a rate there). */
const LOG_PROPORTIONAL: AxisRule = { log: true, values: "log", below: "clamp", above: "proportional" };
/** Linear, clamped below the first knot, extended linearly above the last. */
const LIN_EXTEND: AxisRule = { log: false, values: "lin", below: "clamp", above: "extend" };

/**
 * GEMM: log-log in m, n and k; beyond the largest measured m/n/k the latency grows in proportion
 * (linear in FLOPs and in weight bytes); below the smallest, held. Holes filled along m, then k,
 * then n.
 */
export const GEMM_RULES: GridRules = {
  axes: [LOG_PROPORTIONAL, LOG_PROPORTIONAL, LOG_PROPORTIONAL],
  fillOrder: [0, 2, 1],
};

/**
 * Context attention over [heads, batch, isl]: linear in heads (AIC's x axis, linearly
 * extrapolated) and in batch (beyond the largest batch: proportional); along isl linear in
 * √latency (prefill attention grows ~quadratically), also beyond the largest isl — AIC's
 * `sqrt_y_value` rule. Holes (large batch × long isl, never measured) are filled along batch
 * first, as AIC's `extrapolate_data_grid` does (z = batch).
 */
export const CONTEXT_RULES: GridRules = contextRules("sqrt");

/**
 * How context attention is extrapolated beyond the longest measured sequence: `sqrt` continues the
 * last segment in √latency (AIC's `sqrt_y_value`, fleetsim's default); `quadratic` scales the last
 * measured point by (length / measured length)², the reference's rule (`timing.context_attention_extrapolation`,
 * docs/timing.md "Beyond the tables").
 */
export type ContextExtrapolation = "sqrt" | "quadratic";

export function contextRules(beyond: ContextExtrapolation): GridRules {
  return {
    axes: [
      LIN_EXTEND,
      { log: false, values: "lin", below: "clamp", above: "proportional" },
      { log: false, values: "sqrt", below: "clamp", above: beyond },
    ],
    fillOrder: [1, 2, 0],
  };
}

/**
 * Generation attention over [heads, batch, kv length]: linear in all three (AIC's bilinear over
 * batch × sequence; decode attention is affine in batch·kv), extrapolated linearly. Holes filled
 * along kv first (AIC's z = sequence length), then batch, then heads.
 */
export const GENERATION_RULES: GridRules = {
  axes: [LIN_EXTEND, LIN_EXTEND, LIN_EXTEND],
  fillOrder: [2, 1, 0],
};

/** All-reduce over message size: log-log; beyond the largest message, proportional (bandwidth-bound). */
export const ALLREDUCE_RULES: GridRules = {
  axes: [LOG_PROPORTIONAL],
  fillOrder: [0],
};

/** MoE over tokens: log-log; above the largest count the query applies AIC's utilisation rule. */
export const MOE_RULES: GridRules = {
  axes: [{ log: true, values: "log", below: "clamp", above: "extend" }],
  fillOrder: [0],
};
