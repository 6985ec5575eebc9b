/** The sweep executor (docs/sweep.md): a generic pool of worker processes. */
export {
  ExecutorError,
  type ExecutorSpec,
  parseExecutor,
  type SweepExecutor,
} from "./executor.js";
export { InlineExecutor } from "./inline.js";
export { SweepPool } from "./pool.js";
export { connectRedis, RedisExecutor, RedisUnreachable } from "./redisExecutor.js";
export { runRedisJob, serveRedis } from "./redisWorker.js";
export { sweepWith } from "./sweep.js";
export type { PoolSweepOptions, SweepOptions, SweepOutcome, SweepResult, SweepTask } from "./types.js";
export { type WorkerLaunch, workerLaunch } from "./workerEntry.js";
export { serveTasks, type TaskTable } from "./workerLoop.js";
