/**
 * `npm run bench` (builds first): the rows of issue 16's and issue 42's tables, each measured by the CPU time
 * (user + system) of a whole `node dist/cli/bin.js predict` process, as a ratio to a floor measured
 * in the same run (a read + JSON.parse of every line of the trace, in this process), with the
 * child's peak RSS and the goal next to it (docs/performance.md keeps the figures and the method).
 *
 * Each row is its own process (bench/childUsage.mjs, preloaded, writes its getrusage at exit), so
 * module loading, the timing tables and the output files are part of its cost, as for a user.
 * Rows are interleaved round by round with the floor; min and median are over the rounds.
 * `exec → first event` is the CPU of the examples/aggregated.yaml run up to the replay's first
 * event (FLEETSIM_STARTUP_PROBE, docs/cli.md). The runs share a V8 code cache folder of their own
 * (FLEETSIM_COMPILE_CACHE, cli/codeCache.ts) that an untimed first run fills, as a user's earlier
 * runs would; `exec → first event, cold` starts each run with an empty one.
 *
 * Usage: npm run bench -- [--rounds R] [--trace PATH] [--only NAME,…] [--with-1m] [--bin PATH]
 *   --bin      the fleetsim executable to measure (default: this checkout's dist/cli/bin.js), e.g.
 *              the build of an earlier commit in a git worktree, for a before/after in one session
 *   --with-1m  also the 1 M-request row: the trace repeated one hour apart to 1,000,000 rows
 *              (generated into a temporary folder, deterministic), 4 workers, no Planner, one round.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { CACHE_ENV } from "../src/cli/codeCache.js";
import { STARTUP_PROBE_ENV, STARTUP_PROBE_PREFIX, type StartupProbe } from "../src/cli/startupProbe.js";
import { readJsonlLines } from "../src/traffic/jsonlReader.js";
import { predictArgs } from "./predictArgs.js";
import { writeRepeatedTrace } from "./repeatedTrace.js";
import { DEFAULT_TRACE } from "./sharedTrace.js";

const ROOT = resolve(import.meta.dirname, "..");

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    trace: { type: "string", default: DEFAULT_TRACE },
    only: { type: "string" },
    "with-1m": { type: "boolean", default: false },
    bin: { type: "string" },
  },
});
const trace = resolve(values.trace);
if (!existsSync(trace)) {
  console.error(`bench: trace not found: ${trace} (expected the shared data folder beside the repo)`);
  process.exit(2);
}
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("bench: --rounds must be a positive integer");
  process.exit(2);
}
const BIN = values.bin === undefined ? join(ROOT, "dist", "cli", "bin.js") : resolve(values.bin);
if (!existsSync(BIN)) {
  console.error("bench: dist/cli/bin.js is missing: run `npm run build` (npm run bench does)");
  process.exit(2);
}
const PRELOAD = pathToFileURL(join(ROOT, "bench", "childUsage.mjs")).href;
const dir = mkdtempSync(join(tmpdir(), "fleetsim-bench-"));

/** A seed walkthrough config with the trace path made absolute. */
function seed(file: string, tracePath = trace): string {
  const yaml = readFileSync(join(ROOT, "examples", file), "utf8").replace(
    /paths: \[[^\]]*\]/,
    `paths: [${JSON.stringify(tracePath)}]`,
  );
  const path = join(dir, `${file}-${tracePath === trace ? "trace" : "1m"}.yaml`);
  writeFileSync(path, yaml);
  return path;
}

const SYNTHETIC = `traffic:
  source: { type: synthetic, input_tokens: 1024, output_tokens: 128 }
  load: { type: concurrency, concurrency: 64 }
  stop: { requests: 131072 }
engine:
  mode: aggregated
  model: Qwen/Qwen3-32B
  hardware: h200_sxm
  backend: vllm
  workers:
    aggregated:
      parallelism: { replicas: 1, tensor: 1 }
      scheduler: { max_batched_tokens: 8192, max_sequences: 256 }
      kv_cache: { block_size: 64, prefix_caching: true, capacity: { type: default, memory_fraction: 0.9 } }
      timing: { type: default }
`;

type Goal =
  | { readonly kind: "none" }
  | { readonly kind: "speed"; readonly atLeast: number }
  | { readonly kind: "cpu"; readonly atMostS: number }
  | { readonly kind: "rss"; readonly atMostBytes: number };

