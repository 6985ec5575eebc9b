import type { KvDtype, WeightDtype } from "./dtypes.js";
import type { AttentionHeads, OpPerfTables } from "./perfTables.js";
import type { MoeShape } from "./sol.js";
import type { OpTableData } from "./tableData.js";

/**
 * The query grids on which the compact tables are checked against the parquet tables (the
 * catalog's dense models at TP 1/2/4/8), and the comparison itself. Used by the tests and printed
 * by `scripts/calibrate.ts`.
 */

interface DenseModel {
  readonly name: string;
  readonly hidden: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly inter: number;
  readonly vocab: number;
}

export const AGREEMENT_MODELS: readonly DenseModel[] = [
  { name: "Llama-3.1-8B", hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, inter: 14336, vocab: 128256 },
  { name: "Llama-3.1-70B", hidden: 8192, heads: 64, kvHeads: 8, headDim: 128, inter: 28672, vocab: 128256 },
  { name: "Qwen3-32B", hidden: 5120, heads: 64, kvHeads: 8, headDim: 128, inter: 25600, vocab: 151936 },
];
export const AGREEMENT_TP = [1, 2, 4, 8] as const;
/** Token counts: measured knots and points between them. */
export const AGREEMENT_M = [
  1, 2, 3, 5, 8, 12, 16, 24, 32, 40, 64, 100, 128, 200, 256, 300, 512, 700, 1024, 1500, 2048, 3000, 4096,
  6144, 8192, 12000, 16384,
] as const;
export const AGREEMENT_DECODE_BATCH = [1, 2, 3, 4, 8, 16, 24, 32, 64, 100, 128, 256] as const;
export const AGREEMENT_DECODE_KV = [512, 768, 1024, 2048, 3000, 4096, 8192, 12000, 16384, 32768] as const;
export const AGREEMENT_PREFILL_ISL = [128, 200, 512, 1024, 1500, 2048, 4096, 6000, 8192, 16384] as const;
export const AGREEMENT_PREFIX = [0, 1024, 4096, 8192, 16384, 32768] as const;
export const AGREEMENT_PREFILL_BATCH = [1, 2, 4] as const;

/** MoE layers of the catalog's MoE models (unsharded sizes) and the TP × EP splits checked. */
export const AGREEMENT_MOE = [
  { name: "Qwen3-30B-A3B", hidden: 2048, inter: 768, topK: 8, experts: 128 },
  { name: "Qwen3-235B-A22B", hidden: 4096, inter: 1536, topK: 8, experts: 128 },
  { name: "Mixtral-8x22B", hidden: 6144, inter: 16384, topK: 2, experts: 8 },
] as const;
export const AGREEMENT_MOE_SPLITS = [
  [1, 1],
  [2, 1],
  [1, 2],
  [4, 1],
  [1, 4],
  [8, 1],
  [1, 8],
] as const;

export type OpKind = "gemm" | "context" | "generation" | "allreduce" | "moe";

/** One query of the grid, run against a table set. */
export interface AgreementQuery {
  readonly kind: OpKind;
  readonly label: string;
  readonly run: (t: OpPerfTables) => number;
}

/** GEMM shapes (n, k) of a dense model's linear layers on one GPU at tensor parallelism `tp`. */
export function gemmShapes(m: DenseModel, tp: number): { name: string; n: number; k: number }[] {
  return [
    { name: "qkv", n: ((m.heads + 2 * m.kvHeads) * m.headDim) / tp, k: m.hidden },
    { name: "o", n: m.hidden, k: (m.heads * m.headDim) / tp },
    { name: "gate_up", n: (2 * m.inter) / tp, k: m.hidden },
    { name: "down", n: m.hidden, k: m.inter / tp },
    { name: "lm_head", n: Math.floor(m.vocab / tp), k: m.hidden },
  ];
}

