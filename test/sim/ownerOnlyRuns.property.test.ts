/**
 * Owner-only KV runs (engine/kvBlockPool.ts "Owner-only runs") change how the replay keeps its
 * books, never what it predicts: the same random traces replayed with the blocks only their owner
 * holds kept as runs (a Mooncake table or stream says which) and with every block indexed one at a
 * time (the table without `ownerOnlyFrom`: the block-at-a-time pool) give the same result byte for
 * byte (test/helpers/replayFingerprint.ts), with the invariant checker (KV conservation and the
 * pool's audit) on. Small caches make requests evict each other's blocks and be preempted
 * (a preempted request indexes its owner-only blocks so that its re-admission hits them).
 * The stream hashes each prompt only up to its owner-only blocks (traffic/mooncake/stream.ts
 * "Lazy hashes"): what needs the rest — a preemption, a host tier, SGLang, the KV router — has
 * them written first, and the replay is the same again.
 */
import { fc, test } from "@fast-check/vitest";
import { afterAll, describe, expect } from "vitest";
import type { RunSpec, WorkerRoleSpec } from "../../src/config/runSpec.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { openWorkload } from "../../src/pipeline/workload.js";
import { Replay } from "../../src/sim/replay.js";
import { MooncakeStream } from "../../src/traffic/mooncake/stream.js";
import type { RequestSource } from "../../src/traffic/requestSource.js";
import type { RequestTable } from "../../src/traffic/requests.js";
import { randomRows } from "../helpers/randomTraffic.js";
import { fingerprint } from "../helpers/replayFingerprint.js";
import {
  disaggSpec,
  hostTier,
  kvOrRoundRobin,
  SGLANG_ROLE,
  traceSpec,
  writeTrace,
} from "../helpers/specs.js";

const traffic = fc.record({
  requests: fc.integer({ min: 5, max: 50 }),
  meanGapMs: fc.integer({ min: 5, max: 200 }),
  maxInput: fc.integer({ min: 8, max: 160 }),
  maxOutput: fc.integer({ min: 0, max: 60 }),
  seed: fc.integer({ min: 1, max: 1 << 30 }),
  alphabet: fc.integer({ min: 1, max: 6 }),
});

const deployment = fc.record({
  disaggregated: fc.boolean(),
  kvRouter: fc.constantFrom(false, false, true),
  replicas: fc.integer({ min: 1, max: 3 }),
  // Engine blocks inside a trace block of 4 tokens, equal to it, or spanning two.
  blockSize: fc.constantFrom(2, 4, 8),
  numGpuBlocks: fc.integer({ min: 30, max: 160 }),
  maxSequences: fc.integer({ min: 1, max: 12 }),
  chunkedPrefill: fc.constantFrom(true, true, false),
  speculation: fc.boolean(),
  // Engines that read every prompt hash: a host tier indexes every block, SGLang's radix cache
  // matches whole prompts (a lazily hashed stream must finish the hashes for them).
  backend: fc.constantFrom("vllm", "vllm", "vllm", "vllm+host", "sglang"),
});

type Deployment = typeof deployment extends fc.Arbitrary<infer T> ? T : never;

function specOf(path: string, d: Deployment): RunSpec {
  const common: Partial<WorkerRoleSpec> = {
    blockSize: d.blockSize,
    numGpuBlocks: d.numGpuBlocks,
    maxSequences: d.maxSequences,
    maxBatchedTokens: 48,
    chunkedPrefill: d.chunkedPrefill,
    timing: { type: "fixed", prefillMs: 7, decodeMs: 3 },
    speculation: d.speculation
      ? { kind: "ngram", numSpeculativeTokens: 3, acceptanceRates: [0.7, 0.5, 0.3], seed: 5 }
      : null,
    ...(d.backend === "sglang" ? SGLANG_ROLE : {}),
    // Host offload is an aggregated worker's (a disaggregated role has no load scheduler).
    ...(d.backend === "vllm+host" && !d.disaggregated ? { hostOffload: hostTier(40) } : {}),
  };
  const router = kvOrRoundRobin(d.kvRouter);
  if (!d.disaggregated) return { ...traceSpec(path, { role: { ...common, replicas: d.replicas } }), router };
  return {
    ...disaggSpec(path, {
      prefill: { ...common, replicas: d.replicas },
      decode: { ...common, replicas: 1 },
      transfer: { bytesPerToken: 1e6, bandwidthGBps: 0.5 },
    }),
    router,
  };
}

async function replay(spec: RunSpec, workload: RequestTable | RequestSource): Promise<string> {
  const result = await new Replay(spec, workload, await createRoleTimings(spec.engine), {
    capturePerRequest: true,
    checkInvariants: true,
  }).run();
  return fingerprint(spec, result);
}

// What the runs exercised, checked once they all ran (a property that never reached the owner-only
// path, a preemption or a lazily hashed row finished later would prove nothing).
let ownerOnlyRows = 0;
let preemptedRuns = 0;
let lazyRows = 0;
let completedRows = 0;

/** The stream of `spec`'s trace (its rows hashed lazily), counting the rows it hashes whole later. */
async function countingStream(spec: RunSpec): Promise<RequestSource> {
  const stream = await openWorkload(spec);
  if (!(stream instanceof MooncakeStream)) throw new Error("expected a stream");
  expect(stream.hashCompleter).toBe(stream);
  const complete = stream.completePromptHashes.bind(stream);
  stream.completePromptHashes = (row, out, outStart) => {
    completedRows++;
    complete(row, out, outStart);
  };
  return stream;
}

describe("owner-only KV runs: the same replay as block-at-a-time KV", () => {
  test.prop([traffic, deployment], { seed: 20261206, numRuns: 90 })(
    "table and stream with owner-only runs ≡ the table without them, byte for byte",
    async (t, d) => {
      const rows = randomRows({ ...t, lullFactor: 4 });
      const spec = specOf(writeTrace(rows), d);
      const table = await loadWorkload(spec);
      const known = table.ownerOnlyFrom;
      expect(known).toBeInstanceOf(Int32Array);
      for (let r = 0; r < table.count; r++) {
        if (known![r] < Number.POSITIVE_INFINITY) ownerOnlyRows++;
        // The stream hashes such a row only up to there.
        if (known![r] < table.blockOffsets[r + 1] - table.blockOffsets[r]) lazyRows++;
      }
      const blockAtATime = await replay(spec, { ...table, ownerOnlyFrom: null });
      expect(await replay(spec, table)).toBe(blockAtATime);
      expect(await replay(spec, await countingStream(spec))).toBe(blockAtATime);
      if ((JSON.parse(blockAtATime) as { preemptions: number }).preemptions > 0) preemptedRuns++;
    },
  );

  afterAll(() => {
    expect(ownerOnlyRows).toBeGreaterThan(500);
    expect(preemptedRuns).toBeGreaterThan(5);
    expect(lazyRows).toBeGreaterThan(300);
    // Preemptions, host tiers, SGLang and the KV router each finish some rows' hashes.
    expect(completedRows).toBeGreaterThan(150);
  });
});
