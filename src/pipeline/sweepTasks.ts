/**
 * The sweep tasks of the simulator, by name, and the sweeps that run them. A worker process cannot
 * receive a function over IPC, so the parent names a task and the worker (sweepWorker.ts) imports
 * its module from this table. Imports are lazy: a worker loads only its own task (the replay task
 * pulls in the whole simulator).
 *
 * To add a task: write a module exporting `run(input)`, add one line here and its name to
 * `TASK_NAMES` (sweepWorkers.ts).
 */
import type { ExecutorSpec, SweepExecutor } from "../sweep/executor.js";
import { sweepWith } from "../sweep/sweep.js";
import type { SweepOptions, SweepOutcome, SweepResult, SweepTask } from "../sweep/types.js";
import { workerLaunch } from "../sweep/workerEntry.js";
import { checkTask, executorFor, type TaskName, workerBeside } from "./sweepWorkers.js";

export const TASKS = {
  replay: () => import("./replayTask.js"),
  predict: () => import("./predictTask.js"),
} as const satisfies Record<TaskName, () => Promise<SweepTask<never, unknown, never>>>;

export { checkTask, isTaskName, sweepPool, TASK_NAMES, type TaskName } from "./sweepWorkers.js";

/** Runs every job of one of the tasks above in worker processes (see `sweepWith`). */
export function sweep<I, O>(jobs: readonly I[], opts: SweepOptions): Promise<SweepOutcome<O>> {
  checkTask(opts.task);
  return sweepWith(workerLaunch(workerBeside(), "sweepWorker"), jobs, opts);
}

/** `sweep`'s results alone, in job order. */
export async function runSweep<I, O>(jobs: readonly I[], opts: SweepOptions): Promise<SweepResult<O>[]> {
  return (await sweep<I, O>(jobs, opts)).results;
}

/** The executor `spec` names for one of the tasks above (`executorFor`); `close()` it after the last sweep. */
export function sweepExecutor(task: TaskName, spec: ExecutorSpec = { kind: "local" }): SweepExecutor {
  checkTask(task);
  return executorFor(task, spec, TASKS[task]);
}

/**
 * The sandboxed processor module `fleetsim worker --redis` has BullMQ fork (redisProcessor.ts):
 * the bundle's own entry for the bundled CLI, else the module beside this one (`.ts` from the
 * sources, where the worker runs under tsx and its forks inherit the loader).
 */
export function redisProcessorPath(): string {
  return workerLaunch(workerBeside(), "redisProcessor").modulePath;
}
