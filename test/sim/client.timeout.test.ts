/**
 * `client.timeout_seconds` (docs/client.md): a request not finished that long after the client
 * sent it is abandoned — cancelled wherever it is, its KV and sequence slot freed — and counts as
 * failed (`timed_out_requests`), never in goodput. Invariants are checked in every replay here.
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { DEFAULT_CLIENT, type RunSpec, type SlaSpec } from "../../src/config/runSpec.js";
import { Terminal } from "../../src/metrics/collector.js";
import { buildSummary, HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { stableStringify } from "../../src/report/json.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { buildPrediction } from "../../src/report/prediction.js";
import { Replay } from "../../src/sim/replay.js";
import type { ScalingPolicy } from "../../src/sim/scaling.js";
import { Prng } from "../../src/util/prng.js";
import { RandomScaling } from "../helpers/randomTraffic.js";
import { disaggSpec, kvOrRoundRobin, SGLANG_ROLE, traceSpec, writeTrace } from "../helpers/specs.js";

const withTimeout = (spec: RunSpec, timeoutMs: number, requestMs = 0, responseMs = 0): RunSpec => ({
  ...spec,
  client: { ...DEFAULT_CLIENT, timeoutMs, requestMs, responseMs },
});

async function replayOf(spec: RunSpec, scaling: ScalingPolicy | null = null) {
  const table = await loadWorkload(spec);
  return new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: true,
    checkInvariants: true,
    scaling,
  });
}

/** Steps the replay until its clock reaches `ms` (the timestamp at `ms` processed). */
function stepTo(replay: Replay, ms: number): void {
  while (replay.virtualTimeMs < ms && replay.step(1));
}

function expectAllFree(replay: Replay): void {
  for (const e of replay.workers) {
    expect(e.pool.activeBlocks).toBe(0);
    expect(e.isIdle()).toBe(true);
  }
}

const row = (timestamp: number, input: number, output: number, ids: number[]) => ({
  timestamp,
  input_length: input,
  output_length: output,
  hash_ids: ids,
});

describe("aggregated: a request past its timeout is abandoned and frees what it held", () => {
  // Fixed timing: a pass is 10 ms of prefill (if any) + 2 ms of decode. One sequence slot:
  // request 0 (40 tokens out: first token at 12, last at 90) holds it; request 1 (sent at 40) waits.
  const rows = [row(0, 64, 40, [1, 2, 3, 4]), row(40, 64, 3, [5, 6, 7, 8])];
  const base = () => traceSpec(writeTrace(rows), { role: { maxSequences: 1 } });

  it("the running request is cancelled at its deadline; the waiting one gets its slot at once", async () => {
    const replay = await replayOf(withTimeout(base(), 50));
    stepTo(replay, 50);
    // At 50 ms request 0 is cancelled: its slot and blocks are back and request 1 is admitted at once.
    expect(replay.requestValue("status", 0)).toBe(Terminal.TimedOut);
    expect(replay.workers[0].runningCount).toBe(1); // request 1 alone
    expect(replay.requestValue("firstAdmit", 1)).toBe(50);
    const recs = buildPerRequest(replay.runSync());
    expect(recs.map((r) => [r.terminal_status, r.terminal_time_ms])).toEqual([
      ["canceled", 50],
      ["completed", 66],
    ]);
    // Without the timeout request 1 waits for request 0's last token.
    const plain = buildPerRequest((await replayOf(base())).runSync());
    expect(plain[1].first_admit_ms).toBe(90);
    expectAllFree(replay);
  });

  it("counts in failures and stays out of goodput; without the timeout both complete", async () => {
    const sla: SlaSpec = { ttftMs: 1000, itlMs: null, e2eMs: null };
    const timed = buildSummary((await replayOf({ ...withTimeout(base(), 50), sla })).runSync(), sla);
    expect(timed).toMatchObject({
      num_requests: 2,
      completed_requests: 1,
      timed_out_requests: 1,
      failed_requests: 1,
      rejected_requests: 0,
      goodput_completed_requests: 1,
    });
    const plain = buildSummary((await replayOf({ ...base(), sla })).runSync(), sla);
    expect([plain.completed_requests, plain.timed_out_requests, plain.goodput_completed_requests]).toEqual([
      2, 0, 2,
    ]);
  });

  it("abandoned during a pass: ends at its deadline, its KV is freed when the pass ends", async () => {
    // Request 0's first pass runs [0, 12); request 1 (sent at 1) waits behind it. Both time out.
    const two = [row(0, 64, 40, [1, 2, 3, 4]), row(1, 8, 3, [5, 6])];
    const replay = await replayOf(withTimeout(traceSpec(writeTrace(two)), 8));
    stepTo(replay, 8);
    const engine = replay.workers[0];
    expect(replay.requestValue("status", 0)).toBe(Terminal.TimedOut);
    expect(engine.pool.activeBlocks).toBeGreaterThan(0); // the pass in flight still holds it
    stepTo(replay, 12);
    expect(engine.pool.activeBlocks).toBe(0);
    expect(engine.isIdle()).toBe(true);
    const recs = buildPerRequest(replay.runSync());
    expect(recs.map((r) => [r.terminal_status, r.terminal_time_ms, r.output_length])).toEqual([
      ["canceled", 8, 0],
      ["canceled", 9, 0],
    ]);
    expect(recs[1].first_admit_ms ?? null).toBe(null);
    expectAllFree(replay);
  });

  it("a request finishing exactly at its deadline completes; response_ms can push it past", async () => {
    // One request alone: tokens at 12, 14, 16: finished at 16.
    const one = [row(0, 8, 3, [1, 2])];
    const at = buildPerRequest((await replayOf(withTimeout(traceSpec(writeTrace(one)), 16))).runSync());
    expect(at[0].terminal_status).toBe("completed");
    const late = buildPerRequest(
      (await replayOf(withTimeout(traceSpec(writeTrace(one)), 16, 0, 1))).runSync(),
    );
    expect([late[0].terminal_status, late[0].terminal_time_ms]).toEqual(["canceled", 16]);
    const early = buildPerRequest(
      (await replayOf(withTimeout(traceSpec(writeTrace(one)), 17, 0, 1))).runSync(),
    );
    expect([early[0].terminal_status, early[0].e2e_latency_ms]).toEqual(["completed", 17]);
  });

  it("closed loop: the next request is sent when the previous one times out, as after a rejection", async () => {
    const rows3 = [row(0, 8, 50, [1, 2]), row(0, 8, 50, [3, 4]), row(0, 8, 2, [5, 6])];
    const base = traceSpec(writeTrace(rows3), { load: { type: "concurrency", concurrency: 1 } });
    const recs = buildPerRequest((await replayOf(withTimeout(base, 40))).runSync());
    expect(recs.map((r) => [r.terminal_status, r.arrival_time_ms, r.terminal_time_ms])).toEqual([
      ["canceled", 0, 40],
      ["canceled", 40, 80],
      ["completed", 80, 94],
    ]);
  });

  it("is deterministic: the same input gives byte-identical prediction.json", async () => {
    const doc = async () => {
      const s = withTimeout(base(), 45);
      const p = buildPrediction(s, (await replayOf(s)).runSync(), true);
      const summary: Record<string, unknown> = { ...p.summary };
      for (const k of HOST_TIME_KEYS) delete summary[k];
      return stableStringify({ ...p, summary });
    };
    expect(await doc()).toBe(await doc());
  });
});

