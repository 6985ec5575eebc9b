/**
 * Public shapes of the sweep executor (docs/sweep.md). A sweep runs independent jobs of one
 * task in short-lived worker processes and reports one result per job, in job order. The executor
 * is generic: which tasks exist is up to the worker module it starts (pipeline/sweepTasks.ts).
 */

/** The outcome of one job. `timeout`: the sweep's wall-clock bound passed before it finished. */
export type SweepResult<O> = { readonly status: "ok"; readonly value: O } | SweepFailure;

/** A job that did not finish: it failed, or the sweep's wall-clock bound passed first. */
export type SweepFailure =
  | { readonly status: "failed"; readonly error: string }
  | { readonly status: "timeout" };

export interface SweepOptions {
  /** Most worker processes alive at once (≥ 1); a sweep starts min(maxParallel, jobs) of them. */
  readonly maxParallel: number;
  /** Wall-clock bound of the whole sweep, worker start-up included; unfinished jobs are `timeout`. */
  readonly timeoutMs: number;
  /** Name of a task the worker module serves (the pipeline's: pipeline/sweepTasks.ts). */
  readonly task: string;
  /**
   * Aborting it stops the sweep at once: every worker is killed with SIGKILL and every unfinished
   * job is `timeout` (Ctrl-C during a retune sweep).
   */
  readonly signal?: AbortSignal;
  /**
   * Plain data that every job of the sweep reads (a retune window's request table): serialized
   * once, sent once to each worker that runs a job of the sweep, and passed to the task's `run` as
   * its second argument. A worker keeps only the latest sweep's value.
   */
  readonly shared?: unknown;
  /**
   * Called once per job as soon as its result is known (`ok` or `failed`; not for jobs that time
   * out), in completion order: a caller that keeps results on disk writes each one at once, so a
   * sweep stopped half-way keeps what had finished.
   */
  readonly onResult?: (index: number, result: SweepResult<unknown>) => void;
}

/** The options of one sweep of a `SweepPool`, whose task is fixed when the pool is made. */
export type PoolSweepOptions = Omit<SweepOptions, "task">;

/** Everything a sweep observed; `runSweep` returns only `results`. */
export interface SweepOutcome<O> {
  /** One per job, in job order. */
  readonly results: SweepResult<O>[];
  /**
   * Worker processes this sweep started, replacements for crashed workers included (a pool's
   * later sweeps reuse its idle workers and start fewer, often none).
   */
  readonly processesStarted: number;
  /**
   * The process ids of the workers that ran its jobs, in the order they joined the sweep. A one-off
   * sweep's have all exited by the time the outcome is returned; a pool's live until it closes.
   */
  readonly pids: readonly number[];
  /** Whether the timeout fired (workers were killed). */
  readonly timedOut: boolean;
  /** Host wall time of the sweep, from its start until no worker runs one of its jobs, ms. */
  readonly wallMs: number;
  /** Size of the serialized shared value (sent once to each of `pids`), bytes; 0 without one. */
  readonly sharedBytes: number;
}

/**
 * A task module: one pure-ish function of a structured-clone-able input and of the sweep's shared
 * value (`SweepOptions.shared`; undefined when the sweep has none).
 */
export interface SweepTask<I, O, S = undefined> {
  run(input: I, shared: S | undefined): Promise<O> | O;
}
