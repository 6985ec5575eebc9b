/**
 * The tasks a sweep worker can run, by name. A worker process cannot receive a function over IPC,
 * so the parent names a task and the worker imports its module from this table. Imports are lazy:
 * a worker loads only its own task (the replay task pulls in the whole simulator).
 *
 * To add a task: write `tasks/<name>.ts` exporting `run(input)`, and add one line here.
 */
import type { SweepTask } from "./types.js";

const TASKS = {
  echo: () => import("./tasks/echo.js"),
  sleep: () => import("./tasks/sleep.js"),
  replay: () => import("./tasks/replay.js"),
} as const satisfies Record<string, () => Promise<SweepTask<never, unknown>>>;

export type TaskName = keyof typeof TASKS;

export const TASK_NAMES = Object.keys(TASKS) as readonly TaskName[];

export function isTaskName(name: string): name is TaskName {
  return Object.hasOwn(TASKS, name);
}

/** Imports a task module (in the worker). */
export async function loadTask(name: string): Promise<SweepTask<unknown, unknown>> {
  if (!isTaskName(name)) throw new Error(`unknown sweep task '${name}' (known: ${TASK_NAMES.join(", ")})`);
  // The registry's `satisfies` checks each module's shape; inputs are checked by the task itself.
  return (await TASKS[name]()) as SweepTask<unknown, unknown>;
}