/** The agreement query grid, restricted to the dtypes and GPU counts `data` has tables for. */
export function agreementQueries(data: OpTableData): AgreementQuery[] {
  const gemmDtypes: readonly WeightDtype[] = data.gemm.map((g) => g.dtype);
  const allReduceGpus = data.allReduce.map((t) => t.numGpus);
  const out: AgreementQuery[] = [];
  const heads = new Set<string>();
  for (const model of AGREEMENT_MODELS) {
    for (const tp of AGREEMENT_TP) {
      heads.add(`${model.heads / tp}/${Math.max(1, model.kvHeads / tp)}/${model.headDim}`);
      for (const s of gemmShapes(model, tp)) {
        const dtypes: readonly WeightDtype[] = s.name === "lm_head" ? ["bfloat16"] : gemmDtypes;
        for (const dtype of dtypes) {
          if (!gemmDtypes.includes(dtype)) continue;
          for (const m of AGREEMENT_M) {
            out.push({
              kind: "gemm",
              label: `${model.name} TP${tp} ${s.name} ${dtype} m=${m} n=${s.n} k=${s.k}`,
              run: (t) => t.gemm(dtype, m, s.n, s.k),
            });
          }
        }
      }
    }
  }
  const kvDtypes: readonly KvDtype[] = (["bfloat16", "fp8"] as const).filter((d) =>
    data.contextAttention.some((g) => g.kvDtype === d),
  );
  for (const h of [...heads].sort()) {
    const [n, kv, hd] = h.split("/").map(Number);
    for (const kvDtype of kvDtypes) {
      const query: AttentionHeads = { numHeads: n, numKvHeads: kv, headDim: hd, kvDtype };
      for (const b of AGREEMENT_DECODE_BATCH) {
        for (const len of AGREEMENT_DECODE_KV) {
          out.push({
            kind: "generation",
            label: `decode ${n}/${kv}/${hd} ${kvDtype} batch=${b} kv=${len}`,
            run: (t) => t.generationAttention(query, b, len),
          });
        }
      }
      for (const b of AGREEMENT_PREFILL_BATCH) {
        for (const isl of AGREEMENT_PREFILL_ISL) {
          for (const prefix of AGREEMENT_PREFIX) {
            out.push({
              kind: "context",
              label: `prefill ${n}/${kv}/${hd} ${kvDtype} batch=${b} isl=${isl} prefix=${prefix}`,
              run: (t) => t.contextAttention(query, b, isl, prefix),
            });
          }
        }
      }
    }
  }
  const moeDtypes = [...new Set(data.moe.map((t) => t.dtype))].sort();
  for (const layer of AGREEMENT_MOE) {
    for (const [tp, ep] of AGREEMENT_MOE_SPLITS) {
      for (const dtype of moeDtypes) {
        const shape: MoeShape = {
          dtype,
          hiddenSize: layer.hidden,
          interSize: layer.inter,
          topK: layer.topK,
          numExperts: layer.experts,
          moeTp: tp,
          moeEp: ep,
        };
        for (const m of AGREEMENT_M) {
          out.push({
            kind: "moe",
            label: `${layer.name} MoE ${dtype} tp${tp} ep${ep} tokens=${m}`,
            run: (t) => t.moe(shape, m),
          });
        }
      }
    }
  }
  for (const g of allReduceGpus) {
    for (const model of AGREEMENT_MODELS) {
      for (const m of AGREEMENT_M) {
        const bytes = m * model.hidden * 2;
        out.push({
          kind: "allreduce",
          label: `all-reduce ${g} GPUs ${bytes} B`,
          run: (t) => t.allReduce(g, bytes),
        });
      }
    }
  }
  return out;
}

export interface AgreementRow {
  readonly kind: OpKind;
  readonly points: number;
  /** Mean absolute relative deviation of `candidate` from `reference`. */
  readonly mape: number;
  readonly worst: number;
  readonly worstAt: string;
}

/** MAPE and worst relative deviation of `candidate` from `reference`, per op kind. */
export function compareTables(
  reference: OpPerfTables,
  candidate: OpPerfTables,
  queries: readonly AgreementQuery[],
): AgreementRow[] {
  const acc = new Map<OpKind, { sum: number; n: number; worst: number; at: string }>();
  for (const q of queries) {
    const ref = q.run(reference);
    const got = q.run(candidate);
    const err = ref > 0 ? Math.abs(got / ref - 1) : got === 0 ? 0 : 1;
    const a = acc.get(q.kind) ?? { sum: 0, n: 0, worst: 0, at: "" };
    a.sum += err;
    a.n++;
    if (err > a.worst) {
      a.worst = err;
      a.at = q.label;
    }
    acc.set(q.kind, a);
  }
  return [...acc.entries()].map(([kind, a]) => ({
    kind,
    points: a.n,
    mape: a.sum / a.n,
    worst: a.worst,
    worstAt: a.at,
  }));
}
