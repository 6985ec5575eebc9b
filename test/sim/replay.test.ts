import { describe, expect, it } from "vitest";
import { Terminal } from "../../src/metrics/collector.js";
import { buildSummary } from "../../src/metrics/summary.js";
import { loadWorkload, runPrediction } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { Replay } from "../../src/sim/replay.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

async function replay(spec: ReturnType<typeof traceSpec>, capture = true) {
  const table = await loadWorkload(spec);
  const r = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: capture,
  });
  return { replay: r, result: r.runSync() };
}

describe("replay loop: hand-computed two-request run (fixed 10 ms prefill / 2 ms decode)", () => {
  // A arrives at 0 (8 tokens, 3 out); B at 5 ms (4 tokens, 1 out); one worker.
  // Pass 1 [0,12): A prefill + first token. Pass 2 [12,24): A decodes, B admitted and done.
  // Pass 3 [24,26): A's last token.
  const rows = [
    { timestamp: 1000, input_length: 8, output_length: 3, hash_ids: [1, 2] },
    { timestamp: 1005, input_length: 4, output_length: 1, hash_ids: [3] },
  ];

  it("stamps tokens at pass ends and derives every latency metric from them", async () => {
    const spec = traceSpec(writeTrace(rows), { sla: { ttftMs: 15, itlMs: 10, e2eMs: null } });
    const { result } = await replay(spec);
    const s = buildSummary(result, spec.sla);
    expect(s.num_requests).toBe(2);
    expect(s.completed_requests).toBe(2);
    expect(s.total_input_tokens).toBe(12);
    expect(s.total_output_tokens).toBe(4);
    expect(s.duration_ms).toBe(26);
    expect(s.request_throughput_rps).toBeCloseTo(2 / 0.026, 9);
    expect(s.output_throughput_tok_s).toBeCloseTo(4 / 0.026, 9);
    expect(s.total_throughput_tok_s).toBeCloseTo(16 / 0.026, 9);
    // TTFT: A 12, B 24 − 5 = 19. Nearest rank of p50 over n = 2 is round(0.5) = 1 → 19.
    expect([s.mean_ttft_ms, s.min_ttft_ms, s.max_ttft_ms, s.median_ttft_ms, s.std_ttft_ms]).toEqual([
      15.5, 12, 19, 19, 3.5,
    ]);
    expect(s.num_ttft_samples).toBe(2);
    // TTST is the first gap (24 − 12), not from arrival; only A has two tokens.
    expect(s.mean_ttst_ms).toBe(12);
    expect(s.num_tpot_samples).toBe(1);
    expect(s.mean_tpot_ms).toBe(7);
    expect([s.mean_e2e_latency_ms, s.max_e2e_latency_ms]).toEqual([22.5, 26]);
    // ITL pools A's gaps 12 and 2.
    expect(s.mean_itl_ms).toBeCloseTo(7, 9);
    expect(s.max_itl_ms).toBe(12);
    expect(s.p99_itl_ms).toBeCloseTo(12, 1);
    expect(s.min_itl_ms).toBe(2);
    expect(s.mean_output_token_throughput_per_user).toBeCloseTo((1000 / 12 + 1000 / 2) / 2, 6);
    // One worker provisioned for 26 ms.
    expect(s.decode_worker_seconds).toBeCloseTo(0.026, 12);
    expect(s.prefill_worker_seconds).toBe(0);
    expect(s.gpu_hours).toBeCloseTo(0.026 / 3600, 15);
    // Goodput: A meets TTFT 12 ≤ 15 and avg ITL (26 − 12)/2 = 7 ≤ 10; B misses TTFT.
    expect(s.goodput_completed_requests).toBe(1);
    expect(s.goodput_output_throughput_tok_s).toBeCloseTo(3 / 0.026, 9);
    expect(s.prefix_cache_reused_ratio).toBe(0);
  });

  it("writes per-request records with the same timestamps", async () => {
    const spec = traceSpec(writeTrace(rows));
    const { result } = await replay(spec);
    const recs = buildPerRequest(result);
    expect(
      recs.map((r) => [r.arrival_time_ms, r.first_token_ms, r.last_token_ms, r.ttft_ms, r.itl_ms]),
    ).toEqual([
      [0, 12, 26, 12, 7],
      [5, 24, 24, 19, null],
    ]);
    expect(recs[1].admission_history).toEqual([
      {
        admission_ordinal: 2,
        pool_admission_ordinal: 2,
        pool: "agg",
        at_ms: 12,
        reused_input_tokens: 0,
        is_readmission: false,
      },
    ]);
    expect(recs.every((r) => r.terminal_status === "completed" && r.decode_worker_idx === 0)).toBe(true);
  });

  it("omits goodput keys without an SLA", async () => {
    const spec = traceSpec(writeTrace(rows));
    const { result } = await replay(spec);
    expect(buildSummary(result, null)).not.toHaveProperty("goodput_completed_requests");
  });
});

