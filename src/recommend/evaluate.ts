/**
 * Candidate evaluation: each suggestion becomes a concrete config, is gated (materialization, GPU
 * budget, host memory), replayed in a `replay` sweep worker process and scored. Replays run in
 * waves of at most `executionParallelism` processes, each wave one sweep whose wall-clock bound
 * is `candidate_timeout_seconds` (so every candidate of a wave gets that long, worker start-up
 * included). A run-local cache keyed by the concrete config serves repeated suggestions: a repeat
 * consumes a trial and counts as a cache hit, but adds no ledger row.
 */

import type { ProvisionedGpus } from "../autoscale/candidateReplays.js";
import type { Mapping } from "../config/mapping.js";
import type { RunSpec, WorkerRoleSpec } from "../config/runSpec.js";
import { HOST_TIME_KEYS } from "../output/summary.js";
import { stableLine } from "../report/json.js";
import type { ResourceBudget } from "../resources/budget.js";
import {
  measureWorkload,
  PLAN_COEFFICIENTS,
  planResources,
  type WorkloadSize,
} from "../resources/preflight.js";
import type { ExecutorSpec } from "../sweep/executor.js";
import type { CandidateBuilder, CandidateStatus, ReasonCategory, Study } from "./materialize.js";
import type { Outcome } from "./optimizer.js";
import { CandidateReplayer } from "./replays.js";
import { type Metrics, type ScoreSettings, scoreCandidate } from "./score.js";
import type { Assignment } from "./space.js";

/** The run was stopped (Ctrl-C) before it finished: nothing is written. */
export class RecommendAborted extends Error {
  constructor() {
    super("recommendation aborted");
  }
}

/** One row of the candidate ledger. */
export interface CandidateRecord {
  readonly id: string;
  readonly status: CandidateStatus;
  readonly category: ReasonCategory | null;
  readonly reason: string | null;
  /** GPUs of the deployment as configured (its starting GPUs when a Planner scales it). */
  readonly usedGpus: number | null;
  /** GPUs provisioned over the replay: the most at once and the time average; null when not replayed. */
  readonly peakGpus: number | null;
  readonly meanGpus: number | null;
  readonly score: number | null;
  readonly objectives: Readonly<Record<string, number>> | null;
  readonly metrics: Metrics;
  /** The study's mode, each searched knob's value and each role's parallelism. */
  readonly config: Readonly<Record<string, unknown>>;
  /** The optimizer's suggestion (latent parallelism dimensions included). */
  readonly suggestion: Assignment;
  /** The concrete predict document, or null when it could not be built. */
  readonly predictionConfig: Mapping | null;
  readonly spec: RunSpec | null;
  readonly study: Study["mode"];
  /** 1-based trial that first produced it. */
  readonly trial: number;
  /** What the optimizer is told. */
  readonly outcome: Outcome;
}

export interface EvaluatorOptions {
  readonly builder: CandidateBuilder;
  readonly score: ScoreSettings;
  /** Most replay processes at once (optimizer.parallelism within the CPU and memory budget). */
  readonly executionParallelism: number;
  readonly candidateTimeoutMs: number;
  readonly budget: ResourceBudget;
  readonly signal: AbortSignal;
  /** Where candidates replay (docs/sweep.md "Executors"); worker processes here by default. */
  readonly executor?: ExecutorSpec;
}

export interface Counts {
  cacheHits: number;
}

interface Pending {
  readonly study: Study;
  readonly assignment: Assignment;
  readonly trial: number;
  readonly doc: Mapping;
  readonly key: string;
}

export class Evaluator {
  readonly records: CandidateRecord[] = [];
  readonly counts: Counts = { cacheHits: 0 };
  private readonly cache = new Map<string, CandidateRecord>();
  private readonly workloads = new Map<string, Promise<WorkloadSize>>();
  private readonly replayer: CandidateReplayer;

  constructor(private readonly opts: EvaluatorOptions) {
    this.replayer = new CandidateReplayer(opts.executor);
  }

  /** Lets the replay workers go (after the last batch, or when the search stops). */
  close(): Promise<void> {
    return this.replayer.close();
  }

  /** The concrete config key of a suggestion (what the optimizers avoid repeating). */
  keyOf(study: Study, a: Assignment): string {
    return stableLine(this.opts.builder.concrete(study, a));
  }

  /** Evaluates a batch; one outcome per suggestion, in order. */
  async evaluate(study: Study, batch: readonly Assignment[], firstTrial: number): Promise<Outcome[]> {
    const items: Pending[] = batch.map((assignment, i) => {
      const doc = this.opts.builder.concrete(study, assignment);
      return { study, assignment, trial: firstTrial + i, doc, key: stableLine(doc) };
    });
    const fresh: Pending[] = [];
    const inBatch = new Set<string>();
    for (const item of items) {
      if (this.cache.has(item.key) || inBatch.has(item.key)) continue;
      inBatch.add(item.key);
      fresh.push(item);
    }
    const toRun: { item: Pending; spec: RunSpec; usedGpus: number; bytes: number }[] = [];
    for (const item of fresh) {
      const resolved = this.opts.builder.resolve(item.doc);
      if (!resolved.ok) {
        this.finish(item, resolved.status, resolved.category, resolved.reason, resolved.usedGpus, null, {});
        continue;
      }
      const bytes = await this.workerBytes(resolved.spec);
      const headroom = this.opts.budget.memoryBytes - process.memoryUsage.rss();
      if (bytes > headroom) {
        this.finish(
          item,
          "resource_limited",
          "resource_limit",
          `its replay needs an estimated ${mib(bytes)} MiB, more than the ${mib(Math.max(0, headroom))} MiB the host memory budget leaves`,
          resolved.usedGpus,
          resolved.spec,
          {},
        );
        continue;
      }
      toRun.push({ item, spec: resolved.spec, usedGpus: resolved.usedGpus, bytes });
    }
    for (const wave of this.waves(toRun)) {
      // A stopped run (Ctrl-C) starts no more replays; nothing of it is written.
      if (this.opts.signal.aborted) throw new RecommendAborted();
      await this.runWave(wave);
    }
    if (this.opts.signal.aborted) throw new RecommendAborted();
    return items.map((item) => {
      const record = this.cache.get(item.key);
      if (record === undefined) throw new Error("internal: a suggestion was left without a result");
      if (record.trial !== item.trial) this.counts.cacheHits++;
      return record.outcome;
    });
  }

