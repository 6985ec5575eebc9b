/**
 * The Redis executor (docs/sweep.md "With Redis"): a sweep's jobs become BullMQ jobs on the
 * task's queue (redisJobs.ts) and `fleetsim worker --redis URL` processes, anywhere, run them in
 * sandboxed processes; this side waits for each job's result and reports it as the local pool
 * does (one result per job in job order, `onResult` as each arrives). Retries of a thrown job,
 * recovery of a job whose worker died (BullMQ's stall check) and the spreading of jobs over
 * workers are BullMQ's, not fleetsim's.
 */

import { serialize } from "node:v8";
import type { Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import { packageVersion } from "../util/packageRoot.js";
import { UserError } from "../util/userError.js";
import type { SweepExecutor } from "./executor.js";
import { firstNonPlain } from "./plainData.js";
import { checkSweepStart } from "./pool.js";
import {
  decodeValue,
  encodeValue,
  JOB_ATTEMPTS,
  jobId,
  KEEP_FINISHED_S,
  queueName,
  RETRY_BACKOFF_MS,
  type RedisJobData,
  SHARED_TTL_S,
  sharedKey,
} from "./redisJobs.js";
import type { PoolSweepOptions, SweepOutcome, SweepResult } from "./types.js";

/** Redis did not answer at the URL given (exit 2: the URL is the user's). */
export class RedisUnreachable extends UserError {}

const CONNECT_TIMEOUT_MS = 5000;

/** Opens an ioredis connection and waits until it answers a PING (or fails after a few seconds). */
export async function connectRedis(url: string): Promise<Redis> {
  const { Redis } = await import("ioredis");
  // maxRetriesPerRequest null: what BullMQ requires of the connections its workers block on.
  const client = new Redis(url, {
    maxRetriesPerRequest: null,
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
  });
  client.on("error", () => {}); // reported by the PING below, or by the command that failed
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("no answer")), CONNECT_TIMEOUT_MS).unref(),
      ),
    ]);
  } catch (e) {
    client.disconnect();
    throw new RedisUnreachable(`cannot reach Redis at ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return client;
}

export class RedisExecutor implements SweepExecutor {
  private connection: Promise<{ client: Redis; queue: Queue; events: QueueEvents }> | null = null;
  private running = false;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly task: string,
  ) {}

  private open(): Promise<{ client: Redis; queue: Queue; events: QueueEvents }> {
    this.connection ??= (async () => {
      const client = await connectRedis(this.url);
      const { Queue, QueueEvents } = await import("bullmq");
      const queue = new Queue(queueName(this.task), { connection: client });
      // Each job a sweep waits for adds a 'closing' listener to the queue (Job.waitUntilFinished),
      // and a sweep waits for all its jobs at once: no listener limit, so no leak warning.
      queue.setMaxListeners(0);
      const events = new QueueEvents(queueName(this.task), { connection: client.duplicate() });
      await events.waitUntilReady();
      return { client, queue, events };
    })();
    return this.connection;
  }

  async sweep<O>(jobs: readonly unknown[], opts: PoolSweepOptions): Promise<SweepOutcome<O>> {
    checkSweepStart("redis executor", opts, this.closed, this.running);
    this.running = true;
    const t0 = performance.now();
    try {
      const { client, queue, events } = await this.open();
      let shared: string | null = null;
      let sharedBytes = 0;
      if (opts.shared !== undefined) {
        const bytes = serialize(opts.shared);
        shared = sharedKey(bytes);
        sharedBytes = bytes.length;
        await client.set(shared, bytes, "EX", SHARED_TTL_S);
      }
      const results: (SweepResult<O> | null)[] = jobs.map(() => null);
      const settle = (i: number, r: SweepResult<O>): void => {
        if (results[i] !== null) return;
        results[i] = r;
        if (r.status !== "timeout") opts.onResult?.(i, r);
      };
      const version = packageVersion();
      const toAdd: { index: number; data: RedisJobData }[] = [];
      jobs.forEach((input, i) => {
        const bad = firstNonPlain(input);
        if (bad !== null) settle(i, { status: "failed", error: `job input is not plain data at ${bad}` });
        else toAdd.push({ index: i, data: { task: this.task, input: encodeValue(input), shared, version } });
      });
      const added = await queue.addBulk(
        toAdd.map(({ data }) => ({
          name: this.task,
          data,
          opts: {
            jobId: jobId(data),
            attempts: JOB_ATTEMPTS,
            backoff: { type: "exponential", delay: RETRY_BACKOFF_MS },
            removeOnComplete: { age: KEEP_FINISHED_S },
            removeOnFail: { age: KEEP_FINISHED_S },
          },
        })),
      );
      const deadline = t0 + opts.timeoutMs;
      let stop: () => void = () => {};
      const stopped = new Promise<"stopped">((resolve) => {
        stop = () => resolve("stopped");
      });
      const timer = setTimeout(stop, Math.max(0, deadline - performance.now()));
      const onAbort = (): void => stop();
      opts.signal?.addEventListener("abort", onAbort);
      if (opts.signal?.aborted === true) stop();
      try {
        const waits = added.map(async (job, k) => {
          const index = toAdd[k].index;
          try {
            const value = await job.waitUntilFinished(events);
            settle(index, { status: "ok", value: decodeValue(value as string) as O });
          } catch (e) {
            settle(index, { status: "failed", error: e instanceof Error ? e.message : String(e) });
          }
        });
        const outcome = await Promise.race([Promise.all(waits).then(() => "done" as const), stopped]);
        if (outcome === "stopped") {
          // Jobs nobody has started are taken back; a running one finishes on its worker (its
          // result stays in Redis for a rerun) but this sweep no longer waits for it.
          await Promise.all(
            added.map(async (job, k) => {
              if (results[toAdd[k].index] !== null) return;
              if ((await job.getState()) === "waiting") await job.remove().catch(() => {});
            }),
          );
        }
      } finally {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      }
      const timedOut = results.some((r) => r === null);
      return {
        results: results.map((r) => r ?? { status: "timeout" }),
        processesStarted: 0,
        pids: [],
        timedOut,
        wallMs: performance.now() - t0,
        sharedBytes,
      };
    } finally {
      this.running = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = null;
    if (connection === null) return;
    const { client, queue, events } = await connection.catch(() => ({
      client: null,
      queue: null,
      events: null,
    }));
    await events?.close();
    await queue?.close();
    client?.disconnect();
  }
}
