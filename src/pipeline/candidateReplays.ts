/**
 * Retune's candidate replays as `replay` sweep jobs (docs/retune.md §12), on one executor kept for
 * the whole run (local worker processes unless `predict --executor` names another, docs/sweep.md
 * "Executors"): a worker starts once, and keeps the timing models it built, for every window. Each window's request table is built here, once, from the run's own table (the
 * window's rows, traffic/tableRows.ts), and sent once to each worker as the sweep's shared input,
 * so no worker reads the trace.
 */
import type { CandidateReplays, ReplayJobOutput } from "../autoscale/candidateReplays.js";
import type { ExecutorSpec, SweepExecutor } from "../sweep/executor.js";
import { describeError } from "../sweep/protocol.js";
import type { RequestTable } from "../traffic/requests.js";
import { selectRows } from "../traffic/tableRows.js";
import type { ReplayShared } from "./replayTask.js";
import { executorFor } from "./sweepWorkers.js";

export interface CandidateReplayPool {
  readonly replays: CandidateReplays;
  /** Lets the workers go; resolves once every one has exited. */
  close(): Promise<void>;
}

/**
 * The candidate replays of a run replaying `table`. `needTimestamps` (open-loop load): every
 * session's first row in a window must have a timestamp (`selectRows`).
 */
export function candidateReplayPool(
  table: RequestTable,
  needTimestamps: boolean,
  executor: ExecutorSpec = { kind: "local" },
): CandidateReplayPool {
  const pool: SweepExecutor = executorFor("replay", executor, () => import("./replayTask.js"));
  const replays: CandidateReplays = async ({ rows, jobs }, opts) => {
    const t0 = performance.now();
    let shared: ReplayShared;
    try {
      shared = { table: selectRows(table, rows, needTimestamps) };
    } catch (e) {
      // A window the rows cannot replay fails every candidate alike, as it would in each worker.
      const error = describeError(e);
      return {
        results: jobs.map(() => ({ status: "failed", error })),
        processesStarted: 0,
        pids: [],
        timedOut: false,
        wallMs: performance.now() - t0,
        sharedBytes: 0,
      };
    }
    return pool.sweep<ReplayJobOutput>(jobs, { ...opts, shared });
  };
  return { replays, close: () => pool.close() };
}
