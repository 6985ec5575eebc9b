/**
 * Where a sweep's jobs run (docs/sweep.md "Executors"). recommend's candidate replays, retune's
 * window sweeps and `fleetsim sweep run` all hand their jobs to a `SweepExecutor`, so the place a
 * job runs is chosen once, by the caller, and never changes what a job computes:
 *
 * - `local`: forked worker processes on this host (`SweepPool`);
 * - `inline`: this process, one job at a time (`InlineExecutor`): what a shard-index worker (a
 *   Kubernetes pod, a Slurm array task) runs, where the cluster's scheduler is the pool;
 * - `redis://HOST:PORT`: a BullMQ queue served by `fleetsim worker` processes anywhere. Named here so
 *   the option parses and is refused clearly until that executor is built.
 */
import { UserError } from "../util/userError.js";
import type { PoolSweepOptions, SweepOutcome } from "./types.js";

/** Runs the jobs of one task, a sweep at a time; `SweepPool.sweep`'s contract. */
export interface SweepExecutor {
  /**
   * Runs every job; one result per job, in job order. A job that throws is `failed`; when
   * `timeoutMs` passes or `signal` aborts, every job without a result is `timeout`. `onResult`
   * hears each result as it arrives. Throws only for invalid options or a closed executor.
   */
  sweep<O>(jobs: readonly unknown[], opts: PoolSweepOptions): Promise<SweepOutcome<O>>;
  /** Lets its workers go (processes, queue connections); resolves once they are gone. */
  close(): Promise<void>;
}

/** Which executor a command was asked for (`--executor`). */
export type ExecutorSpec =
  | { readonly kind: "local" }
  | { readonly kind: "inline" }
  | { readonly kind: "redis"; readonly url: string };

/** `--executor` is not one of the forms above (exit 2). */
export class ExecutorError extends UserError {}

/** Parses `local`, `inline` or `redis://HOST:PORT` (also `rediss://`). */
export function parseExecutor(text: string): ExecutorSpec {
  if (text === "local" || text === "inline") return { kind: text };
  if (/^rediss?:\/\//.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ExecutorError(`--executor ${text}: not a valid URL (expected redis://HOST:PORT)`);
    }
    if (url.hostname === "") throw new ExecutorError(`--executor ${text}: the URL names no host`);
    return { kind: "redis", url: text };
  }
  throw new ExecutorError(
    `--executor ${text}: expected local (worker processes here), inline (this process) or redis://HOST:PORT`,
  );
}
