/**
 * Bookkeeping invariants under random traffic, both deployment modes, with and without scaling,
 * with startup delays (issue 12 §1). The replay's own checker (src/sim/invariants.ts, on for
 * every replay of the suite) throws on a violation during the run; these tests also check what
 * the run wrote: `gpu_hours` equals the provisioned GPU time rebuilt from prediction.json's
 * lifecycle records, and every draining worker of the records is removed.
 *
 * The regression that motivated them: a draining prefill worker whose last KV copy was released
 * by a transfer completion (not by a pass) was never re-checked, so it stayed provisioned for the
 * rest of the run (seed disaggregated + Planner: gpu_hours 25.2 instead of 2.6).
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/cluster/workerPool.js";
import type { RunSpec, WorkerRoleSpec } from "../../src/config/runSpec.js";
import type { VllmEngine } from "../../src/engine/vllmEngine.js";
import { Terminal } from "../../src/metrics/collector.js";
import { loadWorkload, runPrediction } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import type { Prediction } from "../../src/report/prediction.js";
import { InvariantChecker, InvariantViolation } from "../../src/sim/invariants.js";
import { Replay } from "../../src/sim/replay.js";
import { plannerSettings } from "../helpers/planner.js";
import { RandomScaling, randomRows } from "../helpers/randomTraffic.js";
import { disaggSpec, kvOrRoundRobin, role, traceSpec, writeTrace } from "../helpers/specs.js";

const traffic = fc.record({
  requests: fc.integer({ min: 5, max: 60 }),
  meanGapMs: fc.integer({ min: 20, max: 400 }),
  maxInput: fc.integer({ min: 8, max: 200 }),
  maxOutput: fc.integer({ min: 0, max: 60 }),
  seed: fc.integer({ min: 1, max: 1 << 30 }),
});

const deployment = fc.record({
  disaggregated: fc.boolean(),
  kvRouter: fc.boolean(),
  replicas: fc.integer({ min: 1, max: 3 }),
  decodeReplicas: fc.integer({ min: 1, max: 3 }),
  gpusPerWorker: fc.constantFrom(1, 2),
  // Attention-DP ranks per worker, in both modes, with prefill admitted every pass or every 3rd.
  attentionData: fc.constantFrom(1, 1, 2),
  prefillScheduleInterval: fc.constantFrom(1, 3),
  // Chunked prefill off: whole prompts or none per pass, longer ones than the budget rejected.
  chunkedPrefill: fc.constantFrom(true, true, false),
  startupSeconds: fc.constantFrom(0, 0.05, 0.5, 3),
  numGpuBlocks: fc.integer({ min: 40, max: 200 }),
  maxSequences: fc.integer({ min: 1, max: 16 }),
  // Slow transfers keep prefill copies held long after the prefill pass (the regression's path).
  bandwidthGBps: fc.constantFrom(null, 0.05, 1),
  // A host KV tier on the front role (docs/offload.md); slow links keep requests loading across passes.
  hostOffload: fc.option(
    fc.record({
      numHostBlocks: fc.integer({ min: 10, max: 400 }),
      // A disk tier behind it (G3), written slowly or quickly, small or roomy.
      disk: fc.option(
        fc.record({
          numBlocks: fc.integer({ min: 5, max: 800 }),
          cluster: fc.boolean(),
          writeBandwidthGBps: fc.constantFrom(0.001, 0.1, 10),
        }),
        { nil: null },
      ),
      scope: fc.constantFrom("dp_rank_local" as const, "cluster_shared" as const),
      h2dBandwidthGBps: fc.constantFrom(0.001, 0.1, 32),
    }),
    { nil: null },
  ),
  // Speculative decoding: draft slots allocated per pass and partly freed (docs/speculation.md).
  speculation: fc.option(
    fc.record({
      k: fc.integer({ min: 1, max: 5 }),
      rate: fc.constantFrom(0, 0.3, 0.8, 1),
      seed: fc.integer({ min: 0, max: 1000 }),
    }),
  ),
});

function specOf(
  rows: Record<string, unknown>[],
  d: typeof deployment extends fc.Arbitrary<infer T> ? T : never,
): RunSpec {
  const path = writeTrace(rows);
  const common: Partial<WorkerRoleSpec> = {
    tensor: d.gpusPerWorker,
    attentionData: d.attentionData,
    gpusPerWorker: d.gpusPerWorker * d.attentionData,
    prefillScheduleInterval: d.prefillScheduleInterval,
    chunkedPrefill: d.chunkedPrefill,
    numGpuBlocks: d.numGpuBlocks,
    maxSequences: d.maxSequences,
    maxBatchedTokens: 64,
    startupSeconds: d.startupSeconds,
    timing: { type: "fixed", prefillMs: 7, decodeMs: 3 },
    speculation:
      d.speculation === null
        ? null
        : {
            kind: "ngram",
            numSpeculativeTokens: d.speculation.k,
            acceptanceRates: new Array<number>(d.speculation.k).fill(d.speculation.rate),
            seed: d.speculation.seed,
          },
  };
  const h = d.hostOffload;
  const front: Partial<WorkerRoleSpec> =
    h === null
      ? {}
      : {
          hostOffload: {
            numHostBlocks: h.numHostBlocks,
            scope: h.scope,
            h2dBandwidthGBps: h.h2dBandwidthGBps,
            disk:
              h.disk === null
                ? null
                : {
                    numBlocks: h.disk.numBlocks,
                    // A worker-local disk needs a per-rank host tier (the config rule).
                    scope: h.disk.cluster || h.scope === "cluster_shared" ? "cluster_shared" : "worker_local",
                    latencyToFirstByteMs: 0.1,
                    readBandwidthGBps: 1,
                    writeBandwidthGBps: h.disk.writeBandwidthGBps,
                    sharedReadBandwidthGBps: h.disk.cluster ? 2 : null,
                    sharedWriteBandwidthGBps: h.disk.cluster ? 2 : null,
                  },
            d2hBandwidthGBps: 32,
            latencyToFirstByteMs: 0.1,
            sharedD2hBandwidthGBps: 80,
            sharedH2dBandwidthGBps: 80,
            bytesPerBlock: 1e6,
            routerSeesHost: h.scope === "dp_rank_local" && d.kvRouter,
          },
        };
  const router = kvOrRoundRobin(d.kvRouter);
  if (!d.disaggregated)
    return { ...traceSpec(path, { role: { ...common, ...front, replicas: d.replicas } }), router };
  const spec = disaggSpec(path, {
    prefill: { ...common, ...front, replicas: d.replicas, maxSequences: Math.max(1, d.maxSequences >> 1) },
    decode: { ...common, replicas: d.decodeReplicas },
    transfer: { bytesPerToken: 1e6, bandwidthGBps: d.bandwidthGBps },
  });
  return { ...spec, router };
}

/** ∫ provisioned GPUs dt over prediction.json's lifecycle records, in GPU-hours. */
function gpuHoursFromRecords(p: Prediction, spec: RunSpec, endMs: number): number {
  const engine = spec.engine;
  const pools =
    engine.mode === "aggregated"
      ? [{ name: "agg", role: engine.aggregated }]
      : [
          { name: "prefill", role: engine.prefill },
          { name: "decode", role: engine.decode },
        ];
  let gpuMs = 0;
  for (const { name, role } of pools) {
    let count = role.replicas;
    let since = 0;
    const live = new Set<number>();
    for (let w = 0; w < role.replicas; w++) live.add(w);
    for (const op of p.planner?.lifecycle_operations ?? []) {
      if (op.pool !== name) continue;
      gpuMs += count * role.gpusPerWorker * (op.at_ms - since);
      since = op.at_ms;
      for (const tr of op.transitions) {
        if (
          tr.transition === "worker_starting" ||
          (tr.transition === "worker_ready" && !live.has(tr.worker_id))
        ) {
          live.add(tr.worker_id);
          count++;
        } else if (tr.transition === "worker_removed") {
          expect(live.delete(tr.worker_id)).toBe(true);
          count--;
        }
      }
    }
    gpuMs += count * role.gpusPerWorker * (endMs - since);
  }
  return gpuMs / 3_600_000;
}

