/**
 * The engine contract: what the cluster, the replay, the time series and the invariant checks use
 * of one attention-DP rank's scheduler core, whichever backend it simulates (docs/backends.md):
 * `VllmEngine` (vLLM, and TRT-LLM's capacity scheduler on the same core) and `SglangEngine`.
 * Modules outside `engine/` import the engine from here (and build one with `engine/create.ts`),
 * never a backend's module (a rule of .dependency-cruiser.cjs): the backends stay replaceable.
 *
 * A pass executes eagerly at its start (`startPass`) and leaves its signals for delivery at its
 * end (`takeSignals`). Decode-run merging (`canRunPlainDecodes` / `runPlainDecodes`) is an
 * optimisation an engine may decline (answer false / 0): the cluster then steps pass by pass.
 */
import type { KvEventListener } from "./kvBlockPool.js";
import type { PassStats } from "./passStats.js";
import type { Sequence } from "./sequence.js";

export type { EngineConfig, EngineHostOffload, SglangEngineConfig, SglangSpec } from "./engineConfig.js";
export { cappedOutputTokens, makeSequence } from "./sequence.js";
export { Signal } from "./signal.js";

/** Receives admissions as they happen (at pass start). */
export interface AdmissionObserver {
  onAdmit(req: number, timeMs: number, reusedTokens: number): void;
}

/**
 * Where a run of plain decode passes may go (`WorkerEngine.runPlainDecodes`), filled by the replay
 * for each run: a pass may end within the run only if its end is before `limitMs` (the next event
 * that could change this worker's batch), at most `capMs` (the virtual-time cap), and its tokens,
 * seen by the client at end + `responseMs`, reach it by `deadlineMs` (the earliest open client
 * deadline).
 */
export interface RunWindow {
  limitMs: number;
  capMs: number;
  deadlineMs: number;
  responseMs: number;
}

/**
 * Receives the tokens of a run at its end: each of `passes` passes gave one token to each of the
 * batch's rows `rows[0 .. count)` (in batch order) at its end, pass `j` at `endsMs[j]`.
 */
export interface PlainPassSink {
  onPlainRun(rows: Int32Array, count: number, endsMs: Float64Array, passes: number): void;
}

/** The KV cache as the others see it: its size, what requests use, and its router events. */
export interface KvCacheView {
  readonly capacity: number;
  readonly activeBlocks: number;
  /** Blocks a request could take now: free plus evictable cached ones. */
  readonly availableBlocks: number;
  setListener(listener: KvEventListener | null): void;
}

export interface WorkerEngine {
  readonly pool: KvCacheView;
  readonly stats: PassStats;
  /** The metrics a Planner tick at `now` sees (passSignals.ts `publishedStats`); null: none yet. */
  publishedStats(now: number, readyAtMs: number): Readonly<PassStats> | null;
  readonly preemptions: number;
  readonly lastPassProgressed: boolean;
  readonly lastPassEnd: number;
  readonly waitingCount: number;
  readonly runningCount: number;
  readonly inFlightBatchCount: number;
  readonly inFlightActiveBlocks: number;
  readonly inFlight: number;
  readonly signalReq: Int32Array;
  readonly signalKind: Uint8Array;
  readonly signalCount: number;
  readonly heldCount: number;
  readonly reservedCount: number;
  /**
   * Whether the next pass may admit waiting requests (`prefill_schedule_interval` under attention
   * DP, set by the cluster before each pass; the SGLang core never sees it false: the config
   * refuses the setting there).
   */
  admitsWaiting: boolean;
  hasWork(): boolean;
  isIdle(): boolean;
  enqueue(seq: Sequence): void;
  startPass(now: number): number;
  takeSignals(): number;
  canRunPlainDecodes(): boolean;
  runPlainDecodes(now: number, window: RunWindow, sink: PlainPassSink): number;
  completeLoad(req: number): boolean;
  releaseHeld(req: number): void;
  cancel(req: number): boolean;
  tryReserve(s: Sequence): number;
  activate(s: Sequence): void;
  cancelReservation(s: Sequence): void;
  auditKv(reservedElsewhere: readonly Sequence[]): string | null;
}
