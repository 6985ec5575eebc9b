import type { Summary } from "../output/summary.js";
import { type Collector, Terminal } from "./collector.js";
import { statKeys } from "./distribution.js";
import { buildExactStats, DEFAULT_COLLECT_LIMIT, ExactStatsBuilder } from "./exactStatsBuilder.js";
import { hasSla, isGood, type SlaThresholds } from "./goodput.js";
import type { LogColumn, RequestRows } from "./requestLog.js";
import { judgeSaturation, type SaturationJudgement } from "./saturation.js";
import type { TimelineSamples } from "./timeline.js";

export { HOST_TIME_KEYS } from "../output/summary.js";
export type { Summary };

/**
 * What a summary is computed from: the parts of a replay's result it reads (the replay's
 * `ReplayResult` satisfies it), declared here so metrics/ does not depend on the simulator.
 */
export interface SummaryInput {
  /** Arrivals counted and the streaming ITL / per-user throughput distributions. */
  readonly collector: Pick<Collector, "arrived" | "itlStats" | "perUserThroughputStats">;
  /** Every request's final columns, in row order. */
  readonly requests: RequestRows;
  /** Host time spent in the event loop, ms (`wall_time_ms`). */
  readonly wallTimeMs: number;
  /** ∫ provisioned workers dt over the run, in worker-seconds, per role. */
  readonly prefillWorkerSeconds: number;
  readonly decodeWorkerSeconds: number;
  readonly prefillGpusPerWorker: number;
  readonly decodeGpusPerWorker: number;
  /** Prompt and recompute tokens the passes computed (`committed_prefill_tokens`). */
  readonly committedPrefillTokens: number;
  /** The `timeseries` buckets (saturation is judged on them). */
  readonly timeline: Pick<TimelineSamples, "intervalMs" | "count">;
  /**
   * Speculative decoding over the run: sequence passes that verified drafts, the drafts, the
   * tokens those passes emitted; null (or absent) when it is off.
   */
  readonly speculation?: SpeculationInput | null;
}

/** Speculative decoding's counters over a run (the replay's `SpeculationCounts`). */
export interface SpeculationInput {
  readonly drafts: number;
  readonly draftTokens: number;
  readonly tokens: number;
}

const SUMMARY_COLUMNS: readonly LogColumn[] = [
  "status",
  "admissions",
  "tokens",
  "inputLength",
  "reusedMax",
  "reusedFirst",
  "terminal",
  "arrival",
  "firstToken",
  "secondToken",
  "lastToken",
];
/** What the later passes of the exact distributions read. */
const DISTRIBUTION_COLUMNS: readonly LogColumn[] = [
  "status",
  "admissions",
  "tokens",
  "arrival",
  "firstToken",
  "secondToken",
  "lastToken",
];

/** Slots of `buildSummary`'s sums. */
const INPUT = 0;
const OUTPUT = 1;
const REUSED_MAX = 2;
const REUSED_FIRST = 3;
const DURATION = 4;
const GOOD_OUTPUT = 5;
const SUM_SLOTS = 6;

/**
 * The `summary` object of prediction.json (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`; definitions in docs/metrics.md).
 * Populations: a request is *completed* iff it was admitted and terminated Completed; rejected or
 * unfinished requests count only in `num_requests`. One scan of the request log in row order
 * gives the counts and sums; the exact distributions take as many more as they need
 * (exactStatsBuilder.ts: none while they fit in memory).
 */
