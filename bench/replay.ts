/**
 * `npm run bench`: replays the FAST'25 conversation trace (12,031 requests, one hour) through the
 * seed walkthrough deployments (nvidia/Llama-3.1-8B-Instruct-FP8 on h200_sxm, default KV capacity)
 * and prints, per case, the speed factor (simulated / wall) and the replay's wall time relative to
 * a parse-only pass over the same file. All cases run in one process, interleaved round by round,
 * so the ratios between them are meaningful on a noisy machine; absolute times are not.
 *
 * The planner case is the seed as written (Planner enabled, ticks recorded, report serialized);
 * every other case runs with `planner: {policy: disabled}`.
 *
 * Usage: node --import tsx bench/replay.ts [--rounds R] [--trace PATH]
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load.js";
import type { RunSpec } from "../src/config/runSpec.js";
import { buildSummary } from "../src/metrics/summary.js";
import { loadWorkload } from "../src/pipeline/index.js";
import { createRoleTimings } from "../src/pipeline/timings.js";
import { createPlanner } from "../src/sim/plannerSetup.js";
import { Replay } from "../src/sim/replay.js";
import { readJsonlLines } from "../src/traffic/jsonlReader.js";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    trace: { type: "string", default: resolve("../shared/traces/mooncake-fast25/conversation_trace.jsonl") },
  },
});
const trace = resolve(values.trace);
if (!existsSync(trace)) {
  console.error(`bench: trace not found: ${trace} (expected the shared data folder beside the repo)`);
  process.exit(2);
}

/** Fixed replicas unless a case turns the Planner back on. */
function spec(config: string, ...sets: string[]): RunSpec {
  return loadConfig({
    configPath: config,
    sets: [`traffic.source.paths=[${JSON.stringify(trace)}]`, "planner={policy: disabled}", ...sets],
    stack: "dynamo",
  });
}

function withPlanner(config: string): RunSpec {
  return loadConfig({
    configPath: config,
    sets: [`traffic.source.paths=[${JSON.stringify(trace)}]`],
    stack: "dynamo",
  });
}

const AGG = "examples/seed-aggregated.yaml";
const DISAGG = "examples/seed-disaggregated.yaml";
const CASES: Record<string, RunSpec> = {
  "agg 2w polynomial": spec(AGG, "engine.workers.aggregated.timing={type: polynomial}"),
  "agg 2w default": spec(AGG),
  "disagg 1P+1D default": spec(DISAGG),
  "agg 4w round_robin": spec(AGG, "engine.workers.aggregated.parallelism.replicas=4"),
  "agg 4w kv_router": spec(
    AGG,
    "engine.workers.aggregated.parallelism.replicas=4",
    "router={policy: kv_router}",
  ),
  "agg 2w planner": withPlanner(AGG),
};

async function parseOnly(): Promise<number> {
  const t0 = performance.now();
  let rows = 0;
  await readJsonlLines(trace, (line) => {
    JSON.parse(line);
    rows++;
  });
  if (rows === 0) throw new Error("empty trace");
  return performance.now() - t0;
}

interface Sample {
  replayMs: number;
  loadMs: number;
  simS: number;
  requests: number;
}

async function replayOnce(s: RunSpec): Promise<Sample> {
  const t0 = performance.now();
  const [table, timings] = await Promise.all([loadWorkload(s), createRoleTimings(s.engine)]);
  const planner = await createPlanner(s, timings);
  const t1 = performance.now();
  const result = new Replay(s, table, timings, { capturePerRequest: false, scaling: planner }).runSync();
  // The planner report is part of the planner-enabled run's cost.
  if (planner !== null) JSON.stringify(planner.report(result.lifecycleOperations));
  const t2 = performance.now();
  const summary = buildSummary(result, s.sla);
  return {
    replayMs: t2 - t1,
    loadMs: t1 - t0,
    simS: summary.duration_ms / 1000,
    requests: summary.num_requests,
  };
}

const rounds = Number(values.rounds);
const samples = new Map<string, Sample[]>(Object.keys(CASES).map((k) => [k, []]));
const parses: number[] = [];
for (let i = 0; i < rounds; i++) {
  parses.push(await parseOnly());
  for (const [name, s] of Object.entries(CASES)) samples.get(name)!.push(await replayOnce(s));
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const parseMs = median(parses);
const wall = new Map<string, number>();
console.log(`trace: ${trace}`);
console.log(`parse-only pass: ${parseMs.toFixed(0)} ms (median of ${rounds})\n`);
console.log(
  `${"case".padEnd(22)} ${"requests".padStart(8)} ${"simulated s".padStart(11)} ${"wall s".padStart(7)} ${"load s".padStart(7)} ${"speed".padStart(8)} ${"replay/parse".padStart(12)}`,
);
for (const [name, xs] of samples) {
  const replayMs = median(xs.map((x) => x.replayMs));
  wall.set(name, replayMs);
  const simS = xs[0].simS;
  console.log(
    `${name.padEnd(22)} ${String(xs[0].requests).padStart(8)} ${simS.toFixed(1).padStart(11)} ${(replayMs / 1000).toFixed(3).padStart(7)} ${(median(xs.map((x) => x.loadMs)) / 1000).toFixed(3).padStart(7)} ${`${(simS / (replayMs / 1000)).toFixed(0)}x`.padStart(8)} ${(replayMs / parseMs).toFixed(1).padStart(12)}`,
  );
}
const ratio = (a: string, b: string): string => (wall.get(a)! / wall.get(b)!).toFixed(2);
console.log(`\ndefault / polynomial timing (agg 2w):  ${ratio("agg 2w default", "agg 2w polynomial")}`);
console.log(`disaggregated / aggregated (default):  ${ratio("disagg 1P+1D default", "agg 2w default")}`);
console.log(`kv_router / round_robin (agg 4w):      ${ratio("agg 4w kv_router", "agg 4w round_robin")}`);
console.log(`planner / no planner (agg 2w):         ${ratio("agg 2w planner", "agg 2w default")}`);
