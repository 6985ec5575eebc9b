import { loadCompactTablesWithProvenance } from "../hardware/compactTables.js";
import { CudaGraphPadding } from "./cudaGraphs.js";
import { FixedTiming } from "./fixed.js";
import { resolveHostOverhead } from "./hostOverhead.js";
import { kernelsOf } from "./kernels.js";
import { OpLevelTiming } from "./opLevel.js";
import { PolynomialTiming } from "./polynomial.js";
import { SplitPassTiming } from "./splitPasses.js";
import type { TimingModel } from "./timingModel.js";
import type { TimedRole, TimingSpec } from "./timingSpec.js";

export type { TimingModel } from "./timingModel.js";
export type { TimedRole, TimingSpec } from "./timingSpec.js";

/** Builds the timing model of a worker role (loading op tables for `default`). */
export async function createTimingModel(spec: TimingSpec, role: TimedRole): Promise<TimingModel> {
  switch (spec.type) {
    case "polynomial":
      return new PolynomialTiming();
    case "fixed":
      return new FixedTiming(spec.prefillMs, spec.decodeMs);
    case "default": {
      const balancedMoe = spec.balancedMoe === true && spec.model.moe !== null;
      const backend = role.backend ?? "vllm";
      const wanted = spec.opTables === "backend" ? backend : "vllm";
      const contextBeyond = spec.contextExtrapolation ?? "sqrt";
      const { tables, provenance } =
        spec.perfDatabase === null
          ? loadCompactTablesWithProvenance(spec.gpu.id, balancedMoe, wanted, contextBeyond)
          : // The parquet reader loads only for a perf database (start-up, docs/performance.md).
            await (await import("../hardware/parquetTables.js")).loadParquetTablesWithProvenance(
              spec.perfDatabase,
              spec.gpu.id,
              undefined,
              balancedMoe,
              wanted,
              contextBeyond,
            );
      const model = new OpLevelTiming(
        spec.model,
        spec.gpu,
        tables,
        {
          tensor: role.tensor,
          pipeline: role.pipeline,
          attentionData: role.attentionData,
          moeTensor: role.moeTensor,
          moeExpert: role.moeExpert,
        },
        resolveHostOverhead(spec.hostOverhead, role.asyncScheduling),
        role.speculation?.kind ?? null,
        kernelsOf(backend, provenance.backend, spec.model, spec.gpu.id, role.tensor, {
          contextBeyond,
          builtInTables: spec.perfDatabase === null,
        }),
        cudaGraphPaddingOf(spec, role, backend),
      );
      return spec.mixedPasses === "additive" ? new SplitPassTiming(model) : model;
    }
  }
}

/**
 * A vLLM role's CUDA-graph padding (timing/cudaGraphs.ts): vLLM's default capture sizes for the
 * role's scheduler limits, unless `timing.cuda_graph_padding: false`; none for the other backends
 * (their capture rules are not modelled) or without the limits (`fleetsim estimate`).
 */
function cudaGraphPaddingOf(
  spec: Extract<TimingSpec, { type: "default" }>,
  role: TimedRole,
  backend: "vllm" | "sglang" | "trtllm",
): CudaGraphPadding | null {
  if (backend !== "vllm" || spec.cudaGraphPadding === false) return null;
  if (role.maxSequences === undefined || role.maxBatchedTokens === undefined) return null;
  return CudaGraphPadding.vllmDefault(role.maxSequences, role.maxBatchedTokens);
}

/** Timing model of each worker role in the deployment. */
export type RoleTimings =
  | { readonly mode: "aggregated"; readonly aggregated: TimingModel }
  | { readonly mode: "disaggregated"; readonly prefill: TimingModel; readonly decode: TimingModel };