export function buildSummary(
  result: SummaryInput,
  sla: SlaThresholds | null,
  collectLimit: number = DEFAULT_COLLECT_LIMIT,
): Summary {
  const c = result.collector;
  const ttft = new ExactStatsBuilder(collectLimit);
  const ttst = new ExactStatsBuilder(collectLimit);
  const tpot = new ExactStatsBuilder(collectLimit);
  const e2e = new ExactStatsBuilder(collectLimit);
  let nTtft = 0;
  let nTpot = 0;
  let completed = 0;
  let good = 0;
  // Token sums (past a small integer's range on long runs) and the last terminal time, kept in a
  // typed array: a double in a variable the scan's callback updates is a new heap number per row.
  const sums = new Float64Array(SUM_SLOTS);
  const slaSet = hasSla(sla);

  let rejected = 0;
  let timedOut = 0;
  buildExactStats([ttft, ttst, tpot, e2e], (pass) => {
    const first = pass === 0;
    result.requests.scan(first ? SUMMARY_COLUMNS : DISTRIBUTION_COLUMNS, (col, rows) => {
      for (let r = 0; r < rows; r++) {
        const status = col.status[r];
        if (first) {
          if (status === Terminal.Rejected) rejected++;
          else if (status === Terminal.TimedOut) timedOut++;
        }
        if (status !== Terminal.Completed || col.admissions[r] === 0) continue;
        const tokens = col.tokens[r];
        let rTtft: number | null = null;
        let rE2e: number | null = null;
        if (tokens >= 1) {
          rTtft = Math.max(0, col.firstToken[r] - col.arrival[r]);
          rE2e = col.lastToken[r] - col.arrival[r];
          ttft.add(rTtft);
          e2e.add(rE2e);
        }
        if (tokens >= 2) {
          ttst.add(col.secondToken[r] - col.firstToken[r]);
          tpot.add((col.lastToken[r] - col.firstToken[r]) / (tokens - 1));
        }
        if (!first) continue;
        completed++;
        sums[INPUT] += col.inputLength[r];
        sums[OUTPUT] += tokens;
        sums[REUSED_MAX] += col.reusedMax[r];
        sums[REUSED_FIRST] += col.reusedFirst[r];
        if (col.terminal[r] > sums[DURATION]) sums[DURATION] = col.terminal[r];
        if (tokens >= 1) nTtft++;
        if (tokens >= 2) nTpot++;
        if (slaSet && isGood(sla, rTtft, rE2e, tokens)) {
          good++;
          sums[GOOD_OUTPUT] += tokens;
        }
      }
    });
  });

  const inputTokens = sums[INPUT];
  const outputTokens = sums[OUTPUT];
  const reusedMax = sums[REUSED_MAX];
  const reusedFirst = sums[REUSED_FIRST];
  const durationMs = sums[DURATION];
  const goodOutput = sums[GOOD_OUTPUT];
  const durationS = Math.max(durationMs / 1000, 1e-9);
  const wallS = Math.max(result.wallTimeMs / 1000, 1e-9);
  const gpuHours =
    (result.prefillWorkerSeconds * result.prefillGpusPerWorker +
      result.decodeWorkerSeconds * result.decodeGpusPerWorker) /
    3600;

  // fleetsim extension (docs/metrics.md "Saturation"): 1 when the backlog still grew at the last arrival.
  const sat = saturationOfRun(result);
  return {
    num_requests: c.arrived,
    completed_requests: completed,
    total_input_tokens: inputTokens,
    total_output_tokens: outputTokens,
    duration_ms: durationMs,
    wall_time_ms: result.wallTimeMs,
    request_throughput_rps: completed / durationS,
    input_throughput_tok_s: inputTokens / durationS,
    output_throughput_tok_s: outputTokens / durationS,
    total_throughput_tok_s: (inputTokens + outputTokens) / durationS,
    prefill_worker_seconds: result.prefillWorkerSeconds,
    decode_worker_seconds: result.decodeWorkerSeconds,
    prefill_gpus_per_worker: result.prefillGpusPerWorker,
    decode_gpus_per_worker: result.decodeGpusPerWorker,
    gpu_hours: gpuHours,
    // fleetsim extension (docs/metrics.md): arrived requests that ended without completing, by why.
    failed_requests: rejected + timedOut,
    rejected_requests: rejected,
    timed_out_requests: timedOut,
    ...(slaSet
      ? {
          goodput_completed_requests: good,
          goodput_request_throughput_rps: good / durationS,
          goodput_output_throughput_tok_s: goodOutput / durationS,
        }
      : {}),
    processed_tokens: inputTokens + outputTokens,
    processed_tokens_per_s: (inputTokens + outputTokens) / wallS,
    processed_output_tokens_per_s: outputTokens / wallS,
    committed_prefill_tokens: result.committedPrefillTokens,
    prefix_cache_reused_ratio: inputTokens > 0 ? reusedMax / inputTokens : 0,
    first_admission_prefix_cache_reused_ratio: inputTokens > 0 ? reusedFirst / inputTokens : 0,
    num_ttft_samples: nTtft,
    num_tpot_samples: nTpot,
    num_e2e_latency_samples: nTtft,
    ...statKeys("ttft_ms", ttft.result()),
    ...statKeys("ttst_ms", ttst.result()),
    ...statKeys("tpot_ms", tpot.result()),
    ...statKeys("itl_ms", c.itlStats()),
    ...statKeys("e2e_latency_ms", e2e.result()),
    ...statKeys("output_token_throughput_per_user", c.perUserThroughputStats()),
    saturated: sat.saturated ? 1 : 0,
    saturation_backlog_growth: sat.growth,
    saturation_window_ms: sat.windowMs,
    backlog_at_last_arrival: sat.backlogAtLastArrival,
    ...speculationKeys(result.speculation ?? null),
  };
}