interface Case {
  readonly name: string;
  /** Config file (prepared lazily: the 1M trace is generated only when its row runs). */
  readonly config: () => Promise<string> | string;
  readonly sets?: readonly string[];
  /** The row's figure is the CPU up to the first simulated event, not the whole process. */
  readonly startup?: boolean;
  /** Each run starts with an empty V8 code cache (cli/codeCache.ts): a first run after install. */
  readonly coldCache?: boolean;
  /** The project's goal for the row (issue 16), and the milestone of the current issue (42). */
  readonly goal: Goal;
  readonly goalText: string;
  readonly milestone: Goal;
  readonly milestoneText: string;
  readonly oneRound?: boolean;
}

const NONE: Goal = { kind: "none" };

const NO_PLANNER = "planner={policy: disabled}";
const CASES: Case[] = [
  {
    name: "seed agg + Planner (sla)",
    config: () => seed("seed-aggregated.yaml"),
    goal: { kind: "speed", atLeast: 15_000 },
    goalText: ">= 15,000x",
    milestone: { kind: "speed", atLeast: 5_000 },
    milestoneText: ">= 5,000x",
  },
  {
    name: "agg polynomial, no Planner",
    config: () => seed("seed-aggregated.yaml"),
    sets: [NO_PLANNER, "engine.workers.aggregated.timing={type: polynomial}"],
    goal: { kind: "speed", atLeast: 25_000 },
    goalText: ">= 25,000x",
    milestone: { kind: "speed", atLeast: 8_000 },
    milestoneText: ">= 8,000x",
  },
  {
    name: "disagg + Planner",
    config: () => seed("seed-disaggregated.yaml"),
    goal: { kind: "speed", atLeast: 10_000 },
    goalText: ">= 10,000x",
    milestone: { kind: "speed", atLeast: 4_000 },
    milestoneText: ">= 4,000x",
  },
  {
    name: "synthetic 131,072 Qwen3-32B",
    config: () => {
      const path = join(dir, "synthetic.yaml");
      writeFileSync(path, SYNTHETIC);
      return path;
    },
    goal: { kind: "cpu", atMostS: 0.6 },
    goalText: "<= 0.6 s CPU",
    milestone: { kind: "cpu", atMostS: 0.6 },
    milestoneText: "<= 0.6 s CPU",
  },
  {
    name: "exec -> first event",
    config: () => join(ROOT, "examples", "aggregated.yaml"),
    startup: true,
    goal: { kind: "cpu", atMostS: 0.15 },
    goalText: "<= 0.15 s CPU",
    milestone: { kind: "cpu", atMostS: 0.15 },
    milestoneText: "<= 0.15 s CPU",
  },
  {
    // The first run of a command after an install or upgrade: no code cache yet, and this run
    // writes it at exit (after the first event, so not in this figure).
    name: "exec -> first event, cold",
    config: () => join(ROOT, "examples", "aggregated.yaml"),
    startup: true,
    coldCache: true,
    goal: NONE,
    goalText: "-",
    milestone: NONE,
    milestoneText: "-",
  },
  {
    // The same process to its end: work deferred past the first event (tables built on first
    // query) shows here.
    name: "sample trace, whole run",
    config: () => join(ROOT, "examples", "aggregated.yaml"),
    goal: NONE,
    goalText: "-",
    milestone: NONE,
    milestoneText: "-",
  },
  {
    // Issue 42's memory row: the conversation trace 21 times over, one hour apart.
    name: "252,651 requests, 4 workers",
    config: async () => {
      const path = join(dir, "conversation-x21.jsonl");
      if (!existsSync(path)) await writeRepeatedTrace(trace, path, 21 * 12_031);
      return seed("seed-aggregated.yaml", path);
    },
    sets: [
      NO_PLANNER,
      "engine.workers.aggregated.parallelism.replicas=4",
      "traffic.stop.max_virtual_time_seconds=80000",
      "execution.resources={initialization_timeout_seconds: 600, shutdown_timeout_seconds: 120}",
    ],
    goal: { kind: "rss", atMostBytes: 400 * 2 ** 20 },
    goalText: "<= 400 MiB RSS",
    milestone: { kind: "rss", atMostBytes: 400 * 2 ** 20 },
    milestoneText: "<= 400 MiB RSS",
    oneRound: true,
  },
];
if (values["with-1m"]) {
  CASES.push({
    name: "1M requests, 4 workers",
    config: async () => {
      const path = join(dir, "conversation-1m.jsonl");
      if (!existsSync(path)) await writeRepeatedTrace(trace, path, 1_000_000);
      return seed("seed-aggregated.yaml", path);
    },
    sets: [
      NO_PLANNER,
      "engine.workers.aggregated.parallelism.replicas=4",
      "traffic.stop.max_virtual_time_seconds=400000",
      "execution.resources={initialization_timeout_seconds: 600, shutdown_timeout_seconds: 120}",
    ],
    goal: { kind: "rss", atMostBytes: 1e9 },
    goalText: "<= 1 GB RSS, linear CPU",
    milestone: { kind: "rss", atMostBytes: 400 * 2 ** 20 },
    milestoneText: "<= 400 MiB RSS",
    oneRound: true,
  });
}
const only = values.only?.split(",").map((s) => s.trim()) ?? null;
const selected = CASES.filter((c) => only === null || only.some((o) => c.name.includes(o)));

