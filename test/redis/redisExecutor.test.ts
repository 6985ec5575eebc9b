/**
 * The Redis executor against a real redis-server (npm run test:redis; .ci/run installs Debian's
 * redis-server): `fleetsim worker --redis` processes serve `sweep run --executor redis://…` and
 * `recommend --executor redis://…` and planner.retune's window sweeps (`predict --executor
 * redis://…`), with results identical to a local run; two workers share a
 * queue; a worker killed mid-job has its job re-run by another; a job that throws is retried and
 * then fails with its reason; a rerun finds its jobs done in Redis; a wrong URL is exit 2.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE_ENV } from "../../src/cli/codeCache.js";
import { runPrediction } from "../../src/pipeline/index.js";
import type { Prediction } from "../../src/report/prediction.js";
import { RedisExecutor } from "../../src/sweep/redisExecutor.js";
import { encodeValue, JOB_ATTEMPTS, jobId, queueName } from "../../src/sweep/redisJobs.js";
import { packageVersion } from "../../src/util/packageRoot.js";
import { buildBundle } from "../helpers/bundle.js";
import { cli, cliPredict } from "../helpers/cli.js";
import { loadYaml } from "../helpers/configHelpers.js";
import { type RedisServer, startRedisServer } from "../helpers/redisServer.js";
import { RETUNE_CONFIG, retuneSimulated, retuneTrace, writeRetuneProject } from "../helpers/retuneProject.js";
import { tempDir } from "../helpers/specs.js";
import { sweepProject } from "../helpers/sweepProject.js";

interface WorkerProcess {
  readonly child: ChildProcess;
  /** Its stderr so far. */
  log(): string;
  /** Jobs it reported done. */
  done(): number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `fleetsim worker --redis URL`, resolved once it serves its queues: from the sources, or through
 * `built`, the executable of a built bundle (test/helpers/bundle.ts) with its own code cache folder.
 */
function startWorker(
  url: string,
  lockSeconds = 1,
  built?: { readonly bin: string; readonly codeCache: string },
): Promise<WorkerProcess> {
  const entry = built === undefined ? ["--import", "tsx", "src/cli/bin.ts"] : [built.bin];
  const child = spawn(
    process.execPath,
    [...entry, "worker", "--redis", url, "--lock-seconds", String(lockSeconds)],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: built === undefined ? process.env : { ...process.env, [CACHE_ENV]: built.codeCache },
    },
  );
  let err = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes(" serving ")) {
        resolve({
          child,
          log: () => err,
          done: () => (err.match(/ done in /g) ?? []).length,
          async stop(signal = "SIGTERM") {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
          },
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`worker exited (${code}) before serving:\n${err}`)));
  });
}

/** Every file under `dir` (relative path → text). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      out[join(entry.parentPath, entry.name).slice(dir.length + 1)] = readFileSync(
        join(entry.parentPath, entry.name),
        "utf8",
      );
  }
  return out;
}

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 60_000,
  context: () => string = () => "",
): Promise<void> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A planned sweep (6 points) run locally: its results, and its folder with them removed again. */
async function plannedSweepRunLocally(): Promise<{ dir: string; localResults: Record<string, string> }> {
  const p = sweepProject();
  const dir = join(p.dir, "plan");
  expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir)).code).toBe(0);
  const local = await cli("sweep", "run", dir, "--parallel", "2");
  expect(local.code).toBe(0);
  const localResults = tree(join(dir, "results"));
  expect(Object.keys(localResults)).toHaveLength(6);
  rmSync(join(dir, "results"), { recursive: true });
  return { dir, localResults };
}

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis?.stop();
});

