/**
 * The sweep scheduler: a pool of worker processes serving one task, fed one job at a time over IPC
 * from the running sweep's queue, results stored by job index. Processes (not threads) so that a
 * runaway or timed-out job can be killed hard and each job's memory is isolated; `fork` so the
 * channel comes with the process.
 *
 * A pool runs one sweep at a time and keeps its idle workers between sweeps, with whatever their
 * task cached (timing tables, workloads): a series of sweeps (one per retune window) pays the
 * processes' start-up once. `sweepWith` (sweep.ts) is a pool of one sweep.
 */
import { type ChildProcess, fork } from "node:child_process";
import { serialize } from "node:v8";
import type { SweepExecutor } from "./executor.js";
import { firstNonPlain } from "./plainData.js";
import { describeError, type JobMessage, parseResultMessage } from "./protocol.js";
import type { PoolSweepOptions, SweepOutcome, SweepResult } from "./types.js";
import type { WorkerLaunch } from "./workerEntry.js";

/** How long a worker may take to exit after its channel closes before it is killed. */
const EXIT_GRACE_MS = 2_000;

interface Worker {
  readonly child: ChildProcess;
  /** The sweep and job it runs, or null when idle. */
  busy: { readonly sweep: Sweep; readonly index: number } | null;
  /** Which sweep's shared value it holds (0: none received). */
  sharedId: number;
  /** Kills a retiring worker that does not exit by itself. */
  grace?: NodeJS.Timeout;
}

/** One sweep's state, from `sweep()` to its outcome. */
interface Sweep {
  /** Pool-unique, > 0: names the sweep's shared value in job messages. */
  readonly id: number;
  readonly jobs: readonly unknown[];
  readonly opts: PoolSweepOptions;
  readonly results: (SweepResult<unknown> | undefined)[];
  readonly queue: number[];
  /** The shared value serialized once (v8), or null without one. */
  readonly shared: Uint8Array | null;
  /** The workers that ran its jobs, in the order they joined it. */
  readonly members: Worker[];
  processesStarted: number;
  timedOut: boolean;
  readonly t0: number;
  timer?: NodeJS.Timeout;
  readonly onAbort: () => void;
  readonly done: (outcome: SweepOutcome<unknown>) => void;
}

/** Refuses a sweep an executor cannot start: bad options, the executor closed, or a sweep running. */
export function checkSweepStart(
  executor: string,
  opts: PoolSweepOptions,
  closed: boolean,
  running: boolean,
): void {
  checkOptions(opts);
  if (closed) throw new Error(`${executor}: already closed`);
  if (running) throw new Error(`${executor}: a sweep is already running`);
}

export function checkOptions(opts: PoolSweepOptions): void {
  if (!(Number.isInteger(opts.maxParallel) && opts.maxParallel >= 1)) {
    throw new RangeError(`maxParallel must be a positive integer, got ${opts.maxParallel}`);
  }
  if (!(opts.timeoutMs > 0 && Number.isFinite(opts.timeoutMs))) {
    throw new RangeError(`timeoutMs must be a positive finite number, got ${opts.timeoutMs}`);
  }
}

/**
 * Worker processes of `task` started from `launch` (a worker module serving its own task table,
 * `serveTasks`), for a series of sweeps. `close()` must follow the last sweep: it lets the idle
 * workers go and resolves once every process has exited.
 */
export class SweepPool implements SweepExecutor {
  private readonly workers = new Set<Worker>();
  private current: Sweep | null = null;
  private sweeps = 0;
  private closed = false;
  private readonly exitWaiters: (() => void)[] = [];
  // If the parent exits (process.exit) with workers alive, take them down with it.
  private readonly onParentExit = (): void => {
    for (const w of this.workers) w.child.kill("SIGKILL");
  };

  constructor(
    private readonly launch: WorkerLaunch,
    private readonly task: string,
  ) {}

  /** Live worker processes, busy or idle. */
  get size(): number {
    return this.workers.size;
  }

