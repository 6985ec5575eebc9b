/**
 * The hand-off orders of the reference (`ai-dynamo/aisimulate@26191a9:docs/replay/engine/kv-transfer.md`, `ai-dynamo/aisimulate@a976b2b:crates/core/src/replay/handoff.rs`): vLLM hands off
 * source first (prefill, hold, reserve decode KV, transfer), SGLang destination first (reserve
 * decode KV, then prefill, hold, transfer). Conformance with `NormalizedHandoffConformance`'s
 * lifecycles — vLLM [SourceHeld, DestinationReserved, DestinationActivated, SourceReleased],
 * SGLang [DestinationReserved, SourceHeld, DestinationActivated, SourceReleased] — and what the
 * order means under load: an SGLang request waits for decode capacity before it is prefilled.
 * Invariants are checked in every replay here.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CLIENT, type RunSpec, type WorkerRoleSpec } from "../../src/config/runSpec.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { Replay } from "../../src/sim/replay.js";
import { disaggSpec, SGLANG_ROLE, writeTrace } from "../helpers/specs.js";

/** `disaggSpec` (fixed 10 ms prefill / 2 ms decode, 8 ms per 8 tokens of transfer) on SGLang or vLLM. */
function spec(
  backend: "sglang" | "vllm",
  rows: object[],
  over: { prefill?: Partial<WorkerRoleSpec>; decode?: Partial<WorkerRoleSpec> } = {},
): RunSpec {
  const extra = backend === "sglang" ? SGLANG_ROLE : {};
  const s = disaggSpec(writeTrace(rows), {
    prefill: { ...extra, ...over.prefill },
    decode: { ...extra, ...over.decode },
  });
  return { ...s, engine: { ...s.engine, backend } };
}

async function run(s: RunSpec) {
  const table = await loadWorkload(s);
  const replay = new Replay(s, table, await createRoleTimings(s.engine), {
    capturePerRequest: true,
    checkInvariants: true,
  });
  const result = replay.runSync();
  if (process.env["I19_DEBUG"])
    for (const r of buildPerRequest(result))
      console.log(
        JSON.stringify({
          s: r.terminal_status,
          pa: r.prefill_admit_ms,
          sh: r.source_held_ms,
          dr: r.destination_reserved_ms,
          da: r.destination_activated_ms,
          t: r.terminal_time_ms,
          out: r.output_length,
        }),
      );
  for (const w of replay.workers) expect(w.isIdle()).toBe(true);
  return buildPerRequest(result);
}

const row = (timestamp: number, input: number, output: number, ids: number[]) => ({
  timestamp,
  input_length: input,
  output_length: output,
  hash_ids: ids,
});

/** A record's hand-off events in time order, the reference's normalized names. */
function lifecycle(rec: ReturnType<typeof buildPerRequest>[number]): string[] {
  const events: [string, number | null][] = [
    ["DestinationReserved", rec.destination_reserved_ms],
    ["SourceHeld", rec.source_held_ms],
    ["DestinationActivated", rec.destination_activated_ms],
    ["SourceReleased", rec.source_released_ms],
  ];
  // Ties (a reservation at the prefill end) keep the order of the event that caused the other.
  const order = rec.routing_history[0].pool === "prefill" ? ["SourceHeld", "DestinationReserved"] : [];
  return events
    .filter((e): e is [string, number] => e[1] !== null)
    .sort((a, b) => a[1] - b[1] || order.indexOf(a[0]) - order.indexOf(b[0]))
    .map((e) => e[0]);
}

describe("hand-off order (`ai-dynamo/aisimulate@a976b2b:crates/core/src/replay/handoff.rs`)", () => {
  const one = [row(0, 8, 3, [1, 2])];

  it("SGLang is destination first: decode KV reserved at arrival, then prefill, transfer at its end", async () => {
    const [rec] = await run(spec("sglang", one));
    expect(lifecycle(rec)).toEqual([
      "DestinationReserved",
      "SourceHeld",
      "DestinationActivated",
      "SourceReleased",
    ]);
    expect(rec.routing_history.map((h) => [h.pool, h.queue_entered_at_ms])).toEqual([
      ["decode", 0],
      ["prefill", 0],
    ]);
    expect(rec.destination_reserved_ms).toBe(0);
    expect(rec.prefill_admit_ms).toBe(0);
    expect(rec.source_held_ms).toBe(10);
    // The page-rounded prompt (8 tokens) moves in 8 ms; the first decode pass ends 2 ms later.
    expect([rec.transferred_tokens, rec.destination_activated_ms, rec.source_released_ms]).toEqual([
      8, 18, 18,
    ]);
    expect([rec.ttft_ms, rec.output_length, rec.terminal_status]).toEqual([20, 3, "completed"]);
  });

  it("vLLM is source first: the reservation follows the prefill", async () => {
    const [rec] = await run(spec("vllm", one));
    expect(lifecycle(rec)).toEqual([
      "SourceHeld",
      "DestinationReserved",
      "DestinationActivated",
      "SourceReleased",
    ]);
    expect(rec.routing_history.map((h) => h.pool)).toEqual(["prefill", "decode"]);
    expect([rec.source_held_ms, rec.destination_reserved_ms, rec.ttft_ms]).toEqual([10, 10, 20]);
  });

  it("a zero-output SGLang request has nothing to decode: it goes straight to prefill and ends there", async () => {
    const [rec] = await run(spec("sglang", [row(0, 8, 0, [1, 2])]));
    expect([rec.terminal_status, rec.terminal_time_ms, rec.decode_worker_idx]).toEqual([
      "completed",
      10,
      null,
    ]);
    expect(rec.destination_reserved_ms).toBeNull();
  });
});

