/**
 * One fidelity experiment: a real-hardware vLLM serving run from a public source, with the
 * workload as the source publishes it and the measured figures (bench/fidelity/README.md).
 * Files live in `bench/fidelity/experiments/<id>.json` and are written by
 * `scripts/derive-fidelity-data.ts`; this module only reads and checks them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export type Split = "fit" | "heldout";
/** `mla`: DeepSeek-V3/R1 (MLA attention, shared-expert MoE), its own group so the GQA MoE figures stay apart. */
export type ModelKind = "dense-gqa" | "dense-mha" | "moe" | "mla";
export type Regime = "light" | "moderate" | "heavy" | "burst";

/** Measured figures with vLLM `benchmark_serving` definitions (ms; null where unpublished). */
export interface Measured {
  readonly completed: number | null;
  readonly durationS: number | null;
  readonly ttftMeanMs: number | null;
  readonly ttftP99Ms: number | null;
  readonly itlMeanMs: number | null;
  readonly itlP99Ms: number | null;
  readonly tpotMeanMs: number | null;
  readonly e2eMeanMs: number | null;
  readonly e2eP99Ms: number | null;
  readonly outputThroughputTokS: number | null;
  readonly requestThroughput: number | null;
  readonly totalOutputTokens?: number | null;
}

export interface Experiment {
  readonly id: string;
  readonly source: {
    readonly name: string;
    readonly repo: string;
    readonly path: string;
    readonly commit: string;
  };
  readonly split: Split;
  readonly family: string;
  readonly kind: ModelKind;
  /**
   * The engine that was measured when it is not vLLM (S9's SGLang DeepSeek rows and TensorRT-LLM
   * rows): `vllm` then holds that engine's settings in vLLM's terms. fleetsim replays SGLang through
   * its SGLang core (simulate.ts: max_prefill_tokens = the pass budget less max_num_seqs, mixed
   * chunk, and the overlap scheduler as async scheduling) and TensorRT-LLM as `backend: trtllm`
   * (GUARANTEED_NO_EVICT, chunked prefill and block reuse as stored, the overlap scheduler as async
   * scheduling, `gpuMemoryUtilization` as TRT-LLM's free-memory fraction).
   */
  readonly servingEngine?: "sglang" | "trtllm";
  readonly gpu: string;
  readonly gpuMemoryGiB?: number | null;
  readonly model: string;
  readonly parallelism: {
    readonly tensor: number;
    readonly pipeline: number;
    /** Attention data-parallel ranks (fleetsim `attention_data`); absent = 1. */
    readonly attentionData?: number;
    /** MoE sharding when the source states it (default: fleetsim's, MoE TP over tensor × attention_data). */
    readonly moeTensor?: number;
    readonly moeExpert?: number;
  };
  readonly vllm: {
    readonly version: string;
    readonly blockSize: number;
    readonly maxNumSeqs: number;
    readonly maxNumBatchedTokens: number;
    readonly chunkedPrefill: boolean;
    readonly prefixCaching: boolean;
    readonly gpuMemoryUtilization: number;
    readonly maxModelLen: number;
    readonly kvCacheDtype?: string | null;
    readonly numGpuBlocks?: number | null;
    /** `multi-token-chunks`: the client saw ~10-token chunks (multi-step), so ITL is not per token. */
    readonly outputStreaming?: "per-token" | "multi-token-chunks" | null;
    /** `--async-scheduling` was on (server log). */
    readonly asyncScheduling?: boolean;
  };
  readonly load: {
    readonly regime: Regime;
    readonly requestRate?: number | "inf";
    readonly concurrency?: number;
  };
  readonly workload: {
    readonly arrivalMs: readonly number[] | null;
    /** `spanS`: the client scales its draws so the last request leaves at this time (vllm bench serve). */
    readonly poisson: { readonly rate: number; readonly seed: number; readonly spanS?: number } | null;
    /** Every prompt of the run was served before on the same server with prefix caching on. */
    readonly warmPrefixCache?: boolean;
    readonly closedLoopConcurrency?: number | null;
    /**
     * Closed loop: the first N requests are the client's warm-up phase, and the measured ones
     * start together once all of them have finished (AIPerf's phases; `warmup_sessions`).
     */
    readonly warmupSessions?: number;
    readonly inputLen: readonly number[];
    readonly outputLen: readonly number[];
    /** Where `outputLen` comes from when the source does not publish it ("stand-in: …"). */
    readonly outputLenSource?: string;
  };
  readonly measured: Measured;
  readonly latencyExcluded?: readonly number[];
  readonly notes?: string;
}

export const EXPERIMENTS_DIR = new URL("./experiments/", import.meta.url).pathname;

function check(cond: boolean, file: string, what: string): void {
  if (!cond) throw new Error(`${file}: ${what}`);
}

/** Reads and checks one experiment file. */
export function readExperiment(file: string): Experiment {
  const e = JSON.parse(readFileSync(file, "utf8")) as Experiment;
  check(typeof e.id === "string" && e.id.length > 0, file, "id missing");
  check(e.split === "fit" || e.split === "heldout", file, `split must be fit|heldout, got ${e.split}`);
  const w = e.workload;
  check(Array.isArray(w.inputLen) && w.inputLen.length > 0, file, "workload.inputLen empty");
  check(w.outputLen.length === w.inputLen.length, file, "workload.outputLen length differs from inputLen");
  check(
    w.arrivalMs !== null || w.poisson != null || (w.closedLoopConcurrency ?? 0) > 0,
    file,
    "workload needs arrivalMs, poisson or closedLoopConcurrency",
  );
  if (w.arrivalMs !== null) check(w.arrivalMs.length === w.inputLen.length, file, "arrivalMs length");
  check(/^[0-9a-f]{40}$/.test(e.source.commit), file, "source.commit must be 40 hex digits");
  return e;
}

/** Every committed experiment, sorted by id. */
export function loadExperiments(dir = EXPERIMENTS_DIR): Experiment[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => readExperiment(join(dir, f)));
}
