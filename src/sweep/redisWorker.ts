/**
 * The serving side of the Redis executor (docs/sweep.md "With Redis"): `fleetsim worker --redis
 * URL` runs one BullMQ `Worker` per task queue, whose jobs run in sandboxed processes (BullMQ
 * forks the processor module, pipeline/redisProcessor.ts, and restarts it if it dies), and
 * `runRedisJob` is what such a process does with one job.
 *
 * Faults are BullMQ's to handle: a job that throws is retried (JOB_ATTEMPTS, backoff) and then
 * fails with its message; a job whose worker died mid-run stops renewing its lock and another
 * worker's stall check puts it back on the queue (MAX_STALLS); several workers share a queue.
 */

import { deserialize } from "node:v8";
import type { Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { packageVersion } from "../util/packageRoot.js";
import { describeError } from "./protocol.js";
import { connectRedis } from "./redisExecutor.js";
import { decodeValue, encodeValue, MAX_STALLS, queueName, type RedisJobData } from "./redisJobs.js";
import type { TaskTable } from "./workerLoop.js";

/** The environment variable that tells a sandboxed processor where Redis is (for shared values). */
export const REDIS_URL_ENV = "FLEETSIM_REDIS_URL";

export interface RedisWorkerOptions {
  readonly url: string;
  readonly tasks: readonly string[];
  /** The sandboxed processor module (a file BullMQ forks). */
  readonly processorPath: string;
  /** Jobs run at once per task queue (each in its own process). */
  readonly concurrency: number;
  /**
   * How long a job's lock lasts without renewal, ms: a worker that died is noticed after about
   * this long (BullMQ's `lockDuration`; its stall check runs every half of it).
   */
  readonly lockMs: number;
  readonly log: (line: string) => void;
}

export interface RedisWorkerHandle {
  /**
   * Stops taking jobs, waits for the running ones, disconnects: `closed`. `lost` when Redis stopped
   * answering meanwhile: it left without the running jobs, and the client library may keep
   * reconnect timers alive (a process that owns itself exits).
   */
  close(): Promise<"closed" | "lost">;
}

export async function serveRedis(opts: RedisWorkerOptions): Promise<RedisWorkerHandle> {
  const client = await connectRedis(opts.url); // fails fast (exit 2) on a wrong URL
  client.disconnect();
  process.env[REDIS_URL_ENV] = opts.url; // the processor processes inherit it
  const { Redis } = await import("ioredis");
  const { Worker } = await import("bullmq");
  const workers: Worker[] = [];
  // A Worker does not close a connection it was given: close() disconnects these itself.
  const connections: Redis[] = [];
  for (const task of opts.tasks) {
    const connection = new Redis(opts.url, { maxRetriesPerRequest: null });
    connections.push(connection);
    const worker = new Worker(queueName(task), opts.processorPath, {
      connection,
      concurrency: opts.concurrency,
      lockDuration: opts.lockMs,
      stalledInterval: Math.max(100, Math.floor(opts.lockMs / 2)),
      maxStalledCount: MAX_STALLS,
      useWorkerThreads: false,
    });
    worker.on("failed", (job, err) => {
      if (job === undefined) return;
      const final = job.attemptsMade >= (job.opts.attempts ?? 1) || err.name === "UnrecoverableError";
      opts.log(`job ${job.id} (${task}) ${final ? "failed" : "will be retried"}: ${err.message}`);
    });
    worker.on("completed", (job) => {
      const s =
        job.finishedOn !== undefined && job.processedOn !== undefined
          ? (job.finishedOn - job.processedOn) / 1000
          : 0;
      opts.log(`job ${job.id} (${task}) done in ${s.toFixed(1)} s`);
    });
    worker.on("error", (err) => opts.log(`queue ${queueName(task)}: ${err.message}`));
    workers.push(worker);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  return {
    async close() {
      const graceful = Promise.all(workers.map((w) => w.close()));
      // A running job's result can only reach a Redis that answers: while none does, BullMQ's
      // close would wait for it forever. Leave then, without the running jobs: their locks expire
      // and another worker's stall check re-runs them.
      const lost = connectionLost(connections);
      const how = await Promise.race([graceful.then(() => "closed" as const), lost.promise]);
      lost.cancel();
      if (how === "lost") {
        opts.log(
          `Redis at ${opts.url} does not answer: leaving without the running jobs (another worker re-runs them)`,
        );
        // Dropping the workers' connections ends the close under way (a second close() would
        // only wait for the first one).
        await Promise.race([
          Promise.all(workers.map((w) => w.disconnect())).then(() => graceful),
          new Promise((resolve) => setTimeout(resolve, FORCED_CLOSE_MS).unref()),
        ]);
      }
      for (const c of connections) c.disconnect();
      return how;
    },
  };
}

/** How long a forced close may take before the worker disconnects anyway. */
const FORCED_CLOSE_MS = 2000;

/**
 * Resolves `"lost"` once any of the connections has stopped answering (ioredis reconnecting, or
 * ended) for `LOST_AFTER_MS`; checked every `POLL_MS`. `cancel()` stops the checks.
 */
function connectionLost(connections: readonly Redis[]): { promise: Promise<"lost">; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<"lost">((resolve) => {
    let downSince: number | null = null;
    timer = setInterval(() => {
      const down = connections.some((c) => c.status !== "ready");
      if (!down) downSince = null;
      else if (downSince === null) downSince = Date.now();
      else if (Date.now() - downSince >= LOST_AFTER_MS) resolve("lost");
    }, POLL_MS);
    timer.unref();
  });
  return { promise, cancel: () => clearInterval(timer) };
}

const POLL_MS = 250;
const LOST_AFTER_MS = 3000;

/** Shared values read by this process, by key: a worker's jobs of one sweep read it once. */
const sharedValues = new Map<string, unknown>();
let sharedClient: Redis | null = null;

async function sharedValue(key: string): Promise<unknown> {
  if (sharedValues.has(key)) return sharedValues.get(key);
  const url = process.env[REDIS_URL_ENV];
  if (url === undefined) throw new Error(`the job's shared value needs ${REDIS_URL_ENV}`);
  sharedClient ??= await connectRedis(url);
  const bytes = await sharedClient.getBuffer(key);
  if (bytes === null) throw new Error(`the sweep's shared value ${key} is no longer in Redis`);
  const value: unknown = deserialize(bytes);
  sharedValues.clear(); // a worker keeps only the latest sweep's value, as a local worker does
  sharedValues.set(key, value);
  return value;
}

/**
 * Runs one job in a sandboxed processor process: the task's `run` on the decoded input and the
 * sweep's shared value; returns the encoded output. A job it cannot run at all (another version's,
 * an unknown task) fails at once, without retries.
 */
export async function runRedisJob(tasks: TaskTable, job: Job<RedisJobData>): Promise<string> {
  const { UnrecoverableError } = await import("bullmq");
  const data = job.data;
  if (data.version !== packageVersion()) {
    throw new UnrecoverableError(
      `job from fleetsim ${data.version}, this worker is fleetsim ${packageVersion()}: run workers of the same version`,
    );
  }
  const load = Object.hasOwn(tasks, data.task) ? tasks[data.task] : undefined;
  if (load === undefined) throw new UnrecoverableError(`unknown sweep task '${data.task}'`);
  let input: unknown;
  try {
    input = decodeValue(data.input);
  } catch (e) {
    throw new UnrecoverableError(`the job's input cannot be read: ${describeError(e)}`);
  }
  const shared = data.shared === null ? undefined : await sharedValue(data.shared);
  const task = await load();
  return encodeValue(await task.run(input as never, shared as never));
}
