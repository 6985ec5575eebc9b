import type { AttentionGroup, MoeTable, OpTableData } from "./tableData.js";

/**
 * Op tables of the serving backends other than vLLM (docs/backends.md "Timing"): AIConfigurator
 * collects the same op tables on SGLang and TensorRT-LLM (`systems/data/<gpu>/<op>/<backend>/
 * <version>/`), measuring each backend's own kernels (SGLang's DeepGEMM block-FP8 GEMMs and
 * Triton fused MoE, TensorRT-LLM's torch-flow GEMMs, attention and MoE). fleetsim ships them
 * as compact tables (`calibration/<backend>/<gpu>.json`, derived by
 * `scripts/derive-backend-tables.ts`) and prices a backend's passes from its own tables.
 */
export type OtherBackend = "sglang" | "trtllm";

/** The serving backends whose op tables AIConfigurator collects (`<gpu>/<backend>/<version>/`). */
export type TableBackend = "vllm" | OtherBackend;

/** How a backend's name reads in messages. */
export const BACKEND_LABEL: Readonly<Record<TableBackend, string>> = {
  vllm: "vLLM",
  sglang: "SGLang",
  trtllm: "TensorRT-LLM",
};

/**
 * The AIConfigurator collection of each backend the derivation takes, first choice first (per
 * GPU, the first version whose GEMM, attention and MoE tables all exist). SGLang 0.5.9 is the
 * version of the benchmark's measured SGLang runs (S9-sglang, docs/fidelity.md) and has a full
 * set on every built-in GPU. The measured TensorRT-LLM runs (S9-trtllm) are 1.0.0rc3 and
 * 1.2.0rc6.post2; AIConfigurator's H100, H200 and B200 TensorRT-LLM collections start at 1.2.0rc5
 * (the one taken there), A100's and L40S's full sets are 1.0.0.
 */
export const BACKEND_TABLE_VERSIONS: Readonly<Record<OtherBackend, readonly string[]>> = {
  sglang: ["0.5.9"],
  trtllm: ["1.2.0rc5", "1.0.0"],
};

/**
 * `primary` (a backend's tables) with what it lacks taken from `fallback` (the same GPU's vLLM
 * tables): GEMM and MoE dtypes it has no rows of, attention groups of a (KV dtype, head dim) it
 * has no rows of, and all-reduce GPU counts. Within a dtype or head configuration the backend's
 * own rows always answer (nearest shape, as the tables route any query); nothing it measured is
 * replaced. `filledFromVllm` lists every group taken, e.g. `gemm fp8`, `moe bfloat16`,
 * `context attention fp8 KV head dim 64`.
 */
export function fillFromVllm(primary: OpTableData, fallback: OpTableData): OpTableData {
  const filled: string[] = [];
  /** `own` plus `other`'s entries whose key `own` has none of, each new key listed once as `label`. */
  const addMissing = <T>(
    own: readonly T[],
    other: readonly T[],
    key: (t: T) => string,
    label: (t: T) => string,
  ): T[] => {
    const have = new Set(own.map(key));
    const added = new Set<string>();
    const out = [...own];
    for (const t of other) {
      const k = key(t);
      if (have.has(k)) continue;
      out.push(t);
      if (!added.has(k)) filled.push(label(t));
      added.add(k);
    }
    return out;
  };
  const gemm = addMissing(
    primary.gemm,
    fallback.gemm,
    (g) => g.dtype,
    (g) => `gemm ${g.dtype}`,
  );
  const attention = (own: readonly AttentionGroup[], other: readonly AttentionGroup[], kind: string) =>
    addMissing(
      own,
      other,
      (g) => `${g.kvDtype}|${g.headDim}`,
      (g) => `${kind} attention ${g.kvDtype} KV head dim ${g.headDim}`,
    );
  const contextAttention = attention(primary.contextAttention, fallback.contextAttention, "context");
  const generationAttention = attention(
    primary.generationAttention,
    fallback.generationAttention,
    "generation",
  );
  const allReduce = addMissing(
    primary.allReduce,
    fallback.allReduce,
    (t) => String(t.numGpus),
    (t) => `all-reduce ${t.numGpus} GPUs`,
  ).sort((a, b) => a.numGpus - b.numGpus);
  const moeFill = (own: readonly MoeTable[], other: readonly MoeTable[], what: string) =>
    addMissing(
      own,
      other,
      (t) => t.dtype,
      (t) => `${what} ${t.dtype}`,
    );
  const moe = moeFill(primary.moe, fallback.moe, "moe");
  const moeBalanced =
    primary.moeBalanced === undefined && fallback.moeBalanced === undefined
      ? undefined
      : moeFill(primary.moeBalanced ?? [], fallback.moeBalanced ?? [], "moe (balanced)");
  return {
    ...primary,
    filledFromVllm: filled,
    gemm,
    contextAttention,
    generationAttention,
    allReduce,
    moe,
    ...(moeBalanced === undefined ? {} : { moeBalanced }),
  };
}

/** What a run's op tables were measured on: the backend, its version, and groups filled from vLLM's. */
export interface TableProvenance {
  readonly backend: TableBackend;
  readonly version: string;
  readonly filledFromVllm: readonly string[];
}

export function provenanceOf(data: OpTableData): TableProvenance {
  return {
    backend: data.backend ?? "vllm",
    version: data.perfDataVersion,
    filledFromVllm: data.filledFromVllm ?? [],
  };
}

/**
 * The filled groups a model's passes would read (`filledFromVllm` entries naming its weight
 * dtype's GEMM or MoE, or its KV dtype at its head dim): what a run warns about.
 */
export function filledGroupsUsed(
  data: Pick<OpTableData, "filledFromVllm">,
  use: {
    readonly weightDtype: string;
    readonly kvDtype: string;
    readonly headDim: number;
    readonly moe: boolean;
  },
): string[] {
  const attention = ` attention ${use.kvDtype} KV head dim ${use.headDim}`;
  return (data.filledFromVllm ?? []).filter(
    (f) =>
      f === `gemm ${use.weightDtype}` ||
      (use.moe && f === `moe ${use.weightDtype}`) ||
      f === `context${attention}` ||
      f === `generation${attention}`,
  );
}
