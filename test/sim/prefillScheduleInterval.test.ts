import { describe, expect, it } from "vitest";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { runReplay } from "../helpers/replay.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

// Fixed timing (test/helpers/specs.ts): a pass with prefill work costs 10 ms, plus 2 ms as its
// requests decode (a prefill that completes emits its first token in the same pass); a decode-only
// pass 2 ms. Two attention-DP ranks; round-robin puts A on rank 0, B on 1.
const rows = [
  { timestamp: 0, input_length: 4, output_length: 12, hash_ids: [1] },
  { timestamp: 1, input_length: 4, output_length: 2, hash_ids: [2] },
];

async function admissions(interval: number, attentionData: number) {
  const spec = traceSpec(writeTrace(rows), {
    role: { attentionData, gpusPerWorker: attentionData, prefillScheduleInterval: interval },
  });
  const { result } = await runReplay(spec);
  return buildPerRequest(result).map((r) => [r.routing_history[0].dp_rank, r.first_token_ms]);
}

describe("scheduler.prefill_schedule_interval (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`: vLLM attention-DP only)", () => {
  it("with interval 1 a waiting request is admitted on the next pass", async () => {
    // Pass 0 [0, 12) prefills A; B arrives at 1 and pass 1 [12, 24) admits it on rank 1.
    const [a, b] = await admissions(1, 2);
    expect(a).toEqual([0, 12]);
    expect(b).toEqual([1, 24]);
  });

  it("with interval 4 the worker's ranks admit waiting requests only on every 4th pass", async () => {
    // Pass 0 [0, 12) admits A; passes 1-3 (2 ms each: A decodes) are closed to B; pass 4 at 18
    // admits B, whose first token comes with that pass's end (18 + 12). Interval 2 opens pass 2.
    const [a, b] = await admissions(4, 2);
    expect(a).toEqual([0, 12]);
    expect(b).toEqual([1, 30]);
    expect((await admissions(2, 2))[1]).toEqual([1, 26]);
  });

  it("an idle worker admits at once, whatever the interval", async () => {
    const spec = traceSpec(writeTrace([rows[0], { ...rows[1], timestamp: 500 }]), {
      role: { attentionData: 2, gpusPerWorker: 2, prefillScheduleInterval: 4 },
    });
    const { result } = await runReplay(spec);
    // A finished long before B arrived (its last token at 34 ms): B is admitted by the
    // pass that starts when it arrives, whatever pass count the worker has reached.
    expect(buildPerRequest(result)[1].first_token_ms).toBe(512);
  });

  it("is ignored without attention DP, as in the reference", async () => {
    expect(await admissions(4, 1)).toEqual(await admissions(1, 1));
  });
});
