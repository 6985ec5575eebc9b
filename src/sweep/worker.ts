/**
 * A sweep worker process: `fork`ed by `sweep` with the name of a registered task (registry.ts)
 * as its only argument; it serves that task's jobs (workerLoop.ts).
 */
import { TASKS } from "./registry.js";
import { serveTasks } from "./workerLoop.js";

serveTasks(TASKS, process.argv[2] ?? "");
