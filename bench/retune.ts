/**
 * `node --import tsx bench/retune.ts`: wall time of a whole retune run (seed 000 Scenario 1:
 * KV-router retune in retune-only mode, 600 s windows, a 1 × 3 × 2 router grid) with
 * `planner.retune.max_parallel` 1 and then 2, alternating `--rounds` times in the same run, and the
 * ratio of the medians. Each window's sweep process count is printed too: the sweep must start
 * `max_parallel` processes.
 *
 * The trace is the FAST'25 conversation trace converted as the seed does it (`fleetsim convert
 * --split-at-seconds 1200`): the first 20 minutes become the history file, the rest is replayed.
 * The converted files live in a temporary directory removed at exit.
 *
 * Usage: node --import tsx bench/retune.ts [--trace PATH] [--rounds 2]
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load.js";
import { runPrediction } from "../src/pipeline/index.js";
import { convertMooncakeToDynamo, DEFAULT_ORIGIN_UNIX_MS } from "../src/traffic/dynamoTraceConvert.js";

const { values } = parseArgs({
  options: {
    trace: { type: "string", default: resolve("../shared/traces/mooncake-fast25/conversation_trace.jsonl") },
    rounds: { type: "string", default: "2" },
  },
});
const rounds = Number(values.rounds);

const CONFIG = `traffic:
  source: {type: trace, format: dynamo, paths: [replay.jsonl]}
  load: {type: trace_timestamps}
engine:
  mode: aggregated
  model: nvidia/Llama-3.1-8B-Instruct-FP8
  hardware: h200_sxm
  backend: vllm
  context_length: max
  workers:
    aggregated:
      parallelism: {replicas: 3, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
      kv_cache: {block_size: 64, prefix_caching: true, capacity: {type: default, memory_fraction: 0.9}}
      timing: {type: default}
      startup_seconds: 0
router: {policy: kv_router, temperature: 1.0}
planner:
  policy: enabled
  enable_load_scaling: false
  enable_throughput_scaling: false
  retune:
    interval_seconds: 600
    grace_seconds: 60
    max_parallel: 1
    objective: Goodput
    router:
      overlap_score_credit: {choices: [1.0]}
      prefill_load_scale: {choices: [0.5, 1.0, 2.0]}
      temperature: {choices: [0.0, 0.5]}
evaluation:
  sla: {ttft_ms: 1500, itl_ms: 50}
`;

const dir = await mkdtemp(join(tmpdir(), "fleetsim-bench-retune-"));
try {
  const converted = await convertMooncakeToDynamo({
    input: values.trace,
    traceBlockSize: 512,
    originUnixMs: DEFAULT_ORIGIN_UNIX_MS,
    target: { splitAtMs: 1_200_000, history: join(dir, "history.jsonl"), replay: join(dir, "replay.jsonl") },
  });
  console.log(converted.files.map((f) => `${f.requests} requests → ${f.path}`).join("\n"));
  const configPath = join(dir, "retune.yaml");
  await writeFile(configPath, CONFIG);

  const timed = async (maxParallel: number): Promise<number> => {
    const spec = loadConfig({
      configPath,
      sets: [`planner.retune.max_parallel=${maxParallel}`],
      stack: "dynamo",
    });
    const started = performance.now();
    const out = await runPrediction(spec, { capturePerRequest: false });
    const wallMs = performance.now() - started;
    const sweeps = out.retuneSweeps ?? [];
    const processes = sweeps.map((s) => s.processesStarted).join("/");
    const sweepS = sweeps.reduce((a, s) => a + s.wallS, 0);
    const goodput = out.prediction.summary.goodput_request_throughput_rps;
    console.log(
      `max_parallel ${maxParallel}: ${(wallMs / 1000).toFixed(2)} s run wall, ${sweeps.length} sweeps ` +
        `(${sweepS.toFixed(2)} s, processes ${processes}), goodput ${Number(goodput).toFixed(3)} req/s`,
    );
    const wrong = sweeps.filter((s) => s.processesStarted !== Math.min(maxParallel, s.jobs));
    if (wrong.length > 0) throw new Error(`bench: a sweep started ${wrong[0].processesStarted} processes`);
    return wallMs;
  };

  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const walls: Record<1 | 2, number[]> = { 1: [], 2: [] };
  for (let r = 0; r < rounds; r++) {
    walls[1].push(await timed(1));
    walls[2].push(await timed(2));
  }
  const [one, two] = [median(walls[1]), median(walls[2])];
  console.log(
    `retune run: median wall ${(one / 1000).toFixed(2)} s (max_parallel 1) vs ${(two / 1000).toFixed(2)} s ` +
      `(max_parallel 2); speed-up ${(one / two).toFixed(2)}×`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