describe("disaggregated: abandoned wherever it is, both sides freed", () => {
  // Prefill 10 ms; KV moves at 1 MB/token over 1 GB/s = 1 ms per token; decode pass 2 ms.
  it("during its KV transfer: the decode reservation and the prefill copy are freed at the deadline", async () => {
    const rows = [
      row(
        0,
        64,
        5,
        Array.from({ length: 16 }, (_, i) => i + 1),
      ),
    ];
    // Prefill [0, 10), transfer of 64 tokens [10, 74): the deadline at 40 falls inside it.
    const replay = await replayOf(withTimeout(disaggSpec(writeTrace(rows)), 40));
    stepTo(replay, 40);
    expect(replay.requestValue("status", 0)).toBe(Terminal.TimedOut);
    const [prefill, decode] = replay.workers;
    expect(prefill.heldCount).toBe(0);
    expect(decode.reservedCount).toBe(0);
    expect(prefill.pool.activeBlocks).toBe(0);
    expect(decode.pool.activeBlocks).toBe(0);
    const recs = buildPerRequest(replay.runSync());
    expect(recs[0].terminal_status).toBe("canceled");
    expect(recs[0].destination_activated_ms ?? null).toBe(null);
    expectAllFree(replay);
  });

  it("waiting for decode capacity, in the prefill queue, and while decoding", async () => {
    // Decode holds one sequence: request 0 decodes for 10 + 8 + 2 × 200 ms; request 1's hand-off
    // waits for that slot; request 2 waits for the prefill worker (max_sequences 1) behind 1.
    const rows = [row(0, 8, 200, [1, 2]), row(0, 8, 3, [3, 4]), row(0, 8, 3, [5, 6])];
    const spec = withTimeout(
      disaggSpec(writeTrace(rows), { decode: { maxSequences: 1 }, prefill: { maxBatchedTokens: 8 } }),
      100,
    );
    const replay = await replayOf(spec);
    const result = replay.runSync();
    const recs = buildPerRequest(result);
    expect(recs.map((r) => r.terminal_status)).toEqual(["canceled", "canceled", "canceled"]);
    expect(recs.map((r) => r.terminal_time_ms)).toEqual([100, 100, 100]);
    // Request 0 was decoding; 1 and 2 waited (KV held on prefill) for the decode slot. Cancelling
    // 0 frees it: 1 is reserved, then cancelled in its transfer, then 2 — all at 100 ms.
    expect(recs[0].decode_admit_ms).toBe(18);
    expect(recs.map((r) => r.destination_reserved_ms)).toEqual([10, 100, 100]);
    expect(recs.map((r) => r.decode_admit_ms ?? null)).toEqual([18, null, null]);
    expect(buildSummary(result, null).timed_out_requests).toBe(3);
    expectAllFree(replay);
  });

  it("with a longer timeout the same traffic completes, and the freed decode slot is reused at once", async () => {
    const rows = [row(0, 8, 200, [1, 2]), row(50, 8, 3, [3, 4])];
    const spec = withTimeout(disaggSpec(writeTrace(rows), { decode: { maxSequences: 1 } }), 100);
    const recs = buildPerRequest((await replayOf(spec)).runSync());
    // Request 1 (prefill [50, 60)) waits for the decode slot request 0 holds; at 100 ms request 0
    // is cancelled and request 1 is reserved then: 8 tokens move in 8 ms.
    expect(recs[0].terminal_status).toBe("canceled");
    expect(recs[1].destination_reserved_ms).toBe(100);
    expect(recs[1].terminal_status).toBe("completed");
  });
});

