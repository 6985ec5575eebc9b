/**
 * The tasks a sweep worker can run, by name. A worker process cannot receive a function over IPC,
 * so the parent names a task and the worker imports its module from this table. Imports are lazy:
 * a worker loads only its own task (the replay task pulls in the whole simulator).
 *
 * To add a task: write `tasks/<name>.ts` exporting `run(input)`, and add one line here.
 */
import type { SweepTask } from "./types.js";

export const TASKS = {
  replay: () => import("./tasks/replay.js"),
} as const satisfies Record<string, () => Promise<SweepTask<never, unknown>>>;

export type TaskName = keyof typeof TASKS;

export const TASK_NAMES = Object.keys(TASKS) as readonly TaskName[];

export function isTaskName(name: string): name is TaskName {
  return Object.hasOwn(TASKS, name);
}
