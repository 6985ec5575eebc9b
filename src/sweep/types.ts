/**
 * Public shapes of the sweep executor (docs/sweep.md). A sweep runs independent jobs of one
 * task in short-lived worker processes and reports one result per job, in job order. The executor
 * is generic: which tasks exist is up to the worker module it starts (pipeline/sweepTasks.ts).
 */

/** The outcome of one job. `timeout`: the sweep's wall-clock bound passed before it finished. */
export type SweepResult<O> =
  | { readonly status: "ok"; readonly value: O }
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
}

/** Everything a sweep observed; `runSweep` returns only `results`. */
export interface SweepOutcome<O> {
  /** One per job, in job order. */
  readonly results: SweepResult<O>[];
  /** Worker processes started, replacements for crashed workers included. */
  readonly processesStarted: number;
  /** Their process ids in start order (all have exited by the time the outcome is returned). */
  readonly pids: readonly number[];
  /** Whether the timeout fired (workers were killed). */
  readonly timedOut: boolean;
  /** Host wall time of the sweep, start to the last worker's exit, ms. */
  readonly wallMs: number;
}

/** A task module: one pure-ish function of a structured-clone-able input. */
export interface SweepTask<I, O> {
  run(input: I): Promise<O> | O;
}