/** Every worker the records put into draining is removed later in them. */
function expectDrainsEnd(p: Prediction): void {
  const draining = new Set<string>();
  for (const op of p.planner?.lifecycle_operations ?? []) {
    for (const tr of op.transitions) {
      const key = `${op.pool}/${tr.worker_id}`;
      if (tr.transition === "worker_draining") draining.add(key);
      if (tr.transition === "worker_removed") draining.delete(key);
    }
  }
  expect([...draining]).toEqual([]);
}

function expectTerminalOnce(result: Awaited<ReturnType<typeof runPrediction>>["result"]): void {
  const c = result.requests.columns();
  for (let r = 0; r < result.workload.count; r++) {
    expect(c.status[r] === Terminal.Completed || c.status[r] === Terminal.Rejected).toBe(true);
  }
}

/** Replays `spec` under random scaling with the invariant checker on; every request must end. */
async function runRandomScaling(spec: RunSpec, scalingSeed: number) {
  const table = await loadWorkload(spec);
  const disagg = spec.engine.mode === "disaggregated";
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
    scaling: new RandomScaling(scalingSeed, 40, 4, disagg),
    checkInvariants: true,
  });
  const result = await replay.run();
  const status = result.requests.columns().status;
  for (let r = 0; r < table.count; r++) expect(status[r]).not.toBe(Terminal.None);
  return result;
}

