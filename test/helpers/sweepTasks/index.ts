/**
 * Test-only sweep tasks (`echo`, `sleep`) and the sweeps that run them. Production registers only
 * real tasks (src/pipeline/sweepTasks.ts); these run in this folder's own worker (`worker.ts`), which
 * serves them with the production job loop, started the way the production worker is.
 */
import { SweepPool } from "../../../src/sweep/pool.js";
import { sweepWith } from "../../../src/sweep/sweep.js";
import type { SweepOptions, SweepOutcome, SweepResult, SweepTask } from "../../../src/sweep/types.js";
import { workerLaunch } from "../../../src/sweep/workerEntry.js";

export const TEST_TASKS = {
  echo: () => import("./echo.js"),
  sleep: () => import("./sleep.js"),
} as const satisfies Record<string, () => Promise<SweepTask<never, unknown, never>>>;

export type TestTaskName = keyof typeof TEST_TASKS;

export interface TestSweepOptions extends SweepOptions {
  readonly task: TestTaskName;
}

const LAUNCH = workerLaunch(import.meta.url, "worker");

/** `sweep` over a test task. */
export function testSweep<I, O>(jobs: readonly I[], opts: TestSweepOptions): Promise<SweepOutcome<O>> {
  return sweepWith<I, O>(LAUNCH, jobs, opts);
}

/** `runSweep` over a test task. */
export async function testRunSweep<I, O>(
  jobs: readonly I[],
  opts: TestSweepOptions,
): Promise<SweepResult<O>[]> {
  return (await testSweep<I, O>(jobs, opts)).results;
}

/** A pool of test-task workers, for a series of sweeps. */
export function testPool(task: TestTaskName): SweepPool {
  return new SweepPool(LAUNCH, task);
}

/** Whether process `pid` still exists (a worker that should have exited). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The values of results that must all be `ok`. */
export function okValues<O>(results: SweepResult<O>[]): O[] {
  return results.map((r) => {
    if (r.status !== "ok") throw new Error(`expected ok, got ${JSON.stringify(r)}`);
    return r.value;
  });
}
