import type { RunWindow } from "../engine/workerEngine.js";

/**
 * What a cluster needs from the event loop that drives it (sim/replay.ts implements it). The
 * loop owns the clock, the event heap and its same-timestamp phase order, and the client side
 * (response overhead, timeouts, terminal bookkeeping); the cluster only says what happened and
 * when its own events are due.
 */
export interface ClusterHost {
  /** Worker pass `payload` (pool id · POOL_ID_SPAN + worker) ends at `atMs`. */
  schedulePassEnd(atMs: number, payload: number): void;
  /** Starting worker `payload` (same encoding) becomes ready at `atMs`. */
  scheduleWorkerReady(atMs: number, payload: number): void;
  /** The KV transfer of request `row` to its decode worker lands at `atMs`. */
  scheduleTransferEnd(atMs: number, row: number): void;
  /** The host-tier KV load of request `row` (docs/offload.md) lands at `atMs`. */
  scheduleHostLoadEnd(atMs: number, row: number): void;
  /** An engine produced a token of `row` at engine time `t` (not its last). */
  onToken(row: number, t: number): void;
  /**
   * `onToken(rows[i], t)` for each of `rows[from .. to)`: tokens (none a last one, none of an
   * ended request) of one pass of one worker, in emission order.
   */
  onTokenRange(rows: Int32Array, from: number, to: number, t: number): void;
  /** An engine produced the last token of `row` at `t`: it completed. */
  onLastToken(row: number, t: number): void;
  /** The engine side ended `row` at `t` (Terminal.Completed or Terminal.Rejected). */
  onEnded(row: number, t: number, status: number): void;
  /** Decode-run merging is on (not the pass-by-pass reference stepper). */
  readonly runsEnabled: boolean;
  /** Whether several workers may run ahead of each other in one `drive` (no request is made ready by another's end). */
  readonly runsIndependent: boolean;
  /**
   * Where a worker's run of plain decode passes may go now: `passPoolMask` has bit `q` set for
   * each pool whose pass ends can change the worker's batch (refilled object; docs/architecture.md
   * "Decode-run merging").
   */
  runWindow(passPoolMask: number): RunWindow;
  /**
   * A run's `passes` passes ended at `endsMs[0 .. passes)`, each with a token for each of
   * `rows[0 .. count)` (none its last); the run's window guarantees the client sees them before
   * any deadline.
   */
  onRunTokens(rows: Int32Array, count: number, endsMs: Float64Array, passes: number): void;
  /** A run delivered pass ends up to `t`. */
  noteRunEnd(t: number): void;
}

/** Pool id × POOL_ID_SPAN + worker id: the payload of a pass-completion or worker-ready event. */
export const POOL_ID_SPAN = 1 << 20;

/** The key of worker `worker` (< POOL_ID_SPAN) of pool `pool`: what pass ends and worker startups carry. */
export function workerKey(pool: number, worker: number): number {
  return pool * POOL_ID_SPAN + worker;
}

/** The pool id of a worker key. */
export function poolOfWorkerKey(key: number): number {
  return (key / POOL_ID_SPAN) | 0;
}

/** The worker id, within its pool, of a worker key. */
export function workerOfWorkerKey(key: number): number {
  return key % POOL_ID_SPAN;
}
