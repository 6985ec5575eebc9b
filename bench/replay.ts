/**
 * `npm run bench`: replays the FAST'25 conversation trace through the seed's aggregated
 * deployment (2 workers of nvidia/Llama-3.1-8B-Instruct-FP8 on h200_sxm) with polynomial timing
 * and with the default op-level timing, and prints for each the speed factor (simulated / wall)
 * and the replay's wall time relative to a parse-only pass over the same file. Everything is
 * measured in the same process, alternating, so the ratios are meaningful on a noisy machine.
 *
 * Usage: node --import tsx bench/replay.ts [--replicas N] [--rounds R] [--trace PATH]
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load.js";
import type { RunSpec } from "../src/config/runSpec.js";
import { buildSummary } from "../src/metrics/summary.js";
import { loadWorkload } from "../src/run.js";
import { Replay } from "../src/sim/replay.js";
import { createRoleTimings } from "../src/timing/index.js";
import { readJsonlLines } from "../src/traffic/jsonlReader.js";

const { values } = parseArgs({
  options: {
    replicas: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    trace: { type: "string", default: resolve("../shared/traces/mooncake-fast25/conversation_trace.jsonl") },
  },
});
const trace = resolve(values.trace);
if (!existsSync(trace)) {
  console.error(`bench: trace not found: ${trace} (expected the shared data folder beside the repo)`);
  process.exit(2);
}

function spec(timing: string): RunSpec {
  return loadConfig({
    configPath: "examples/seed-aggregated.yaml",
    sets: [
      `traffic.source.paths=[${JSON.stringify(trace)}]`,
      `engine.workers.aggregated.parallelism.replicas=${values.replicas}`,
      `engine.workers.aggregated.timing={type: ${timing}}`,
    ],
    stack: "dynamo",
  });
}

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
  blocks: number;
}

async function replayOnce(s: RunSpec): Promise<Sample> {
  const t0 = performance.now();
  const [table, timings] = await Promise.all([loadWorkload(s), createRoleTimings(s.engine)]);
  const t1 = performance.now();
  const result = new Replay(s, table, timings, { capturePerRequest: false }).runSync();
  const t2 = performance.now();
  const summary = buildSummary(result, s.sla);
  return {
    replayMs: t2 - t1,
    loadMs: t1 - t0,
    simS: summary.duration_ms / 1000,
    requests: summary.num_requests,
    blocks: s.engine.mode === "aggregated" ? s.engine.aggregated.numGpuBlocks : s.engine.decode.numGpuBlocks,
  };
}

const specs = { polynomial: spec("polynomial"), default: spec("default") };
const rounds = Number(values.rounds);
const samples: Record<keyof typeof specs, Sample[]> = { polynomial: [], default: [] };
const parses: number[] = [];
for (let i = 0; i < rounds; i++) {
  parses.push(await parseOnly());
  for (const key of ["polynomial", "default"] as const) samples[key].push(await replayOnce(specs[key]));
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const parseMs = median(parses);
console.log(`trace            ${trace}`);
console.log(
  `deployment       ${values.replicas} × nvidia/Llama-3.1-8B-Instruct-FP8 on h200_sxm, default KV capacity`,
);
console.log(`parse-only pass  ${parseMs.toFixed(0)} ms (median of ${rounds})`);
const wall: Record<string, number> = {};
for (const key of ["polynomial", "default"] as const) {
  const xs = samples[key];
  const replayMs = median(xs.map((x) => x.replayMs));
  wall[key] = replayMs;
  const simS = xs[0].simS;
  console.log(`\n[${key} timing]`);
  console.log(`  requests         ${xs[0].requests}   (KV blocks per worker: ${xs[0].blocks})`);
  console.log(`  simulated        ${simS.toFixed(1)} s`);
  console.log(`  wall (replay)    ${(replayMs / 1000).toFixed(3)} s   (median of ${rounds})`);
  console.log(`  wall (load)      ${(median(xs.map((x) => x.loadMs)) / 1000).toFixed(3)} s`);
  console.log(`  speed factor     ${(simS / (replayMs / 1000)).toFixed(0)}x   simulated / replay wall`);
  console.log(`  replay / parse   ${(replayMs / parseMs).toFixed(2)}`);
}
console.log(`\ndefault / polynomial wall: ${(wall.default / wall.polynomial).toFixed(2)}`);
