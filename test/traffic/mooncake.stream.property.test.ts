/**
 * A streamed trace (traffic/mooncake/stream.ts) must replay exactly as the same trace loaded as a
 * table: random single-turn traces over both topologies, both routers, client overheads and
 * timeouts, a virtual-time cap, speedups and random scaling, with a row window and hash chunks
 * far smaller than the trace (the window wraps and grows, chunks are dropped) and, on the stream's
 * side, a request log that spills to disk and exact distributions on their bounded-memory path.
 * The whole result is compared byte for byte (test/helpers/replayFingerprint.ts).
 */
import { fc } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import type { ClientSpec, RunSpec, WorkerRoleSpec } from "../../src/config/runSpec.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay, type ReplayResult } from "../../src/sim/replay.js";
import { loadMooncakeTrace } from "../../src/traffic/mooncake/index.js";
import { type MooncakeStream, openMooncakeStream } from "../../src/traffic/mooncake/stream.js";
import { TableSource } from "../../src/traffic/tableSource.js";
import { RandomScaling, randomRows } from "../helpers/randomTraffic.js";
import { fingerprint } from "../helpers/replayFingerprint.js";
import { disaggSpec, kvOrRoundRobin, traceSpec, writeTrace } from "../helpers/specs.js";

const setup = fc.record({
  requests: fc.integer({ min: 1, max: 260 }),
  meanGapMs: fc.integer({ min: 1, max: 120 }),
  maxInput: fc.integer({ min: 1, max: 120 }),
  maxOutput: fc.integer({ min: 0, max: 60 }),
  seed: fc.integer({ min: 1, max: 1 << 30 }),
  disaggregated: fc.boolean(),
  kvRouter: fc.boolean(),
  replicas: fc.integer({ min: 1, max: 3 }),
  numGpuBlocks: fc.integer({ min: 16, max: 300 }),
  maxSequences: fc.integer({ min: 1, max: 12 }),
  speedup: fc.constantFrom(1, 1, 2.5),
  requestMs: fc.constantFrom(0, 0, 0.7),
  responseMs: fc.constantFrom(0, 0, 1.3),
  timeoutMs: fc.constantFrom(null, null, 150, 900),
  maxVirtualTimeMs: fc.constantFrom(null, null, 900, 4000),
  scaling: fc.boolean(),
  hashChunkSize: fc.constantFrom(8, 64, 1 << 16),
});
type Setup = typeof setup extends fc.Arbitrary<infer T> ? T : never;

function specOf(c: Setup, path: string): RunSpec {
  const common: Partial<WorkerRoleSpec> = {
    blockSize: 4,
    numGpuBlocks: c.numGpuBlocks,
    maxSequences: c.maxSequences,
    timing: { type: "fixed", prefillMs: 5, decodeMs: 2 },
  };
  const router = kvOrRoundRobin(c.kvRouter);
  const client: ClientSpec = { requestMs: c.requestMs, responseMs: c.responseMs, timeoutMs: c.timeoutMs };
  const base = c.disaggregated
    ? disaggSpec(path, {
        prefill: { ...common, replicas: c.replicas },
        decode: { ...common, replicas: c.replicas },
        transfer: { bytesPerToken: 1e5, bandwidthGBps: 1 },
      })
    : traceSpec(path, { role: { ...common, replicas: c.replicas } });
  return {
    ...base,
    router,
    load: { type: "trace_timestamps", speedup: c.speedup },
    client,
    stop: { requests: null, maxVirtualTimeMs: c.maxVirtualTimeMs },
  };
}

async function replay(
  spec: RunSpec,
  c: Setup,
  streamed: boolean,
  retainRows = false,
): Promise<{ result: ReplayResult; window: number }> {
  const path = spec.source.type === "trace" ? spec.source.path : "";
  const opts = { traceBlockSize: 4, engineBlockSize: 4, speedup: c.speedup };
  let workload: MooncakeStream | TableSource;
  if (streamed) {
    const stream = await openMooncakeStream(path, {
      ...opts,
      initialWindowRows: 1,
      hashChunkSize: c.hashChunkSize,
      readChunkBytes: 256,
      retainRows,
    });
    if (stream === null) throw new Error("a single-turn trace in timestamp order must stream");
    workload = stream;
  } else {
    workload = new TableSource(await loadMooncakeTrace(path, opts));
  }
  const scaling = c.scaling ? new RandomScaling(c.seed, 250, 3, c.disaggregated, 0.6) : null;
  const result = await new Replay(spec, workload, await createRoleTimings(spec.engine), {
    capturePerRequest: true,
    scaling,
    checkInvariants: true,
    // The stream's side spills its log every few rows.
    requestLog: streamed ? { chunkRows: 7, residentRows: 7 } : undefined,
  }).run();
  return { result, window: workload.window.capacity };
}

describe("a streamed trace ≡ the same trace as a table", () => {
  it("random traces and deployments give byte-identical results, in a window smaller than the trace", async () => {
    let wrapped = 0;
    await fc.assert(
      fc.asyncProperty(setup, async (c) => {
        const rows = randomRows({ ...c, lullFactor: 4, alphabet: 3 });
        const spec = specOf(c, writeTrace(rows));
        const table = await replay(spec, c, false);
        const stream = await replay(spec, c, true);
        expect(fingerprint(spec, stream.result, 5)).toBe(fingerprint(spec, table.result));
        // The same rows kept from the first pass instead of read from the file again.
        const kept = await replay(spec, c, true, true);
        expect(fingerprint(spec, kept.result, 5)).toBe(fingerprint(spec, table.result));
        kept.result.requests.close();
        if (stream.window < rows.length) wrapped++;
        stream.result.requests.close();
      }),
      { seed: 20261203, numRuns: 120 },
    );
    // Not vacuous: most traces were longer than the stream's window.
    expect(wrapped).toBeGreaterThan(40);
  });
});
