/**
 * Derives the calibration runs of the fidelity benchmark (bench/fidelity/calibration/README.md)
 * from the public `inference-sim/training` repository's 16 H100 vLLM runs, as collected in the
 * workspace's calibration folder (default ../shared/calibration/inference-sim-training):
 *
 *   node --import tsx scripts/derive-calibration-data.ts [dir]
 *
 * Per run it writes bench/fidelity/calibration/<id>.json: the vLLM settings, the workload's shape,
 * the measured summary and stages as published, the exact arrivals (µs, delta-encoded) and the
 * prompt each request sent. inference-perf sent the run's `num_groups × prompts_per_group`
 * prompts in order, cycling by request index; the trace lists requests by arrival, in which a few
 * neighbours trade places. A request's prompt is therefore its index modulo the prompt count,
 * unless the prompt length the server counted names a neighbour (within 5 places): those
 * requests are listed in `promptExceptions`. A prompt's length is the one the server counted most
 * often for it; a request that failed before the server counted its prompt (0 tokens) sent its
 * cycle's prompt. `outcome` keeps the shape of the failures (the overloaded runs collapse: from the
 * first request that failed on, none succeeds; docs/fidelity.md "Calibration runs").
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { CalibrationRun, MeasuredStage } from "../bench/fidelity/calibration.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const sourceDir = resolve(
  process.argv[2] ?? join(repoRoot, "..", "shared", "calibration", "inference-sim-training"),
);
const outDir = join(repoRoot, "bench", "fidelity", "calibration");

interface SourceStage {
  count: number;
  failures: number;
  ttft_ms: { mean: number; median: number; p90: number; p99: number };
  e2e_ms: { mean: number; median: number; p90: number; p99: number };
  itl_ms_mean: number;
  osl_mean_client: number;
  isl_mean: number;
  throughput: { output_tokens_per_sec: number; requests_per_sec: number; input_tokens_per_sec: number };
}

interface SourceRun {
  id: string;
  model: string;
  fleetsim_hw: string;
  tp: number;
  vllm: {
    max_num_batched_tokens: number;
    max_num_seqs: number;
    max_model_len: number;
    gpu_memory_utilization: number;
    block_size: number;
    kv_blocks_gpu: number;
  };
  workload: {
    kind: string;
    num_groups: number;
    prompts_per_group: number;
    system_prompt_len: number;
    question_len: number;
    output_len: number;
    stages: { rate: number; duration_s: number }[];
    per_request_file: string;
  };
  measured: { summary: SourceStage; stages: SourceStage[] };
  sources: Record<string, string>;
}

interface SourceTrace {
  arrival_ms: number[];
  input_tokens: number[];
  client_output_tokens: number[];
  has_error: boolean[] | number[];
}

function measured(s: SourceStage): MeasuredStage {
  return {
    completed: s.count,
    failures: s.failures,
    ttftMeanMs: s.ttft_ms.mean,
    ttftMedianMs: s.ttft_ms.median,
    ttftP90Ms: s.ttft_ms.p90,
    ttftP99Ms: s.ttft_ms.p99,
    e2eMeanMs: s.e2e_ms.mean,
    e2eMedianMs: s.e2e_ms.median,
    e2eP90Ms: s.e2e_ms.p90,
    e2eP99Ms: s.e2e_ms.p99,
    itlMeanMs: s.itl_ms_mean,
    clientOutputMean: s.osl_mean_client,
    inputMean: s.isl_mean,
    outputThroughputTokS: s.throughput.output_tokens_per_sec,
    requestThroughput: s.throughput.requests_per_sec,
  };
}

/** The prompt each request sent, and each prompt's length (module comment). */
function promptsOf(inputTokens: readonly number[], prompts: number) {
  const lengths: number[] = [];
  for (let p = 0; p < prompts; p++) {
    const counts = new Map<number, number>();
    for (let i = p; i < inputTokens.length; i += prompts)
      if (inputTokens[i] > 0) counts.set(inputTokens[i], (counts.get(inputTokens[i]) ?? 0) + 1);
    let best = 0;
    let bestCount = 0;
    for (const [len, c] of [...counts].sort((a, b) => a[0] - b[0]))
      if (c > bestCount) [best, bestCount] = [len, c];
    if (bestCount === 0) throw new Error(`prompt ${p} never counted`);
    lengths.push(best);
  }
  const exceptions: [number, number][] = [];
  for (let i = 0; i < inputTokens.length; i++) {
    const len = inputTokens[i];
    const own = i % prompts;
    if (len === 0 || len === lengths[own]) continue;
    let found = -1;
    for (const d of [1, -1, 2, -2, 3, -3, 4, -4, 5, -5]) {
      const q = (((own + d) % prompts) + prompts) % prompts;
      if (lengths[q] === len) {
        found = q;
        break;
      }
    }
    if (found < 0) throw new Error(`request ${i}: ${len} tokens match no prompt near ${own}`);
    exceptions.push([i, found]);
  }
  return { lengths, exceptions };
}

