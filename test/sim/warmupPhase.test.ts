/**
 * `traffic.load.warmup_sessions` (docs/traffic.md "Warm-up phase"): a closed loop whose first W
 * sessions are a warm-up phase; the other sessions wait until every warm-up session has ended and
 * then start together, as AIPerf's profiling phase does after its warm-up.
 * The test timing prices a pass with any prefill at 12 ms and a decode-only pass at 2 ms.
 */
import { describe, expect, it } from "vitest";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";
import type { LoadSpec } from "../../src/traffic/workloadSpec.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

async function arrivals(rows: readonly Record<string, unknown>[], load: LoadSpec) {
  const spec = traceSpec(writeTrace(rows), { load });
  const table = await loadWorkload(spec);
  const result = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
  }).runSync();
  const c = result.requests.columns();
  return { arrival: Array.from(c.arrival), terminal: Array.from(c.terminal), status: Array.from(c.status) };
}

const single = (outputs: readonly number[]) =>
  outputs.map((out, i) => ({ timestamp: 0, input_length: 4, output_length: out, hash_ids: [i + 1] }));

describe("closed loop with a warm-up phase", () => {
  // r0 (1 token) and r1 (3 tokens) start at 0; pass [0,12) prefills both: r0 ends at 12.
  const rows = single([1, 3, 1, 1, 1]);

  it("without one, each freed slot takes the next request at once", async () => {
    // r2 at 12; pass [12,24) ends r2 → r3 at 24; pass [24,36) ends r1 and r3 → r4 at 36.
    const { arrival } = await arrivals(rows, { type: "concurrency", concurrency: 2 });
    expect(arrival).toEqual([0, 0, 12, 24, 36]);
  });

  it("warm-up sessions fill freed slots; the rest start together when the last warm-up request ends", async () => {
    // Warm-up r0, r1, r2: r2 takes r0's slot at 12 and ends at 24; r3 may not take r2's slot.
    // Decode-only pass [24,26) ends r1, the last warm-up request: r3 and r4 arrive at 26.
    const { arrival, terminal } = await arrivals(rows, {
      type: "concurrency",
      concurrency: 2,
      warmupSessions: 3,
    });
    expect(arrival).toEqual([0, 0, 12, 26, 26]);
    expect(Math.max(...terminal.slice(0, 3))).toBe(26);
    expect(terminal.slice(3)).toEqual([38, 38]);
  });

  it("the measured phase starts with every slot at once, then goes on as a closed loop", async () => {
    // Concurrency 3, one warm-up request: r0 alone [0,12); then r1, r2, r3 arrive at 12 together,
    // and r4 only when one of them ends (all at 24).
    const { arrival } = await arrivals(single([1, 1, 1, 1, 1]), {
      type: "concurrency",
      concurrency: 3,
      warmupSessions: 1,
    });
    expect(arrival).toEqual([0, 12, 12, 12, 24]);
  });

  it("waits for a warm-up session's last turn, think time included", async () => {
    const turns = [
      { session_id: "w", timestamp: 0, input_length: 4, output_length: 1, hash_ids: [1] },
      { session_id: "w", delay: 100, input_length: 8, output_length: 1, hash_ids: [1, 2] },
      { session_id: "m", timestamp: 0, input_length: 4, output_length: 1, hash_ids: [9] },
    ];
    // Turn 0 of w ends at 12, turn 1 arrives at 112 and ends at 124: only then does m start,
    // although a second slot was free from the start.
    const { arrival } = await arrivals(turns, { type: "concurrency", concurrency: 2, warmupSessions: 1 });
    expect(arrival).toEqual([0, 112, 124]);
  });

  it("as many warm-up sessions as the workload has: a plain closed loop of them", async () => {
    const plain = await arrivals(rows, { type: "concurrency", concurrency: 2 });
    const all = await arrivals(rows, { type: "concurrency", concurrency: 2, warmupSessions: 5 });
    const more = await arrivals(rows, { type: "concurrency", concurrency: 2, warmupSessions: 50 });
    expect(all).toEqual(plain);
    expect(more).toEqual(plain);
  });
});
