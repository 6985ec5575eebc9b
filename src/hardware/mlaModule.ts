/**
 * vLLM's whole MLA attention module (DeepSeek-V3/R1), measured as one op: the latent down- and
 * up-projections, the attention kernel, the absorbed per-head products and the output projection
 * of one layer, timed together on the GPU (AIConfigurator's `mla_generation_module_perf` and
 * `mla_context_module_perf` tables, vLLM 0.24.0). The reference prices a vLLM DeepSeek layer's
 * attention block from these tables when they hold the shape (its `generation_mla_block` and
 * `context_mla_block` ops) and from the separate GEMMs and kernels otherwise; fleetsim does the
 * same (docs/models.md "DeepSeek (MLA)").
 *
 * `src/hardware/calibration/mla/vllm.json` holds the rows, derived by
 * `scripts/derive-mla-module-tables.ts` from the public AIConfigurator repository.
 */
import { existsSync, readFileSync } from "node:fs";
import { besideModule } from "../util/packageRoot.js";
import { gpuSpec, tableSystem } from "./catalog.js";
import { type Extrapolation, Grid } from "./grid.js";
import type { ContextExtrapolation } from "./tableData.js";

/** One phase's measurements of one (KV dtype, GEMM dtype): `ms[head][batch][length]`, ms per layer. */
export interface MlaModuleGridJson {
  /** The attention backend vLLM ran when the rows were measured. */
  readonly kernel: string;
  readonly heads: readonly number[];
  readonly batch: readonly number[];
  /** Generation: the decode step's KV length; context: the prompt length. */
  readonly length: readonly number[];
  readonly ms: readonly (readonly (readonly number[])[])[];
}

export interface MlaModuleVariantJson {
  readonly kvDtype: string;
  readonly gemmDtype: string;
  readonly generation: MlaModuleGridJson;
  readonly context: MlaModuleGridJson;
}

export interface MlaModuleFileJson {
  readonly source: string;
  readonly note: string;
  readonly gpus: Readonly<Record<string, readonly MlaModuleVariantJson[]>>;
}

/** Type-only reference: makes `tsc` ship the JSON next to the compiled module. */
export type CommittedMlaModule = [typeof import("./calibration/mla/vllm.json", { with: { type: "json" }})];

let file: MlaModuleFileJson | null = null;

function readFile(): MlaModuleFileJson {
  if (file === null) {
    const url = besideModule(import.meta.url, "hardware", "calibration/mla/vllm.json");
    file = existsSync(url)
      ? (JSON.parse(readFileSync(url, "utf8")) as MlaModuleFileJson)
      : { source: "", note: "", gpus: {} };
  }
  return file;
}

/**
 * The measured module of `heads` query heads per GPU on `gpu`, for a model whose KV cache is
 * `kvDtype` and whose linear layers are `gemmDtype`; null where the tables do not hold that shape.
 */
export function mlaModuleTable(
  gpu: string,
  heads: number,
  kvDtype: string,
  gemmDtype: string,
  /** Beyond the longest measured prompt (`timing.context_attention_extrapolation`). */
  contextBeyond: ContextExtrapolation = "sqrt",
): MlaModuleTable | null {
  const variants = readFile().gpus[gpuSpec(tableSystem(gpu)).id];
  const v = variants?.find((x) => x.kvDtype === kvDtype && x.gemmDtype === gemmDtype);
  if (v === undefined) return null;
  const gen = planeOf(v.generation, heads, "proportional");
  const ctx = planeOf(v.context, heads, contextBeyond);
  return gen === null || ctx === null ? null : new MlaModuleTable(gen, ctx);
}

/**
 * The (batch × length) plane of one head count, as the op tables' grids interpolate (grid.ts):
 * linear in both axes between measured points, as the reference interpolates them; beyond the
 * largest batch in proportion to it; beyond the longest length `beyond`: `proportional` for decode
 * (whose attention reads the context once), and for prompts the role's context-attention rule
 * (docs/timing.md "Beyond the tables": `sqrt` continues the last segment in √latency, `quadratic`
 * scales the last point by the square of the length ratio, as the reference does). The planes
 * start at batch 1 and at a length of 1 (prompt) or 2 (decode step), below any query.
 */
function planeOf(g: MlaModuleGridJson, heads: number, beyond: Extrapolation): Grid | null {
  const i = g.heads.indexOf(heads);
  if (i < 0) return null;
  const lin = { log: false, values: "lin", below: "clamp" } as const;
  return new Grid([g.batch, g.length], g.ms[i]!.flat(), {
    axes: [
      { ...lin, above: "proportional" },
      { ...lin, above: beyond },
    ],
    fillOrder: [0, 1],
  });
}

export class MlaModuleTable {
  constructor(
    private readonly generation: Grid,
    private readonly context: Grid,
  ) {}

  /** One layer's decode block: `batch` sequences over `context` cached tokens (the step reads context + 1). */
  decodeMs(batch: number, context: number): number {
    return batch > 0 ? this.generation.at2(batch, context + 1) : 0;
  }

  /**
   * One layer's prefill block: `rows` requests of `newTokens` over `prefix` cached tokens. The
   * tables time prompts without a prefix; as the reference does, a prompt of `s = prefix + new`
   * tokens is looked up at `s` and scaled by 1 − (prefix / s)², the share of its attention's
   * query × key work that is new.
   */
  prefillMs(rows: number, newTokens: number, prefix: number): number {
    if (rows <= 0 || newTokens <= 0) return 0;
    const s = newTokens + prefix;
    const cached = prefix / s;
    return this.context.at2(rows, s) * (1 - cached * cached);
  }
}
