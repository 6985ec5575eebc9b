import type { Cluster } from "../cluster/cluster.js";
import type { LifecycleOperation, PoolName } from "../cluster/lifecycle.js";
import type { Collector } from "../metrics/collector.js";
import type { RequestCapture } from "../metrics/requestCapture.js";
import type { RequestLog } from "../metrics/requestLog.js";
import type { TimelineSamples } from "../metrics/timeline.js";
import type { G3OffloadReport, KvOffloadReport } from "../output/kvOffload.js";
import type { WorkloadInfo } from "../traffic/requestSource.js";

/** What a finished replay hands to reporting. */
export interface ReplayResult {
  /** The run's collector: its counters and streaming sketches (its per-row state is released). */
  readonly collector: Collector;
  /** Every request's final columns, in row order (the summary and time series scan it). */
  readonly requests: RequestLog;
  /** With `--capture-per-request`: what the per-request records need beyond the log; else null. */
  readonly capture: RequestCapture | null;
  readonly workload: WorkloadInfo;
  /** The most requests read and not yet released at once (the row window's high-water mark). */
  readonly peakLiveRequests: number;
  /** Virtual time of the last processed event, ms. */
  readonly endTimeMs: number;
  /** ∫ provisioned workers dt over the run, in worker-seconds, per role. */
  readonly prefillWorkerSeconds: number;
  readonly decodeWorkerSeconds: number;
  readonly prefillGpusPerWorker: number;
  readonly decodeGpusPerWorker: number;
  /** Host time spent in the event loop, ms (`wall_time_ms`). */
  readonly wallTimeMs: number;
  readonly preemptions: number;
  /** Prompt and recompute tokens computed by the passes (`committed_prefill_tokens`). */
  readonly committedPrefillTokens: number;
  readonly passes: number;
  /** Of `passes`, those delivered within runs of plain decode passes (decode-run merging; 0 with the reference stepper). */
  readonly passesInRuns: number;
  /** Speculative decoding's counters over the run (docs/speculation.md); null when it is off. */
  readonly speculation: SpeculationCounts | null;
  readonly disaggregated: boolean;
  /** Worker transitions caused by scaling (empty for a fixed deployment). */
  readonly lifecycleOperations: readonly LifecycleOperation[];
  /** Worker state sampled at bucket boundaries (`timeseries`, metrics/timeline.ts). */
  readonly timeline: TimelineSamples;
  /**
   * Set when the run stopped because scaling left a pool without any worker while requests
   * waited for it and nothing else could happen (`STALL_TICKS` ticks in a row); null otherwise.
   */
  readonly stalled: ReplayStall | null;
  /** The front pool's host KV tier over the run (docs/offload.md); null without one. */
  readonly kvOffload: KvOffloadReport | null;
  /** What the disk (G3) tiers did (`kv_cache.g3_offload`); null without one. */
  readonly g3Offload: G3OffloadReport | null;
}

/** Sequence passes that verified drafts, the drafts they verified, and the tokens they emitted. */
export interface SpeculationCounts {
  readonly drafts: number;
  readonly draftTokens: number;
  readonly tokens: number;
}

/** A run the scaling policy starved: its pool had no worker for `STALL_TICKS` ticks while requests waited. */
export interface ReplayStall {
  readonly atMs: number;
  readonly sinceMs: number;
  readonly pool: PoolName;
  /** Requests waiting for a worker of that pool when the run stopped. */
  readonly waiting: number;
}

/** What the replay knows at its end, beside the cluster's own counters (`replayResult`). */
export type ReplayEnd = Pick<
  ReplayResult,
  | "collector"
  | "requests"
  | "capture"
  | "workload"
  | "peakLiveRequests"
  | "endTimeMs"
  | "wallTimeMs"
  | "timeline"
  | "stalled"
>;

/** The result of a finished replay: what it knows, and what the cluster counted over the run. */
export function replayResult(cluster: Cluster, end: ReplayEnd): ReplayResult {
  let preemptions = 0;
  for (const e of cluster.engines) preemptions += e.preemptions;
  const prefill = cluster.prefillPool;
  const decode = cluster.decodePool;
  return {
    collector: end.collector,
    requests: end.requests,
    capture: end.capture,
    workload: end.workload,
    peakLiveRequests: end.peakLiveRequests,
    endTimeMs: end.endTimeMs,
    prefillWorkerSeconds: prefill === null ? 0 : prefill.workerSeconds,
    decodeWorkerSeconds: decode.workerSeconds,
    prefillGpusPerWorker: prefill === null ? 0 : prefill.spec.gpusPerWorker,
    decodeGpusPerWorker: decode.spec.gpusPerWorker,
    wallTimeMs: end.wallTimeMs,
    preemptions,
    committedPrefillTokens: cluster.prefillTokensComputed,
    passes: cluster.passes,
    passesInRuns: cluster.passesInRuns,
    speculation: (decode.spec.speculation ?? null) === null ? null : { ...cluster.speculation },
    disaggregated: prefill !== null,
    lifecycleOperations: cluster.lifecycle.operations,
    timeline: end.timeline,
    stalled: end.stalled,
    kvOffload: cluster.front.hostOffloadReport(),
    g3Offload: cluster.front.diskOffloadReport(end.endTimeMs),
  };
}
