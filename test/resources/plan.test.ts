/**
 * The preflight plan (docs/resources.md §2): the pass over the trace (rows, prompt blocks, hash
 * ids, span; plain, gzip, Dynamo, sampled) and the estimate built from what the run holds.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { APPLIED_COMPUTE_REFERENCE_ROW } from "../../scripts/make-format-fixtures.js";
import type { RunSpec } from "../../src/config/runSpec.js";
import { DEFAULT_EXECUTION } from "../../src/config/runSpec.js";
import {
  GB,
  kvPoolBytes,
  MAX_SAMPLES,
  measureWorkload,
  PLAN_COEFFICIENTS,
  planResources,
  resolveBudget,
  scanTrace,
  type WorkloadSize,
} from "../../src/resources/index.js";
import { RETAIN_BYTES } from "../../src/traffic/mooncake/stream.js";
import { plannerSettings } from "../helpers/planner.js";
import { tempDir, traceSpec } from "../helpers/specs.js";

const C = PLAN_COEFFICIENTS;
const BUDGET = resolveBudget(DEFAULT_EXECUTION.resources, {
  availableMemoryBytes: 64 * GB,
  availableMemorySource: "meminfo",
  cpuCount: 8,
});

function rowsOf(n: number, input: (i: number) => number) {
  return Array.from({ length: n }, (_, i) => ({
    timestamp: i * 100,
    input_length: input(i),
    output_length: 4,
    hash_ids: Array.from({ length: Math.ceil(input(i) / 512) }, (_, k) => i * 1000 + k),
  }));
}

function writeJsonl(rows: readonly object[], name = "t.jsonl", gzip = false): string {
  const path = join(tempDir("fleetsim-plan-"), name);
  const text = `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;
  writeFileSync(path, gzip ? gzipSync(text) : text);
  return path;
}

describe("scanTrace", () => {
  it("counts every row and measures the prompts exactly when every line is sampled", async () => {
    const rows = rowsOf(1000, (i) => 100 + i);
    const s = await scanTrace([writeJsonl(rows)], "mooncake", 512, 64);
    expect(s.rows).toBe(1000);
    expect(s.sampled).toBe(1000);
    const blocks = rows.reduce((sum, r) => sum + Math.floor(r.input_length / 64), 0);
    expect(s.meanEngineBlocks * s.rows).toBeCloseTo(blocks, 6);
    expect(s.meanHashIds * s.rows).toBeCloseTo(
      rows.reduce((sum, r) => sum + r.hash_ids.length, 0),
      6,
    );
    expect(s.spanMs).toBe(99_900);
  });

  it("reads gzip, skips blank lines and a missing final newline", async () => {
    const rows = rowsOf(10, () => 640);
    const path = join(tempDir(), "t.jsonl.gz");
    writeFileSync(path, gzipSync(`${rows.map((r) => JSON.stringify(r)).join("\n\n")}`));
    const s = await scanTrace([path], "mooncake", 512, 64);
    expect(s.rows).toBe(10);
    expect(s.meanEngineBlocks).toBe(10);
    expect(s.spanMs).toBe(900);
  });

  it("a large trace is sampled (at most 2 × MAX_SAMPLES lines parsed), every line still counted", async () => {
    const n = 5 * MAX_SAMPLES + 7;
    // Prompt sizes cycle with an odd period: a sample at any power-of-two stride sees every phase.
    const s = await scanTrace([writeJsonl(rowsOf(n, (i) => 64 * (1 + (i % 9))))], "mooncake", 512, 64);
    expect(s.rows).toBe(n);
    expect(s.sampled).toBeLessThan(2 * MAX_SAMPLES);
    expect(s.sampled).toBeGreaterThanOrEqual(MAX_SAMPLES / 2);
    expect(s.meanEngineBlocks).toBeCloseTo(5, 1);
  });

  it("a Dynamo trace: only request_end rows are requests; shards add up; the span is across files", async () => {
    const rec = (i: number, t: number) =>
      JSON.stringify({
        schema: "dynamo.request.trace.v1",
        event_type: "request_end",
        event_time_unix_ms: t + 500,
        request: {
          request_id: `r${i}`,
          request_received_ms: t,
          total_time_ms: 500,
          output_tokens: 3,
          replay: { trace_block_size: 64, input_length: 256, input_sequence_hashes: [1, 2, 3, 4] },
        },
      });
    const tool = JSON.stringify({ schema: "dynamo.request.trace.v1", event_type: "tool_end" });
    const dir = tempDir();
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    writeFileSync(a, `${rec(0, 1000)}\n${tool}\n${rec(1, 2000)}\n`);
    writeFileSync(b, `${tool}\n${rec(2, 5000)}\n`);
    const s = await scanTrace([a, b], "dynamo", 64, 64);
    expect(s).toMatchObject({
      lines: 5,
      rows: 3,
      meanEngineBlocks: 4,
      meanHashIds: 4,
      spanMs: 4000,
    });
  });

  it("an applied_compute_agentic session counts num_turns + 1 requests of growing prompts; no span, not streamed", async () => {
    const session = APPLIED_COMPUTE_REFERENCE_ROW;
    const s = await scanTrace([writeJsonl([session, session])], "applied_compute_agentic", 64, 16);
    expect(s.rows).toBe(6);
    // Prompts of 100, 140 and 200 tokens: ⌊/16⌋ = 6, 8, 12 blocks; ⌈/64⌉ = 2, 3, 4 ids.
    expect(s.meanInputTokens).toBeCloseTo(440 / 3, 9);
    expect(s.meanEngineBlocks).toBeCloseTo(26 / 3, 9);
    expect(s.meanHashIds).toBe(3);
    expect(s.spanMs).toBeNull();
    expect(s.streamable).toBe(false);
  });

  it("delta and agentic Mooncake rows are sized as Mooncake rows and never streamed", async () => {
    const rows = rowsOf(10, () => 640);
    for (const format of ["mooncake-delta", "agentic_mooncake"] as const) {
      const s = await scanTrace([writeJsonl(rows)], format, 512, 64);
      expect(s.rows).toBe(10);
      expect(s.meanEngineBlocks).toBe(10);
      expect(s.streamable).toBe(false);
    }
  });
});

const kv = (blocks: number, n: number) => n * kvPoolBytes(blocks);

describe("planResources", () => {
  const trace = writeJsonl(rowsOf(500, () => 1280));
  const spec = (over: Partial<RunSpec> = {}, r = {}): RunSpec => ({
    ...traceSpec(trace, { role: { replicas: 2, numGpuBlocks: 1000, blockSize: 64, ...r } }),
    ...over,
  });

  it("measureWorkload: the trace's rows, prompt blocks and hash ids; the RSS before the scan", async () => {
    const w = await measureWorkload(spec());
    expect(w).toMatchObject({
      source: "scan",
      format: "mooncake",
      rows: 500,
      engineBlocks: 500 * 20,
      hashIds: 500 * 3,
      spanMs: 49_900,
      // Single-turn rows in timestamp order, replayed on their timestamps: the replay streams it.
      streamed: true,
    });
    expect(w.coordinatorRssBytes).toBeGreaterThan(0);
    expect(w.meanLineBytes).toBeGreaterThan(50);
    // Sessions, rows out of order, a closed loop: the whole table is held.
    const sessions = writeJsonl(rowsOf(500, () => 1280).map((r, i) => ({ ...r, session_id: `s${i % 7}` })));
    expect((await measureWorkload(traceSpec(sessions))).streamed).toBe(false);
    const unordered = writeJsonl(
      rowsOf(500, () => 1280).map((r, i) => ({ ...r, timestamp: (i * 37) % 500 })),
    );
    expect((await measureWorkload(traceSpec(unordered))).streamed).toBe(false);
    const closed: RunSpec = { ...spec(), load: { type: "concurrency", concurrency: 4 } };
    expect((await measureWorkload(closed)).streamed).toBe(false);
  });

  it("a streamed trace holds the requests in flight and one read ahead, not its rows", () => {
    const w: WorkloadSize = {
      coordinatorRssBytes: 100e6,
      source: "scan",
      format: "mooncake",
      rows: 2_000_000,
      engineBlocks: 376_000_000,
      hashIds: 48_000_000,
      spanMs: 7_200_000,
      streamed: true,
      meanLineBytes: 220,
    };
    const plan = planResources(spec(), BUDGET, w);
    // One read of 1 MiB ahead, and two workers × 256 sequence slots × 2.
    expect(plan.liveRows).toBe(Math.ceil(C.streamReadBytes / 220) + 2 * 256 * C.liveRowsPerSequenceSlot);
    const ends = C.requestLogResidentRows * C.requestLogBytesPerRow + C.summaryRows * C.summaryBytesPerRow;
    expect(plan.traceBytes).toBe(
      Math.round(
        ends +
          C.streamBufferBytes +
          // The first pass's rows kept for the second, up to their cap, with the columns' doubling
          // capacity (traffic/mooncake/stream.ts).
          2 * RETAIN_BYTES +
          plan.liveRows * (C.bytesPerLiveRow + 188 * C.bytesPerEngineBlock),
      ),
    );
    // Five times the rows: the same estimate (the log past its resident rows is on disk).
    expect(
      planResources(spec(), BUDGET, { ...w, rows: 10_000_000, engineBlocks: 1_880_000_000 }).traceBytes,
    ).toBe(plan.traceBytes);
  });

  it("the estimate is the sum of what the run holds", async () => {
    const w: WorkloadSize = {
      ...(await measureWorkload(spec())),
      coordinatorRssBytes: 100e6,
      streamed: false,
    };
    const plan = planResources(spec(), BUDGET, w);
    const trace =
      500 * C.bytesPerRow +
      10_000 * C.bytesPerEngineBlock +
      1500 * C.bytesPerHashId.mooncake +
      500 * (C.requestLogBytesPerRow + C.summaryBytesPerRow);
    expect(plan.traceBytes).toBe(trace);
    expect(plan.kvBytes).toBe(kv(1000, 2));
    // fixed timing: no tables
    expect(plan.timingBytes).toBe(0);
    expect(plan.estimatedBytes).toBe(Math.round(100e6 + C.runOverheadBytes + trace + kv(1000, 2)));
    expect(plan.workerProcesses).toBe(0);
    expect(plan.fits).toBe(true);
    const tiny = resolveBudget({ ...DEFAULT_EXECUTION.resources, memoryLimitGb: 0.05 }, BUDGET.host);
    expect(planResources(spec(), tiny, w).fits).toBe(false);
    // --capture-per-request adds every request's record
    expect(planResources(spec(), BUDGET, w, { capturePerRequest: true }).captureBytes).toBe(
      500 * C.bytesPerCapturedRequest,
    );
  });

  it("KV pools: attention-DP ranks each hold one; a scaling Planner may fill its budget", async () => {
    const w = await measureWorkload(spec());
    expect(planResources(spec({}, { attentionData: 4 }), BUDGET, w).kvBlocks).toBe(2 * 4 * 1000);
    const planner = plannerSettings({ mode: "agg", maxGpuBudget: 6, scaleIntervalS: 10 });
    const scaling = planResources(spec({ planner }), BUDGET, w);
    expect(scaling.kvBlocks).toBe(6 * 1000);
    expect(scaling.kvBytes).toBe(kv(1000, 6));
    // one tick record per scale interval of the arrival span
    expect(scaling.plannerTicks).toBe(Math.ceil(49.9 / 10));
    // advisory (and retune-only) Planners never scale: the starting workers only
    const advisory = planResources(spec({ planner: { ...planner, advisory: true } }), BUDGET, w);
    expect(advisory.kvBlocks).toBe(2 * 1000);
  });

  it("op tables per GPU of the default-timing roles", async () => {
    const w = await measureWorkload(spec());
    const def = spec(
      {},
      {
        timing: { type: "default", model: {} as never, gpu: { id: "h200_sxm" } as never, perfDatabase: null },
      },
    );
    expect(planResources(def, BUDGET, w).timingBytes).toBe(C.defaultTimingBytes);
    expect(planResources(spec({}, { timing: { type: "polynomial" } }), BUDGET, w).timingBytes).toBe(
      C.polynomialTimingBytes,
    );
  });

  it("retune: max_parallel sweep workers, each the modules, the op tables, a window's rows and the KV pools", async () => {
    // A retune run replays a Dynamo trace, held as a table.
    const w: WorkloadSize = {
      ...(await measureWorkload(spec())),
      coordinatorRssBytes: 100e6,
      streamed: false,
    };
    const retune = { maxParallel: 3, intervalS: 10, graceS: 2.475 } as never;
    const planner = plannerSettings({
      mode: "agg",
      enableLoadScaling: false,
      enableThroughputScaling: false,
      retune,
    });
    const plan = planResources(spec({ planner }), BUDGET, w);
    expect(plan.workerProcesses).toBe(3);
    // the window plus its grace: 12.475 s of a 49.9 s span, a quarter of the rows
    const window = 0.25 * plan.traceBytes;
    expect(plan.workerBytes).toBe(Math.round(100e6 + C.workerOverheadBytes + window + kv(1000, 2)));
    expect(plan.workersBytes).toBe(3 * plan.workerBytes);
    expect(plan.estimatedBytes).toBe(plan.mainBytes + plan.workersBytes);
    expect(plan.retuneCoordinatorBytes).toBe(C.retuneCoordinatorBytes);
  });

  it("synthetic traffic: rows and blocks from the generator's settings, no pass over a file", async () => {
    const synthetic: RunSpec = {
      ...spec(),
      source: { type: "synthetic", inputTokens: 640, outputTokens: 4 },
      load: { type: "poisson", requestsPerSecond: 20, seed: 1 },
      stop: { requests: 1000, maxVirtualTimeMs: null },
    };
    const w = await measureWorkload(synthetic);
    expect(w).toMatchObject({
      source: "synthetic",
      rows: 1000,
      engineBlocks: 10_000,
      hashIds: 0,
      spanMs: 50_000,
    });
  });

  it("an unreadable trace leaves the estimate to the rest (the load reports the error)", async () => {
    const w = await measureWorkload(traceSpec(join(tempDir(), "missing.jsonl")));
    expect(w).toMatchObject({ source: "unknown", rows: 0 });
  });
});
