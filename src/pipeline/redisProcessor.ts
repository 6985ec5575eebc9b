/**
 * The sandboxed processor of `fleetsim worker --redis` (sweep/redisWorker.ts): BullMQ forks this
 * module and calls its default export once per job of the simulator's tasks (sweepTasks.ts).
 */
import type { Job } from "bullmq";
import type { RedisJobData } from "../sweep/redisJobs.js";
import { runRedisJob } from "../sweep/redisWorker.js";
import { TASKS } from "./sweepTasks.js";

// A processor whose worker died (killed, OOM) must not outlive it: BullMQ puts the job back on
// the queue for another worker, and an orphan would only burn a CPU.
process.on("disconnect", () => process.exit(0));

export default function process_(job: Job<RedisJobData>): Promise<string> {
  return runRedisJob(TASKS, job);
}