describe("replay loop: arrivals", () => {
  it("treats max_virtual_time as a soft cap (runtime_contract test)", async () => {
    const rows = [0, 1000, 2000, 3000, 4000].map((t, i) => ({
      timestamp: t,
      input_length: 4,
      output_length: 2,
      hash_ids: [i + 1],
    }));
    const spec = traceSpec(writeTrace(rows), { maxVirtualTimeMs: 2500 });
    const { result } = await replay(spec);
    const s = buildSummary(result, null);
    expect(s.num_requests).toBe(3);
    expect(s.completed_requests).toBe(3);
    expect(s.duration_ms).toBeLessThanOrEqual(2500);
  });

  it("divides trace timestamps by speedup", async () => {
    const rows = [
      { timestamp: 0, input_length: 4, output_length: 1, hash_ids: [1] },
      { timestamp: 1000, input_length: 4, output_length: 1, hash_ids: [2] },
    ];
    const spec = traceSpec(writeTrace(rows), { load: { type: "trace_timestamps", speedup: 4 } });
    const { result } = await replay(spec);
    expect(Array.from(result.requests.columns().arrival)).toEqual([0, 250]);
  });

  it("releases a session's next turn its delay after the previous turn finished", async () => {
    const rows = [
      { session_id: "s", timestamp: 0, input_length: 4, output_length: 1, hash_ids: [1] },
      { session_id: "s", delay: 100, input_length: 8, output_length: 1, hash_ids: [1, 2] },
    ];
    const spec = traceSpec(writeTrace(rows));
    const { result } = await replay(spec);
    // Turn 1 finishes at 12 (10 prefill + 2 decode); turn 2 arrives at 112 and reuses block [1].
    expect(Array.from(result.requests.columns().arrival)).toEqual([0, 112]);
    expect(result.requests.columns().reusedMax[1]).toBe(4);
    expect(buildPerRequest(result).map((r) => [r.session_id, r.turn_index])).toEqual([
      ["s", 0],
      ["s", 1],
    ]);
  });

  it("closed loop: concurrency 1 dispatches each request when the previous one finishes", async () => {
    const rows = [0, 0, 0].map((t, i) => ({
      timestamp: t,
      input_length: 4,
      output_length: 1,
      hash_ids: [i + 1],
    }));
    const spec = traceSpec(writeTrace(rows), { load: { type: "concurrency", concurrency: 1 } });
    const { result } = await replay(spec);
    expect(Array.from(result.requests.columns().arrival)).toEqual([0, 12, 24]);
  });

  it("round-robins requests over workers in id order", async () => {
    const rows = [0, 1, 2, 3, 4].map((t, i) => ({
      timestamp: t,
      input_length: 4,
      output_length: 1,
      hash_ids: [i],
    }));
    const spec = traceSpec(writeTrace(rows), { role: { replicas: 3, gpusPerWorker: 2 } });
    const { result } = await replay(spec);
    expect(Array.from(result.requests.columns().worker)).toEqual([0, 1, 2, 0, 1]);
    const s = buildSummary(result, null);
    expect(s.decode_gpus_per_worker).toBe(2);
    expect(s.gpu_hours).toBeCloseTo((s.decode_worker_seconds * 2) / 3600, 15);
    expect(s.decode_worker_seconds).toBeCloseTo((3 * s.duration_ms) / 1000, 12);
  });

  it("attention DP: each rank schedules its own batch and the worker's pass ends with the slowest rank", async () => {
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 1, hash_ids: [1, 2] },
      { timestamp: 0, input_length: 4, output_length: 3, hash_ids: [3] },
    ];
    // max_sequences 1 per rank: without DP the second request would wait for the first.
    const spec = traceSpec(writeTrace(rows), {
      role: { attentionData: 2, gpusPerWorker: 2, maxSequences: 1 },
    });
    const { replay: r, result } = await replay(spec);
    expect(r.workers).toHaveLength(2);
    expect(Array.from(result.requests.columns().dpRank)).toEqual([0, 1]);
    expect(Array.from(result.requests.columns().firstToken)).toEqual([12, 12]);
    // Rank 1 keeps decoding alone; rank 0 idles at the barrier (2 ms passes).
    expect(result.requests.columns().lastToken[1]).toBe(16);
    expect(buildPerRequest(result).map((x) => x.routing_history[0].dp_rank)).toEqual([0, 1]);
    expect(buildSummary(result, null).decode_gpus_per_worker).toBe(2);
  });

  it("counts rejected requests only in num_requests", async () => {
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 2, hash_ids: [1, 2] },
      { timestamp: 0, input_length: 4, output_length: 2, hash_ids: [3] },
    ];
    const spec = traceSpec(writeTrace(rows), { role: { maxModelLen: 6 } });
    const { result } = await replay(spec);
    expect(result.requests.columns().status[0]).toBe(Terminal.Rejected);
    const s = buildSummary(result, null);
    expect([s.num_requests, s.completed_requests, s.total_input_tokens]).toEqual([2, 1, 4]);
  });
});