  /**
   * Runs every job in the pool's workers (idle ones first, then new ones, `maxParallel` at most
   * running at once). A job that throws, or whose worker dies, is `failed` and the others go on (a
   * replacement worker takes over the queue); when `timeoutMs` passes or `signal` aborts, the
   * workers running its jobs are killed with SIGKILL and every unfinished job is `timeout`.
   * Resolves once no worker runs one of its jobs. Throws for invalid options, a closed pool or a
   * sweep already running.
   */
  sweep<O>(jobs: readonly unknown[], opts: PoolSweepOptions): Promise<SweepOutcome<O>> {
    checkSweepStart("sweep pool", opts, this.closed, this.current !== null);
    return new Promise((resolve) => {
      this.start(jobs, opts, resolve as (outcome: SweepOutcome<unknown>) => void);
    });
  }

  /** Stops a sweep in flight (as a timeout), lets idle workers exit; resolves when all have. */
  close(): Promise<void> {
    this.closed = true;
    if (this.current !== null) this.timeout(this.current);
    for (const w of this.workers) if (w.busy === null) this.retire(w);
    return new Promise((resolve) => {
      if (this.workers.size === 0) resolve();
      else this.exitWaiters.push(resolve);
    });
  }

  private start(
    jobs: readonly unknown[],
    opts: PoolSweepOptions,
    done: (outcome: SweepOutcome<unknown>) => void,
  ): void {
    const results = new Array<SweepResult<unknown> | undefined>(jobs.length);
    const queue: number[] = [];
    for (let i = 0; i < jobs.length; i++) {
      // Checked here rather than in the worker: structured clone would not fail, it would
      // silently strip the prototype, and the job would run on something else.
      const bad = firstNonPlain(jobs[i]);
      if (bad === null) queue.push(i);
      else results[i] = { status: "failed", error: `job input is not plain data at ${bad}` };
    }
    const shared = this.serializeShared(opts.shared, queue, results);
    const s: Sweep = {
      id: ++this.sweeps,
      jobs,
      opts,
      results,
      queue,
      shared,
      members: [],
      processesStarted: 0,
      timedOut: false,
      t0: performance.now(),
      onAbort: () => this.timeout(s),
      done,
    };
    this.current = s;
    // Jobs that failed before any worker saw them (bad input, bad shared value) are known now.
    results.forEach((r, i) => {
      if (r !== undefined) opts.onResult?.(i, r);
    });
    s.timer = setTimeout(() => this.timeout(s), opts.timeoutMs);
    const signal = opts.signal;
    if (signal?.aborted === true) {
      queue.length = 0;
      s.timedOut = results.includes(undefined);
    } else signal?.addEventListener("abort", s.onAbort, { once: true });
    const n = Math.min(opts.maxParallel, queue.length);
    const idle = this.idleWorkers().slice(0, n);
    for (const w of idle) this.feed(w);
    for (let k = idle.length; k < n; k++) this.spawn(s);
    this.maybeFinish(s);
  }

  /**
   * The shared value as bytes, serialized once for every worker (v8, as the channel would per
   * message). Not plain data, or not serializable: every queued job fails, as a bad input would.
   */
  private serializeShared(
    shared: unknown,
    queue: number[],
    results: (SweepResult<unknown> | undefined)[],
  ): Uint8Array | null {
    if (shared === undefined) return null;
    const bad = firstNonPlain(shared);
    let error = bad === null ? null : `the shared input is not plain data at ${bad}`;
    let bytes: Uint8Array | null = null;
    if (error === null) {
      try {
        bytes = serialize(shared);
      } catch (e) {
        error = `the shared input could not be serialized: ${describeError(e)}`;
      }
    }
    if (error !== null) {
      for (const i of queue) results[i] = { status: "failed", error };
      queue.length = 0;
    }
    return bytes;
  }

