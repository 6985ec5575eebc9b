import type { Summary } from "../output/summary.js";
import type { RequestTable } from "../traffic/requests.js";
import { type Collector, Terminal } from "./collector.js";
import { exactStats, statKeys } from "./distribution.js";
import { hasSla, isGood, type SlaThresholds } from "./goodput.js";
import { judgeSaturation, type SaturationJudgement } from "./saturation.js";
import type { TimelineSamples } from "./timeline.js";

export { HOST_TIME_KEYS } from "../output/summary.js";
export type { Summary };

/**
 * What a summary is computed from: the parts of a replay's result it reads (the replay's
 * `ReplayResult` satisfies it), declared here so metrics/ does not depend on the simulator.
 */
export interface SummaryInput {
  readonly collector: Collector;
  readonly table: Pick<RequestTable, "count" | "inputLength">;
  /** Host time spent in the event loop, ms (`wall_time_ms`). */
  readonly wallTimeMs: number;
  /** ∫ provisioned workers dt over the run, in worker-seconds, per role. */
  readonly prefillWorkerSeconds: number;
  readonly decodeWorkerSeconds: number;
  readonly prefillGpusPerWorker: number;
  readonly decodeGpusPerWorker: number;
  /** The `timeseries` buckets (saturation is judged on them). */
  readonly timeline: Pick<TimelineSamples, "intervalMs" | "count">;
}

/**
 * The `summary` object of prediction.json (aisimulate.md §6.2; definitions in docs/metrics.md).
 * Populations: a request is *completed* iff it was admitted and terminated Completed; rejected or
 * unfinished requests count only in `num_requests`.
 */
export function buildSummary(result: SummaryInput, sla: SlaThresholds | null): Summary {
  const c = result.collector;
  const table = result.table;
  const n = table.count;
  const ttft = new Float64Array(n);
  const ttst = new Float64Array(n);
  const tpot = new Float64Array(n);
  const e2e = new Float64Array(n);
  let nTtft = 0;
  let nTtst = 0;
  let nTpot = 0;
  let completed = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let reusedMax = 0;
  let reusedFirst = 0;
  let durationMs = 0;
  let good = 0;
  let goodOutput = 0;
  const slaSet = hasSla(sla);

  let rejected = 0;
  let timedOut = 0;
  for (let r = 0; r < n; r++) {
    if (c.status[r] === Terminal.Rejected) rejected++;
    else if (c.status[r] === Terminal.TimedOut) timedOut++;
    if (c.status[r] !== Terminal.Completed || c.admissions[r] === 0) continue;
    completed++;
    const tokens = c.tokens[r];
    inputTokens += table.inputLength[r];
    outputTokens += tokens;
    reusedMax += c.reusedMax[r];
    reusedFirst += c.reusedFirst[r];
    if (c.terminal[r] > durationMs) durationMs = c.terminal[r];
    let rTtft: number | null = null;
    let rE2e: number | null = null;
    if (tokens >= 1) {
      rTtft = Math.max(0, c.firstToken[r] - c.arrival[r]);
      rE2e = c.lastToken[r] - c.arrival[r];
      ttft[nTtft++] = rTtft;
      e2e[nTtft - 1] = rE2e;
    }
    if (tokens >= 2) {
      ttst[nTtst++] = c.secondToken[r] - c.firstToken[r];
      tpot[nTpot++] = (c.lastToken[r] - c.firstToken[r]) / (tokens - 1);
    }
    if (slaSet && isGood(sla, rTtft, rE2e, tokens)) {
      good++;
      goodOutput += tokens;
    }
  }

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
    prefix_cache_reused_ratio: inputTokens > 0 ? reusedMax / inputTokens : 0,
    first_admission_prefix_cache_reused_ratio: inputTokens > 0 ? reusedFirst / inputTokens : 0,
    num_ttft_samples: nTtft,
    num_tpot_samples: nTpot,
    num_e2e_latency_samples: nTtft,
    ...statKeys("ttft_ms", exactStats(ttft, nTtft)),
    ...statKeys("ttst_ms", exactStats(ttst, nTtst)),
    ...statKeys("tpot_ms", exactStats(tpot, nTpot)),
    ...statKeys("itl_ms", c.itlStats()),
    ...statKeys("e2e_latency_ms", exactStats(e2e, nTtft)),
    ...statKeys("output_token_throughput_per_user", c.perUserThroughputStats()),
    saturated: sat.saturated ? 1 : 0,
    saturation_backlog_growth: sat.growth,
    saturation_window_ms: sat.windowMs,
    backlog_at_last_arrival: sat.backlogAtLastArrival,
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
  const c = result.collector;
  const arrivals = new Array<number>(count).fill(0);
  const served = new Array<number>(count).fill(0);
  const bucketOf = (time: number): number => Math.min(count - 1, Math.floor(time / intervalMs));
  for (let r = 0; r < result.table.count; r++) {
    if (Number.isNaN(c.arrival[r])) continue;
    arrivals[bucketOf(c.arrival[r])]++;
    if (!Number.isNaN(c.firstAdmit[r])) served[bucketOf(c.firstAdmit[r])]++;
    else if (c.status[r] === Terminal.Rejected) served[bucketOf(c.terminal[r])]++;
  }
  return judgeSaturation(intervalMs, arrivals, served);
}
