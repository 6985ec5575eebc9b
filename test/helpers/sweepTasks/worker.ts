/** The sweep tests' worker process: serves the test tasks with the production job loop. */
import { serveTasks } from "../../../src/sweep/workerLoop.js";
import { TEST_TASKS } from "./index.js";

serveTasks(TEST_TASKS, process.argv[2] ?? "");
