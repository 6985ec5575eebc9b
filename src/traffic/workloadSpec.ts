/**
 * The workload parts of a run spec that traffic/ builds request tables from: the synthetic
 * sources, the load and the stop condition. config/runSpec.ts re-exports them (RunSpec fields).
 */
import type { LengthSpec } from "./lengthDistribution.js";
import type { RateStage } from "./stagedArrivals.js";

/**
 * Synthetic requests (`synthetic`, and `synthetic-shared-prefix` with `sharedPrefix` set). The
 * optional fields are fleetsim extensions (docs/traffic.md); specs built in code may leave them
 * out, which means fixed lengths and unique prompts.
 */
export interface SyntheticSourceSpec {
  readonly type: "synthetic";
  /** The fixed prompt length, or the nominal mean of `input` (what reports show). */
  readonly inputTokens: number;
  /** The fixed output length, or the nominal mean of `output`. */
  readonly outputTokens: number;
  /** Per-request prompt length (the question's length when `sharedPrefix` is set). */
  readonly input?: LengthSpec;
  readonly output?: LengthSpec;
  /** Seed of the length draws and of the shared-prefix prompt order (`traffic.source.seed`, 42). */
  readonly seed?: number;
  readonly sharedPrefix?: SharedPrefixSpec | null;
}

/** `synthetic-shared-prefix`: prompts of one group share a system prompt (traffic/sharedPrefix.ts). */
export interface SharedPrefixSpec {
  readonly groups: number;
  readonly promptsPerGroup: number;
  readonly systemPromptTokens: number;
}

/** `synthetic-session` (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`; traffic/synthetic/sessions.ts). */
export interface SyntheticSessionSourceSpec {
  readonly type: "synthetic-session";
  /** Nominal means of `newInput` and `output` (what reports show). */
  readonly newInputTokensPerTurn: number;
  readonly outputTokensPerTurn: number;
  readonly newInput: LengthSpec;
  readonly output: LengthSpec;
  readonly turns: number;
  readonly sharedPrefixRatio: number;
  readonly prefixGroups: number;
  readonly interTurnDelayMs: number;
  readonly seed: number;
}

/**
 * `requestsPerSecond` of an open-loop load is the rate of its arrival units: requests, or sessions
 * (first turns) for a `synthetic-session` source. With `stages` (docs/traffic.md §Stages) it is
 * the stages' time-weighted mean rate, for reports; the stages decide the arrivals.
 */
export type LoadSpec =
  | {
      readonly type: "concurrency";
      readonly concurrency: number;
      /** Sessions of a warm-up phase that the rest wait for (`warmup_sessions`; absent: none). */
      readonly warmupSessions?: number;
    }
  | {
      readonly type: "poisson";
      readonly requestsPerSecond: number;
      readonly seed: number;
      readonly stages?: readonly RateStage[] | null;
    }
  | {
      readonly type: "constant_rate";
      readonly requestsPerSecond: number;
      readonly stages?: readonly RateStage[] | null;
    }
  | { readonly type: "trace_timestamps"; readonly speedup: number };

export interface StopSpec {
  /**
   * Synthetic only: number of requests to generate (resolved from `requests` or
   * `requests_per_load_unit`; sessions × turns for sessions; the expected count under stages).
   */
  readonly requests: number | null;
  /** `synthetic-session` only: sessions to generate (`sessions` or `sessions_per_load_unit`). */
  readonly sessions?: number | null;
  /** Trace only: soft cap on virtual time (1000 × `max_virtual_time_seconds`). */
  readonly maxVirtualTimeMs: number | null;
}
