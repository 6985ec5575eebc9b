/**
 * The simulator's sweep worker processes without their task table: the task names and a pool of
 * workers (`SweepPool`) of one of them, forked from the worker module beside this one. Separate
 * from the table (sweepTasks.ts), which imports every task module, so that code a task itself
 * runs — retune's candidate replays inside a `predict` task's run — can start workers without an
 * import cycle through the table.
 */
import { SweepPool } from "../sweep/pool.js";
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
