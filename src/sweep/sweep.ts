/**
 * The sweep scheduler: up to `maxParallel` worker processes, each fed one job at a time over IPC
 * from a shared queue, results stored by job index. Processes (not threads) so that a runaway or
 * timed-out job can be killed hard and each job's memory is isolated; `fork` so the channel comes
 * with the process.
 */
import { type ChildProcess, fork } from "node:child_process";
import { firstNonPlain } from "./plainData.js";
import { type JobMessage, parseResultMessage } from "./protocol.js";
import type { SweepOptions, SweepOutcome, SweepResult } from "./types.js";
import type { WorkerLaunch } from "./workerEntry.js";

/** How long a worker may take to exit after its channel closes before it is killed. */
const EXIT_GRACE_MS = 2_000;

/**
 * Runs every job of `opts.task` in worker processes started from `launch`, a worker module that
 * serves its own task table (`serveTasks`; the pipeline's is pipeline/sweepWorker.ts, the sweep
 * tests' is test/helpers/sweepTasks/). Resolves once every worker has exited, so no process
 * outlives the sweep. A job that throws, or whose worker dies, is `failed` and the others go on (a
 * replacement worker takes over the queue); when `timeoutMs` passes every worker is killed with
 * SIGKILL and every unfinished job is `timeout`. Throws only for invalid options.
 */
export function sweepWith<I, O>(
  launch: WorkerLaunch,
  jobs: readonly I[],
  opts: SweepOptions,
): Promise<SweepOutcome<O>> {
  checkOptions(opts);
  return start(launch, jobs, opts);
}

function start<O>(
  launch: WorkerLaunch,
  jobs: readonly unknown[],
  opts: SweepOptions,
): Promise<SweepOutcome<O>> {
  return new Promise((resolve) => new Sweep<O>(jobs, opts, launch, resolve).start());
}

function checkOptions(opts: SweepOptions): void {
  if (!(Number.isInteger(opts.maxParallel) && opts.maxParallel >= 1)) {
    throw new RangeError(`maxParallel must be a positive integer, got ${opts.maxParallel}`);
  }
  if (!(opts.timeoutMs > 0 && Number.isFinite(opts.timeoutMs))) {
    throw new RangeError(`timeoutMs must be a positive finite number, got ${opts.timeoutMs}`);
  }
}

interface Worker {
  readonly child: ChildProcess;
  /** The job it is running, or -1 when idle or retiring. */
  job: number;
  /** Kills a retiring worker that does not exit by itself. */
  grace?: NodeJS.Timeout;
}

class Sweep<O> {
  private readonly results: (SweepResult<O> | undefined)[];
  private readonly queue: number[] = [];
  private readonly live = new Set<Worker>();
  private readonly pids: number[] = [];
  private readonly t0 = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private finished = false;
  // If the parent exits mid-sweep (process.exit), take the workers down with it.
  private readonly onParentExit = (): void => {
    for (const w of this.live) w.child.kill("SIGKILL");
  };

  constructor(
    private readonly jobs: readonly unknown[],
    private readonly opts: SweepOptions,
    private readonly launch: WorkerLaunch,
    private readonly done: (outcome: SweepOutcome<O>) => void,
  ) {
    this.results = new Array<SweepResult<O> | undefined>(jobs.length);
    for (let i = 0; i < jobs.length; i++) {
      // Checked here rather than in the worker: structured clone would not fail, it would
      // silently strip the prototype, and the job would run on something else.
      const bad = firstNonPlain(jobs[i]);
      if (bad === null) this.queue.push(i);
      else this.results[i] = { status: "failed", error: `job input is not plain data at ${bad}` };
    }
  }

  private readonly onAbort = (): void => this.timeout();

