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
  const gen = Grid.of(v.generation, heads, "linear");
  const ctx = Grid.of(v.context, heads, contextBeyond);
  return gen === null || ctx === null ? null : new MlaModuleTable(gen, ctx);
}

/**
 * Beyond the longest measured length: `linear`, in proportion to the length from the last point
 * (decode, whose attention reads the context once); for prompts, the role's context-attention
 * rule (docs/timing.md "Beyond the tables"): `sqrt` continues the last segment in √latency,
 * `quadratic` scales the last point by the square of the length ratio, as the reference does.
 */
type LengthBeyond = "linear" | ContextExtrapolation;

/**
 * One head count's (batch × length) plane. Between measured points: linear in both axes, as the
 * reference interpolates them. Beyond the largest batch: in proportion to it from the last
 * measured batch; beyond the longest length: `beyond`; below the smallest length: the first
 * segment continued, never below half the first point.
 */
class Grid {
  private constructor(
    private readonly batch: readonly number[],
    private readonly length: readonly number[],
    private readonly ms: readonly (readonly number[])[],
    private readonly beyond: LengthBeyond,
  ) {}

  static of(g: MlaModuleGridJson, heads: number, beyond: LengthBeyond): Grid | null {
    const i = g.heads.indexOf(heads);
    return i < 0 ? null : new Grid(g.batch, g.length, g.ms[i]!, beyond);
  }

  at(batch: number, length: number): number {
    const b = this.batch;
    const last = b.length - 1;
    if (batch >= b[last]!) return (this.alongLength(last, length) * batch) / b[last]!;
    if (batch <= b[0]!) return this.alongLength(0, length);
    let i = 1;
    while (b[i]! < batch) i++;
    const lo = this.alongLength(i - 1, length);
    const hi = this.alongLength(i, length);
    return lo + ((hi - lo) * (batch - b[i - 1]!)) / (b[i]! - b[i - 1]!);
  }

  private alongLength(row: number, length: number): number {
    const s = this.length;
    const v = this.ms[row]!;
    const last = s.length - 1;
    if (length >= s[last]!) return this.beyondLast(s[last - 1]!, v[last - 1]!, s[last]!, v[last]!, length);
    if (length <= s[0]!) {
      const slope = (v[1]! - v[0]!) / (s[1]! - s[0]!);
      return Math.max(v[0]! + slope * (length - s[0]!), v[0]! / 2);
    }
    let j = 1;
    while (s[j]! < length) j++;
    return v[j - 1]! + ((v[j]! - v[j - 1]!) * (length - s[j - 1]!)) / (s[j]! - s[j - 1]!);
  }

  private beyondLast(s0: number, v0: number, s1: number, v1: number, length: number): number {
    const ratio = length / s1;
    switch (this.beyond) {
      case "linear":
        return v1 * ratio;
      case "quadratic":
        return v1 * ratio * ratio;
      case "sqrt": {
        const r1 = Math.sqrt(v1);
        const r = r1 + ((r1 - Math.sqrt(v0)) * (length - s1)) / (s1 - s0);
        return r * r;
      }
    }
  }
}

export class MlaModuleTable {
  constructor(
    private readonly generation: Grid,
    private readonly context: Grid,
  ) {}

  /** One layer's decode block: `batch` sequences over `context` cached tokens (the step reads context + 1). */
  decodeMs(batch: number, context: number): number {
    return batch > 0 ? this.generation.at(batch, context + 1) : 0;
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
    return this.context.at(rows, s) * (1 - cached * cached);
  }
}
