/**
 * Decode-run merging (issue 16 item 1, docs/architecture.md "Decode-run merging"): a worker
 * advanced through a run of plain decode passes at once must give exactly the run that stepping
 * every pass through the event queue gives. Random small workloads over both topologies, both
 * routers, the three timing models' shapes (fixed, and polynomial whose decode time grows with
 * the context), small KV caches (preemption), token budgets below the batch, async scheduling,
 * `max_model_len`, closed loops, client overheads and timeouts, a virtual-time cap and a random
 * scaling policy; the whole result — every collector column, the summary, the per-request
 * records, the time series, the lifecycle records, the pass count, the end time, and the
 * forward-pass metrics every scaling tick saw — is compared byte for byte between the two steppers.
 */
import { fc } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import type { ClientSpec, LoadSpec, RunSpec, WorkerRoleSpec } from "../../src/config/runSpec.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay, type ReplayResult } from "../../src/sim/replay.js";
import { RandomScaling, randomRows } from "../helpers/randomTraffic.js";
import { fingerprint } from "../helpers/replayFingerprint.js";
import { disaggSpec, hostTier, kvOrRoundRobin, traceSpec, writeTrace } from "../helpers/specs.js";

const setup = fc.record({
  requests: fc.integer({ min: 1, max: 40 }),
  meanGapMs: fc.integer({ min: 1, max: 300 }),
  maxInput: fc.integer({ min: 1, max: 120 }),
  maxOutput: fc.integer({ min: 0, max: 90 }),
  seed: fc.integer({ min: 1, max: 1 << 30 }),
  disaggregated: fc.boolean(),
  kvRouter: fc.boolean(),
  replicas: fc.integer({ min: 1, max: 3 }),
  decodeReplicas: fc.integer({ min: 1, max: 3 }),
  blockSize: fc.constantFrom(1, 2, 4, 16),
  numGpuBlocks: fc.integer({ min: 8, max: 300 }),
  maxSequences: fc.integer({ min: 1, max: 12 }),
  maxBatchedTokens: fc.constantFrom(4, 16, 64, 8192),
  prefixCaching: fc.boolean(),
  asyncScheduling: fc.boolean(),
  maxModelLen: fc.constantFrom(null, 48, 150),
  polynomial: fc.boolean(),
  closedLoop: fc.constantFrom(0, 0, 2, 5),
  // Closed loop only: sessions of a warm-up phase the others wait for (traffic.load.warmup_sessions).
  warmupSessions: fc.constantFrom(0, 0, 1, 3),
  requestMs: fc.constantFrom(0, 0, 0.7),
  responseMs: fc.constantFrom(0, 0, 1.3),
  timeoutMs: fc.constantFrom(null, null, 150, 900),
  maxVirtualTimeMs: fc.constantFrom(null, null, 700, 2500),
  scaling: fc.boolean(),
  startupSeconds: fc.constantFrom(0, 0.2),
  // Host KV tier blocks on the front role (docs/offload.md); loads land between passes.
  hostBlocks: fc.constantFrom(null, null, 16, 400),
});
type Setup = typeof setup extends fc.Arbitrary<infer T> ? T : never;

function specOf(c: Setup): RunSpec {
  const path = writeTrace(randomRows({ ...c, lullFactor: 4, alphabet: 3 }));
  const common: Partial<WorkerRoleSpec> = {
    blockSize: c.blockSize,
    numGpuBlocks: c.numGpuBlocks,
    maxSequences: c.maxSequences,
    maxBatchedTokens: c.maxBatchedTokens,
    prefixCaching: c.prefixCaching,
    asyncScheduling: c.asyncScheduling,
    maxModelLen: c.maxModelLen,
    startupSeconds: c.startupSeconds,
    timing: c.polynomial ? { type: "polynomial" } : { type: "fixed", prefillMs: 5, decodeMs: 2 },
  };
  const router = kvOrRoundRobin(c.kvRouter);
  const load: LoadSpec =
    c.closedLoop > 0
      ? c.warmupSessions > 0
        ? { type: "concurrency", concurrency: c.closedLoop, warmupSessions: c.warmupSessions }
        : { type: "concurrency", concurrency: c.closedLoop }
      : { type: "trace_timestamps", speedup: 1 };
  const client: ClientSpec = { requestMs: c.requestMs, responseMs: c.responseMs, timeoutMs: c.timeoutMs };
  const front: Partial<WorkerRoleSpec> =
    c.hostBlocks === null
      ? {}
      : {
          hostOffload: hostTier(c.hostBlocks, {
            scope: c.replicas > 1 && c.hostBlocks > 100 ? "cluster_shared" : "dp_rank_local",
            // Every other drawn host tier spills to a small disk tier behind it.
            disk:
              c.hostBlocks % 2 === 0
                ? null
                : {
                    numBlocks: 50,
                    scope: c.replicas > 1 && c.hostBlocks > 100 ? "cluster_shared" : "worker_local",
                    latencyToFirstByteMs: 0.2,
                    readBandwidthGBps: 0.05,
                    writeBandwidthGBps: 0.5,
                    sharedReadBandwidthGBps: null,
                    sharedWriteBandwidthGBps: null,
                  },
          }),
        };
  const base = c.disaggregated
    ? disaggSpec(path, {
        prefill: {
          ...common,
          ...front,
          replicas: c.replicas,
          maxSequences: Math.max(1, c.maxSequences >> 1),
        },
        decode: { ...common, replicas: c.decodeReplicas },
        transfer: { bytesPerToken: 1e5, bandwidthGBps: 1 },
        traceBlockSize: 4,
      })
    : traceSpec(path, { role: { ...common, ...front, replicas: c.replicas } });
  return {
    ...base,
    router,
    load,
    client,
    stop: { requests: null, maxVirtualTimeMs: c.maxVirtualTimeMs },
  };
}

/** The replay's result and, with scaling, the forward-pass metrics each tick saw. */
async function replay(
  spec: RunSpec,
  c: Setup,
  referenceStepper: boolean,
): Promise<{ result: ReplayResult; ticks: readonly string[] }> {
  const table = await loadWorkload(spec);
  const scaling = c.scaling ? new RandomScaling(c.seed, 250, 3, c.disaggregated, 0.6) : null;
  const result = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: true,
    scaling,
    checkInvariants: true,
    referenceStepper,
  }).runSync();
  return { result, ticks: scaling?.seen ?? [] };
}

describe("decode-run merging ≡ pass-by-pass stepping", () => {
  it("random workloads and deployments give byte-identical results with either stepper", async () => {
    let mergedPasses = 0;
    let passes = 0;
    let ticksSeen = 0;
    await fc.assert(
      fc.asyncProperty(setup, async (c) => {
        const spec = specOf(c);
        const { result: reference, ticks: referenceTicks } = await replay(spec, c, true);
        const { result: merged, ticks: mergedTicks } = await replay(spec, c, false);
        expect(reference.passesInRuns).toBe(0);
        expect(merged.passes).toBe(reference.passes);
        expect(fingerprint(spec, merged)).toBe(fingerprint(spec, reference));
        // A tick after a run sees the run's last pass, as it sees any pass that has ended.
        expect(mergedTicks).toEqual(referenceTicks);
        mergedPasses += merged.passesInRuns;
        passes += merged.passes;
        ticksSeen += mergedTicks.length;
      }),
      { seed: 20261202, numRuns: 300 },
    );
    // Not vacuous: a good share of the random workloads' passes went through runs, and ticks saw them.
    expect(mergedPasses).toBeGreaterThan(0.2 * passes);
    expect(ticksSeen).toBeGreaterThan(300);
  });
});