interface Sample {
  readonly cpuMs: number;
  /** Garbage-collection pauses on the main thread (bench/childUsage.mjs); null for a startup row. */
  readonly gcMs: number | null;
  /** CPU of the process's other threads: V8's compiler and GC helpers (bench/childUsage.mjs); null for a startup row or without /proc. */
  readonly backgroundMs: number | null;
  readonly wallMs: number;
  readonly maxRssBytes: number;
  readonly simulatedS: number | null;
  readonly requests: number | null;
}

// The bench's own V8 code cache folder (cli/codeCache.ts), filled by an untimed first run, so
// every timed row but the cold one measures a start-up that finds its cache, as a user's
// second and later runs do.
const CODE_CACHE = join(dir, "v8cache");
let coldRuns = 0;

/** One `fleetsim predict` process; its own rusage (or, for a startup row, its probe). */
function runCase(c: Case, config: string): Sample {
  const usageFile = join(dir, "usage.json");
  rmSync(usageFile, { force: true });
  const out = join(dir, "out");
  const argv = ["--import", PRELOAD, ...predictArgs(BIN, config, out, c.sets ?? [])];
  const r = spawnSync(process.execPath, argv, {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 1 << 26,
    env: {
      ...process.env,
      FLEETSIM_BENCH_USAGE: usageFile,
      [STARTUP_PROBE_ENV]: c.startup ? "1" : "",
      [CACHE_ENV]: c.coldCache ? join(dir, `v8cache-cold-${coldRuns++}`) : CODE_CACHE,
    },
  });
  if (r.status !== 0) {
    throw new Error(`${c.name}: exit ${r.status}: ${r.stderr.split("\n").slice(0, 4).join(" | ")}`);
  }
  const usage = JSON.parse(readFileSync(usageFile, "utf8")) as StartupProbe & {
    readonly gc_ms?: number;
    readonly background_cpu_ms?: number | null;
  };
  const summary = JSON.parse(r.stdout) as { duration_ms: number; num_requests: number };
  if (c.startup) {
    const line = r.stderr.split("\n").find((l) => l.startsWith(STARTUP_PROBE_PREFIX));
    if (line === undefined) throw new Error(`${c.name}: no ${STARTUP_PROBE_ENV} line on stderr`);
    const probe = JSON.parse(line.slice(STARTUP_PROBE_PREFIX.length)) as StartupProbe;
    return {
      cpuMs: probe.cpu_ms,
      gcMs: null,
      backgroundMs: null,
      wallMs: probe.wall_ms,
      maxRssBytes: probe.max_rss_bytes,
      simulatedS: null,
      requests: summary.num_requests,
    };
  }
  return {
    cpuMs: usage.cpu_ms,
    gcMs: usage.gc_ms ?? null,
    backgroundMs: usage.background_cpu_ms ?? null,
    wallMs: usage.wall_ms,
    maxRssBytes: usage.max_rss_bytes,
    simulatedS: summary.duration_ms / 1000,
    requests: summary.num_requests,
  };
}

