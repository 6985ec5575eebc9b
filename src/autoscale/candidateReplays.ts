/**
 * How the retune controller has its candidate window replays run. The replays are whole pipeline
 * runs (spec → workload → timing → Planner → replay), which sit above sim/; the pipeline injects
 * an implementation (pipeline/candidateReplays.ts: the `replay` sweep task in worker processes), so
 * sim/ does not import the layers that contain it.
 */
import type { RunSpec } from "../config/runSpec.js";
import type { Summary } from "../metrics/summary.js";
import type { WarmupWindow } from "../planner/predictors/series.js";
import type { SweepOutcome } from "../sweep/types.js";

/** One candidate replay of a window: a spec (plain data, sent to a worker process). */
export interface CandidateJob {
  readonly spec: RunSpec;
  /** Per-request records are never shipped back: a sweep scores summaries. */
  readonly capturePerRequest: false;
  /**
   * With `spec.planner` scaling on throughput: the inner Planner's predictor warm-up (a retune
   * candidate's history buckets, docs/retune.md §5), used instead of `load_predictor_warmup_trace`.
   */
  readonly plannerWarmup?: readonly WarmupWindow[];
}

/** A window's candidate replays: every job replays the same rows of the run's request table. */
export interface CandidateBatch {
  /** Strictly increasing rows of the replayed table (traffic/tableRows.ts). */
  readonly rows: readonly number[];
  readonly jobs: readonly CandidateJob[];
}

export interface ReplayJobOutput {
  readonly summary: Summary;
  /**
   * GPUs provisioned over the run (report/fleet.ts): the most at once and the time average
   * (gpu_hours over the duration); for a fixed deployment both are its GPU count.
   */
  readonly provisionedGpus?: ProvisionedGpus;
}

/** Peak and mean provisioned GPUs of a run; null where the run cannot tell. */
export interface ProvisionedGpus {
  readonly peak: number | null;
  readonly mean: number | null;
}

export interface CandidateReplayOptions {
  /** Most replays running at once. */
  readonly maxParallel: number;
  /** Wall-clock bound of the whole batch; unfinished replays are `timeout`. */
  readonly timeoutMs: number;
  /** Aborting it stops every replay at once (Ctrl-C). */
  readonly signal: AbortSignal;
}

/** Runs a window's candidate replays; one result per job, in job order. */
export type CandidateReplays = (
  batch: CandidateBatch,
  opts: CandidateReplayOptions,
) => Promise<SweepOutcome<ReplayJobOutput>>;
