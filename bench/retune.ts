/**
 * `npm run bench:retune` (builds first): a whole retune run (seed 000 Scenario 1: KV-router retune
 * in retune-only mode, 600 s windows, a 1 × 3 × 2 router grid) with `planner.retune.max_parallel`
 * 1 and 2, each run its own `node dist/cli/bin.js predict` process, measured by its **CPU time
 * including its sweep workers** (user + system of the process tree: the kernel adds a reaped
 * child's CPU to its parent's `cutime`/`cstime`, read from /proc/self/stat around each run) and
 * by its wall time. Rounds alternate the order of 1 and 2; the table gives the min and the median
 * over the rounds and the 2-vs-1 ratios of the medians (docs/performance.md).
 *
 * Every run must write the same prediction.json but for the host-time keys (the summary's and
 * each retune event's `sweep_wall_s`): the bench fails otherwise, so it also checks that the
 * decisions do not depend on `max_parallel` (or, with several `--bin`, on the build).
 *
 * The trace is the FAST'25 conversation trace converted as the seed does it (`fleetsim convert
 * --split-at-seconds 1200`): the first 20 minutes become the history file, the rest is replayed.
 * The converted files live in a temporary directory removed at exit.
 *
 * Usage: npm run bench:retune -- [--trace PATH] [--rounds 3] [--cpu-limit N] [--bin PATH/cli/bin.js …]
 *   --cpu-limit  execution.resources.cpu_limit of every run (default: the host's CPU count; the
 *          config's own default, the CPUs less one, leaves a 2-CPU host one core for both workers)
 *   --bin  the CLI to run (default this checkout's dist/cli/bin.js); several are interleaved round
 *          by round, e.g. a build of the base commit and this one (before / after).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { HOST_TIME_KEYS } from "../src/metrics/summary.js";
import { convertMooncakeToDynamo, DEFAULT_ORIGIN_UNIX_MS } from "../src/traffic/dynamo/convert.js";
import { DEFAULT_TRACE } from "./sharedTrace.js";

const ROOT = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    trace: { type: "string", default: DEFAULT_TRACE },
    rounds: { type: "string", default: "3" },
    bin: { type: "string", multiple: true },
    "cpu-limit": { type: "string" },
  },
});
const rounds = Number(values.rounds);
// `execution.resources.cpu_limit` of every run. Its default (`auto`: the host's CPUs less one,
// seed 000 "Size the Run") pins a 2-CPU host's run and its workers to one CPU, where a second
// worker cannot help; the goal is measured on two free cores, so the default here is them all.
const cpuLimit = Number(values["cpu-limit"] ?? availableParallelism());
if (!Number.isInteger(cpuLimit) || cpuLimit < 1) {
  console.error("bench: --cpu-limit must be a positive integer");
  process.exit(2);
}
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("bench: --rounds must be a positive integer");
  process.exit(2);
}
const bins = (values.bin ?? [join(ROOT, "dist", "cli", "bin.js")]).map((b) => resolve(b));
for (const b of bins) {
  if (!existsSync(b)) {
    console.error(`bench: ${b} is missing: run \`npm run build\` (npm run bench:retune does)`);
    process.exit(2);
  }
}
if (!existsSync("/proc/self/stat")) {
  console.error("bench: needs /proc/self/stat (Linux) to count the sweep workers' CPU");
  process.exit(2);
}

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

/** CPU seconds of this process's reaped descendants (cutime + cstime, fields 16–17 of stat). */
function childrenCpuS(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticksPerS = 100; // USER_HZ, 100 on every Linux ABI Node supports
  return (Number(fields[13]) + Number(fields[14])) / ticksPerS;
}

/**
 * prediction.json without its host-time keys (they measure the machine, not the simulation) and
 * without the `max_parallel` the run block echoes (the one setting the runs differ in).
 */
function simulated(path: string): string {
  const doc = JSON.parse(readFileSync(path, "utf8")) as {
    summary: Record<string, unknown>;
    run: { planner?: { retune?: Record<string, unknown> } };
    planner?: { retune_events?: Record<string, unknown>[] };
  };
  for (const k of HOST_TIME_KEYS) delete doc.summary[k];
  for (const e of doc.planner?.retune_events ?? []) delete e["sweep_wall_s"];
  delete doc.run.planner?.retune?.["max_parallel"];
  return JSON.stringify(doc);
}