describe("replay invariants under random traffic and scaling", () => {
  test.prop([traffic, deployment, fc.integer({ min: 1, max: 1 << 30 })], { seed: 20261201, numRuns: 120 })(
    "random scaling (both modes, startup delays): checker passes, gpu_hours = records, drains end",
    async (t, d, scalingSeed) => {
      const rows = randomRows({ ...t, lullFactor: 5, alphabet: 4 });
      const spec = specOf(rows, d);
      const result = await runRandomScaling(spec, scalingSeed);
      // The records rebuild the worker-seconds the run accrued (the checker did it per pool too).
      const workerGpuMs =
        (result.prefillWorkerSeconds * result.prefillGpusPerWorker +
          result.decodeWorkerSeconds * result.decodeGpusPerWorker) *
        1000;
      const fake = { planner: { lifecycle_operations: result.lifecycleOperations } } as unknown as Prediction;
      expect(gpuHoursFromRecords(fake, spec, result.endTimeMs)).toBeCloseTo(workerGpuMs / 3_600_000, 9);
      expectDrainsEnd(fake);
    },
  );

  // Budgets: none (−1), or from one worker of each pool up (a budget that fits no worker is a
  // config error: the Planner would scale to zero and the replay could never finish).
  test.prop([traffic, deployment, fc.boolean(), fc.integer({ min: 0, max: 6 })], {
    seed: 20261202,
    numRuns: 60,
  })(
    "the Planner in the loop (load loop, budgets): the written gpu_hours = provisioned GPU time",
    async (t, d, withPlanner, extra) => {
      const rows = randomRows({ ...t, lullFactor: 5, alphabet: 4 });
      const base = specOf(rows, d);
      const mode = base.engine.mode === "disaggregated" ? "disagg" : "agg";
      const oneOfEach = (mode === "disagg" ? 2 : 1) * d.gpusPerWorker * d.attentionData;
      const budget = extra === 0 ? -1 : oneOfEach + extra - 1;
      const spec: RunSpec = withPlanner
        ? {
            ...base,
            planner: plannerSettings({
              mode,
              optimizationTarget: "load",
              loadAdjustmentIntervalS: 1,
              scaleIntervalS: 1,
              loadMinObservations: 1,
              maxGpuBudget: budget,
              minEndpoint: 1,
              prefillScaleUpQueueTokens: mode === "disagg" ? 1 : null,
              prefillScaleDownQueueTokens: mode === "disagg" ? 0 : null,
              decodeScaleUpKvRate: 90,
              decodeScaleDownKvRate: 70,
            }),
          }
        : base;
      const { prediction, result } = await runPrediction(spec, { capturePerRequest: false });
      expectTerminalOnce(result);
      expect(prediction.summary.gpu_hours).toBeCloseTo(
        gpuHoursFromRecords(prediction, spec, result.endTimeMs),
        9,
      );
      expectDrainsEnd(prediction);
    },
  );
});