describe("destination first under load: decode capacity gates the prefill", () => {
  // Decode worker: 5 pages of 4 tokens. An 8-token prompt reserves 2 pages (SGLang: the page-rounded
  // prompt, no decode headroom), so two hand-offs fit at once and the third waits for pages.
  const rows = [0, 0, 0].map((t, i) => row(t, 8, 4, [i * 2 + 10, i * 2 + 11]));
  const over = { prefill: { maxSequences: 4 }, decode: { numGpuBlocks: 5 } };

  it("SGLang: the third request is not prefilled before it holds decode KV", async () => {
    const recs = await run(spec("sglang", rows, over));
    expect(recs.every((r) => r.terminal_status === "completed" && r.output_length === 4)).toBe(true);
    const third = recs[2];
    expect(third.destination_reserved_ms).toBeGreaterThan(0);
    expect(third.prefill_admit_ms).toBeGreaterThanOrEqual(third.destination_reserved_ms!);
    expect(third.source_held_ms).toBeGreaterThan(third.destination_reserved_ms!);
    for (const r of recs) expect(lifecycle(r)[0]).toBe("DestinationReserved");
  });

  it("vLLM: the same third request is prefilled first and then waits, held, for decode KV", async () => {
    const recs = await run(spec("vllm", rows, over));
    const third = recs[2];
    expect(third.prefill_admit_ms).toBe(0);
    expect(third.destination_reserved_ms).toBeGreaterThan(third.source_held_ms!);
  });
});

describe("destination first: a reservation is given back however the request ends early", () => {
  it("a prompt the prefill worker rejects frees its decode pages for the next request", async () => {
    // Prefill worker: 3 pages of 4 tokens, so a 16-token prompt is rejected there; the decode
    // worker (4 pages) reserved all 4 pages for it first. The next request must still get them.
    const rows = [row(0, 16, 2, [1, 2, 3, 4]), row(1, 8, 2, [5, 6])];
    const recs = await run(
      spec("sglang", rows, { prefill: { numGpuBlocks: 3 }, decode: { numGpuBlocks: 4 } }),
    );
    expect(recs.map((r) => r.terminal_status)).toEqual(["rejected", "completed"]);
    expect(recs[0].destination_reserved_ms).toBe(0);
    // Reserved at its arrival: the rejected request's 4 pages came back at 0 ms.
    expect(recs[1].destination_reserved_ms).toBe(1);
  });

  it("a timeout after the reservation, before the prefill ends, gives the decode pages back", async () => {
    // Decode: 12 pages. Request 0 (8 + 30 tokens) reserves 2 pages at 0 and grows; request 1's
    // 44-token prompt needs 11 pages, so it waits for them, unprefilled. The 50 ms timeout cancels
    // request 0, whose pages let request 1 reserve and go to prefill at 50; its own timeout at 51
    // cancels it there, and request 2 (arriving at 60) finds the whole worker free.
    const rows = [
      row(0, 8, 30, [1, 2]),
      row(1, 44, 2, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]),
      row(60, 8, 2, [20, 21]),
    ];
    const base = spec("sglang", rows, { decode: { numGpuBlocks: 12 } });
    const recs = await run({ ...base, client: { ...DEFAULT_CLIENT, timeoutMs: 50 } });
    expect(recs.map((r) => r.terminal_status)).toEqual(["canceled", "canceled", "completed"]);
    expect([recs[1].destination_reserved_ms, recs[1].source_held_ms, recs[1].terminal_time_ms]).toEqual([
      50,
      null,
      51,
    ]);
    expect(recs[2].destination_reserved_ms).toBe(60);
  });
});
