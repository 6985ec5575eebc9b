/**
 * Multi-head latent attention (DeepSeek-V2/V3) priced from the GQA/MHA op tables, which have no
 * MLA kernels (the project's vLLM perf data measures FlashAttention/FlashInfer GQA only). How
 * each half is derived (docs/models.md "DeepSeek (MLA)"):
 *
 * - **Prefill** runs as vLLM's MLA prefill does: the latents of the new tokens are up-projected
 *   (`kv_b_proj`, a GEMM priced by the caller) and attention is plain MHA with query/key width
 *   nope + rope and value width v. It is the measured MHA kernel at head dim 128 scaled by the
 *   width of its two matrix products, (qk + v) / (128 + 128) — 1.25 for DeepSeek-V3.
 * - **Decode** runs absorbed (vLLM's FlashMLA / FlashInfer-MLA / CUTLASS-MLA path): all query heads
 *   attend over one cached latent. It is priced by its roofline times the utilisation the measured
 *   GQA decode kernel reaches at the same batch, context and heads (measured ÷ roofline of that
 *   GQA shape): an estimate that carries the table's batch and context effects over to MLA.
 *
 * Both are labelled derived in the docs; the Known differences list them against AIC's measured
 * MLA tables, which the project data does not contain.
 */

import type { KvDtype } from "../hardware/dtypes.js";
import type { GpuSpec } from "../hardware/gpu.js";
import type { AttentionHeads, OpPerfTables } from "../hardware/perfTables.js";
import { generationAttentionSolMs, mlaGenerationSolMs } from "../hardware/sol.js";
import type { MlaSpec } from "../model/architecture.js";

/** The head dim of the measured kernels MLA is derived from. */
const TABLE_HEAD_DIM = 128;
/** Query heads per KV head of the GQA shape whose decode utilisation MLA borrows (Llama's 8:1). */
const REFERENCE_GQA_RATIO = 8;

export class MlaAttention {
  private readonly prefillScale: number;
  private readonly latentDim: number;
  private readonly refKvHeads: number;
  /** The MHA kernel prefill is priced on, and the GQA kernel decode borrows utilisation from. */
  private readonly prefillHeads: AttentionHeads;
  private readonly decodeHeads: AttentionHeads;

  constructor(
    private readonly mla: MlaSpec,
    private readonly gpu: GpuSpec,
    private readonly tables: OpPerfTables,
    /** Query heads on one tensor-parallel rank. */
    private readonly heads: number,
    private readonly kvDtype: KvDtype,
  ) {
    this.prefillScale = (mla.qkNopeHeadDim + mla.qkRopeHeadDim + mla.vHeadDim) / (2 * TABLE_HEAD_DIM);
    this.latentDim = mla.kvLoraRank + mla.qkRopeHeadDim;
    this.refKvHeads = Math.max(1, Math.floor(heads / REFERENCE_GQA_RATIO));
    // The up-projected K/V are BF16 whatever the cache holds, so the BF16 kernel runs.
    this.prefillHeads = { numHeads: heads, numKvHeads: heads, headDim: TABLE_HEAD_DIM, kvDtype: "bfloat16" };
    this.decodeHeads = { numHeads: heads, numKvHeads: this.refKvHeads, headDim: TABLE_HEAD_DIM, kvDtype };
  }

  /** One layer's prefill attention: `rows` requests × `newTokens` over `prefix` cached tokens. */
  prefillMs(rows: number, newTokens: number, prefix: number): number {
    const mha = this.tables.contextAttention(this.prefillHeads, rows, newTokens, prefix);
    return mha * this.prefillScale;
  }

  /** One layer's absorbed decode attention: `batch` requests over `context` cached tokens. */
  decodeMs(batch: number, context: number): number {
    const h = this.heads;
    const measured = this.tables.generationAttention(this.decodeHeads, batch, context);
    if (measured === 0) return 0;
    const refSol = generationAttentionSolMs(
      this.gpu,
      batch,
      context,
      h,
      this.refKvHeads,
      TABLE_HEAD_DIM,
      this.kvDtype,
    );
    const mlaSol = mlaGenerationSolMs(
      this.gpu,
      batch,
      context,
      h,
      this.latentDim,
      this.mla.kvLoraRank,
      this.kvDtype,
    );
    return (measured * mlaSol) / refSol;
  }
}
