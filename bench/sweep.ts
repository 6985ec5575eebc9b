/**
 * `node --import tsx bench/sweep.ts`: runs the same batch of replay jobs through `sweep` with
 * maxParallel 1 and then 2 (alternating, `--rounds` times) and prints each sweep's wall time and
 * the ratio. Worker start-up (tsx compiling the simulator in each process) is part of the time,
 * as it is for a real sweep.
 *
 * Jobs are the bundled example deployment (examples/aggregated.yaml: two aggregated workers) on a
 * synthetic closed-loop workload, one concurrency per job so they resemble sweep candidates;
 * `--requests` sizes a job (the default takes about 0.5 s of replay on a 2-core host).
 *
 * Usage: node --import tsx bench/sweep.ts [--jobs 8] [--requests 16000] [--rounds 2]
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load.js";
import type { ReplayJob, ReplayJobOutput } from "../src/pipeline/replayTask.js";
import { sweep } from "../src/pipeline/sweepTasks.js";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "8" },
    requests: { type: "string", default: "16000" },
    rounds: { type: "string", default: "2" },
  },
});
const jobCount = Number(values.jobs);
const requests = Number(values.requests);
const rounds = Number(values.rounds);

const EXAMPLE = fileURLToPath(new URL("../examples/aggregated.yaml", import.meta.url));
const jobs: ReplayJob[] = Array.from({ length: jobCount }, (_, i) => ({
  spec: loadConfig({
    configPath: EXAMPLE,
    sets: [
      "traffic={source: {type: synthetic, input_tokens: 1024, output_tokens: 256}, " +
        `load: {type: concurrency, concurrency: ${48 + 4 * i}}, stop: {requests: ${requests}}}`,
    ],
    stack: "dynamo",
  }),
  capturePerRequest: false,
}));

async function timed(maxParallel: number): Promise<number> {
  const out = await sweep<ReplayJob, ReplayJobOutput>(jobs, {
    maxParallel,
    timeoutMs: 600_000,
    task: "replay",
  });
  const failed = out.results.filter((r) => r.status !== "ok");
  if (failed.length > 0)
    throw new Error(`bench: ${failed.length} jobs did not finish: ${JSON.stringify(failed[0])}`);
  const replayMs = out.results.reduce(
    (s, r) => s + (r.status === "ok" ? r.value.summary.wall_time_ms : 0),
    0,
  );
  console.log(
    `maxParallel ${maxParallel}: ${(out.wallMs / 1000).toFixed(2)} s wall, ${out.processesStarted} processes, ` +
      `${(replayMs / jobCount / 1000).toFixed(2)} s replay per job`,
  );
  return out.wallMs;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const walls: Record<1 | 2, number[]> = { 1: [], 2: [] };
for (let r = 0; r < rounds; r++) {
  walls[1].push(await timed(1));
  walls[2].push(await timed(2));
}
const [one, two] = [median(walls[1]), median(walls[2])];
console.log(
  `${jobCount} jobs × ${requests} requests: median wall ${(one / 1000).toFixed(2)} s (1 process) vs ` +
    `${(two / 1000).toFixed(2)} s (2 processes); speed-up ${(one / two).toFixed(2)}×`,
);