/** SGLang and TRT-LLM cores (docs/backends.md) on the same random traffic and deployments. */
const backend = fc.oneof(
  fc.record({
    kind: fc.constant("sglang" as const),
    policy: fc.constantFrom("fifo" as const, "lpm" as const),
    chunk: fc.constantFrom(8, 16, 64),
    maxPrefill: fc.constantFrom(16, 64, 16384),
    clip: fc.constantFrom(8, 4096),
    conservativeness: fc.constantFrom(0.05, 1, 2),
    mixedChunk: fc.boolean(),
    /** SGLang's overlap scheduler (`scheduler.async_scheduling`). */
    overlap: fc.boolean(),
    prefillDecodeInterval: fc.constantFrom(0, 0, 1, 3),
  }),
  fc.record({
    kind: fc.constant("trtllm" as const),
    policy: fc.constantFrom("guaranteed_no_evict" as const, "max_utilization" as const),
  }),
);

/**
 * `specOf` with every role on `b` (TRT-LLM: aggregated only; neither backend has host offload).
 * Both keep the drawn speculation, as `engine.nextn` runs it on either core, except SGLang with
 * mixed chunk, which SGLang (and the config) turns off under speculative decoding.
 */
function backendSpecOf(
  rows: Record<string, unknown>[],
  d: typeof deployment extends fc.Arbitrary<infer T> ? T : never,
  b: typeof backend extends fc.Arbitrary<infer T> ? T : never,
): RunSpec {
  const base = specOf(rows, {
    ...d,
    disaggregated: d.disaggregated && b.kind === "sglang",
    hostOffload: null,
    speculation: b.kind === "trtllm" || !b.mixedChunk ? d.speculation : null,
  });
  const extra: Partial<WorkerRoleSpec> =
    b.kind === "sglang"
      ? {
          backend: "sglang",
          asyncScheduling: b.overlap,
          sglang: {
            schedulePolicy: b.policy,
            chunkedPrefillSize: b.chunk,
            maxPrefillTokens: b.maxPrefill,
            clipMaxNewTokens: b.clip,
            scheduleConservativeness: b.conservativeness,
            enableMixedChunk: b.mixedChunk,
          },
          ...(b.prefillDecodeInterval > 0 ? { prefillDecodeInterval: b.prefillDecodeInterval } : {}),
        }
      : { backend: "trtllm", capacityPolicy: b.policy };
  const e = base.engine;
  const engine: RunSpec["engine"] =
    e.mode === "aggregated"
      ? { ...e, backend: b.kind, aggregated: { ...e.aggregated, ...extra } }
      : { ...e, backend: b.kind, prefill: { ...e.prefill, ...extra }, decode: { ...e.decode, ...extra } };
  return { ...base, engine };
}

describe("replay invariants on the SGLang and TRT-LLM cores", () => {
  test.prop([traffic, deployment, backend, fc.integer({ min: 1, max: 1 << 30 })], {
    seed: 20261203,
    numRuns: 80,
  })("random scaling: the checker passes and every request ends", async (t, d, b, scalingSeed) => {
    const rows = randomRows({ ...t, lullFactor: 5, alphabet: 4 });
    const result = await runRandomScaling(backendSpecOf(rows, d, b), scalingSeed);
    if (b.kind === "trtllm" && b.policy === "guaranteed_no_evict") expect(result.preemptions).toBe(0);
  });
});