/** The dotted path of the first difference between two JSON texts, with both values. */
function firstDifference(a: string, b: string): string {
  const walk = (x: unknown, y: unknown, path: string): string | null => {
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) {
      return x === y ? null : `${path}: ${JSON.stringify(x)} vs ${JSON.stringify(y)}`;
    }
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const k of keys) {
      const d = walk((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k], `${path}.${k}`);
      if (d !== null) return d;
    }
    return null;
  };
  return walk(JSON.parse(a), JSON.parse(b), "$") ?? "(none)";
}

interface Run {
  readonly wallS: number;
  readonly cpuS: number;
}

const dir = mkdtempSync(join(tmpdir(), "fleetsim-bench-retune-"));
try {
  const converted = await convertMooncakeToDynamo({
    input: resolve(values.trace),
    traceBlockSize: 512,
    originUnixMs: DEFAULT_ORIGIN_UNIX_MS,
    target: { splitAtMs: 1_200_000, history: join(dir, "history.jsonl"), replay: join(dir, "replay.jsonl") },
  });
  console.log(converted.files.map((f) => `${f.requests} requests → ${f.path}`).join("\n"));
  const configPath = join(dir, "retune.yaml");
  writeFileSync(configPath, CONFIG);

  let reference: string | null = null;
  const measure = (bin: string, maxParallel: number): Run => {
    const out = join(dir, "out");
    const args = [bin, "predict", "--stack", "dynamo", "-c", configPath, "--set"];
    args.push(
      `planner.retune.max_parallel=${maxParallel}`,
      "--set",
      `execution.resources={cpu_limit: ${cpuLimit}}`,
    );
    args.push("--output-dir", out, "--overwrite");
    args.push("--format", "json", "--progress", "none");
    const cpu0 = childrenCpuS();
    const t0 = performance.now();
    const run = spawnSync(process.execPath, args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    const wallS = (performance.now() - t0) / 1000;
    const cpuS = childrenCpuS() - cpu0;
    if (run.status !== 0) throw new Error(`bench: ${bin} exited ${run.status}: ${run.stderr.toString()}`);
    const doc = simulated(join(out, "prediction.json"));
    reference ??= doc;
    if (doc !== reference) {
      const where = firstDifference(reference, doc);
      throw new Error(`bench: ${bin} max_parallel ${maxParallel} wrote another prediction (${where})`);
    }
    console.log(`${bin} max_parallel ${maxParallel}: ${wallS.toFixed(2)} s wall, ${cpuS.toFixed(2)} s CPU`);
    return { wallS, cpuS };
  };

  const runs = new Map<string, Run[]>();
  const key = (bin: string, mp: number): string => `${bin}\t${mp}`;
  for (let r = 0; r < rounds; r++) {
    for (const bin of bins) {
      // Alternating the order spreads a slow spell of the shared machine over both settings.
      for (const mp of r % 2 === 0 ? [1, 2] : [2, 1]) {
        const list = runs.get(key(bin, mp)) ?? [];
        list.push(measure(bin, mp));
        runs.set(key(bin, mp), list);
      }
    }
  }

  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const stat = (bin: string, mp: number, f: (r: Run) => number): { min: number; med: number } => {
    const xs = (runs.get(key(bin, mp)) ?? []).map(f);
    return { min: Math.min(...xs), med: median(xs) };
  };
  console.log(`\npredictions identical across every run: yes (${rounds} rounds)`);
  console.log("bin  max_parallel  wall s min  wall s med  CPU s min  CPU s med");
  for (const bin of bins) {
    for (const mp of [1, 2]) {
      const w = stat(bin, mp, (r) => r.wallS);
      const c = stat(bin, mp, (r) => r.cpuS);
      console.log(
        `${bin}  ${mp}  ${w.min.toFixed(2)}  ${w.med.toFixed(2)}  ${c.min.toFixed(2)}  ${c.med.toFixed(2)}`,
      );
    }
    const [w1, w2] = [1, 2].map((mp) => stat(bin, mp, (r) => r.wallS).med);
    const [c1, c2] = [1, 2].map((mp) => stat(bin, mp, (r) => r.cpuS).med);
    console.log(
      `${bin}: max_parallel 2 vs 1: wall ${(w2 / w1).toFixed(2)}× (speed-up ${(w1 / w2).toFixed(2)}×), ` +
        `CPU ${(c2 / c1).toFixed(2)}×`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
