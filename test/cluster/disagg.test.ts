import { describe, expect, it } from "vitest";
import { transferMs, transferTokens } from "../../src/cluster/kvTransfer.js";
import { buildSummary } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { Replay } from "../../src/sim/replay.js";
import type { ScalingPolicy } from "../../src/sim/scaling.js";
import { disaggSpec, writeTrace } from "../helpers/specs.js";

async function run(spec: ReturnType<typeof disaggSpec>, scaling?: ScalingPolicy) {
  const table = await loadWorkload(spec);
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: true,
    ...(scaling === undefined ? {} : { scaling }),
  });
  return { replay, result: replay.runSync() };
}

describe("KV transfer arithmetic (`ai-dynamo/aisimulate@26191a9:docs/replay/engine/kv-transfer.md`, `ai-dynamo/dynamo@4c3ac77:lib/mocker/src/common/utils.rs`)", () => {
  const transfer = { bytesPerToken: 1_000_000, bandwidthGBps: 1, timingMode: "full_prompt" as const };
  it("128 tokens × 1 MB at 1 GB/s take 128 ms; no bandwidth means no delay", () => {
    expect(transferMs(128, transfer)).toBeCloseTo(128, 9);
    expect(transferMs(128, { ...transfer, bandwidthGBps: null })).toBe(0);
    expect(transferMs(0, transfer)).toBe(0);
  });
  it("full_prompt moves the whole prompt; destination_missing only the blocks the decode worker lacks", () => {
    expect(transferTokens(100, 64, 16, transfer)).toBe(100);
    const missing = { ...transfer, timingMode: "destination_missing" as const };
    // 100 tokens = 7 blocks of 16 (the last partial); 4 resident → 3 blocks × 16 move.
    expect(transferTokens(100, 64, 16, missing)).toBe(48);
    expect(transferTokens(100, 0, 16, missing)).toBe(112);
  });
});

