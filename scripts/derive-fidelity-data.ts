/**
 * Derives the fidelity-benchmark fixtures (bench/fidelity/experiments/<id>.json) from public
 * real-hardware vLLM serving measurements (docs/fidelity-sources.md, bench/fidelity/README.md):
 *
 *   node --import tsx scripts/derive-fidelity-data.ts --s1 <dir> --s2 <dir> --s3 <dir> [--out <dir>]
 *
 * Each <dir> is either a git directory or checkout of the source repository (files are then read
 * at the pinned commits below with `git show <commit>:<path>`) or a plain directory holding the
 * files at their repository paths (read as they are; the pinned commit is then only cited).
 *   --s1  LambdaLabsML/vllm-benchmark
 *   --s2  surajssd/llm-k8s
 *   --s3  DO-Solutions/gtc-2026-doks
 *   --s9  ai-dynamo/aiconfigurator (or its silicon_sample.csv): S9's vLLM rows and, as sources
 *         S9-sglang and S9-trtllm, its SGLang DeepSeek-V3 rows and its TensorRT-LLM rows of
 *         catalog models (`--s9-all`: every usable row, not the subset)
 * A source that is not given is skipped (S3 needs S1 and S2: its lengths come from them).
 *
 * Only derived numbers are written (token counts, latencies, arrival offsets), each file with its
 * citation. Measured statistics use vLLM benchmark_serving's definitions, recomputed from the
 * per-request arrays where the file has them (see `perRequestStats`); where a file lacks an array
 * the file's own summary field is used and the experiment's `measured.basis` says so.
 * The output is formatted with the repository's Biome so a re-derivation is byte-identical.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_OUT = join(repoRoot, "bench", "fidelity", "experiments");

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Reading pinned files

/** Reads repository files at pinned commits from a git directory/checkout, or from a plain tree. */
export class SourceTree {
  private readonly git: boolean;
  constructor(readonly dir: string) {
    this.git = isGitDir(dir);
  }
  read(path: string, commit: string): string {
    if (!this.git) return readFileSync(join(this.dir, path), "utf8");
    return execFileSync("git", ["--git-dir", gitDirOf(this.dir), "show", `${commit}:${path}`], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
  }
  json(path: string, commit: string): Json {
    return parseResultJson(this.read(path, commit), path);
  }
}

function gitDirOf(dir: string): string {
  return existsSync(join(dir, ".git")) ? join(dir, ".git") : dir;
}

function isGitDir(dir: string): boolean {
  const g = gitDirOf(dir);
  return existsSync(join(g, "HEAD")) && existsSync(join(g, "objects"));
}

/**
 * A benchmark_serving result. The generated texts (the bulk of each file) are never used, so a
 * file cut at `"generated_texts"` parses too.
 */
export function parseResultJson(text: string, what: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    const cut = text.indexOf(', "generated_texts"');
    if (cut < 0) throw new Error(`${what}: not JSON`);
    return JSON.parse(`${text.slice(0, cut)}}`) as Json;
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics (numpy definitions)

/** numpy.percentile with the default linear interpolation. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const a = [...values].sort((x, y) => x - y);
  const pos = (p / 100) * (a.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return a[lo]! + (a[hi]! - a[lo]!) * (pos - lo);
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((s, v) => s + v, 0) / values.length;
}

/** Rounds to `digits` decimals (fixtures keep 0.001 ms). */
function r(v: number | null | undefined, digits = 3): number | null {
  if (v === null || v === undefined || !Number.isFinite(v)) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function num(d: Json, key: string): number | null {
  const v = d[key];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function nums(d: Json, key: string): number[] | null {
  const v = d[key];
  return Array.isArray(v) ? (v as number[]) : null;
}

export interface RequestStats {
  ttftMeanMs: number;
  ttftMedianMs: number;
  ttftP99Ms: number;
  itlMeanMs: number;
  itlMedianMs: number;
  itlP99Ms: number;
  tpotMeanMs: number;
  tpotMedianMs: number;
  tpotP99Ms: number;
  e2eMeanMs: number;
  e2eMedianMs: number;
  e2eP99Ms: number;
}

/**
 * From per-request `ttfts` (s) and `itls` (s per gap): TTFT over requests that saw a token
 * (`included`); ITL pooled over every gap of every request (benchmark_serving); E2E = TTFT + Σ ITL
 * per included request; TPOT = Σ ITL / (output_len − 1) for output_len > 1 (benchmark_serving's
 * (latency − ttft)/(n − 1) with latency taken at the last token).
 */
export function perRequestStats(
  ttfts: readonly number[],
  itls: readonly (readonly number[])[],
  outputLens: readonly number[],
  included: readonly number[],
): RequestStats {
  const ms = (s: number) => s * 1000;
  const ttft = included.map((i) => ms(ttfts[i]!));
  const gaps = itls.flatMap((g) => g.map(ms));
  const e2e = included.map((i) => ms(ttfts[i]! + itls[i]!.reduce((s, v) => s + v, 0)));
  const tpot = included
    .filter((i) => outputLens[i]! > 1)
    .map((i) => ms(itls[i]!.reduce((s, v) => s + v, 0)) / (outputLens[i]! - 1));
  return {
    ttftMeanMs: mean(ttft),
    ttftMedianMs: percentile(ttft, 50),
    ttftP99Ms: percentile(ttft, 99),
    itlMeanMs: mean(gaps),
    itlMedianMs: percentile(gaps, 50),
    itlP99Ms: percentile(gaps, 99),
    tpotMeanMs: mean(tpot),
    tpotMedianMs: percentile(tpot, 50),
    tpotP99Ms: percentile(tpot, 99),
    e2eMeanMs: mean(e2e),
    e2eMedianMs: percentile(e2e, 50),
    e2eP99Ms: percentile(e2e, 99),
  };
}

// ---------------------------------------------------------------------------------------------
// numpy legacy RandomState (MT19937) for benchmark_serving's Poisson arrivals

/** numpy.random.RandomState(seed) — `seed` (uint32) → init_genrand; random_sample / gamma(1, θ). */
export class NumpyLegacyRandom {
  private readonly mt = new Uint32Array(624);
  private index = 624;
  constructor(seed: number) {
    this.mt[0] = seed >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = this.mt[i - 1]! ^ (this.mt[i - 1]! >>> 30);
      // 1812433253 * prev + i, in uint32 arithmetic
      this.mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
  }
  private int32(): number {
    if (this.index >= 624) {
      for (let k = 0; k < 624; k++) {
        const y = (this.mt[k]! & 0x80000000) | (this.mt[(k + 1) % 624]! & 0x7fffffff);
        this.mt[k] = this.mt[(k + 397) % 624]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = this.mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
  /** random_sample(): 53-bit double in [0, 1). */
  randomSample(): number {
    const a = this.int32() >>> 5;
    const b = this.int32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }
  /** gamma(shape = 1, scale): legacy standard_exponential = −log(1 − U). */
  exponential(scale: number): number {
    return -Math.log(1 - this.randomSample()) * scale;
  }
}

/**
 * benchmark_serving (vLLM ≤ 0.9) arrivals: request 0 at t = 0; after each request the client sleeps
 * gamma(burstiness = 1, 1/rate) drawn from numpy's global RandomState seeded with --seed.
 */
export function benchmarkServingArrivalsMs(n: number, rate: number, seed: number): number[] {
  const rng = new NumpyLegacyRandom(seed);
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    out.push(t * 1000);
    t += rng.exponential(1 / rate);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fixture shape

interface Measured {
  completed: number | null;
  durationS: number | null;
  ttftMeanMs: number | null;
  ttftP99Ms: number | null;
  itlMeanMs: number | null;
  itlP99Ms: number | null;
  tpotMeanMs: number | null;
  e2eMeanMs: number | null;
  e2eP99Ms: number | null;
  outputThroughputTokS: number | null;
  requestThroughput: number | null;
  // Extras (same definitions): medians, TPOT p99, token totals, what each value was computed from.
  ttftMedianMs: number | null;
  itlMedianMs: number | null;
  tpotMedianMs: number | null;
  tpotP99Ms: number | null;
  e2eMedianMs: number | null;
  totalInputTokens: number | null;
  totalOutputTokens: number | null;
  maxConcurrentRequests?: number | null;
  basis: "per-request" | "summary" | "summary+corrected-ttft-mean" | "aggregate-row";
  e2eScope: "non-empty" | "all-completed" | null;
}

interface Fixture {
  id: string;
  source: { name: string; repo: string; path: string; commit: string };
  split: "fit" | "heldout";
  family: string;
  kind: "dense-gqa" | "dense-mha" | "moe" | "mla";
  /** The serving engine measured, when it is not vLLM (the `vllm` block then mirrors its settings). */
  servingEngine?: "sglang" | "trtllm";
  gpu: string;
  gpuMemoryGiB?: number;
  model: string;
  modelNote?: string;
  parallelism: {
    tensor: number;
    pipeline: number;
    attentionData?: number;
    moeTensor?: number;
    moeExpert?: number;
  };
  vllm: {
    version: string;
    engine: string;
    blockSize: number;
    maxNumSeqs: number;
    maxNumBatchedTokens: number;
    chunkedPrefill: boolean;
    prefixCaching: boolean;
    gpuMemoryUtilization: number;
    maxModelLen: number;
    kvCacheDtype: string;
    numGpuBlocks: number | null;
    outputStreaming: "per-token" | "multi-token-chunks" | null;
    asyncScheduling?: boolean;
  };
  load: {
    regime: "light" | "moderate" | "heavy" | "burst";
    requestRate?: number | "inf";
    concurrency?: number;
  };
  workload: {
    arrivalMs: number[] | null;
    poisson: { rate: number; seed: number; spanS?: number } | null;
    warmPrefixCache?: boolean;
    closedLoopConcurrency?: number;
    warmupSessions?: number;
    inputLen: number[];
    outputLen: number[];
    outputLenSource?: string;
  };
  measured: Measured;
  latencyExcluded: number[];
  notes: string;
}

// ---------------------------------------------------------------------------------------------
// S1: LambdaLabsML/vllm-benchmark (bursts of N ShareGPT requests, vLLM image v0.5.4)

const S1_REPO = "LambdaLabsML/vllm-benchmark";
const A4F9 = "a4f9f4371a1ccac781293837fce2bce0cc6d25cc"; // 2024-09-07/08 H100 batch
const A9B4 = "a9b42a5f83bc39976bcb6bd44a96b2b15d820e10"; // 2024-09-07/08 A100 batch
const E04B = "e04b354be3700225a40818a81c90b360e6505e7a"; // 2024-08 H100 batch
const C0946 = "0946e8624e33d95a15f247b6a10bbbada90198d3"; // 2024-08 H100 batch

/** [path under results/, commit] */
export const S1_FILES: readonly (readonly [string, string])[] = [
  ["prompt_10/1xH100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2048.json", A4F9],
  ["prompt_40/1xH100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2048.json", A4F9],
  ["prompt_160/1xH100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2048.json", A4F9],
  ["prompt_320/1xH100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2048.json", A4F9],
  ["prompt_320/1xA100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2000.json", A9B4],
  ["prompt_320/4xA100-80GB-SXM/Meta-Llama-3-70B-Instruct_tp4_len2000.json", A9B4],
  ["prompt_40/2xH100-80GB-SXM/Meta-Llama-3.1-70B-Instruct-FP8_tp2_len2048.json", A4F9],
  ["prompt_320/2xH100-80GB-SXM/Meta-Llama-3.1-70B-Instruct-FP8_tp2_len2048.json", A4F9],
  ["prompt_320/4xH100-80GB-SXM/Meta-Llama-3.1-70B-Instruct-FP8_tp4_len2048.json", A4F9],
  ["prompt_320/8xH100-80GB-SXM/Meta-Llama-3.1-70B-Instruct-FP8_tp8_len2048.json", A4F9],
  ["prompt_10/2xH100-80GB-SXM/Mixtral-8x7B-Instruct-v0.1_tp2_len2048.json", A4F9],
  ["prompt_80/2xH100-80GB-SXM/Mixtral-8x7B-Instruct-v0.1_tp2_len2048.json", A4F9],
  ["prompt_320/2xH100-80GB-SXM/Mixtral-8x7B-Instruct-v0.1_tp2_len2048.json", A4F9],
  ["prompt_320/2xA100-80GB-SXM/Mixtral-8x7B-Instruct-v0.1_tp2_len2000.json", A9B4],
  ["prompt_40/8xH100-80GB-SXM/Mixtral-8x7B-Instruct-v0.1_tp8_len2048.json", A4F9],
  ["prompt_320/8xH100-80GB-SXM/Mixtral-8x7B-Instruct-v0.1_tp8_len2048.json", A4F9],
  ["prompt_320/4xH100-80GB-SXM/Mixtral-8x22B-Instruct-v0.1_tp4_len2000.json", C0946],
  ["prompt_320/8xH100-80GB-SXM/Mixtral-8x22B-Instruct-v0.1_tp8_len8000.json", E04B],
  ["prompt_320/8xA100-80GB-SXM/Mixtral-8x22B-Instruct-v0.1_tp8_len2000.json", A9B4],
];

interface S1Model {
  model: string;
  family: string;
  short: string;
  kind: "dense-gqa" | "moe";
  heldout: boolean;
  note?: string;
}

const S1_MODELS: Readonly<Record<string, S1Model>> = {
  "Meta-Llama-3-8B-Instruct": {
    model: "meta-llama/Meta-Llama-3-8B-Instruct",
    family: "llama-3-8b",
    short: "llama3-8b",
    kind: "dense-gqa",
    heldout: false,
  },
  "Meta-Llama-3-70B-Instruct": {
    model: "meta-llama/Meta-Llama-3-70B-Instruct",
    family: "llama-3-70b",
    short: "llama3-70b",
    kind: "dense-gqa",
    heldout: false,
  },
  "Meta-Llama-3.1-70B-Instruct-FP8": {
    model: "nvidia/Llama-3.1-70B-Instruct-FP8",
    family: "llama-3.1-70b-fp8",
    short: "llama31-70b-fp8",
    kind: "dense-gqa",
    heldout: false,
    note:
      "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8 (per-tensor FP8 weights) priced as catalog nvidia/Llama-3.1-70B-Instruct-FP8 " +
      "(same per-tensor FP8 weights). The real run kept a BF16 KV cache (kv_cache_dtype auto, no KV scales), the catalog entry " +
      "prices an FP8 KV cache: KV capacity is twice the real one in the simulator.",
  },
  "Mixtral-8x7B-Instruct-v0.1": {
    model: "mistralai/Mixtral-8x7B-Instruct-v0.1",
    family: "mixtral-8x7b",
    short: "mixtral-8x7b",
    kind: "moe",
    heldout: false,
  },
  "Mixtral-8x22B-Instruct-v0.1": {
    model: "mistralai/Mixtral-8x22B-Instruct-v0.1",
    family: "mixtral-8x22b",
    short: "mixtral-8x22b",
    kind: "moe",
    heldout: true,
  },
};

const S1_GPUS: Readonly<Record<string, [string, string]>> = {
  "H100-80GB-SXM": ["h100_sxm", "h100"],
  "A100-80GB-SXM": ["a100_sxm", "a100"],
};

function s1Experiment(tree: SourceTree, rel: string, commit: string): Fixture {
  const path = `results/${rel}`;
  const m = /^prompt_(\d+)\/(\d+)x([^/]+)\/(.+)_tp(\d+)_len(\d+)\.json$/.exec(rel);
  if (m === null) throw new Error(`S1 path not understood: ${rel}`);
  const [, nStr, , gpuName, modelName, tpStr, lenStr] = m;
  const n = Number(nStr);
  const tp = Number(tpStr);
  const maxModelLen = Number(lenStr);
  const spec = S1_MODELS[modelName!];
  const gpu = S1_GPUS[gpuName!];
  if (spec === undefined || gpu === undefined) throw new Error(`S1: no mapping for ${rel}`);
  if (maxModelLen > 32768)
    throw new Error(`${rel}: chunked prefill would be on (max_model_len > 32k); not mapped`);

  const d = tree.json(path, commit);
  const inputLen = nums(d, "input_lens")!;
  const outputLen = nums(d, "output_lens")!;
  if (inputLen.length !== n || outputLen.length !== n) throw new Error(`${rel}: expected ${n} requests`);
  if (inputLen.reduce((s, v) => s + v, 0) !== num(d, "total_input_tokens"))
    throw new Error(`${rel}: input sum`);
  if (outputLen.reduce((s, v) => s + v, 0) !== num(d, "total_output_tokens"))
    throw new Error(`${rel}: output sum`);
  const excluded = outputLen.flatMap((v, i) => (v === 0 ? [i] : []));
  const included = outputLen.flatMap((v, i) => (v > 0 ? [i] : []));
  const hasLatency = num(d, "mean_latency_ms") !== null;

  const notes: string[] = [
    `Burst: all ${n} ShareGPT requests (benchmark_serving, seed 0, request_rate inf) sent at t = 0 to a fresh server (no warm-up; benchmark_serving 0.5.x sends no test prompt), so the first requests pay one-time costs (e.g. Triton JIT of fused-MoE kernels: Mixtral TTFT is ~1.8 s even at N = 10).`,
    "Output lengths are benchmark_serving's re-tokenised generated text (max_tokens = the ShareGPT completion length, no ignore_eos).",
  ];
  if (excluded.length > 0)
    notes.push(
      `${excluded.length} requests have output_len 0 (client saw no text, TTFT recorded as 0; most likely an immediate EOS): replay them as prefill + 1 token and leave them out of TTFT/ITL/E2E (latencyExcluded).`,
    );
  let stats: Partial<RequestStats> & { tpotMedianMs?: number };
  let basis: Measured["basis"];
  let e2eScope: Measured["e2eScope"];
  const ttfts = nums(d, "ttfts");
  const itls = d["itls"] as number[][] | undefined;
  if (ttfts !== null && Array.isArray(itls)) {
    stats = perRequestStats(ttfts, itls, outputLen, included);
    basis = "per-request";
    e2eScope = "non-empty";
    notes.push(summaryCheck(d, stats, n, excluded.length));
  } else {
    // The file (or the copy read) has no per-request timings: the file's own summary, whose TTFT
    // averages the empty requests' 0 s in; the mean is corrected exactly, the p99 is left as is.
    const k = excluded.length;
    stats = {
      ttftMeanMs: (num(d, "mean_ttft_ms")! * n) / (n - k),
      ttftMedianMs: num(d, "median_ttft_ms")!,
      ttftP99Ms: num(d, "p99_ttft_ms")!,
      itlMeanMs: num(d, "mean_itl_ms")!,
      itlMedianMs: num(d, "median_itl_ms")!,
      itlP99Ms: num(d, "p99_itl_ms")!,
      tpotMeanMs: num(d, "mean_tpot_ms")!,
      tpotMedianMs: num(d, "median_tpot_ms")!,
      tpotP99Ms: num(d, "p99_tpot_ms")!,
      ...(hasLatency
        ? {
            e2eMeanMs: num(d, "mean_latency_ms")!,
            e2eMedianMs: num(d, "median_latency_ms")!,
            e2eP99Ms: num(d, "p99_latency_ms")!,
          }
        : {}),
    };
    basis = k > 0 ? "summary+corrected-ttft-mean" : "summary";
    e2eScope = hasLatency ? "all-completed" : null;
    notes.push(
      "Measured values are the file's summary fields (the copy read had no per-request ttfts/itls)." +
        (k > 0
          ? ` TTFT mean rescaled by N/(N-k) to drop the ${k} zero TTFTs; TTFT median/p99 are over all N (zeros included, at the bottom of the order).`
          : "") +
        (hasLatency
          ? " E2E is the summary's request latency over all completed requests, latencyExcluded ones included."
          : " This batch's summary has no request latency: E2E is null unless derived from a full copy."),
    );
  }
  const chunked = hasLatency;
  notes.push(
    chunked
      ? "Streaming: this batch (2024-09, summary with request latency) streams ~10 tokens per chunk, so ITL is the gap between chunks (output_len ≈ 10 × chunks), not between tokens; compare TPOT for decode speed. The chunking is what vLLM's multi-step scheduling (--num-scheduler-steps, vLLM ≥ 0.6.0) produces; benchmark_1x2x4x8x.sh names image v0.5.4, which has no multi-step, so the engine version of this batch is uncertain."
      : "Streaming: this batch (2024-08) streams one token per chunk (ITL is per token), consistent with vLLM 0.5.4.",
  );
  notes.push(
    "Engine flags from benchmark.py (stored version 29dd18a6): --gpu-memory-utilization 0.95 --max-num-seqs 1024 --max-model-len <len> --tensor-parallel-size <k>; the script's history at this file's commit was not readable, and vLLM's own default max_num_seqs is 256.",
  );

  const [gpuId, gpuShort] = gpu;
  return {
    id: `s1-${gpuShort}-${spec.short}-tp${tp}-len${maxModelLen}-n${n}`,
    source: { name: "S1", repo: S1_REPO, path, commit },
    split: spec.heldout ? "heldout" : "fit",
    family: spec.family,
    kind: spec.kind,
    gpu: gpuId,
    model: spec.model,
    ...(spec.note !== undefined ? { modelNote: spec.note } : {}),
    parallelism: { tensor: tp, pipeline: 1 },
    vllm: {
      version: "0.5.4",
      engine: "V0",
      blockSize: 16,
      maxNumSeqs: 1024,
      // vLLM 0.5.x without chunked prefill: max(max_model_len, 2048)
      maxNumBatchedTokens: Math.max(maxModelLen, 2048),
      chunkedPrefill: false,
      prefixCaching: false,
      gpuMemoryUtilization: 0.95,
      maxModelLen,
      kvCacheDtype: "auto",
      numGpuBlocks: null,
      outputStreaming: chunked ? "multi-token-chunks" : "per-token",
    },
    load: { regime: "burst", requestRate: "inf" },
    workload: { arrivalMs: new Array<number>(n).fill(0), poisson: null, inputLen, outputLen },
    measured: {
      completed: num(d, "completed"),
      durationS: r(num(d, "duration"), 4),
      ttftMeanMs: r(stats.ttftMeanMs),
      ttftP99Ms: r(stats.ttftP99Ms),
      itlMeanMs: r(stats.itlMeanMs),
      itlP99Ms: r(stats.itlP99Ms),
      tpotMeanMs: r(stats.tpotMeanMs),
      e2eMeanMs: r(stats.e2eMeanMs),
      e2eP99Ms: r(stats.e2eP99Ms),
      outputThroughputTokS: r(num(d, "output_throughput")),
      requestThroughput: r(num(d, "request_throughput"), 4),
      ttftMedianMs: r(stats.ttftMedianMs),
      itlMedianMs: r(stats.itlMedianMs),
      tpotMedianMs: r(stats.tpotMedianMs),
      tpotP99Ms: r(stats.tpotP99Ms),
      e2eMedianMs: r(stats.e2eMedianMs),
      totalInputTokens: num(d, "total_input_tokens"),
      totalOutputTokens: num(d, "total_output_tokens"),
      basis,
      e2eScope,
    },
    latencyExcluded: excluded,
    notes: notes.join(" "),
  };
}

/** "computed vs file summary" line; summary TTFT includes empty requests' zeros. */
function summaryCheck(d: Json, s: Partial<RequestStats>, n: number, k: number): string {
  const pairs: [string, number | undefined, number | null][] = [
    [
      k > 0 ? "TTFT mean (summary ×N/(N−k))" : "TTFT mean",
      s.ttftMeanMs,
      k > 0 ? (num(d, "mean_ttft_ms")! * n) / (n - k) : num(d, "mean_ttft_ms"),
    ],
    ["ITL mean", s.itlMeanMs, num(d, "mean_itl_ms")],
    ["ITL p99", s.itlP99Ms, num(d, "p99_itl_ms")],
    ["TPOT mean", s.tpotMeanMs, num(d, "mean_tpot_ms")],
    ["E2E mean", s.e2eMeanMs, num(d, "mean_e2el_ms") ?? num(d, "mean_latency_ms")],
  ];
  const parts = pairs
    .filter(([, a, b]) => a !== undefined && b !== null)
    .map(([name, a, b]) => `${name} ${(((a! - b!) / b!) * 100).toFixed(2).replace(/^-0\.00$/, "0.00")}%`);
  return `Computed from the per-request arrays; difference from the file's own summary: ${parts.join(", ")}.`;
}

// ---------------------------------------------------------------------------------------------
// S2: surajssd/llm-k8s, Llama-3.3-70B-Instruct on Azure ND96asr_v4 (8× A100-40GB), vLLM 0.8.3

const S2_REPO = "surajssd/llm-k8s";
const S2_COMMIT = "58b61c59450e06073120a8ad166c1e9c333851a7";
const S2_DIR = "results_serving_meta-llama-Llama-3.3-70B-Instruct";

interface S2Run {
  dir: string;
  tag: string;
  tp: number;
  pp: number;
  engine: string;
  numGpuBlocks: number | null;
  note: string;
}

const S2_RUNS: readonly S2Run[] = [
  {
    dir: "01_tp8_pp1",
    tag: "tp8",
    tp: 8,
    pp: 1,
    engine: "V1 (vLLM 0.8.3 default for TP-only; server log not published)",
    numGpuBlocks: null,
    note: "One node, TP8 over NVLink, --distributed-executor-backend mp --enable-prefix-caching (configs/llama-3-3-70b-instruct/one-node-four-gpus/k8s/deployment.yaml). No server log: KV blocks unknown.",
  },
  {
    dir: "02_tp4_pp2_no_IB",
    tag: "tp4pp2-tcp",
    tp: 4,
    pp: 2,
    engine: "V0 (logged: PP without Ray falls back to V0)",
    numGpuBlocks: null,
    note: "Two nodes (LeaderWorkerSet, Ray), TP4 inside each node, PP2 across nodes over TCP (no InfiniBand). No server log for this run; the same configuration logged 25,588 and 25,524 GPU blocks in runs 03 and 04.",
  },
  {
    dir: "04_tp4_pp2_IB",
    tag: "tp4pp2-ib",
    tp: 4,
    pp: 2,
    engine: "V0 (logged: PP without Ray falls back to V0)",
    numGpuBlocks: 25524,
    note: "Two nodes, TP4 inside each node, PP2 across nodes over GPUDirect-RDMA InfiniBand (gpu_type Standard_ND96asr_v4-GPUDirect-RDMA-Infiniband). Server log lws-run-2.sh: '# cuda blocks: 25524', KV 16.75–17.94 GiB per GPU. Run 03 (a first IB trial) is not used.",
  },
];

const S2_QPS = ["01", "04", "16", "inf"] as const;

function s2Experiments(tree: SourceTree): { fixtures: Fixture[]; tp8qps1: Json } {
  const fixtures: Fixture[] = [];
  let tp8qps1: Json | null = null;
  for (const run of S2_RUNS) {
    const tpTag = run.pp === 1 ? "tp8_pp1" : "tp4_pp2";
    const files = S2_QPS.map((q) => {
      const path = `${S2_DIR}/${run.dir}/serving_meta-llama-Llama-3.3-70B-Instruct_${tpTag}_sharegpt_qps_${q}.json`;
      return { q, path, d: tree.json(path, S2_COMMIT) };
    });
    const capacity = num(files.find((f) => f.q === "inf")!.d, "request_throughput")!;
    for (const { q, path, d } of files) {
      if (run.dir === "01_tp8_pp1" && q === "01") tp8qps1 = d;
      const n = num(d, "num_prompts")!;
      const rate =
        d["request_rate"] === "inf" || q === "inf" ? Number.POSITIVE_INFINITY : num(d, "request_rate")!;
      const inputLen = nums(d, "input_lens")!;
      const outputLen = nums(d, "output_lens")!;
      const ttfts = nums(d, "ttfts")!;
      const itls = d["itls"] as number[][];
      const excluded = outputLen.flatMap((v, i) => (v === 0 ? [i] : []));
      const included = outputLen.flatMap((v, i) => (v > 0 ? [i] : []));
      const s = perRequestStats(ttfts, itls, outputLen, included);
      const notes: string[] = [run.note];
      let arrivalMs: number[];
      if (Number.isFinite(rate)) {
        arrivalMs = benchmarkServingArrivalsMs(n, rate, 0);
        const e2e = included.map(
          (i) => arrivalMs[i]! + (ttfts[i]! + itls[i]!.reduce((a, b) => a + b, 0)) * 1000,
        );
        const last = Math.max(...e2e) / 1000;
        notes.push(
          `Arrivals are not stored; regenerated as benchmark_serving 0.8.3 draws them (numpy RandomState(0), gamma(1, 1/${rate}) after each request, first at 0). Check: max(arrival + E2E) = ${last.toFixed(3)} s vs the run's duration ${num(d, "duration")!.toFixed(3)} s.`,
        );
      } else {
        arrivalMs = new Array<number>(n).fill(0);
        notes.push("request_rate inf: all requests at t = 0.");
      }
      notes.push(summaryCheck(d, s, n, excluded.length));
      notes.push(
        "Client: vLLM benchmarks/benchmark_serving.py (0.8.3) from a pod in the same cluster, 200 ShareGPT prompts (seed 0, the same prompts as S1's first 200), after one initial test prompt. Engine defaults for A100-40GB: chunked prefill (max_model_len 131072 > 32k) with max_num_batched_tokens 2048, max_num_seqs 256, CUDA graphs up to batch 256.",
        "Prefix caching: the same 200 prompts are sent at qps 1, 4, 16, inf in that order to one server, so from the second run on most prompts are probably prefix-cache hits (TP8 mean TTFT 65 ms at qps 1, 50 ms at qps 4).",
      );
      const ratio = Number.isFinite(rate) ? rate / capacity : Number.POSITIVE_INFINITY;
      const regime = !Number.isFinite(rate)
        ? "burst"
        : ratio < 0.4
          ? "light"
          : ratio < 0.75
            ? "moderate"
            : "heavy";
      notes.push(
        Number.isFinite(rate)
          ? `Regime: rate / request throughput at inf (${capacity.toFixed(2)} req/s) = ${ratio.toFixed(2)} (light < 0.40 ≤ moderate < 0.75 ≤ heavy).`
          : "Regime: burst.",
      );
      fixtures.push({
        id: `s2-a100-40gb-llama33-70b-${run.tag}-qps${q === "inf" ? "inf" : Number(q)}`,
        source: { name: "S2", repo: S2_REPO, path, commit: S2_COMMIT },
        split: "heldout",
        family: "llama-3.3-70b",
        kind: "dense-gqa",
        gpu: "a100_sxm",
        gpuMemoryGiB: 40,
        model: "meta-llama/Llama-3.3-70B-Instruct",
        parallelism: { tensor: run.tp, pipeline: run.pp },
        vllm: {
          version: "0.8.3",
          engine: run.engine,
          blockSize: 16,
          maxNumSeqs: 256,
          maxNumBatchedTokens: 2048,
          chunkedPrefill: true,
          prefixCaching: true,
          gpuMemoryUtilization: 0.9,
          maxModelLen: 131072,
          kvCacheDtype: "auto",
          numGpuBlocks: run.numGpuBlocks,
          outputStreaming: "per-token",
        },
        load: { regime, requestRate: Number.isFinite(rate) ? rate : "inf" },
        workload: {
          arrivalMs: arrivalMs.map((a) => r(a)!),
          poisson: null,
          // The same prompts went to the same server at every earlier rate (1 → 4 → 16 → inf), with
          // prefix caching on and room for all of them: every rate after the first starts warm.
          warmPrefixCache: rate !== 1,
          inputLen,
          outputLen,
        },
        measured: {
          completed: num(d, "completed"),
          durationS: r(num(d, "duration"), 4),
          ttftMeanMs: r(s.ttftMeanMs),
          ttftP99Ms: r(s.ttftP99Ms),
          itlMeanMs: r(s.itlMeanMs),
          itlP99Ms: r(s.itlP99Ms),
          tpotMeanMs: r(s.tpotMeanMs),
          e2eMeanMs: r(s.e2eMeanMs),
          e2eP99Ms: r(s.e2eP99Ms),
          outputThroughputTokS: r(num(d, "output_throughput")),
          requestThroughput: r(num(d, "request_throughput"), 4),
          ttftMedianMs: r(s.ttftMedianMs),
          itlMedianMs: r(s.itlMedianMs),
          tpotMedianMs: r(s.tpotMedianMs),
          tpotP99Ms: r(s.tpotP99Ms),
          e2eMedianMs: r(s.e2eMedianMs),
          totalInputTokens: num(d, "total_input_tokens"),
          totalOutputTokens: num(d, "total_output_tokens"),
          basis: "per-request",
          e2eScope: "non-empty",
        },
        latencyExcluded: excluded,
        notes: notes.join(" "),
      });
    }
  }
  return { fixtures, tp8qps1: tp8qps1! };
}

// ---------------------------------------------------------------------------------------------
// S3: DO-Solutions/gtc-2026-doks, nvidia Llama-3.1-70B-Instruct-FP8 on 1× H200, vLLM 0.14.1

const S3_REPO = "DO-Solutions/gtc-2026-doks";
const S3_COMMIT = "541db4ef3094ca810331a007ed9454e4fe46b3c8";
const S3_DIR = "dev/vllm/benchmarks/phase0/20260224-185458";
const S3_RATES = ["0.5", "0.75", "1.0", "1.25", "1.5", "2.0", "2.5", "3.0"] as const;
/** report.md: "Saturation onset at 2.5 RPS". */
const S3_SATURATION_RPS = 2.5;
/** server.log: "GPU KV cache size: 348,304 tokens", block 16. */
const S3_KV_TOKENS = 348304;

function s3Experiments(
  tree: SourceTree,
  s1InputLens: readonly number[],
  s1Outputs: { fp8: readonly number[]; all: readonly (readonly number[])[] },
  s2Outputs: readonly number[],
): Fixture[] {
  const inputLen = s1InputLens.slice(0, 300);
  // Output stand-in: S2 (Llama-3.3-70B BF16, vLLM 0.8.3) realised lengths for the first 200 prompts;
  // S1 Llama-3.1-70B-Instruct-FP8 TP8 (N = 320) for 200..299, its empty outputs replaced by the
  // longest output any S1 Llama file in the selection produced for that prompt (at least 1).
  const outputLen = inputLen.map((_, i) => {
    if (i < s2Outputs.length) return s2Outputs[i]!;
    if (s1Outputs.fp8[i]! > 0) return s1Outputs.fp8[i]!;
    return Math.max(1, ...s1Outputs.all.map((o) => o[i]!));
  });
  const standInTotal = outputLen.reduce((a, b) => a + b, 0);
  const serverLog = tree.read(`${S3_DIR}/server.log`, S3_COMMIT);
  if (!serverLog.includes(`GPU KV cache size: ${S3_KV_TOKENS.toLocaleString("en-US")} tokens`))
    throw new Error("S3 server.log: KV cache size line changed");
  if (!serverLog.includes("max_num_batched_tokens=8192"))
    throw new Error("S3 server.log: batch budget changed");

  return S3_RATES.map((rateStr) => {
    const path = `${S3_DIR}/rate-${rateStr}.json`;
    const d = tree.json(path, S3_COMMIT);
    const rate = Number(rateStr);
    if (num(d, "total_input_tokens") !== inputLen.reduce((a, b) => a + b, 0))
      throw new Error(`${path}: input total differs from S1's first 300 prompts`);
    const ratio = rate / S3_SATURATION_RPS;
    const regime = ratio < 0.4 ? "light" : ratio < 0.75 ? "moderate" : "heavy";
    const measuredOut = num(d, "total_output_tokens")!;
    const notes = [
      "vllm bench serve (0.14.1) against the same server, ShareGPT V3, 300 prompts, seed 0, Poisson (burstiness 1), temperature 0, no per-request data published (aggregates only; basis = summary).",
      "Input lengths: S1's first 300 seed-0 ShareGPT prompts with the Llama-3 tokenizer (sum 62,238 = this run's total).",
      `Output lengths are a STAND-IN (not published per request): S2's realised output_lens (Llama-3.3-70B-Instruct BF16) for prompts 0–199, S1 Llama-3.1-70B-Instruct-FP8 TP8 N=320 for 200–299 (empty ones replaced by the longest S1 Llama output for that prompt). Stand-in total ${standInTotal} vs measured ${measuredOut} (${(((standInTotal - measuredOut) / measuredOut) * 100).toFixed(1)}%): compare throughput and E2E with that in mind.`,
      "Arrivals not published: poisson {rate, seed 0}. The newer vLLM benchmark client (vllm bench serve) rescales its cumulative gamma draws so that the last request is sent at exactly N/rate; this run's durations are N/rate + 4.0…9.1 s at every rate, as that predicts.",
      "Prefix caching: the same 300 prompts are sent at every rate, in the order 0.5 → 3.0 within 31 minutes, to one server whose KV cache (348k tokens) holds a whole run (~122k tokens), so from rate 0.75 on most prompts are probably prefix-cache hits (all but their last partial block); the report's cold-cache TTFT tail at rate 0.5 fits. The server log has no hit-rate lines.",
      "Engine (server.log): V1, FLASH_ATTN, FP8 (ModelOpt) weights and fp8_e4m3 KV, chunked prefill with max_num_batched_tokens 8192, prefix caching on, async scheduling, full + piecewise CUDA graphs up to 512, KV 53.15 GiB = 348,304 tokens = 21,769 blocks of 16. max_num_seqs not logged: the 0.14 default for ≥ 70 GiB non-A100 GPUs (1,024) goes with the logged 8,192 budget.",
      "Warm-up: 10 prompts at 0.5 RPS before the sweep, 30 s cooldown between rates (report.md); the report calls rate 0.5's TTFT tail a cold-cache artefact.",
      `Regime: rate / the report's saturation onset (${S3_SATURATION_RPS} RPS) = ${ratio.toFixed(2)} (light < 0.40 ≤ moderate < 0.75 ≤ heavy).`,
      "The repository's second phase-0 run (20260224-214806) is a custom multi-turn dataset (1.74 M input tokens per rate), not a ShareGPT repeat; it is not used.",
    ];
    return {
      id: `s3-h200-llama31-70b-fp8-tp1-rate${rateStr.replace(".", "p")}`,
      source: { name: "S3", repo: S3_REPO, path, commit: S3_COMMIT },
      split: "heldout",
      family: "llama-3.1-70b-fp8",
      kind: "dense-gqa",
      gpu: "h200_sxm",
      model: "nvidia/Llama-3.1-70B-Instruct-FP8",
      parallelism: { tensor: 1, pipeline: 1 },
      vllm: {
        version: "0.14.1",
        engine: "V1",
        blockSize: 16,
        maxNumSeqs: 1024,
        maxNumBatchedTokens: 8192,
        chunkedPrefill: true,
        prefixCaching: true,
        gpuMemoryUtilization: 0.9,
        maxModelLen: 131072,
        kvCacheDtype: "fp8_e4m3",
        numGpuBlocks: S3_KV_TOKENS / 16,
        outputStreaming: "per-token",
        // server.log: "Asynchronous scheduling is enabled".
        asyncScheduling: true,
      },
      load: { regime, requestRate: rate },
      workload: {
        arrivalMs: null,
        // vllm bench serve scales its cumulative gamma draws so the last request leaves at N / rate.
        poisson: { rate, seed: 0, spanS: inputLen.length / rate },
        // The same 300 prompts at every earlier rate (0.5 → 3.0), one server, prefix caching on.
        warmPrefixCache: rate !== 0.5,
        inputLen,
        outputLen,
        outputLenSource:
          "stand-in: S2 01_tp8_pp1 qps_01 output_lens[0:200] + S1 70B-FP8 TP8 N=320 output_lens[200:300]",
      },
      measured: {
        completed: num(d, "completed"),
        durationS: r(num(d, "duration"), 4),
        ttftMeanMs: r(num(d, "mean_ttft_ms")),
        ttftP99Ms: r(num(d, "p99_ttft_ms")),
        itlMeanMs: r(num(d, "mean_itl_ms")),
        itlP99Ms: r(num(d, "p99_itl_ms")),
        tpotMeanMs: r(num(d, "mean_tpot_ms")),
        e2eMeanMs: r(num(d, "mean_e2el_ms")),
        e2eP99Ms: r(num(d, "p99_e2el_ms")),
        outputThroughputTokS: r(num(d, "output_throughput")),
        requestThroughput: r(num(d, "request_throughput"), 4),
        ttftMedianMs: r(num(d, "median_ttft_ms")),
        itlMedianMs: r(num(d, "median_itl_ms")),
        tpotMedianMs: r(num(d, "median_tpot_ms")),
        tpotP99Ms: r(num(d, "p99_tpot_ms")),
        e2eMedianMs: r(num(d, "median_e2el_ms")),
        totalInputTokens: num(d, "total_input_tokens"),
        totalOutputTokens: measuredOut,
        maxConcurrentRequests: num(d, "max_concurrent_requests"),
        basis: "summary",
        e2eScope: "all-completed",
      },
      latencyExcluded: [],
      notes: notes.join(" "),
    } satisfies Fixture;
  });
}

// ---------------------------------------------------------------------------------------------
// S9: ai-dynamo/aiconfigurator silicon_sample.csv, closed-loop aiperf-style runs (ISL/OSL fixed)

const S9_REPO = "ai-dynamo/aiconfigurator";
/** The last commit that changed the file at this path (same blob 92100a08 at aic-core/… later). */
const S9_COMMIT = "75f90ac7a31437952ba62995855fd933a1ebf030";
const S9_PATH = "src/aiconfigurator/systems/silicon_sample.csv";
/** aiconfigurator's benchmark script (bench_run.sh.j2): `--num-requests concurrency × 20`, warm-up 2 × concurrency. */
const S9_ROUNDS = 20;
const S9_WARMUP_ROUNDS = 2;

interface S9Model {
  model: string;
  family: string;
  kind: "dense-gqa" | "moe" | "mla";
  tag: string;
  prec: string;
  kvCacheDtype: string;
  note: string;
}

/**
 * (backend, model_path, precision) → catalog entry. Rows of any other triple are skipped. SGLang
 * rows are read only for DeepSeek-V3/R1: the table has no vLLM row of that family; they replay
 * through fleetsim's SGLang core, labelled as such (source `S9-sglang`). TensorRT-LLM rows replay
 * through fleetsim's TRT-LLM backend (source `S9-trtllm`), every one held out.
 */
/** DeepSeek-V3's FP8 checkpoint as S9's SGLang and TensorRT-LLM rows name it (each entry adds its note). */
const DEEPSEEK_V3_FP8: Omit<S9Model, "note"> = {
  model: "deepseek-ai/DeepSeek-V3",
  family: "deepseek-v3-fp8",
  kind: "mla",
  tag: "deepseek-v3",
  prec: "fp8",
  kvCacheDtype: "auto",
};

const S9_MODELS: Readonly<Record<string, S9Model>> = {
  "vllm|Qwen/Qwen3-32B|": {
    model: "Qwen/Qwen3-32B",
    family: "qwen3-32b",
    kind: "dense-gqa",
    tag: "qwen3-32b",
    prec: "bf16",
    kvCacheDtype: "auto",
    note: "precision and quant modes empty: the BF16 checkpoint as published (catalog Qwen/Qwen3-32B, BF16 weights and KV).",
  },
  "vllm|meta-llama/Llama-3.1-70B|fp8": {
    model: "nvidia/Llama-3.1-70B-Instruct-FP8",
    family: "llama-3.1-70b-fp8",
    kind: "dense-gqa",
    tag: "llama31-70b",
    prec: "fp8",
    kvCacheDtype: "fp8",
    note: "model_path meta-llama/Llama-3.1-70B with precision/gemm/moe quant fp8: mapped to the catalog's per-tensor FP8 entry nvidia/Llama-3.1-70B-Instruct-FP8 (same architecture; FP8 weights and FP8 KV). Whether the run used that checkpoint or vLLM's online FP8 quantization, and whether the KV cache was FP8, is not recorded.",
  },
  "vllm|nvidia/Llama-3.1-8B-Instruct-FP8|fp8": {
    model: "nvidia/Llama-3.1-8B-Instruct-FP8",
    family: "llama-3.1-8b-fp8",
    kind: "dense-gqa",
    tag: "llama31-8b",
    prec: "fp8",
    kvCacheDtype: "fp8",
    note: "the ModelOpt FP8 checkpoint (catalog entry of the same id: FP8 weights and FP8 KV).",
  },
  "vllm|Qwen/Qwen3-235B-A22B-FP8|fp8": {
    model: "Qwen/Qwen3-235B-A22B-FP8",
    family: "qwen3-235b-a22b-fp8",
    kind: "moe",
    tag: "qwen3-235b-a22b",
    prec: "fp8",
    kvCacheDtype: "fp8",
    note: "Qwen's block-scaled FP8 checkpoint (catalog entry of the same id: fp8_block weights, FP8 KV).",
  },
  "sglang|deepseek-ai/DeepSeek-V3|fp8": {
    ...DEEPSEEK_V3_FP8,
    note: "DeepSeek's own block-scaled FP8 checkpoint (gemm_quant_mode fp8, moe_quant_mode fp8_block; catalog deepseek-ai/DeepSeek-V3: fp8_block weights, MLA latent cache priced at FP8). The row records no KV-cache dtype and the benchmark rule passes --kv-cache-dtype only when one is configured; SGLang's default (auto) keeps the latent cache in BF16, twice the bytes fleetsim's decode attention reads.",
  },
  "sglang|deepseek-ai/DeepSeek-R1|fp8": {
    model: "deepseek-ai/DeepSeek-R1",
    family: "deepseek-v3-fp8",
    kind: "mla",
    tag: "deepseek-r1",
    prec: "fp8",
    kvCacheDtype: "auto",
    note: "DeepSeek-R1's FP8 checkpoint (the DeepSeek-V3 architecture; catalog deepseek-ai/DeepSeek-R1).",
  },
  "trtllm|meta-llama/Llama-3.1-70B|fp8": {
    model: "nvidia/Llama-3.1-70B-Instruct-FP8",
    family: "llama-3.1-70b-fp8",
    kind: "dense-gqa",
    tag: "llama31-70b",
    prec: "fp8",
    kvCacheDtype: "auto",
    note: "model_path meta-llama/Llama-3.1-70B with precision/gemm quant fp8: mapped to the catalog's per-tensor FP8 entry nvidia/Llama-3.1-70B-Instruct-FP8 (FP8 weights and FP8 KV). TRT-LLM's kv_cache_config.dtype auto takes the checkpoint's KV quantization (FP8 for that checkpoint); which checkpoint ran is not recorded.",
  },
  "trtllm|meta-llama/Llama-3.1-8B-Instruct|": {
    model: "meta-llama/Llama-3.1-8B-Instruct",
    family: "llama-3.1-8b",
    kind: "dense-gqa",
    tag: "llama31-8b",
    prec: "bf16",
    kvCacheDtype: "auto",
    note: "precision and quant modes empty: the BF16 checkpoint as published (catalog meta-llama/Llama-3.1-8B-Instruct, BF16 weights and KV).",
  },
  "trtllm|Qwen/Qwen3-235B-A22B-FP8|fp8": {
    model: "Qwen/Qwen3-235B-A22B-FP8",
    family: "qwen3-235b-a22b-fp8",
    kind: "moe",
    tag: "qwen3-235b-a22b",
    prec: "fp8",
    kvCacheDtype: "auto",
    note: "Qwen's block-scaled FP8 checkpoint (gemm_quant_mode fp8_block; catalog entry of the same id: fp8_block weights, FP8 KV). The row's KV-cache dtype is not recorded (TRT-LLM's auto keeps the checkpoint's, which declares none: BF16 on the real server, where fleetsim prices FP8 as the reference does).",
  },
  "trtllm|deepseek-ai/DeepSeek-V3|fp8": {
    ...DEEPSEEK_V3_FP8,
    note: "DeepSeek's own block-scaled FP8 checkpoint (catalog deepseek-ai/DeepSeek-V3: fp8_block weights, MLA latent cache priced at FP8). The row records no KV-cache dtype (TRT-LLM's auto keeps the latent in BF16 for this checkpoint, twice the bytes fleetsim's decode attention reads).",
  },
};

const S9_GPUS: Readonly<Record<string, string>> = {
  a100_sxm: "a100",
  h100_sxm: "h100",
  h200_sxm: "h200",
  b200_sxm: "b200",
  l40s: "l40s",
};

interface S9Pick {
  /** The measured engine; absent = the vLLM rows (and the SGLang DeepSeek rows, which have no vLLM twin). */
  backend?: "trtllm";
  system: string;
  model: string;
  tp?: number;
  isl?: number;
  osl?: readonly number[];
  /** Keep only rows with MoE expert parallelism (true) or without (false). */
  ep?: boolean;
  /** Attention data parallel rows are kept only by a pick that says `dp: true` (and then only they). */
  dp?: boolean;
}

/**
 * The benchmark subset (about 120 experiments, a few minutes of CPU; `--s9-all` writes every usable
 * row): every measured concurrency (4…64 or 8…128) of a few (system, model, tp, isl, osl) configs
 * of the regular grids; of the irregular H200 sets (one concurrency per config) a slice by TP/OSL.
 */
const S9_SUBSET: readonly S9Pick[] = [
  // Fit. Qwen3-32B BF16, H100, vLLM 0.12.0: every TP, short and long prompts.
  { system: "h100_sxm", model: "Qwen/Qwen3-32B", tp: 2, isl: 1024, osl: [1024] },
  { system: "h100_sxm", model: "Qwen/Qwen3-32B", tp: 2, isl: 4096, osl: [128] },
  { system: "h100_sxm", model: "Qwen/Qwen3-32B", tp: 4, isl: 1024, osl: [512] },
  { system: "h100_sxm", model: "Qwen/Qwen3-32B", tp: 4, isl: 4096, osl: [512] },
  { system: "h100_sxm", model: "Qwen/Qwen3-32B", tp: 4, isl: 4096, osl: [1024] },
  { system: "h100_sxm", model: "Qwen/Qwen3-32B", tp: 8, isl: 1024, osl: [128] },
  { system: "h100_sxm", model: "Qwen/Qwen3-32B", tp: 8, isl: 4096, osl: [1024] },
  // Fit. Llama-3.1-70B FP8 (engine version not recorded), H100 and B200: each ISL/OSL pair.
  { system: "h100_sxm", model: "meta-llama/Llama-3.1-70B", tp: 2, isl: 1024, osl: [1024] },
  { system: "h100_sxm", model: "meta-llama/Llama-3.1-70B", tp: 2, isl: 8192, osl: [1024] },
  { system: "h100_sxm", model: "meta-llama/Llama-3.1-70B", tp: 4, isl: 1024, osl: [8192] },
  { system: "h100_sxm", model: "meta-llama/Llama-3.1-70B", tp: 8, isl: 1024, osl: [1024] },
  { system: "b200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 1, isl: 1024, osl: [1024] },
  { system: "b200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 2, isl: 8192, osl: [1024] },
  { system: "b200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 4, isl: 1024, osl: [8192] },
  { system: "b200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 8, isl: 1024, osl: [1024] },
  // Held out (H200). Llama-3.1-70B FP8: TP1 long output (KV-bound at c = 64) and TP2 long prompt.
  { system: "h200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 1, isl: 1024, osl: [8192] },
  { system: "h200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 2, isl: 8192, osl: [1024] },
  // Qwen3-235B-A22B FP8 (MoE): every TP4 and expert-parallel row, TP2 at OSL 500 and 2000.
  { system: "h200_sxm", model: "Qwen/Qwen3-235B-A22B-FP8", tp: 4 },
  { system: "h200_sxm", model: "Qwen/Qwen3-235B-A22B-FP8", ep: true },
  { system: "h200_sxm", model: "Qwen/Qwen3-235B-A22B-FP8", tp: 2, osl: [500, 2000], ep: false },
  // Llama-3.1-8B FP8: TP1 and TP8.
  { system: "h200_sxm", model: "nvidia/Llama-3.1-8B-Instruct-FP8", tp: 1 },
  { system: "h200_sxm", model: "nvidia/Llama-3.1-8B-Instruct-FP8", tp: 8 },
  // Qwen3-235B-A22B FP8 under attention DP 2/4 (MoE TP over the DP × TP GPUs): every row.
  { system: "h200_sxm", model: "Qwen/Qwen3-235B-A22B-FP8", dp: true },
  // Held out (a family nothing is fitted on). DeepSeek-V3 FP8 measured on SGLang 0.5.9: every TP8
  // row. The two B200 TP4 rows are left out: 169 GB of FP8 weights per GPU leave no KV room under
  // vLLM's memory rule at 0.9, which fleetsim refuses (SGLang sized its pool its own way).
  { system: "h200_sxm", model: "deepseek-ai/DeepSeek-V3", tp: 8 },
  { system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", tp: 8 },
  // Held out (another engine). TensorRT-LLM: Llama-3.1-70B FP8 on H200 in the vLLM held-out rows'
  // configs and on B200; Llama-3.1-8B BF16 on H100 (1.0.0rc3); Qwen3-235B-A22B FP8 EP4 on H100;
  // DeepSeek-V3 FP8 TP8 on H200 and B200.
  { backend: "trtllm", system: "h200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 1, isl: 1024, osl: [1024] },
  { backend: "trtllm", system: "h200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 2, isl: 8192, osl: [1024] },
  { backend: "trtllm", system: "b200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 1, isl: 1024, osl: [1024] },
  { backend: "trtllm", system: "b200_sxm", model: "meta-llama/Llama-3.1-70B", tp: 8, isl: 1024, osl: [1024] },
  {
    backend: "trtllm",
    system: "h100_sxm",
    model: "meta-llama/Llama-3.1-8B-Instruct",
    tp: 1,
    isl: 1024,
    osl: [512],
  },
  {
    backend: "trtllm",
    system: "h100_sxm",
    model: "meta-llama/Llama-3.1-8B-Instruct",
    tp: 2,
    isl: 4096,
    osl: [128],
  },
  { backend: "trtllm", system: "h100_sxm", model: "Qwen/Qwen3-235B-A22B-FP8", tp: 4, isl: 1024, osl: [512] },
  { backend: "trtllm", system: "h200_sxm", model: "deepseek-ai/DeepSeek-V3", tp: 8, isl: 1024, osl: [1024] },
  { backend: "trtllm", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", tp: 8, isl: 1024, osl: [1024] },
];

/** A CSV line (RFC 4180 quoting; the file has none today). */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export function parseCsv(text: string): Record<string, string>[] {
  const lines = text.split(/\r?\n/).filter((l) => l.length > 0);
  const header = csvFields(lines[0]!);
  return lines.slice(1).map((l) => {
    const f = csvFields(l);
    if (f.length !== header.length)
      throw new Error(`S9: row has ${f.length} fields, header ${header.length}: ${l}`);
    return Object.fromEntries(header.map((h, i) => [h, f[i]!]));
  });
}

interface S9Row {
  row: Record<string, string>;
  backend: "vllm" | "sglang" | "trtllm";
  concurrency: number;
  /** The row's tp_size: attention TP on vLLM; on SGLang every GPU of the worker (attention TP × DP). */
  tp: number;
  pp: number;
  moeTp: number;
  moeEp: number;
  isl: number;
  osl: number;
}

/** Attention tensor and data parallelism of a row as fleetsim's `tensor` × `attention_data`. */
function s9Attention(x: S9Row, m: S9Model): { tensor: number; data: number } {
  if (x.backend === "sglang") {
    // SGLang's tp spans the worker; --enable-dp-attention splits it into dp attention groups.
    const data = Number(x.row["attention_dp_size"] || "1");
    return { tensor: x.tp / data, data };
  }
  // TensorRT-LLM: moe_tp × moe_ep = tp (its benchmark rule); attention DP rows are not replayed.
  if (x.backend === "trtllm") return { tensor: x.tp, data: Number(x.row["attention_dp_size"] || "1") };
  // vLLM runs attention TP × DP and MoE over the same GPUs: moe_tp × moe_ep = tp × dp
  // (aiconfigurator's vllm.rule; the attention_dp_size column is empty in these rows).
  return {
    tensor: x.tp,
    data: m.kind === "dense-gqa" ? Number(x.row["attention_dp_size"] || "1") : (x.moeTp * x.moeEp) / x.tp,
  };
}

/** Why an agg row on a catalog GPU cannot be replayed, or null when it can. */
function s9SkipReason(x: S9Row, m: S9Model | undefined): string | null {
  const r = x.row;
  if (m === undefined) return `no catalog mapping for ${r["model_path"]} at precision '${r["precision"]}'`;
  if (x.backend === "sglang") {
    if (x.tp > 8) return `${x.tp} GPUs per worker (tp ${x.tp}): more than one 8-GPU node`;
    // The 2026-04-27 DB dump carries config and workflow ids; the earlier dump files repeat its
    // figures under DeepSeek-R1 or hold a second series of the same configuration (B200 TP8: TPOT
    // up to 30 % lower, TTFT higher) that their rows do not tell apart.
    if (!r["silicon_data_source"]!.startsWith("db-dump/"))
      return "earlier dump file (a repeat or an unlabelled second series)";
  }
  if (x.backend === "trtllm") {
    if (x.tp > 8) return `${x.tp} GPUs per worker (tp ${x.tp}): more than one 8-GPU node`;
    if (Number(r["attention_dp_size"] || "1") > 1) return "TensorRT-LLM attention DP (not replayed)";
    if (m.kind === "mla" && !r["silicon_data_source"]!.startsWith("db-dump/"))
      return "earlier dump file (a repeat or an unlabelled second series)";
  }
  if (!Number.isFinite(x.concurrency)) return "no silicon_concurrency in silicon_data_source";
  if (x.concurrency !== Number(r["batch_size"])) return "silicon_concurrency differs from batch_size";
  const { tensor, data } = s9Attention(x, m);
  if (!Number.isInteger(tensor) || !Number.isInteger(data) || data < 1)
    return `attention parallelism not a whole split (moe_tp ${x.moeTp} × moe_ep ${x.moeEp} over tp ${x.tp})`;
  if (data > 1 && m.kind === "dense-gqa") return `attention data parallel ${data} on a dense model`;
  if (x.pp !== 1) return `pipeline ${x.pp}`;
  return null;
}

function s9Rows(text: string): { usable: (S9Row & { m: S9Model })[]; skipped: [S9Row, string][] } {
  const usable: (S9Row & { m: S9Model })[] = [];
  const skipped: [S9Row, string][] = [];
  for (const row of parseCsv(text)) {
    const backend = row["backend"];
    if (row["mode"] !== "agg" || S9_GPUS[row["system"]!] === undefined) continue;
    if (
      backend !== "vllm" &&
      backend !== "trtllm" &&
      !(backend === "sglang" && row["model_path"]!.startsWith("deepseek-ai/"))
    )
      continue;
    const c = /silicon_concurrency=(\d+)/.exec(row["silicon_data_source"]!);
    const x: S9Row = {
      row,
      backend,
      // Rows of the 2026-04-06 dump carry no silicon_concurrency: their batch_size is the concurrency
      // (every row that has both has them equal).
      concurrency:
        c !== null
          ? Number(c[1])
          : row["silicon_data_source"]!.startsWith("source_file=2026-04-06.csv")
            ? Number(row["batch_size"])
            : Number.NaN,
      tp: Number(row["tp_size"]),
      pp: Number(row["pp_size"] || "1"),
      moeTp: Number(row["moe_tp_size"] || "1"),
      moeEp: Number(row["moe_ep_size"] || "1"),
      isl: Number(row["isl"]),
      osl: Number(row["osl"]),
    };
    const m = S9_MODELS[`${backend}|${row["model_path"]}|${row["precision"]}`];
    const why = s9SkipReason(x, m);
    if (why === null) usable.push({ ...x, m: m! });
    else skipped.push([x, why]);
  }
  return { usable, skipped };
}

function s9InSubset(x: S9Row & { m: S9Model }): boolean {
  const dp = s9Attention(x, x.m).data > 1;
  return S9_SUBSET.some(
    (p) =>
      (p.backend === undefined ? x.backend !== "trtllm" : p.backend === x.backend) &&
      p.system === x.row["system"] &&
      p.model === x.row["model_path"] &&
      (p.tp === undefined || p.tp === x.tp) &&
      (p.isl === undefined || p.isl === x.isl) &&
      (p.osl === undefined || p.osl.includes(x.osl)) &&
      (p.ep === undefined || p.ep === x.moeEp > 1) &&
      (p.dp === true) === dp,
  );
}

/** TensorRT-LLM's pass budget under aiconfigurator's rule: batch + ISL + 1500, rounded up to a 32-token block. */
function trtTokenBudget(batch: number, isl: number): number {
  return Math.ceil((batch + isl + 1500) / 32) * 32;
}

/** What the notes say about the engine and its settings, per backend. */
function s9EngineNote(x: S9Row, version: string, versionKnown: boolean, m: S9Model): string {
  const { isl, osl } = x;
  const b = Number(x.row["batch_size"]);
  if (x.backend === "sglang")
    return `Engine: SGLang ${version} (image ${/image=([^;]+)/.exec(x.row["silicon_data_source"]!)?.[1] ?? "not recorded"}), NOT vLLM: replayed through fleetsim's SGLang core (engine.backend sglang, priced from the vLLM op tables) as a cross-engine check. aiconfigurator's SGLang benchmark rule (generator/rule_plugin/benchmark/sglang.rule) sets --max-running-requests = batch_size (${b}), --max-prefill-tokens = isl + 1500 (${isl + 1500}), --enable-mixed-chunk (prefill chunks share a pass with decodes), CUDA graphs 1..batch_size; stored as max_num_seqs ${b} and a pass budget of batch_size + isl + 1500 = ${b + isl + 1500} tokens, as the vLLM rows, and replayed as max_sequences ${b}, sglang.max_prefill_tokens ${isl + 1500} (the budget less ${b}) and sglang.enable_mixed_chunk. Not set, SGLang defaults: radix (prefix) cache on, the overlap scheduler on (replayed as scheduler.async_scheduling: the CPU schedules the next batch while the GPU runs), chunked_prefill_size by GPU memory, page size by attention backend (block 16 here), mem_fraction_static by GPU (KV capacity here is vLLM's formula at 0.9, as the vLLM rows; every row's ${b} × ${isl + osl} tokens fit either way), kv-cache-dtype ${m.kvCacheDtype}. Kernels differ (SGLang's MLA and DeepGEMM paths vs the vLLM 0.24 op tables fleetsim prices).`;
  if (x.backend === "trtllm") {
    const budget = trtTokenBudget(b, isl);
    return `Engine: TensorRT-LLM ${version || "(backend_version not recorded)"} (PyTorch backend), NOT vLLM: replayed through fleetsim's TRT-LLM backend (engine.backend trtllm: the vLLM core with the GUARANTEED_NO_EVICT capacity scheduler, TRT-LLM's default; passes priced from the vLLM op tables) as a cross-engine check. aiconfigurator's TensorRT-LLM benchmark rule (generator/rule_plugin/benchmark/trtllm.rule) and its extra_engine_args templates set max_batch_size = batch_size (${b}), tokens_per_block 32, max_num_tokens = batch_size + isl + 1500 rounded up to a block (${budget}), disable_overlap_scheduler false for agg (replayed as scheduler.async_scheduling), CUDA graphs 1..batch_size; left at the templates' defaults: enable_chunked_prefill false, kv_cache_config.enable_block_reuse false (no prefix reuse), free_gpu_memory_fraction 0.80 (of the memory free after the weights, TRT-LLM's rule; fleetsim's trtllm capacity formula), kv_cache_config.dtype ${m.kvCacheDtype}. Kernels differ (TRT-LLM's own GEMM, attention and MoE kernels vs the vLLM 0.24 op tables fleetsim prices).`;
  }
  return `Engine: vLLM ${version}${versionKnown ? "" : " ASSUMED (backend_version is empty for the 2026-04-06.csv rows; 0.11.0 was the current vLLM release at their measured date 2025-10-29)"}, V1. aiconfigurator's benchmark rule plugin (generator/rule_plugin/benchmark/vllm.rule) sets --max-num-seqs = batch_size (${b}), --max-num-batched-tokens = batch_size + isl + 1500 (${b + isl + 1500}), --max-model-len = isl + osl + 1500 (${isl + osl + 1500}), CUDA graphs 1..batch_size; gpu-memory-utilization and block size are not set (vLLM defaults 0.9 and 16); prefix caching is not disabled (V1 default on); async scheduling not passed (off by default before 0.14); kv-cache-dtype ${m.kvCacheDtype} from the row's quant mode. Whether this generator produced the measured deployment is not stated.`;
}

function s9ParallelismNote(x: S9Row & { m: S9Model }, tensor: number, data: number): string {
  const { m } = x;
  const moe = m.kind === "dense-gqa" ? "" : `, MoE ${x.moeTp > 1 ? `TP ${x.moeTp}` : `EP ${x.moeEp}`}`;
  const how =
    data === 1
      ? ""
      : ` Attention DP ${data} is not a column of the row (attention_dp_size is empty): it follows from aiconfigurator's vllm.rule, where the worker's GPUs are tp × dp and moe_tp × moe_ep repartitions them (${x.moeTp} × ${x.moeEp} over tp ${x.tp}); without --enable-expert-parallel vLLM shards the experts TP over the DP × TP GPUs. max_num_seqs and max_num_batched_tokens apply per DP rank (engine core); the client's ${x.concurrency} requests go through vLLM's DP load balancer.`;
  return `Parallelism: tp ${tensor}, pp ${x.pp}, attention DP ${data}${moe}.${how}`;
}

function s9Experiment(x: S9Row & { m: S9Model }): Fixture {
  const { row, m, concurrency: c, isl, osl } = x;
  const gpu = row["system"]!;
  const { tensor: tp, data: dp } = s9Attention(x, m);
  const ep = m.kind !== "dense-gqa" && x.moeEp > 1 ? x.moeEp : 1;
  const sglang = x.backend === "sglang";
  const trt = x.backend === "trtllm";
  const versionKnown = row["backend_version"] !== "";
  const version = versionKnown ? row["backend_version"]! : trt ? "" : "0.11.0";
  const warm = S9_WARMUP_ROUNDS * c;
  const n = warm + S9_ROUNDS * c;
  const maxNumSeqs = Number(row["batch_size"]);
  const tpot = Number(row["silicon_tpot_ms"]);
  const sourceFields = row["silicon_data_source"]!.split("; ").filter((f) => !f.startsWith("source_file=/"));
  const notes = [
    `Row ${row["id"]} of aiconfigurator's silicon_sample.csv (NVIDIA's "2026-04 dump of the internal benchmark DB", docs/design/prediction_regression_gate_design.md); provenance as published: ${sourceFields.join("; ")}.`,
    `Model: ${m.note}`,
    `Measured: silicon_ttft_ms and silicon_tpot_ms only (their statistic is not stated; taken as means). ITL = TPOT here: with fixed output lengths the pooled inter-token mean equals the per-request TPOT mean, and the table has no separate ITL.`,
    `Client (not recorded per row): aiconfigurator's own benchmark script (generator/config/backend_templates/benchmark/bench_run.sh.j2 at this commit) runs aiperf profile --concurrency c --num-requests 20·c --warmup-request-count 2·c --isl/--osl with stddev 0, ignore_eos, streaming, random synthetic prompts (seed 100); replayed as ${warm} warm-up requests (latencyExcluded) then ${n - warm} measured ones, closed loop at c = ${c}, every prompt unique; the measured requests start together once every warm-up request has finished (warmupSessions: AIPerf runs its warm-up and profiling phases one after the other and waits for all warm-up responses: ai-dynamo/aiperf@db4f6397:aiperf/timing/credit_issuing_strategy.py, "Wait for the credits to be returned before continuing to the next phase"; its docs/tutorials/warmup.md: "By default, AIPerf waits indefinitely for all warmup responses before starting profiling"). If the client cycled through a fixed pool of prompts (--num-dataset-entries; genai-perf's default pool is 100), later requests were prefix-cache hits on the real server and the replay overstates prefill work.`,
    s9EngineNote(x, version, versionKnown, m),
    s9ParallelismNote(x, tp, dp),
  ];
  const par = `tp${tp}${dp > 1 ? `dp${dp}` : ""}${ep > 1 ? `ep${ep}` : ""}`;
  return {
    id: `${sglang ? "s9sgl" : trt ? "s9trt" : "s9"}-${S9_GPUS[gpu]}-${m.tag}-${m.prec}-${par}-isl${isl}-osl${osl}-c${c}`,
    source: {
      name: sglang ? "S9-sglang" : trt ? "S9-trtllm" : "S9",
      repo: S9_REPO,
      path: S9_PATH,
      commit: S9_COMMIT,
    },
    // Held out: every H200 row (Llama-3.1-8B/70B FP8 dense and the Qwen3-235B-A22B MoE), as S3's
    // H200 runs, every DeepSeek row (a family nothing is fitted on) and every TensorRT-LLM row.
    split: gpu === "h200_sxm" || m.kind === "mla" || trt ? "heldout" : "fit",
    family: m.family,
    kind: m.kind,
    ...(sglang ? { servingEngine: "sglang" as const } : trt ? { servingEngine: "trtllm" as const } : {}),
    gpu,
    model: m.model,
    parallelism:
      m.kind === "dense-gqa"
        ? { tensor: tp, pipeline: x.pp }
        : {
            tensor: tp,
            pipeline: x.pp,
            ...(dp > 1 ? { attentionData: dp } : {}),
            moeTensor: x.moeTp,
            moeExpert: x.moeEp,
          },
    vllm: {
      version,
      engine: sglang ? "sglang" : trt ? "trtllm" : "V1",
      blockSize: trt ? 32 : 16,
      maxNumSeqs,
      maxNumBatchedTokens: trt ? trtTokenBudget(maxNumSeqs, isl) : maxNumSeqs + isl + 1500,
      chunkedPrefill: !trt,
      prefixCaching: !trt,
      gpuMemoryUtilization: trt ? 0.8 : 0.9,
      maxModelLen: isl + osl + 1500,
      kvCacheDtype: m.kvCacheDtype,
      numGpuBlocks: null,
      outputStreaming: "per-token",
      asyncScheduling: sglang || trt,
    },
    load: { regime: c <= 8 ? "light" : c <= 64 ? "moderate" : "heavy", concurrency: c },
    workload: {
      arrivalMs: null,
      poisson: null,
      closedLoopConcurrency: c,
      warmupSessions: warm,
      inputLen: new Array<number>(n).fill(isl),
      outputLen: new Array<number>(n).fill(osl),
    },
    measured: {
      completed: null,
      durationS: null,
      ttftMeanMs: r(Number(row["silicon_ttft_ms"])),
      ttftP99Ms: null,
      itlMeanMs: r(tpot),
      itlP99Ms: null,
      tpotMeanMs: r(tpot),
      e2eMeanMs: null,
      e2eP99Ms: null,
      outputThroughputTokS: null,
      requestThroughput: null,
      ttftMedianMs: null,
      itlMedianMs: null,
      tpotMedianMs: null,
      tpotP99Ms: null,
      e2eMedianMs: null,
      totalInputTokens: null,
      totalOutputTokens: null,
      basis: "aggregate-row",
      e2eScope: null,
    },
    latencyExcluded: Array.from({ length: warm }, (_, i) => i),
    notes: notes.join(" "),
  };
}

function s9Experiments(text: string, all: boolean): Fixture[] {
  const { usable, skipped } = s9Rows(text);
  const reasons = new Map<string, number>();
  for (const [x, why] of skipped) {
    const k = `${x.row["system"]} ${x.row["model_path"]} ${x.row["precision"] || "(bf16)"}: ${why.replace(/\d+ \(.*\)$/, "…")}`;
    reasons.set(k, (reasons.get(k) ?? 0) + 1);
  }
  for (const [k, n] of [...reasons].sort()) console.error(`S9 skipped ${n}\t${k}`);
  const picked = all ? usable : usable.filter(s9InSubset);
  console.error(`S9: ${usable.length} usable rows, ${skipped.length} skipped, ${picked.length} written`);
  return picked.map(s9Experiment);
}

// ---------------------------------------------------------------------------------------------
// Driver

function writeFixtures(out: string, fixtures: readonly Fixture[]): string[] {
  mkdirSync(out, { recursive: true });
  const ids = new Set<string>();
  const written: string[] = [];
  for (const f of fixtures) {
    if (ids.has(f.id)) throw new Error(`duplicate id ${f.id}`);
    ids.add(f.id);
    const file = join(out, `${f.id}.json`);
    writeFileSync(file, `${JSON.stringify(f)}\n`);
    written.push(file);
  }
  return written;
}

export function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      s1: { type: "string" },
      s2: { type: "string" },
      s3: { type: "string" },
      s9: { type: "string" },
      "s9-all": { type: "boolean", default: false },
      out: { type: "string" },
      clean: { type: "boolean", default: false },
    },
  });
  const out = resolve(values.out ?? DEFAULT_OUT);
  const fixtures: Fixture[] = [];
  let s1Inputs: number[] | null = null;
  let s1Fp8: number[] | null = null;
  const s1Llama: number[][] = [];
  if (values.s1 !== undefined) {
    const tree = new SourceTree(resolve(values.s1));
    for (const [rel, commit] of S1_FILES) {
      const f = s1Experiment(tree, rel, commit);
      fixtures.push(f);
      if (f.workload.inputLen.length === 320 && f.family.startsWith("llama")) {
        s1Llama.push(f.workload.outputLen);
        s1Inputs ??= f.workload.inputLen;
        if (f.family === "llama-3.1-70b-fp8" && f.parallelism.tensor === 8) s1Fp8 = f.workload.outputLen;
      }
    }
  }
  let s2Outputs: number[] | null = null;
  if (values.s2 !== undefined) {
    const { fixtures: s2, tp8qps1 } = s2Experiments(new SourceTree(resolve(values.s2)));
    fixtures.push(...s2);
    s2Outputs = nums(tp8qps1, "output_lens");
  }
  if (values.s3 !== undefined) {
    if (s1Inputs === null || s1Fp8 === null || s2Outputs === null)
      throw new Error("--s3 needs --s1 and --s2 (its lengths come from them)");
    fixtures.push(
      ...s3Experiments(new SourceTree(resolve(values.s3)), s1Inputs, { fp8: s1Fp8, all: s1Llama }, s2Outputs),
    );
  }
  if (values.s9 !== undefined) {
    const src = resolve(values.s9);
    const text = isGitDir(src) ? new SourceTree(src).read(S9_PATH, S9_COMMIT) : readFileSync(src, "utf8");
    fixtures.push(...s9Experiments(text, values["s9-all"]));
  }
  if (values.clean && existsSync(out))
    for (const f of readdirSync(out)) if (f.endsWith(".json")) rmSync(join(out, f));
  const written = writeFixtures(out, fixtures);
  if (written.length > 0)
    execFileSync(join(repoRoot, "node_modules", ".bin", "biome"), ["format", "--write", ...written], {
      stdio: "ignore",
    });
  for (const f of fixtures) console.log(`${f.id}\t${f.split}\t${f.load.regime}`);
  console.log(`wrote ${written.length} experiments to ${out}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2));
}
