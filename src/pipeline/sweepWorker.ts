/**
 * A sweep worker process: `fork`ed by `sweep` (sweepTasks.ts) with the name of one of its tasks as
 * its only argument; it serves that task's jobs (sweep/workerLoop.ts).
 */
import { serveTasks } from "../sweep/workerLoop.js";
import { TASKS } from "./sweepTasks.js";

serveTasks(TASKS, process.argv[2] ?? "");
