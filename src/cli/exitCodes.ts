import type { StopSignal, StopSignals } from "../resources/stopSignals.js";

/** Process exit codes (`ai-dynamo/aisimulate@9339d0b:docs/cli/user-guide.md`). */
export const ExitCode = {
  Ok: 0,
  /** Execution failure. */
  Failure: 1,
  /** CLI syntax, YAML, schema, override, unsupported combination, bad trace, bad output dir. */
  UserError: 2,
  /** Resource refusal (preflight) or a run stopped as `resource_limited` (docs/resources.md). */
  ResourceLimited: 3,
  /** Start-up or shutdown exceeded its `execution.resources` timeout (docs/resources.md). */
  SupervisorTimeout: 124,
  /** Ctrl-C (SIGINT). */
  Interrupted: 130,
  /** SIGTERM. */
  Terminated: 143,
} as const;

/** A run stopped by a signal before its results were committed: nothing of it was kept. */
export class Interrupted extends Error {
  constructor(readonly signal: StopSignal) {
    super(`interrupted by ${signal}`);
  }
  get exitCode(): number {
    return this.signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted;
  }
}

/**
 * Runs a command's body holding its output directory's lock and its stop signals, and lets go of both
 * after. An error that a stop signal caused (`stoppedBy`: the command's own abort or a cancelled
 * write) becomes `Interrupted`, whose exit code names the signal.
 */
export async function releasingOnStop<T>(
  signals: StopSignals,
  lock: { release(): void },
  stoppedBy: (err: unknown) => boolean,
  body: () => Promise<T>,
): Promise<T> {
  try {
    return await body();
  } catch (err) {
    const stopSignal = signals.stopped;
    if (stopSignal !== null && stoppedBy(err)) throw new Interrupted(stopSignal);
    throw err;
  } finally {
    signals.uninstall();
    lock.release();
  }
}