  /** Groups runs so a wave has at most `executionParallelism` replays and fits the memory budget. */
  private waves<T extends { bytes: number }>(runs: readonly T[]): T[][] {
    const out: T[][] = [];
    let current: T[] = [];
    let bytes = 0;
    const budget = this.opts.budget.memoryBytes - process.memoryUsage.rss();
    for (const run of runs) {
      if (
        current.length > 0 &&
        (current.length >= this.opts.executionParallelism || bytes + run.bytes > budget)
      ) {
        out.push(current);
        current = [];
        bytes = 0;
      }
      current.push(run);
      bytes += run.bytes;
    }
    if (current.length > 0) out.push(current);
    return out;
  }

  private async runWave(wave: readonly { item: Pending; spec: RunSpec; usedGpus: number }[]): Promise<void> {
    const results = await this.replayer.wave(
      wave.map((w) => w.spec),
      { timeoutMs: this.opts.candidateTimeoutMs, signal: this.opts.signal },
    );
    results.forEach((result, i) => {
      const { item, spec, usedGpus } = wave[i];
      if (result.status === "timeout") {
        const s = this.opts.candidateTimeoutMs / 1000;
        this.finish(
          item,
          "timed_out",
          "runtime_timeout",
          `the replay ran past candidate_timeout_seconds=${s}`,
          usedGpus,
          spec,
          {},
        );
        return;
      }
      if (result.status === "failed") {
        this.finish(item, "failed", "replay_runtime", result.error, usedGpus, spec, {});
        return;
      }
      const metrics = replayMetrics(result.value.summary);
      const provisioned = result.value.provisionedGpus ?? null;
      const scored = scoreCandidate(this.opts.score, metrics, usedGpus);
      if ("status" in scored) {
        this.finish(
          item,
          scored.status,
          scored.category,
          scored.reason,
          usedGpus,
          spec,
          metrics,
          undefined,
          provisioned,
        );
        return;
      }
      this.finish(item, "feasible", null, null, usedGpus, spec, metrics, scored, provisioned);
    });
  }

  private finish(
    item: Pending,
    status: CandidateStatus,
    category: ReasonCategory | null,
    reason: string | null,
    usedGpus: number | null,
    spec: RunSpec | null,
    metrics: Metrics,
    scored?: {
      score: number;
      objectives: Readonly<Record<string, number>> | null;
      outcome: readonly number[];
    },
    provisioned: ProvisionedGpus | null = null,
  ): void {
    const record: CandidateRecord = {
      id: `candidate-${String(this.records.length + 1).padStart(6, "0")}`,
      status,
      category,
      reason,
      usedGpus,
      peakGpus: provisioned?.peak ?? null,
      meanGpus: provisioned?.mean ?? null,
      score: scored?.score ?? null,
      objectives: scored?.objectives ?? null,
      metrics,
      config: this.opts.builder.describe(item.study, item.assignment, item.doc),
      suggestion: item.assignment,
      predictionConfig: item.doc,
      spec,
      study: item.study.mode,
      trial: item.trial,
      outcome: scored?.outcome ?? null,
    };
    this.records.push(record);
    this.cache.set(item.key, record);
  }

  /** Estimated peak bytes of one replay worker for `spec` (docs/resources.md's plan, as a worker). */
  private async workerBytes(spec: RunSpec): Promise<number> {
    const key = JSON.stringify([spec.source, spec.load, spec.stop]);
    let workload = this.workloads.get(key);
    if (workload === undefined) {
      workload = measureWorkload(spec);
      this.workloads.set(key, workload);
    }
    const plan = planResources(spec, this.opts.budget, await workload);
    // A worker holds what a one-process run would (its modules included) plus its own overhead.
    return plan.mainBytes + PLAN_COEFFICIENTS.workerOverheadBytes;
  }
}

/**
 * The replay summary's numbers without its host-time keys: a candidate's metrics are
 * deterministic (the provenance, eviction and power keys are not metrics).
 */
export function replayMetrics(summary: Readonly<Record<string, unknown>>): Metrics {
  const host: readonly string[] = HOST_TIME_KEYS;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(summary)) if (typeof v === "number" && !host.includes(k)) out[k] = v;
  return out;
}

/** The role topology of a resolved candidate, for its provenance. */
export function topologyOf(spec: RunSpec): Record<string, unknown> {
  const e = spec.engine;
  const role = (r: WorkerRoleSpec) => ({
    replicas: r.replicas,
    tensor: r.tensor,
    pipeline: r.pipeline,
    attention_data: r.attentionData,
    moe_tensor: r.moeTensor,
    moe_expert: r.moeExpert,
    gpus_per_worker: r.gpusPerWorker,
    kv_blocks: r.numGpuBlocks,
    hardware: r.hardware ?? e.hardware,
  });
  return e.mode === "aggregated"
    ? { deployment_mode: "aggregated", aggregated: role(e.aggregated) }
    : { deployment_mode: "disaggregated", prefill: role(e.prefill), decode: role(e.decode) };
}

function mib(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}
