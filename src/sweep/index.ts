/** The sweep executor (docs/sweep.md). */
export { TASK_NAMES, type TaskName } from "./registry.js";
export { runSweep, sweep } from "./sweep.js";
export { type ReplayJob, type ReplayJobOutput, replayJob } from "./tasks/replay.js";
export type { SweepOptions, SweepOutcome, SweepResult, SweepTask } from "./types.js";
