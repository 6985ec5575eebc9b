/**
 * The simulator's sweep worker processes without their task table: the task names and a pool of
 * workers (`SweepPool`) of one of them, forked from the worker module beside this one. Separate
 * from the table (sweepTasks.ts), which imports every task module, so that code a task itself
 * runs — retune's candidate replays inside a `predict` task's run — can start workers without an
 * import cycle through the table.
 */
import type { ExecutorSpec, SweepExecutor } from "../sweep/executor.js";
import { InlineExecutor } from "../sweep/inline.js";
import { SweepPool } from "../sweep/pool.js";
import { RedisExecutor } from "../sweep/redisExecutor.js";
import type { SweepTask } from "../sweep/types.js";
import { workerLaunch } from "../sweep/workerEntry.js";
import { BUNDLE_DIR, BUNDLED, packageRootUrl } from "../util/packageRoot.js";

/** The tasks of sweepTasks.ts's `TASKS`, which must name exactly these. */
export const TASK_NAMES = ["replay", "predict"] as const;

export type TaskName = (typeof TASK_NAMES)[number];

export function isTaskName(name: string): name is TaskName {
  return (TASK_NAMES as readonly string[]).includes(name);
}

export function checkTask(task: string): void {
  if (!isTaskName(task)) {
    throw new Error(`unknown sweep task '${task}' (known: ${TASK_NAMES.join(", ")})`);
  }
}

/**
 * Where the worker module lies: beside this module in the sources and in tsc's output; the
 * bundled CLI forks the bundle's own worker entry (`dist/bundle/sweepWorker.js`, which shares
 * the CLI's chunks) instead of tsc's unbundled one.
 */
export function workerBeside(): string {
  return BUNDLED ? new URL(BUNDLE_DIR, packageRootUrl()).href : import.meta.url;
}

/** A pool of workers of one of the tasks above for a series of sweeps; `close()` it after the last. */
export function sweepPool(task: TaskName): SweepPool {
  checkTask(task);
  return new SweepPool(workerLaunch(workerBeside(), "sweepWorker"), task);
}

/**
 * The executor `spec` names for `task` (docs/sweep.md "Executors"): worker processes here
 * (`local`, a `sweepPool`), this process (`inline`, running the module `load` imports), or a
 * BullMQ queue on Redis served by `fleetsim worker` processes (`redis`). `close()` it after the
 * last sweep. `load` is the task's table entry (sweepTasks.ts), passed in so that a task's own
 * code (retune's window sweeps) can pick an executor without importing the table.
 */
export function executorFor(
  task: TaskName,
  spec: ExecutorSpec,
  load: () => Promise<SweepTask<never, unknown, never>>,
): SweepExecutor {
  checkTask(task);
  switch (spec.kind) {
    case "local":
      return sweepPool(task);
    case "inline":
      return new InlineExecutor(load);
    case "redis":
      return new RedisExecutor(spec.url, task);
  }
}