describe("timeouts under random traffic and scaling keep every invariant", () => {
  test.prop(
    [
      fc.record({
        seed: fc.integer({ min: 1, max: 1 << 30 }),
        requests: fc.integer({ min: 5, max: 50 }),
        disaggregated: fc.boolean(),
        scaling: fc.boolean(),
        timeoutMs: fc.integer({ min: 1, max: 400 }),
        requestMs: fc.constantFrom(0, 0, 3, 20),
        responseMs: fc.constantFrom(0, 0, 2, 15),
        maxSequences: fc.integer({ min: 1, max: 8 }),
        numGpuBlocks: fc.integer({ min: 30, max: 120 }),
        bandwidthGBps: fc.constantFrom(null, 0.05, 1),
        closedLoop: fc.boolean(),
        kvRouter: fc.boolean(),
        // Disaggregated SGLang hands off destination first: cancellations before the prefill too.
        sglang: fc.boolean(),
      }),
    ],
    { seed: 20261214, numRuns: 150 },
  )("each request ends once, KV is conserved, timed-out requests are counted", async (p) => {
    const rng = new Prng(p.seed);
    const rows: Record<string, unknown>[] = [];
    let ts = 0;
    for (let i = 0; i < p.requests; i++) {
      ts += Math.floor(rng.nextFloat() * 60);
      const input = 1 + Math.floor(rng.nextFloat() * 100);
      const ids = Array.from({ length: Math.ceil(input / 4) }, (_, k) => (k < 2 ? k : 100 * i + k));
      rows.push(row(ts, input, Math.floor(rng.nextFloat() * 40), ids));
    }
    const path = writeTrace(rows);
    const common = { maxSequences: p.maxSequences, numGpuBlocks: p.numGpuBlocks, maxBatchedTokens: 64 };
    const load: RunSpec["load"] = p.closedLoop
      ? { type: "concurrency", concurrency: 3 }
      : { type: "trace_timestamps", speedup: 1 };
    const roles = p.sglang ? { ...common, ...SGLANG_ROLE } : common;
    const pd = () => {
      const s = disaggSpec(path, {
        prefill: roles,
        decode: roles,
        transfer: { bytesPerToken: 1e6, bandwidthGBps: p.bandwidthGBps },
      });
      return {
        ...s,
        engine: { ...s.engine, backend: p.sglang ? ("sglang" as const) : ("vllm" as const) },
        load,
      };
    };
    const base = p.disaggregated ? pd() : traceSpec(path, { role: common, load });
    const router = kvOrRoundRobin(p.kvRouter);
    const spec = withTimeout({ ...base, router }, p.timeoutMs, p.requestMs, p.responseMs);
    const replay = await replayOf(spec, p.scaling ? new RandomScaling(p.seed, 40, 3, p.disaggregated) : null);
    const result = await replay.run();
    const c = result.requests.columns();
    let timedOut = 0;
    for (let r = 0; r < result.workload.count; r++) {
      expect(c.status[r]).not.toBe(Terminal.None);
      if (c.status[r] === Terminal.TimedOut) {
        timedOut++;
        expect(c.terminal[r]).toBeCloseTo(c.arrival[r] + p.timeoutMs, 9);
      } else if (c.status[r] === Terminal.Completed && c.tokens[r] > 0) {
        expect(c.lastToken[r] - c.arrival[r]).toBeLessThanOrEqual(p.timeoutMs + 1e-9);
      }
    }
    const s = buildSummary(result, null);
    expect(s.timed_out_requests).toBe(timedOut);
    expect(s.completed_requests + s.failed_requests).toBe(s.num_requests);
    expectAllFree(replay);
  });
});