/** The floor: CPU of reading the trace and parsing each line, in this process. */
async function floorMs(): Promise<number> {
  const t0 = process.cpuUsage();
  let rows = 0;
  await readJsonlLines(trace, (line) => {
    JSON.parse(line);
    rows++;
  });
  if (rows === 0) throw new Error("empty trace");
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

const configs = new Map<string, string>();
const samples = new Map<string, Sample[]>(selected.map((c) => [c.name, []]));
const floors: number[] = [];
try {
  const sample = CASES.find((c) => c.name === "sample trace, whole run")!;
  runCase(sample, await sample.config()); // untimed: writes the code cache
  for (let i = 0; i < rounds; i++) {
    floors.push(await floorMs());
    for (const c of selected) {
      if (c.oneRound && i > 0) continue;
      if (!configs.has(c.name)) configs.set(c.name, await c.config());
      samples.get(c.name)!.push(runCase(c, configs.get(c.name)!));
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);
const median = (xs: readonly number[]): number => sorted(xs)[Math.floor((xs.length - 1) / 2)];
const min = (xs: readonly number[]): number => sorted(xs)[0];
const floor = median(floors);
const int = (n: number): string => Math.round(n).toLocaleString("en-US");

/** The median share of a row's CPU spent in garbage-collection pauses, in %, or "-" (startup rows). */
function gcShare(xs: readonly Sample[]): string {
  const shares = xs.filter((x) => x.gcMs !== null && x.cpuMs > 0).map((x) => (100 * x.gcMs!) / x.cpuMs);
  return shares.length === 0 ? "-" : median(shares).toFixed(1);
}

/**
 * The median share of a row's CPU on the process's other threads, in %, or "-": V8 compiles hot
 * functions there (TurboFan), and the collector marks and sweeps there (docs/performance.md).
 */
function backgroundShare(xs: readonly Sample[]): string {
  const shares = xs
    .filter((x) => x.backgroundMs !== null && x.cpuMs > 0)
    .map((x) => (100 * x.backgroundMs!) / x.cpuMs);
  return shares.length === 0 ? "-" : median(shares).toFixed(0);
}

const header = [
  ["case", 28],
  ["requests", 9],
  ["sim s", 9],
  ["CPU s min", 10],
  ["CPU s med", 10],
  ["speed", 9],
  ["x floor", 8],
  ["us/req", 7],
  ["RSS MiB", 8],
  ["GC %", 5],
  ["bg %", 5],
  ["issue 42", 16],
  ["met", 4],
  ["goal", 24],
  ["met", 4],
] as const;
const row = (cells: readonly string[]): string =>
  cells.map((s, k) => (k === 0 || k >= 11 ? s.padEnd(header[k][1]) : s.padStart(header[k][1]))).join(" ");

console.log(`trace: ${trace}\nfleetsim: ${BIN}`);
console.log(
  `floor (read + JSON.parse of every line, CPU): min ${min(floors).toFixed(0)} ms, median ${floor.toFixed(0)} ms over ${rounds} rounds`,
);
console.log(
  `CPU = user + system of the whole predict process${rounds > 1 ? "; speed and x floor from the median" : ""}\n`,
);
console.log(row(header.map(([h]) => h)));
for (const c of selected) {
  const xs = samples.get(c.name)!;
  const cpu = xs.map((x) => x.cpuMs);
  const med = median(cpu);
  const simS = xs[0].simulatedS;
  const speed = simS === null ? null : simS / (med / 1000);
  const rss = Math.max(...xs.map((x) => x.maxRssBytes));
  const meets = (g: Goal): boolean | null =>
    g.kind === "none"
      ? null
      : g.kind === "speed"
        ? speed !== null && speed >= g.atLeast
        : g.kind === "cpu"
          ? med / 1000 <= g.atMostS
          : rss <= g.atMostBytes;
  const yesNo = (m: boolean | null): string => (m === null ? "-" : m ? "yes" : "no");
  console.log(
    row([
      c.name,
      xs[0].requests === null ? "-" : int(xs[0].requests),
      simS === null ? "-" : simS.toFixed(0),
      (min(cpu) / 1000).toFixed(3),
      (med / 1000).toFixed(3),
      speed === null ? "-" : `${int(speed)}x`,
      (med / floor).toFixed(1),
      c.startup || xs[0].requests === null ? "-" : (med / xs[0].requests / 1e-3).toFixed(0),
      (rss / 2 ** 20).toFixed(0),
      gcShare(xs),
      backgroundShare(xs),
      c.milestoneText,
      yesNo(meets(c.milestone)),
      c.goalText,
      yesNo(meets(c.goal)),
    ]),
  );
}