describe("the invariant checker catches bookkeeping bugs", () => {
  /** A one-worker pool and a view whose removal rule the test controls. */
  async function poolAndSpec(): Promise<{ spec: RunSpec; pool: WorkerPool }> {
    const spec = traceSpec(writeTrace([{ timestamp: 0, input_length: 4, output_length: 1, hash_ids: [1] }]));
    const timings = await createRoleTimings(spec.engine);
    if (spec.engine.mode !== "aggregated" || timings.mode !== "aggregated") throw new Error("unreachable");
    const pool = new WorkerPool(0, "aggregated", role({ replicas: 2 }), timings.aggregated, spec.router, {
      onAdmit() {},
    });
    return { spec, pool };
  }

  it("a draining worker that holds nothing and stays provisioned is a violation", async () => {
    const { spec, pool } = await poolAndSpec();
    const checker = new InvariantChecker({
      pools: [pool],
      collector: (await runPrediction(spec, { capturePerRequest: false })).result.collector,
      holdsNothing: () => true,
      reservedBySlot: () => [],
      gpuBudget: null,
    });
    checker.afterTimestamp(0);
    pool.drain(1);
    expect(() => checker.afterTimestamp(5)).toThrow(InvariantViolation);
    expect(() => checker.afterTimestamp(5)).toThrow(
      /aggregated worker 1 is draining but holds nothing at 5 ms/,
    );
  });

  it("committed GPUs over max(budget, starting GPUs) after a tick is a violation; draining ones are not counted", async () => {
    const { spec, pool } = await poolAndSpec();
    const collector = (await runPrediction(spec, { capturePerRequest: false })).result.collector;
    const view = { pools: [pool], collector, holdsNothing: () => false, reservedBySlot: () => [] };
    const checker = new InvariantChecker({ ...view, gpuBudget: 3 });
    pool.addWorker(true, 0);
    checker.afterTick(0); // 3 ≤ 3
    pool.addWorker(false, 0);
    pool.drain(0); // draining: no longer committed (3 ≤ 3)
    checker.afterTick(5);
    pool.addWorker(false, 0);
    expect(() => checker.afterTick(10)).toThrow(
      /4 GPUs committed \(ready \+ starting\) at 10 ms, over max\(budget 3, starting 2\)/,
    );
    // Without a budget (−1) any size passes; a budget below the starting size allows the start.
    new InvariantChecker({ ...view, gpuBudget: -1 }).afterTick(0);
    new InvariantChecker({ ...view, gpuBudget: 1 }).afterTick(0);
  });

  it("worker-seconds that disagree with the lifecycle records are a violation", async () => {
    const { spec, pool } = await poolAndSpec();
    const collector = (await runPrediction(spec, { capturePerRequest: false })).result.collector;
    const checker = new InvariantChecker({
      pools: [pool],
      collector,
      holdsNothing: () => false,
      reservedBySlot: () => [],
      gpuBudget: null,
    });
    pool.addWorker(true, 1000); // not recorded
    pool.accrue(2000);
    expect(() => checker.atEnd(2000, false, [], () => 1)).toThrow(
      /lifecycle records end at 2 workers, the pool has 3/,
    );
  });

  it("a KV block referenced by no owner is a violation", async () => {
    const { pool } = await poolAndSpec();
    const kv = (pool.engines[0] as VllmEngine).pool;
    const b = kv.allocate(); // owned by nobody the engine knows
    expect(b).toBeGreaterThanOrEqual(0);
    expect(pool.engines[0].auditKv([])).toMatch(/block \d+ has 1 references, its owners hold 0/);
    kv.release(b);
    expect(pool.engines[0].auditKv([])).toBeNull();
  });
});
