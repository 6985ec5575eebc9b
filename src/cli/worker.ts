/**
 * `fleetsim worker --redis URL` (docs/sweep.md "With Redis"): serves the queues of the simulator's
 * sweep tasks — candidate replays of `recommend --executor redis://…` and of retune's windows
 * (`predict --executor redis://…`), points of `sweep run --executor redis://…` — until SIGINT or SIGTERM, then stops taking jobs, lets the running ones
 * finish and exits 0. A second signal exits at once: BullMQ hands the unfinished jobs to another
 * worker when their locks expire.
 */
import { redisProcessorPath, TASK_NAMES } from "../pipeline/sweepTasks.js";
import { StopSignals } from "../resources/stopSignals.js";
import { parseExecutor } from "../sweep/executor.js";
import { serveRedis } from "../sweep/redisWorker.js";
import { UserError } from "../util/userError.js";
import { ExitCode } from "./exitCodes.js";
import type { Streams } from "./streams.js";

export interface WorkerCommandOptions {
  readonly redis: string;
  /** Jobs at once per task queue (default 1: one replay per CPU is the caller's choice). */
  readonly concurrency: number;
  readonly lockSeconds: number;
  /**
   * The command owns its process (the `fleetsim` executable): a worker whose Redis stopped
   * answering exits once it has let go, rather than wait on the client library's reconnect timers.
   */
  readonly ownsProcess?: boolean;
}

export async function workerCommand(opts: WorkerCommandOptions, io: Streams): Promise<number> {
  const spec = parseExecutor(opts.redis);
  if (spec.kind !== "redis") throw new UserError(`--redis ${opts.redis}: expected redis://HOST:PORT`);
  const log = (line: string): void => io.err(`fleetsim: info: ${line}\n`);
  const handle = await serveRedis({
    url: spec.url,
    tasks: TASK_NAMES,
    processorPath: redisProcessorPath(),
    concurrency: opts.concurrency,
    lockMs: Math.round(opts.lockSeconds * 1000),
    log,
  });
  // The handlers before the line that says the worker serves: a supervisor that stops it on that
  // line must not find the signal's default action (an exit without the exit handlers, e.g. the
  // code cache's write) still in place.
  const stopped = new Promise<"SIGINT" | "SIGTERM">((resolve) => {
    const signals = new StopSignals((signal) => {
      process.exit(signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted);
    }).install();
    signals.onStop(() => resolve(signals.stopped ?? "SIGTERM"));
  });
  log(
    `worker ${process.pid} serving ${TASK_NAMES.map((t) => `fleetsim-${t}`).join(", ")} on ${spec.url} ` +
      `(${opts.concurrency} job${opts.concurrency === 1 ? "" : "s"} at once per queue); Ctrl-C to stop`,
  );
  const signal = await stopped;
  log(`${signal}: finishing the running jobs (a second signal exits now)`);
  const how = await handle.close();
  if (how === "lost" && opts.ownsProcess === true) process.exit(ExitCode.Ok);
  return ExitCode.Ok;
}
