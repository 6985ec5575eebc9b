/**
 * The in-process executor: jobs run one after another in this process through the task's own
 * `run`, exactly as a worker process would run them (the input is structured-cloned first, as
 * the IPC channel would, so a task cannot keep a reference into the caller's data). What a
 * shard-index worker uses: the pod or array task is already the isolated process, so forking
 * another would only pay a second start-up and a second copy of the simulator's memory.
 *
 * A job that never yields cannot be stopped here; `timeoutMs` and `signal` stop the jobs that have
 * not started yet (they are `timeout`).
 */
import type { SweepExecutor } from "./executor.js";
import { firstNonPlain } from "./plainData.js";
import { checkSweepStart } from "./pool.js";
import { describeError } from "./protocol.js";
import type { PoolSweepOptions, SweepOutcome, SweepResult, SweepTask } from "./types.js";

export class InlineExecutor implements SweepExecutor {
  private task: Promise<SweepTask<unknown, unknown, unknown>> | null = null;
  private running = false;
  private closed = false;

  /** `load` imports the task's module (the same table entry a worker would import). */
  constructor(private readonly load: () => Promise<SweepTask<never, unknown, never>>) {}

  async sweep<O>(jobs: readonly unknown[], opts: PoolSweepOptions): Promise<SweepOutcome<O>> {
    checkSweepStart("inline executor", opts, this.closed, this.running);
    this.running = true;
    const t0 = performance.now();
    const deadline = t0 + opts.timeoutMs;
    const results: SweepResult<O>[] = [];
    let timedOut = false;
    try {
      this.task ??= this.load() as Promise<SweepTask<unknown, unknown, unknown>>;
      for (const input of jobs) {
        if (opts.signal?.aborted === true || performance.now() >= deadline) {
          timedOut = true;
          results.push({ status: "timeout" });
          continue;
        }
        const result = await this.runOne<O>(input, opts.shared);
        results.push(result);
        opts.onResult?.(results.length - 1, result);
      }
    } finally {
      this.running = false;
    }
    return {
      results,
      processesStarted: 0,
      pids: jobs.length > 0 ? [process.pid] : [],
      timedOut,
      wallMs: performance.now() - t0,
      sharedBytes: 0,
    };
  }

  private async runOne<O>(input: unknown, shared: unknown): Promise<SweepResult<O>> {
    const bad = firstNonPlain(input);
    if (bad !== null) return { status: "failed", error: `job input is not plain data at ${bad}` };
    try {
      const task = await (this.task as Promise<SweepTask<unknown, unknown, unknown>>);
      const value = await task.run(structuredClone(input), shared);
      return { status: "ok", value: value as O };
    } catch (e) {
      return { status: "failed", error: describeError(e) };
    }
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}
