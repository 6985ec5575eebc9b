/**
 * The sweep tasks of the simulator, by name, and the sweeps that run them. A worker process cannot
 * receive a function over IPC, so the parent names a task and the worker (sweepWorker.ts) imports
 * its module from this table. Imports are lazy: a worker loads only its own task (the replay task
 * pulls in the whole simulator).
 *
 * To add a task: write a module exporting `run(input)`, and add one line here.
 */
import { SweepPool } from "../sweep/pool.js";
import { sweepWith } from "../sweep/sweep.js";
import type { SweepOptions, SweepOutcome, SweepResult, SweepTask } from "../sweep/types.js";
import { workerLaunch } from "../sweep/workerEntry.js";
import { BUNDLE_DIR, BUNDLED, packageRootUrl } from "../util/packageRoot.js";

export const TASKS = {
  replay: () => import("./replayTask.js"),
} as const satisfies Record<string, () => Promise<SweepTask<never, unknown, never>>>;

export type TaskName = keyof typeof TASKS;

export const TASK_NAMES = Object.keys(TASKS) as readonly TaskName[];

export function isTaskName(name: string): name is TaskName {
  return Object.hasOwn(TASKS, name);
}

function checkTask(task: string): void {
  if (!isTaskName(task)) {
    throw new Error(`unknown sweep task '${task}' (known: ${TASK_NAMES.join(", ")})`);
  }
}

/**
 * Where the worker module lies: beside this module in the sources and in tsc's output; the
 * bundled CLI forks the bundle's own worker entry (`dist/bundle/sweepWorker.js`, which shares
 * the CLI's chunks) instead of tsc's unbundled one.
 */
function workerBeside(): string {
  return BUNDLED ? new URL(BUNDLE_DIR, packageRootUrl()).href : import.meta.url;
}

/** Runs every job of one of the tasks above in worker processes (see `sweepWith`). */
export function sweep<I, O>(jobs: readonly I[], opts: SweepOptions): Promise<SweepOutcome<O>> {
  checkTask(opts.task);
  return sweepWith(workerLaunch(workerBeside(), "sweepWorker"), jobs, opts);
}

/** A pool of workers of one of the tasks above for a series of sweeps; `close()` it after the last. */
export function sweepPool(task: TaskName): SweepPool {
  checkTask(task);
  return new SweepPool(workerLaunch(workerBeside(), "sweepWorker"), task);
}

/** `sweep`'s results alone, in job order. */
export async function runSweep<I, O>(jobs: readonly I[], opts: SweepOptions): Promise<SweepResult<O>[]> {
  return (await sweep<I, O>(jobs, opts)).results;
}