describe("replay loop: populations", () => {
  it("counts a completed zero-output request without latency samples (report.rs test)", async () => {
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 0, hash_ids: [1, 2] },
      { timestamp: 0, input_length: 4, output_length: 2, hash_ids: [3] },
    ];
    const spec = traceSpec(writeTrace(rows));
    const { result } = await replay(spec);
    const s = buildSummary(result, null);
    expect(s.completed_requests).toBe(2);
    expect(s.total_input_tokens).toBe(12);
    expect(s.total_output_tokens).toBe(2);
    expect([s.num_ttft_samples, s.num_e2e_latency_samples, s.num_tpot_samples]).toEqual([1, 1, 1]);
    // Zero-output: terminal at the end of its prefill pass (10 ms fixed prefill + 2 ms decode of r1).
    expect(result.requests.columns().terminal[0]).toBe(12);
  });
});

describe("runPrediction", () => {
  it("runs a synthetic constant-rate workload to its request count", async () => {
    const spec = {
      ...traceSpec("unused"),
      source: { type: "synthetic" as const, inputTokens: 64, outputTokens: 4 },
      load: { type: "constant_rate" as const, requestsPerSecond: 10 },
      stop: { requests: 7, maxVirtualTimeMs: null },
    };
    const { prediction } = await runPrediction(spec, { capturePerRequest: true });
    expect(prediction.summary.completed_requests).toBe(7);
    expect(prediction.per_request?.map((r) => r.arrival_time_ms)).toEqual([0, 100, 200, 300, 400, 500, 600]);
    expect(prediction.coverage).toEqual({
      capture_per_request: true,
      capture_planner_details: false,
      capture_canonical_evidence: false,
      per_request_records: 7,
    });
  });
});
