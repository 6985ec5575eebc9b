import type { TableBackend } from "../hardware/backendTables.js";
import { mlaModuleTable } from "../hardware/mlaModule.js";
import type { ContextExtrapolation } from "../hardware/tableData.js";
import type { ModelArchitecture } from "../model/architecture.js";
import {
  type BackendKernels,
  blockFp8KernelOf,
  qkNormKernelOf,
  sharedExpertStreamTokensOf,
  type TimedRole,
} from "./timingSpec.js";

/**
 * The kernels a role of `backend` runs, as the op-level model prices them, when its op tables are
 * `tables`' (a run, timing/index.ts, and `fleetsim estimate` pick them here):
 * - block-FP8 linear layers: a backend's own tables measure its own kernel; priced from vLLM's,
 *   the backend's kernel rule applies (docs/models.md "Block-scaled FP8 GEMMs");
 * - the Q/K norm, separate or fused (docs/timing.md "Q/K norm");
 * - shared experts on a second stream (docs/timing.md "Shared experts beside the routed ones");
 * - vLLM's measured MLA module for a DeepSeek layer's attention block, from the built-in tables
 *   where they hold the model's heads per GPU, KV dtype and linear-layer dtype (docs/models.md
 *   "DeepSeek (MLA)"); a `--perf-database` run and other backends price the separate ops.
 */
export function kernelsOf(
  backend: NonNullable<TimedRole["backend"]>,
  tables: TableBackend,
  model: ModelArchitecture,
  gpu: string,
  tensor: number,
  opts: { readonly contextBeyond: ContextExtrapolation; readonly builtInTables: boolean },
): BackendKernels {
  const moduleApplies = model.mla !== null && backend === "vllm" && tables === "vllm" && opts.builtInTables;
  return {
    blockFp8: tables === backend ? "measured" : blockFp8KernelOf(backend),
    qkNorm: qkNormKernelOf(backend),
    sharedExpertStreamTokens: sharedExpertStreamTokensOf(backend),
    mlaModule: moduleApplies
      ? mlaModuleTable(gpu, model.numHeads / tensor, model.kvDtype, model.weightDtype, opts.contextBeyond)
      : null,
  };
}
