/**
 * How recommend has its candidates replayed: `replay` sweep jobs (pipeline/sweepTasks.ts), one
 * sweep per wave of candidates, each worker process running one candidate, so the sweep's
 * wall-clock bound is that candidate's timeout. The one place recommend touches the sweep API.
 */
import type { RunSpec } from "../config/runSpec.js";
import { sweep } from "../pipeline/sweepTasks.js";
import type { ReplayJob, ReplayJobOutput } from "../sim/candidateReplays.js";
import type { SweepResult } from "../sweep/types.js";

export interface WaveOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** Replays every spec at once in its own worker process; one result per spec, in order. */
export async function replayWave(
  specs: readonly RunSpec[],
  opts: WaveOptions,
): Promise<SweepResult<ReplayJobOutput>[]> {
  const jobs: ReplayJob[] = specs.map((spec) => ({ spec, capturePerRequest: false }));
  const outcome = await sweep<ReplayJob, ReplayJobOutput>(jobs, {
    task: "replay",
    maxParallel: Math.max(1, jobs.length),
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
  });
  return outcome.results;
}
