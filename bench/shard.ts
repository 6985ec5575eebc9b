/**
 * `npm run build && node --import tsx bench/shard.ts`: the scaling figure of docs/sweep.md
 * ("Scaling"). Plans the sweep (replicas × router policy, and a third axis for more
 * points) over the bundled example deployment (examples/aggregated.yaml: op-level timing) on a
 * synthetic closed-loop workload of `--requests` requests per point (the default takes about 2 s
 * of replay on a 2-core host), then, with the bundled CLI as a user runs it:
 *
 * 1. `fleetsim sweep run DIR --parallel 1` and `--parallel 2` (worker processes on this host);
 * 2. every point as its own `fleetsim sweep run DIR --index I` process, one after another: what one
 *    pod does for its index (process start-up, reading the plan, the replay, the result).
 *
 * 3. with `--redis`: `fleetsim sweep run DIR --executor redis://…` served by 1, then 2 `fleetsim
 *    worker --redis` processes (started before the clock, as long-lived workers are; Redis is
 *    flushed before each run so no job is found done), against a redis-server this script starts
 *    (the binary on PATH or FLEETSIM_REDIS_SERVER);
 *
 * and prints points per minute for each, and the projection for N pods from (2): N pods each run
 * points back to back at the measured per-pod rate (one CPU per pod; start-up included), which
 * holds while the cluster schedules the pods at once and the shared volume keeps up with one
 * small write per point. Results are removed between measurements, so every point runs each time.
 *
 * Each measurement is repeated `--rounds` times, interleaved, and the fastest kept: the host is
 * shared, and the fastest round is the one least disturbed by other work.
 *
 * Usage: node --import tsx bench/shard.ts [--points 12] [--requests 20000] [--pods 100] [--rounds 2] [--redis]
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { startRedisServer } from "../test/helpers/redisServer.js";

const { values } = parseArgs({
  options: {
    points: { type: "string", default: "12" },
    requests: { type: "string", default: "20000" },
    pods: { type: "string", default: "100" },
    rounds: { type: "string", default: "2" },
    redis: { type: "boolean", default: false },
  },
});
const points = Number(values.points);
const pods = Number(values.pods);
const requests = Number(values.requests);
const rounds = Number(values.rounds);

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "dist/cli/bin.js");
const work = mkdtempSync(join(tmpdir(), "fleetsim-bench-shard-"));
const concurrencies = Array.from({ length: Math.ceil(points / 6) }, (_, i) => 48 + 16 * i);
writeFileSync(
  join(work, "sweep.yaml"),
  `base: ${join(ROOT, "examples/aggregated.yaml")}
set:
  - {traffic: {source: {type: synthetic, input_tokens: 1024, output_tokens: 256}, load: {type: concurrency, concurrency: 48}, stop: {requests: ${requests}}}}
vary:
  engine.workers.aggregated.parallelism.replicas: [1, 2, 3]
  router.policy: [round_robin, kv_router]
  traffic.load.concurrency: [${concurrencies.join(", ")}]
`,
);
const dir = join(work, "plan");
const fleetsim = (args: string[], env: Record<string, string> = {}): void => {
  // stderr (a line per point) is shown only when a command fails.
  execFileSync(process.execPath, [BIN, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
};
fleetsim(["sweep", "plan", "-c", join(work, "sweep.yaml"), "-o", dir]);
const planned = 6 * concurrencies.length;

function timed(run: () => void): number {
  rmSync(join(dir, "results"), { recursive: true, force: true });
  const t0 = performance.now();
  run();
  return (performance.now() - t0) / 1000;
}

const perMinute = (seconds: number): number => (planned * 60) / seconds;
const cases: [string, () => void][] = [
  ["sweep run --parallel 1", () => fleetsim(["sweep", "run", dir, "--parallel", "1"])],
  ["sweep run --parallel 2", () => fleetsim(["sweep", "run", dir, "--parallel", "2"])],
  [
    "one process per index (a pod), in turn",
    () => {
      for (let i = 0; i < planned; i++) fleetsim(["sweep", "run", dir], { JOB_COMPLETION_INDEX: String(i) });
    },
  ],
];

/** `fleetsim worker --redis URL` processes, resolved once each serves its queues. */
async function startWorkers(url: string, n: number): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ChildProcess>((resolve, reject) => {
          const child = spawn(process.execPath, [BIN, "worker", "--redis", url], {
            stdio: ["ignore", "ignore", "pipe"],
          });
          let err = "";
          child.stderr?.on("data", (d: Buffer) => {
            err += d.toString();
            if (err.includes(" serving ")) resolve(child);
          });
          child.once("exit", (code) => reject(new Error(`worker exited (${code}):\n${err}`)));
        }),
    ),
  );
}

async function stopWorkers(workers: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          w.removeAllListeners("exit");
          if (w.exitCode !== null || w.signalCode !== null) return resolve();
          w.once("exit", () => resolve());
          w.kill("SIGTERM");
        }),
    ),
  );
}

const redis = values.redis ? await startRedisServer() : null;
const flusher = redis === null ? null : new Redis(redis.url);
/** Runs `sweep run --executor` with `n` workers serving it; the workers start before the clock. */
async function viaRedis(n: number): Promise<number> {
  if (redis === null || flusher === null) throw new Error("no redis-server");
  await flusher.flushall();
  const workers = await startWorkers(redis.url, n);
  try {
    return timed(() => fleetsim(["sweep", "run", dir, "--executor", redis.url]));
  } finally {
    await stopWorkers(workers);
  }
}
const redisCases: [string, () => Promise<number>][] =
  redis === null
    ? []
    : [
        ["sweep run --executor redis://, 1 worker", () => viaRedis(1)],
        ["sweep run --executor redis://, 2 workers", () => viaRedis(2)],
      ];

const best = cases.map(() => Number.POSITIVE_INFINITY);
const bestRedis = redisCases.map(() => Number.POSITIVE_INFINITY);
for (let r = 0; r < rounds; r++) {
  for (const [i, [, run]] of cases.entries()) best[i] = Math.min(best[i], timed(run));
  for (const [i, [, run]] of redisCases.entries()) bestRedis[i] = Math.min(bestRedis[i], await run());
}
const rows: [string, number][] = [
  ...cases.map(([what], i): [string, number] => [what, best[i]]),
  ...redisCases.map(([what], i): [string, number] => [what, bestRedis[i]]),
];
const podSeconds = best[2];

console.log(
  `${planned} points: examples/aggregated.yaml, ${requests} closed-loop requests each, bundled CLI`,
);
for (const [what, s] of rows) {
  console.log(
    `${what.padEnd(42)} ${s.toFixed(1).padStart(6)} s  ${perMinute(s).toFixed(1).padStart(7)} points/min`,
  );
}
const perPod = podSeconds / planned;
console.log(
  `projection: ${pods} pods × 60 / ${perPod.toFixed(2)} s per point per pod = ${((pods * 60) / perPod).toFixed(0)} points/min`,
);
flusher?.disconnect();
await redis?.stop();
rmSync(work, { recursive: true, force: true });