const runs = JSON.parse(readFileSync(join(sourceDir, "runs.json"), "utf8")) as SourceRun[];
for (const r of runs) {
  const trace = JSON.parse(
    gunzipSync(readFileSync(join(sourceDir, r.workload.per_request_file))).toString("utf8"),
  ) as SourceTrace;
  const n = trace.arrival_ms.length;
  const stages = r.workload.stages.map((s, k) => ({
    rate: s.rate,
    durationS: s.duration_s,
    requests: r.measured.stages[k].count + r.measured.stages[k].failures,
  }));
  const staged = stages.reduce((a, s) => a + s.requests, 0);
  if (staged !== n) throw new Error(`${r.id}: stages hold ${staged} requests, the trace ${n}`);
  const prompts = r.workload.num_groups * r.workload.prompts_per_group;
  const { lengths, exceptions } = promptsOf(trace.input_tokens, prompts);
  // The trace lists requests by arrival: the first failure is the first index with an error.
  const failed = trace.has_error.map(Boolean);
  const first = failed.indexOf(true);
  const succeededAfter = first < 0 ? 0 : failed.slice(first + 1).filter((f) => !f).length;
  const arrivalUs: number[] = [];
  let prev = 0;
  for (const ms of trace.arrival_ms) {
    const us = Math.round(ms * 1000);
    arrivalUs.push(us - prev);
    prev = us;
  }
  const run: CalibrationRun = {
    id: r.id,
    source: {
      repo: "inference-sim/training",
      config: r.sources["exp-config"] ?? "",
      metrics: r.sources["metrics"] ?? "",
      perRequest: r.sources["per_request"] ?? "",
    },
    model: r.model,
    gpu: r.fleetsim_hw,
    tensor: r.tp,
    vllm: {
      maxNumBatchedTokens: r.vllm.max_num_batched_tokens,
      maxNumSeqs: r.vllm.max_num_seqs,
      maxModelLen: r.vllm.max_model_len,
      gpuMemoryUtilization: r.vllm.gpu_memory_utilization,
      blockSize: r.vllm.block_size,
      kvBlocks: r.vllm.kv_blocks_gpu,
    },
    workload: {
      kind: r.workload.kind,
      numGroups: r.workload.num_groups,
      promptsPerGroup: r.workload.prompts_per_group,
      systemPromptLen: r.workload.system_prompt_len,
      questionLen: r.workload.question_len,
      outputLen: r.workload.output_len,
      stages,
    },
    promptLengths: lengths,
    promptExceptions: exceptions,
    arrivalUsDeltas: arrivalUs,
    outcome: { firstFailure: first < 0 ? null : first, succeededAfterFirstFailure: succeededAfter },
    measured: { summary: measured(r.measured.summary), stages: r.measured.stages.map(measured) },
  };
  const file = join(outDir, `${r.id}.json`);
  // One line per section: the arrays stay on one line each (small diffs, Biome leaves them).
  writeFileSync(file, `${JSON.stringify(run)}\n`);
  console.log(`wrote ${file}: ${n} requests, ${exceptions.length} prompt exceptions`);
}
