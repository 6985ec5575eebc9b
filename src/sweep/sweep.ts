/**
 * A one-off sweep: a pool (pool.ts) that runs one sweep and is closed at once, so no worker
 * outlives it. A series of sweeps that should keep their workers (and what their task caches)
 * uses a `SweepPool` directly.
 */
import { checkOptions, SweepPool } from "./pool.js";
import type { SweepOptions, SweepOutcome } from "./types.js";
import type { WorkerLaunch } from "./workerEntry.js";

/**
 * Runs every job of `opts.task` in worker processes started from `launch`, a worker module that
 * serves its own task table (`serveTasks`; the pipeline's is pipeline/sweepWorker.ts, the sweep
 * tests' is test/helpers/sweepTasks/). Resolves once every worker has exited (`SweepPool.sweep`
 * says what happens to failing, crashing and timed-out jobs). Throws only for invalid options.
 */
export function sweepWith<I, O>(
  launch: WorkerLaunch,
  jobs: readonly I[],
  opts: SweepOptions,
): Promise<SweepOutcome<O>> {
  checkOptions(opts);
  const pool = new SweepPool(launch, opts.task);
  const outcome = pool.sweep<O>(jobs, opts);
  return outcome.then(
    async (o) => {
      await pool.close();
      return o;
    },
    async (e: unknown) => {
      await pool.close();
      throw e;
    },
  );
}