describe("the Redis executor", () => {
  it("the built CLI's worker (BullMQ and ioredis loaded from its one bundle, with and without a code cache) serves a sweep", async () => {
    const { bin } = await buildBundle({ linkNodeModules: true });
    const codeCache = tempDir("fleetsim-redis-cc-");
    const { dir, localResults } = await plannedSweepRunLocally();
    // The first start writes the cache at exit; the second starts from it.
    const cold = await startWorker(redis.url, 1, { bin, codeCache });
    await cold.stop();
    expect(readdirSync(codeCache).some((f) => f.endsWith("-worker.v8cache"))).toBe(true);
    const warm = await startWorker(redis.url, 1, { bin, codeCache });
    try {
      const run = await cli("sweep", "run", dir, "--executor", redis.url);
      expect(run.code, run.err).toBe(0);
      expect(tree(join(dir, "results"))).toEqual(localResults);
      await until(
        "the worker's log",
        () => warm.done() === 6,
        20_000,
        () => warm.log(),
      );
      expect(warm.log()).not.toContain("ExperimentalWarning");
    } finally {
      await warm.stop();
      // The other tests run the same sweep's jobs and count them run, not found done.
      const client = new Redis(redis.url);
      await client.flushall();
      client.disconnect();
    }
  }, 180_000);

  it("two workers share a sweep's queue; the results equal a local run byte for byte; a rerun finds them done in Redis", async () => {
    const { dir, localResults } = await plannedSweepRunLocally();

    const workers = await Promise.all([startWorker(redis.url), startWorker(redis.url)]);
    try {
      const run = await cli("sweep", "run", dir, "--executor", redis.url);
      expect(run.err).not.toContain("error");
      expect(run.code).toBe(0);
      expect(run.out).toContain("6 points: 6 run, 0 already had a result, 0 failed");
      expect(tree(join(dir, "results"))).toEqual(localResults);
      await until(
        "both workers' logs",
        () => workers[0].done() + workers[1].done() === 6,
        20_000,
        () => workers.map((w) => w.log()).join("\n"),
      );
      // Both took jobs from the one queue.
      expect(workers[0].done()).toBeGreaterThan(0);
      expect(workers[1].done()).toBeGreaterThan(0);

      // A rerun without the result files: the jobs are found finished in Redis, none runs again.
      rmSync(join(dir, "results"), { recursive: true });
      const again = await cli("sweep", "run", dir, "--executor", redis.url);
      expect(again.code).toBe(0);
      expect(tree(join(dir, "results"))).toEqual(localResults);
      expect(workers[0].done() + workers[1].done()).toBe(6);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  }, 180_000);

  it("a worker killed mid-job: another worker runs the job again and the result is the local one", async () => {
    const p = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1]");
    // A point that replays for a few seconds, so the kill lands while it runs.
    writeFileSync(
      p.baseFile,
      readFileSync(p.baseFile, "utf8").replace(
        /traffic:\n( {2}.*\n)+/,
        "traffic:\n  source: {type: synthetic, input_tokens: 512, output_tokens: 64}\n" +
          "  load: {type: concurrency, concurrency: 32}\n  stop: {requests: 60000}\n",
      ),
    );
    writeFileSync(
      p.sweepFile,
      "base: prediction.yaml\nvary:\n  engine.workers.aggregated.parallelism.replicas: [1]\n",
    );
    const dir = join(p.dir, "plan");
    expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir)).code).toBe(0);
    expect((await cli("sweep", "run", dir, "--index", "0")).code).toBe(0);
    const localResults = tree(join(dir, "results"));
    rmSync(join(dir, "results"), { recursive: true });

    const queue = new Queue(queueName("predict"), {
      connection: new Redis(redis.url, { maxRetriesPerRequest: null }),
    });
    const first = await startWorker(redis.url);
    let second: WorkerProcess | null = null;
    try {
      const run = cli("sweep", "run", dir, "--executor", redis.url);
      await until("the job to start on the first worker", async () => (await queue.getActiveCount()) === 1);
      await first.stop("SIGKILL");
      expect(first.done()).toBe(0);
      second = await startWorker(redis.url);
      const result = await run;
      expect(result.code).toBe(0);
      expect(tree(join(dir, "results"))).toEqual(localResults);
      await until("the second worker's log", () => second!.done() === 1);
    } finally {
      await first.stop("SIGKILL");
      await second?.stop();
      await queue.close();
    }
  }, 180_000);

  it("a job that throws is retried, then fails with its reason", async () => {
    const worker = await startWorker(redis.url);
    const executor = new RedisExecutor(redis.url, "replay");
    try {
      const bad = { notASpec: true };
      const outcome = await executor.sweep([bad], { maxParallel: 1, timeoutMs: 60_000 });
      expect(outcome.results).toHaveLength(1);
      const [r] = outcome.results;
      expect(r.status).toBe("failed");
      if (r.status === "failed") expect(r.error).toMatch(/replay task/);
      const queue = new Queue(queueName("replay"), {
        connection: new Redis(redis.url, { maxRetriesPerRequest: null }),
      });
      try {
        const id = jobId({
          task: "replay",
          input: encodeValue(bad),
          shared: null,
          version: packageVersion(),
        });
        const job = await queue.getJob(id);
        expect(job?.attemptsMade).toBe(JOB_ATTEMPTS);
        expect(job?.failedReason).toMatch(/replay task/);
      } finally {
        await queue.close();
      }
      expect(worker.log()).toContain("will be retried");
    } finally {
      await executor.close();
      await worker.stop();
    }
  }, 120_000);

  it("recommend --executor redis:// writes the same recommendation as a local search", async () => {
    const worker = await startWorker(redis.url);
    const p = sweepProject();
    const rec = join(p.dir, "rec.yaml");
    writeFileSync(
      rec,
      `${readFileSync(p.baseFile, "utf8").replace("parallelism: {replicas: 1}", "parallelism: {preset: default}")}
optimization: {target: throughput}
optimizer: {algorithm: random, max_trials: 4, parallelism: 2, seed: 7}
execution: {resources: {cpu_limit: 2}}
`,
    );
    try {
      const local = await cli("recommend", "-c", rec, "--output-dir", join(p.dir, "local"));
      expect(local.err).not.toContain("error:");
      const remote = await cli(
        "recommend",
        "-c",
        rec,
        "--output-dir",
        join(p.dir, "remote"),
        "--executor",
        redis.url,
      );
      expect(remote.code).toBe(local.code);
      expect(readFileSync(join(p.dir, "remote", "recommendation.json"), "utf8")).toBe(
        readFileSync(join(p.dir, "local", "recommendation.json"), "utf8"),
      );
      expect(worker.done()).toBeGreaterThan(0);
    } finally {
      await worker.stop();
    }
  }, 180_000);

  it("retune's window sweeps through Redis decide as the local pool does", async () => {
    const worker = await startWorker(redis.url);
    try {
      const spec = () => loadYaml(RETUNE_CONFIG, { files: { "trace.jsonl": retuneTrace() } });
      const local = await runPrediction(spec(), { capturePerRequest: false });
      const remote = await runPrediction(spec(), {
        capturePerRequest: false,
        executor: { kind: "redis", url: redis.url },
      });
      const events = remote.prediction.planner?.retune_events ?? [];
      expect(events.length).toBeGreaterThanOrEqual(3);
      expect(events.every((e) => e.failed_candidates.length === 0)).toBe(true);
      expect(retuneSimulated(remote.prediction)).toStrictEqual(retuneSimulated(local.prediction));
      // Each window's candidates ran on the worker, none in a process of this run.
      expect(remote.retuneSweeps?.map((x) => x.processesStarted)).toEqual(events.map(() => 0));
      expect(worker.done()).toBeGreaterThanOrEqual(events.length);

      // The CLI form, with the same worker: exit 0 and the same document as the local run.
      const config = writeRetuneProject();
      const out = join(config, "..", "out");
      const viaCli = await cliPredict(config, out, "--executor", redis.url);
      expect(viaCli.err).not.toContain("error:");
      expect(viaCli.code).toBe(0);
      const written = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")) as Prediction;
      expect(retuneSimulated(written)).toStrictEqual(retuneSimulated(local.prediction));
    } finally {
      await worker.stop();
    }
  }, 240_000);

  it("a worker whose Redis went away still leaves on SIGTERM, saying why", async () => {
    const own = await startRedisServer();
    const worker = await startWorker(own.url);
    await own.stop();
    const t0 = Date.now();
    await worker.stop("SIGTERM");
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(worker.child.exitCode).toBe(0);
    expect(worker.log()).toContain("does not answer: leaving without the running jobs");
  }, 60_000);

  it("a Redis that does not answer is a user error (exit 2) naming the URL, before any work", async () => {
    const p = sweepProject();
    const dir = join(p.dir, "plan");
    expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir)).code).toBe(0);
    const run = await cli("sweep", "run", dir, "--executor", "redis://127.0.0.1:1");
    expect(run.code).toBe(2);
    expect(run.err).toContain("cannot reach Redis at redis://127.0.0.1:1");
    const results = join(dir, "results");
    expect(existsSync(results) ? readdirSync(results) : []).toEqual([]);
    const worker = await cli("worker", "--redis", "redis://127.0.0.1:1");
    expect(worker.code).toBe(2);
    expect(worker.err).toContain("cannot reach Redis at redis://127.0.0.1:1");
  }, 60_000);
});