  start(): void {
    process.on("exit", this.onParentExit);
    this.timer = setTimeout(() => this.timeout(), this.opts.timeoutMs);
    const signal = this.opts.signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.queue.length = 0;
        this.timedOut = this.results.includes(undefined);
      } else signal.addEventListener("abort", this.onAbort, { once: true });
    }
    const n = Math.min(this.opts.maxParallel, this.queue.length);
    for (let k = 0; k < n; k++) this.spawn();
    this.maybeFinish();
  }

  private spawn(): void {
    const child = fork(this.launch.modulePath, [this.opts.task], {
      execArgv: [...this.launch.execArgv],
      serialization: "advanced",
      // The worker's stdout goes to our stderr: a task's logging must not corrupt a caller's
      // stdout (e.g. `predict --format json`).
      stdio: ["ignore", 2, "inherit", "ipc"],
    });
    const w: Worker = { child, job: -1 };
    this.live.add(w);
    if (child.pid !== undefined) this.pids.push(child.pid);
    child.on("message", (raw: unknown) => this.onMessage(w, raw));
    // 'error' without a later 'exit' means the process never started; 'exit' handles the rest.
    child.on("error", (e) => {
      if (child.pid === undefined) this.onExit(w, `worker failed to start: ${e.message}`);
    });
    child.on("exit", (code, signal) =>
      this.onExit(w, `worker exited (${signal ?? `code ${code}`}) while running the job`),
    );
    this.feed(w);
  }

  /** Gives an idle worker the next job, or lets it go when the queue is empty. */
  private feed(w: Worker): void {
    const index = this.queue.shift();
    if (index === undefined || this.timedOut) {
      w.job = -1;
      this.retire(w);
      return;
    }
    w.job = index;
    const msg: JobMessage = { type: "job", index, input: this.jobs[index] };
    const fail = (e: Error): void => {
      if (this.results[index] !== undefined) return;
      this.results[index] = { status: "failed", error: `could not send the job: ${e.message}` };
      w.child.kill("SIGKILL"); // its exit frees the slot for a replacement
    };
    try {
      w.child.send(msg, (e) => {
        if (e !== null && e !== undefined) fail(e);
      });
    } catch (e) {
      fail(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private onMessage(w: Worker, raw: unknown): void {
    const msg = parseResultMessage(raw);
    if (msg === null || msg.index !== w.job || this.timedOut) return;
    this.results[msg.index] = msg.ok
      ? { status: "ok", value: msg.value as O }
      : { status: "failed", error: msg.error };
    this.feed(w);
  }

  /** Closes the channel; the worker exits on 'disconnect', or is killed after a grace period. */
  private retire(w: Worker): void {
    if (w.child.connected) w.child.disconnect();
    w.grace = setTimeout(() => w.child.kill("SIGKILL"), EXIT_GRACE_MS);
  }

  private onExit(w: Worker, why: string): void {
    if (!this.live.delete(w)) return;
    clearTimeout(w.grace);
    if (w.job >= 0 && this.results[w.job] === undefined && !this.timedOut) {
      this.results[w.job] = { status: "failed", error: why };
    }
    w.job = -1;
    if (!this.timedOut && this.queue.length > 0) this.spawn();
    this.maybeFinish();
  }

  private timeout(): void {
    // Only a job without a result times out; workers that are merely slow to exit are killed.
    this.timedOut = this.results.includes(undefined);
    this.queue.length = 0;
    for (const w of this.live) w.child.kill("SIGKILL");
    this.maybeFinish();
  }

  private maybeFinish(): void {
    if (this.live.size > 0 || this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    process.off("exit", this.onParentExit);
    this.opts.signal?.removeEventListener("abort", this.onAbort);
    // Array.from, not map: map skips the holes of jobs that never got a result.
    const results = Array.from(this.results, (r): SweepResult<O> => r ?? { status: "timeout" });
    this.done({
      results,
      processesStarted: this.pids.length,
      pids: this.pids,
      timedOut: this.timedOut,
      wallMs: performance.now() - this.t0,
    });
  }
}
