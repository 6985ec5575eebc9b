/**
 * What the Redis executor (redisExecutor.ts) and `fleetsim worker` (redisWorker.ts) agree on: the
 * BullMQ queue of each task, the job document, and how inputs, outputs and a sweep's shared value
 * travel through Redis (docs/sweep.md "With Redis").
 *
 * BullMQ stores job data as JSON; a task's input (a RunSpec) and output (a prediction, a replay's
 * metrics) are plain data that the local executor sends as V8 structured clones, so they travel
 * here the same way: `v8.serialize`, base64 in the JSON. A sweep's shared value (a retune
 * window's request table) is stored once under its own key, named by its SHA-256, and fetched
 * once per worker process, not copied into every job.
 */
import { deserialize, serialize } from "node:v8";
import { sha256 } from "../util/sha256.js";

/** The queue a task's jobs go to (BullMQ queue names may not contain ':'). */
export function queueName(task: string): string {
  return `fleetsim-${task}`;
}

/** The job document stored in Redis. */
export interface RedisJobData {
  readonly task: string;
  /** `v8.serialize(input)`, base64. */
  readonly input: string;
  /** Key of the sweep's shared value (`sharedKey`), or null when the sweep has none. */
  readonly shared: string | null;
  /** fleetsim version of the enqueuing process: a worker of another version refuses the job. */
  readonly version: string;
}

export function encodeValue(value: unknown): string {
  return serialize(value).toString("base64");
}

export function decodeValue(text: string): unknown {
  return deserialize(Buffer.from(text, "base64"));
}

/** The Redis key of a shared value, by the SHA-256 of its serialized bytes. */
export function sharedKey(bytes: Buffer): string {
  return `fleetsim:shared:${sha256().update(bytes).digest("hex")}`;
}

/**
 * A job's id: the same task, input, shared value and version give the same id, so a rerun of a
 * sweep (or a second `sweep run` of the same plan) finds the jobs already done instead of
 * enqueuing them again — the determinism of a task (seeded from its input, never from the
 * executor) makes the stored result the one a new run would compute.
 */
export function jobId(data: RedisJobData): string {
  const h = sha256();
  h.update(data.version)
    .update("\0")
    .update(data.task)
    .update("\0")
    .update(data.shared ?? "");
  h.update("\0").update(data.input);
  return `${data.task}-${h.digest("hex").slice(0, 40)}`;
}

/** Attempts of a job whose run throws (a crashed or killed worker is a stall, not an attempt). */
export const JOB_ATTEMPTS = 3;
/** Delay before a thrown job's next attempt, ms (doubling). */
export const RETRY_BACKOFF_MS = 500;
/** Finished jobs are kept this long (a rerun within it reuses the results), seconds. */
export const KEEP_FINISHED_S = 24 * 3600;
/** A shared value outlives the sweeps that use it by this much, seconds. */
export const SHARED_TTL_S = 24 * 3600;
/**
 * A job whose worker stopped renewing its lock (killed, host lost) is moved back to the queue by
 * another worker's stall check; one that stalls more often than this fails.
 */
export const MAX_STALLS = 2;