describe("disaggregated replay (fixed 10 ms prefill / 2 ms decode, 1 MB/token at 1 GB/s)", () => {
  it("runs prefill, hand-off, transfer and decode with the reference timeline", async () => {
    const rows = [{ timestamp: 0, input_length: 8, output_length: 3, hash_ids: [1, 2] }];
    const { replay, result } = await run(disaggSpec(writeTrace(rows)));
    const [rec] = buildPerRequest(result);
    // Prefill pass [0, 10) (no decode time on a prefill worker); 8 tokens move in 8 ms; the decode
    // worker admits at 18 and emits tokens at 20, 22, 24.
    expect(rec).toMatchObject({
      prefill_admit_ms: 0,
      source_held_ms: 10,
      destination_reserved_ms: 10,
      transferred_tokens: 8,
      destination_activated_ms: 18,
      source_released_ms: 18,
      decode_admit_ms: 18,
    });
    expect([rec.first_token_ms, rec.last_token_ms, rec.ttft_ms, rec.output_length]).toEqual([20, 24, 20, 3]);
    expect([rec.prefill_worker_idx, rec.decode_worker_idx]).toEqual([0, 0]);
    expect(rec.routing_history.map((h) => h.pool)).toEqual(["prefill", "decode"]);
    for (const w of replay.workers) {
      expect(w.isIdle()).toBe(true);
      expect(w.pool.activeBlocks).toBe(0);
    }
  });

  it("destination_missing moves only what the decode worker lacks; full_prompt moves it all", async () => {
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 1, hash_ids: [1, 2] },
      { timestamp: 100, input_length: 12, output_length: 1, hash_ids: [1, 2, 3] },
    ];
    const missing = buildPerRequest((await run(disaggSpec(writeTrace(rows)))).result);
    // The first request's prompt blocks were registered on the decode worker at activation.
    expect(missing.map((r) => [r.decode_reused_input_tokens, r.transferred_tokens])).toEqual([
      [0, 8],
      [8, 4],
    ]);
    expect(missing[1].ttft_ms).toBe(10 + 4 + 2);
    const full = buildPerRequest(
      (await run(disaggSpec(writeTrace(rows), { transfer: { timingMode: "full_prompt" } }))).result,
    );
    expect(full.map((r) => r.transferred_tokens)).toEqual([8, 12]);
    expect(full[1].ttft_ms).toBe(10 + 12 + 2);
  });

  it("reports per-role worker-seconds and GPU-hours that add up", async () => {
    const rows = [0, 5, 10, 15].map((t, i) => ({
      timestamp: t,
      input_length: 8,
      output_length: 4,
      hash_ids: [i * 2, i * 2 + 1],
    }));
    const spec = disaggSpec(writeTrace(rows), {
      prefill: { replicas: 2, gpusPerWorker: 1 },
      decode: { replicas: 3, tensor: 2, gpusPerWorker: 2 },
    });
    const { result } = await run(spec);
    const s = buildSummary(result, null);
    expect(s.completed_requests).toBe(4);
    expect(s.prefill_worker_seconds).toBeCloseTo((2 * result.endTimeMs) / 1000, 12);
    expect(s.decode_worker_seconds).toBeCloseTo((3 * result.endTimeMs) / 1000, 12);
    expect([s.prefill_gpus_per_worker, s.decode_gpus_per_worker]).toEqual([1, 2]);
    expect(s.gpu_hours).toBeCloseTo((s.prefill_worker_seconds * 1 + s.decode_worker_seconds * 2) / 3600, 15);
    // Round robin on both pools.
    const recs = buildPerRequest(result);
    expect(recs.map((r) => r.prefill_worker_idx)).toEqual([0, 1, 0, 1]);
    expect(recs.map((r) => r.decode_worker_idx)).toEqual([0, 1, 2, 0]);
  });

  it("a zero-output request completes on its prefill worker without a hand-off", async () => {
    const rows = [{ timestamp: 0, input_length: 8, output_length: 0, hash_ids: [1, 2] }];
    const { result } = await run(disaggSpec(writeTrace(rows)));
    const [rec] = buildPerRequest(result);
    expect(rec.terminal_status).toBe("completed");
    expect(rec.terminal_time_ms).toBe(10);
    expect(rec.decode_worker_idx).toBeNull();
  });

  it("waits for decode capacity: a hand-off reserves only when blocks free up", async () => {
    // Decode worker: 4 blocks of 4 tokens. Each request needs 2 prompt blocks + 1 for output.
    const rows = [0, 0, 0].map((t, i) => ({
      timestamp: t,
      input_length: 8,
      output_length: 4,
      hash_ids: [i * 2 + 10, i * 2 + 11],
    }));
    const { replay, result } = await run(
      disaggSpec(writeTrace(rows), { prefill: { maxSequences: 4 }, decode: { numGpuBlocks: 4 } }),
    );
    const recs = buildPerRequest(result);
    expect(recs.every((r) => r.terminal_status === "completed" && r.output_length === 4)).toBe(true);
    const reserved = recs.map((r) => r.destination_reserved_ms as number);
    const held = recs.map((r) => r.source_held_ms as number);
    // Someone had to wait for decode KV.
    expect(reserved.some((t, i) => t > held[i])).toBe(true);
    for (const w of replay.workers) expect(w.isIdle()).toBe(true);
  });
  it("meters hand-offs into busy workers as the reference does: one reservation per decode pass end, activation at its end, the source freed at the prefill pass end", async () => {
    // A keeps the decode worker busy with 2 ms passes from 18 ms on (prefill [0, 10), 8 ms of
    // transfer). C and D are prefilled together in [11, 21) and held at 21, inside the decode pass
    // [20, 22): the reference's decode scheduler queues both (`retry_pending_destinations`) and
    // reserves one at each pass end, 22 and 24 (fleetsim used to reserve both at 21); each 7-token
    // transfer (7 ms) lands inside a pass, [28, 30) and [30, 32), and is activated and admitted at
    // that pass's end (fleetsim used to activate them at 28 and 29). Their prefill worker is in
    // E's pass [25, 35) then: their source copies are freed at its end, 35, not at activation
    // (A's own, activated at 18 during C and D's prefill pass, is freed at 21). E (5 tokens) is
    // held at 35, reserved at the decode pass end 36, lands at 41 and is activated at 42, with the
    // prefill worker idle: its source is freed then.
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 20, hash_ids: [1, 2] },
      { timestamp: 11, input_length: 7, output_length: 2, hash_ids: [3, 4] },
      { timestamp: 11, input_length: 7, output_length: 2, hash_ids: [5, 6] },
      { timestamp: 25, input_length: 5, output_length: 2, hash_ids: [7, 8] },
    ];
    const spec = disaggSpec(writeTrace(rows), {
      prefill: { maxSequences: 4 },
      transfer: { timingMode: "full_prompt" },
    });
    const { replay, result } = await run(spec);
    const recs = buildPerRequest(result);
    const timeline = (r: (typeof recs)[number]) => [
      r.source_held_ms,
      r.destination_reserved_ms,
      r.destination_activated_ms,
      r.decode_admit_ms,
      r.first_token_ms,
      r.source_released_ms,
    ];
    expect(recs.map(timeline)).toEqual([
      [10, 10, 18, 18, 20, 21],
      [21, 22, 30, 30, 32, 35],
      [21, 24, 32, 32, 34, 35],
      [35, 36, 42, 42, 44, 42],
    ]);
    for (const w of replay.workers) expect(w.isIdle()).toBe(true);
  });

  it("routes a timestamp's arrivals after its scaling tick: a prefill worker the tick adds takes its share", async () => {
    // A first request at 0 (on worker 0, decoding until ~220 ms); the tick at 100 ms scales
    // prefill to 2 (start-up 0 s), and four requests arrive at 100 ms. The reference's
    // disaggregated runtime submits them to the prefill router after the tick, so round robin
    // spreads them over both workers (seed-disagg-budget-4, docs/conformance.md Known differences
    // 17); routed before it, all four went to worker 0.
    const rows = [0, 100, 100, 100, 100].map((t, i) => ({
      timestamp: t,
      input_length: 8,
      output_length: i === 0 ? 100 : 2,
      hash_ids: [2 * i + 1, 2 * i + 2],
    }));
    const policy: ScalingPolicy = {
      initialTickMs: () => 100,
      onTick: (snap) => ({
        targetPrefill: snap.nowMs === 100 ? 2 : null,
        targetDecode: null,
        nextTickMs: null,
      }),
    };
    const spec = disaggSpec(writeTrace(rows), { prefill: { maxSequences: 4 } });
    const recs = buildPerRequest((await run(spec, policy)).result);
    expect(recs.map((r) => [r.arrival_time_ms, r.prefill_worker_idx])).toEqual([
      [0, 0],
      [100, 1],
      [100, 0],
      [100, 1],
      [100, 0],
    ]);
    expect(recs.every((r) => r.terminal_status === "completed")).toBe(true);
  });

  it("attention DP on both roles: each rank holds its own requests, hand-offs land on decode ranks", async () => {
    // Two requests at once; 2 prefill ranks of one request each (max_sequences 1 per rank), 2
    // decode ranks. Each prefill rank prefills its own request in the same pass [0, 10); both
    // 8-token transfers land at 18 on decode ranks 0 and 1, which decode them side by side.
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 3, hash_ids: [1, 2] },
      { timestamp: 0, input_length: 8, output_length: 5, hash_ids: [3, 4] },
    ];
    const spec = disaggSpec(writeTrace(rows), {
      prefill: { attentionData: 2, gpusPerWorker: 2 },
      decode: { attentionData: 2, gpusPerWorker: 2 },
    });
    const { replay, result } = await run(spec);
    const recs = buildPerRequest(result);
    expect(recs.map((r) => r.routing_history.map((h) => [h.pool, h.logical_worker_id, h.dp_rank]))).toEqual([
      [
        ["prefill", 0, 0],
        ["decode", 0, 0],
      ],
      [
        ["prefill", 0, 1],
        ["decode", 0, 1],
      ],
    ]);
    expect(recs.map((r) => r.source_held_ms)).toEqual([10, 10]);
    expect(recs.map((r) => r.decode_admit_ms)).toEqual([18, 18]);
    // One decode pass for both ranks (the barrier): the tokens come out together.
    expect(recs.map((r) => [r.first_token_ms, r.last_token_ms])).toEqual([
      [20, 24],
      [20, 28],
    ]);
    const s = buildSummary(result, null);
    expect([s.prefill_gpus_per_worker, s.decode_gpus_per_worker]).toEqual([2, 2]);
    expect(s.gpu_hours).toBeCloseTo(((s.prefill_worker_seconds + s.decode_worker_seconds) * 2) / 3600, 12);
    for (const w of replay.workers) expect(w.isIdle()).toBe(true);
  });
});