/**
 * fleetsim extension (docs/speculation.md): vLLM's `spec_decode` counters — drafts (sequence
 * passes that verified drafts), draft tokens, accepted tokens — with the mean acceptance length
 * (tokens per such pass, 1 + accepted / drafts) and the draft acceptance rate (accepted / draft
 * tokens); 0 for a ratio with nothing to divide by.
 */
function speculationKeys(s: SpeculationInput | null): Partial<Summary> {
  if (s === null) return {};
  const accepted = s.tokens - s.drafts;
  return {
    spec_decode_num_drafts: s.drafts,
    spec_decode_num_draft_tokens: s.draftTokens,
    spec_decode_num_accepted_tokens: accepted,
    spec_decode_mean_acceptance_length: s.drafts > 0 ? s.tokens / s.drafts : 0,
    spec_decode_draft_acceptance_rate: s.draftTokens > 0 ? accepted / s.draftTokens : 0,
  };
}

/**
 * Saturation of a run, on the buckets of its `timeseries`: requests arrived per bucket against
 * requests that left the queue per bucket: first admitted to an engine, or rejected. Requests in
 * service are not backlog: a fleet that keeps up holds rate × latency of them, which ramps up
 * from zero at the start of every run and is not a growing queue.
 */
export function saturationOfRun(result: SummaryInput): SaturationJudgement {
  const { intervalMs, count } = result.timeline;
  const arrivals = new Array<number>(count).fill(0);
  const served = new Array<number>(count).fill(0);
  const abandoned = new Array<number>(count).fill(0);
  const bucketOf = (time: number): number => Math.min(count - 1, Math.floor(time / intervalMs));
  result.requests.scan(["arrival", "firstAdmit", "status", "terminal"], (c, rows) => {
    for (let r = 0; r < rows; r++) {
      if (Number.isNaN(c.arrival[r])) continue;
      arrivals[bucketOf(c.arrival[r])]++;
      if (c.status[r] === Terminal.TimedOut) abandoned[bucketOf(c.arrival[r])]++;
      if (!Number.isNaN(c.firstAdmit[r])) served[bucketOf(c.firstAdmit[r])]++;
      else if (c.status[r] === Terminal.Rejected) served[bucketOf(c.terminal[r])]++;
    }
  });
  return judgeSaturation(intervalMs, arrivals, served, abandoned);
}
