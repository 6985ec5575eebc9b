/**
 * How recommend has its candidates replayed: `replay` sweep jobs (pipeline/sweepTasks.ts) in one
 * worker pool for the whole search, one sweep per wave of candidates, each worker running one
 * candidate, so the sweep's wall-clock bound is that candidate's timeout. The pool's workers stay
 * between waves with the workloads and timing tables they loaded (replayCaches.ts): a search's
 * candidates mostly share the trace and differ in a few knobs. The one place recommend touches
 * the sweep API: its executor (a pool of local worker processes unless told otherwise) is the one
 * interface `fleetsim sweep` and retune use too.
 */
import type { RunSpec } from "../config/runSpec.js";
import type { ReplayJob, ReplayJobOutput } from "../pipeline/replayTask.js";
import { sweepExecutor } from "../pipeline/sweepTasks.js";
import type { ExecutorSpec, SweepExecutor } from "../sweep/executor.js";
import type { SweepResult } from "../sweep/types.js";

export interface WaveOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** The replay workers of one recommendation; `close()` it when the search ends. */
export class CandidateReplayer {
  private pool: SweepExecutor | null = null;

  /** `executor`: where the replays run (docs/sweep.md "Executors"); worker processes here by default. */
  constructor(private readonly executor: ExecutorSpec = { kind: "local" }) {}

  /** Replays every spec at once, each in its own worker process; one result per spec, in order. */
  async wave(specs: readonly RunSpec[], opts: WaveOptions): Promise<SweepResult<ReplayJobOutput>[]> {
    this.pool ??= sweepExecutor("replay", this.executor);
    const jobs: ReplayJob[] = specs.map((spec) => ({ spec, capturePerRequest: false }));
    const outcome = await this.pool.sweep<ReplayJobOutput>(jobs, {
      maxParallel: Math.max(1, jobs.length),
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
    });
    return outcome.results;
  }

  /** Lets the workers go; resolves once every process has exited. */
  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = null;
  }
}
