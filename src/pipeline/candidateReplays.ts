import type { CandidateReplays, ReplayJob, ReplayJobOutput } from "../sim/candidateReplays.js";
import { sweep } from "./sweepTasks.js";

/** Retune's candidate replays as `replay` sweep jobs, each in a worker process (docs/retune.md §12). */
export const sweepCandidateReplays: CandidateReplays = (jobs, opts) =>
  sweep<ReplayJob, ReplayJobOutput>(jobs, { ...opts, task: "replay" });
