/**
 * `npm run bench`: replays the FAST'25 conversation trace through the seed's aggregated
 * deployment (2 workers, polynomial timing) and prints the speed factor (simulated / wall time)
 * and the replay's wall time relative to a parse-only pass over the same file, measured in the
 * same process, so the ratio is meaningful on a noisy machine.
 *
 * Usage: node --import tsx bench/replay.ts [--replicas N] [--rounds R] [--trace PATH]
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load.js";
import { buildSummary } from "../src/metrics/summary.js";
import { loadWorkload } from "../src/run.js";
import { Replay } from "../src/sim/replay.js";
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

const spec = loadConfig({
  configPath: "examples/seed-aggregated.yaml",
  sets: [
    `traffic.source.paths=[${JSON.stringify(trace)}]`,
    `engine.workers.aggregated.parallelism.replicas=${values.replicas}`,
    "engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 14000}",
  ],
  stack: "dynamo",
});

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

const rounds = Number(values.rounds);
const rows: { parseMs: number; loadMs: number; replayMs: number; simS: number; requests: number }[] = [];
for (let i = 0; i < rounds; i++) {
  const parseMs = await parseOnly();
  const t0 = performance.now();
  const table = await loadWorkload(spec);
  const t1 = performance.now();
  const result = new Replay(spec, table, { capturePerRequest: false }).runSync();
  const t2 = performance.now();
  const summary = buildSummary(result, spec.sla);
  rows.push({
    parseMs,
    loadMs: t1 - t0,
    replayMs: t2 - t1,
    simS: summary.duration_ms / 1000,
    requests: summary.num_requests,
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const replayMs = median(rows.map((r) => r.replayMs));
const parseMs = median(rows.map((r) => r.parseMs));
const loadMs = median(rows.map((r) => r.loadMs));
const simS = rows[0].simS;
console.log(`trace            ${trace}`);
console.log(`workers          ${values.replicas} (polynomial timing, 14000 blocks of 64 per worker)`);
console.log(`requests         ${rows[0].requests}`);
console.log(`simulated        ${simS.toFixed(1)} s`);
console.log(`wall (replay)    ${(replayMs / 1000).toFixed(3)} s   (median of ${rounds})`);
console.log(`wall (load)      ${(loadMs / 1000).toFixed(3)} s   parse + block hashing`);
console.log(`speed factor     ${(simS / (replayMs / 1000)).toFixed(0)}x   simulated / replay wall`);
console.log(
  `speed (end2end)  ${(simS / ((replayMs + loadMs) / 1000)).toFixed(0)}x   simulated / (load + replay) wall`,
);
console.log(
  `replay / parse   ${(replayMs / parseMs).toFixed(2)}   replay wall ÷ parse-only pass (${parseMs.toFixed(0)} ms)`,
);