  private spawn(s: Sweep): void {
    const child = fork(this.launch.modulePath, [this.task], {
      execArgv: [...this.launch.execArgv],
      serialization: "advanced",
      // The worker's stdout goes to our stderr: a task's logging must not corrupt a caller's
      // stdout (e.g. `predict --format json`).
      stdio: ["ignore", 2, "inherit", "ipc"],
    });
    const w: Worker = { child, busy: null, sharedId: 0 };
    if (this.workers.size === 0) process.on("exit", this.onParentExit);
    this.workers.add(w);
    s.processesStarted++;
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

  /** Gives a worker the running sweep's next job; without one it stays idle in the pool. */
  private feed(w: Worker): void {
    const s = this.current;
    const index = s === null || s.timedOut ? undefined : s.queue.shift();
    if (s === null || index === undefined) {
      w.busy = null;
      if (this.closed) this.retire(w);
      if (s !== null) this.maybeFinish(s);
      return;
    }
    w.busy = { sweep: s, index };
    if (!s.members.includes(w)) s.members.push(w);
    // The sweep's shared value rides along with the first job a worker gets of it (null tells a
    // worker that kept an earlier sweep's value to drop it).
    const shared = w.sharedId === s.id ? undefined : { id: s.id, bytes: s.shared };
    w.sharedId = s.id;
    const msg: JobMessage = { type: "job", index, input: s.jobs[index], shared };
    const fail = (e: Error): void => {
      if (s.results[index] !== undefined) return;
      this.record(s, index, { status: "failed", error: `could not send the job: ${e.message}` });
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
    const busy = w.busy;
    if (msg === null || busy === null || msg.index !== busy.index || busy.sweep.timedOut) return;
    this.record(
      busy.sweep,
      msg.index,
      msg.ok ? { status: "ok", value: msg.value } : { status: "failed", error: msg.error },
    );
    this.feed(w);
  }

  /** Stores a job's result and tells the caller's `onResult` at once. */
  private record(s: Sweep, index: number, result: SweepResult<unknown>): void {
    s.results[index] = result;
    s.opts.onResult?.(index, result);
  }

  /** Workers that can take a job now, in start order. */
  private idleWorkers(): Worker[] {
    return [...this.workers].filter((w) => w.busy === null && w.grace === undefined && w.child.connected);
  }

  /** Closes the channel; the worker exits on 'disconnect', or is killed after a grace period. */
  private retire(w: Worker): void {
    if (w.grace !== undefined) return;
    if (w.child.connected) w.child.disconnect();
    w.grace = setTimeout(() => w.child.kill("SIGKILL"), EXIT_GRACE_MS);
  }

  private onExit(w: Worker, why: string): void {
    if (!this.workers.delete(w)) return;
    clearTimeout(w.grace);
    const busy = w.busy;
    w.busy = null;
    if (busy !== null) {
      const s = busy.sweep;
      if (s.results[busy.index] === undefined && !s.timedOut) {
        this.record(s, busy.index, { status: "failed", error: why });
      }
      if (!s.timedOut && s.queue.length > 0 && !this.closed) {
        // Its slot goes to an idle worker of the pool if one is left, else to a new process.
        const idle = this.idleWorkers()[0];
        if (idle === undefined) this.spawn(s);
        else this.feed(idle);
      }
      this.maybeFinish(s);
    }
    if (this.workers.size === 0) {
      process.off("exit", this.onParentExit);
      for (const resolve of this.exitWaiters.splice(0)) resolve();
    }
  }

  private timeout(s: Sweep): void {
    if (this.current !== s) return;
    // Only a job without a result times out; the workers still running its jobs are killed.
    s.timedOut = s.results.includes(undefined);
    s.queue.length = 0;
    for (const w of this.workers) if (w.busy?.sweep === s) w.child.kill("SIGKILL");
    this.maybeFinish(s);
  }

  /** Resolves the sweep once its queue is empty and no worker runs (or is dying on) its jobs. */
  private maybeFinish(s: Sweep): void {
    if (this.current !== s || s.queue.length > 0) return;
    for (const w of this.workers) if (w.busy?.sweep === s) return;
    this.current = null;
    clearTimeout(s.timer);
    s.opts.signal?.removeEventListener("abort", s.onAbort);
    // Array.from, not map: map skips the holes of jobs that never got a result.
    const results = Array.from(s.results, (r): SweepResult<unknown> => r ?? { status: "timeout" });
    s.done({
      results,
      processesStarted: s.processesStarted,
      pids: s.members.flatMap((w) => (w.child.pid === undefined ? [] : [w.child.pid])),
      timedOut: s.timedOut,
      wallMs: performance.now() - s.t0,
      sharedBytes: s.shared?.byteLength ?? 0,
    });
  }
}
