/**
 * `scheduler.prefill_decode_interval` N on the SGLang core (SGLang's `--prefill-decode-interval`;
 * the scheduler's `_arm_prefill_decode_interval` / `_should_defer_prefill` and its unit test
 * `test_prefill_decode_interval.py`): a pass that prefilled arms N passes that form no prefill
 * batch, partial chunks included, while anything decodes; off (0) SGLang prefills whenever a
 * request waits and holds every running request's decode meanwhile.
 */
import { describe, expect, it } from "vitest";
import type { WorkerRoleSpec } from "../../src/config/runSpec.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { runReplay } from "../helpers/replay.js";
import { SGLANG_DEFAULTS_SPEC, SGLANG_ROLE, traceSpec, writeTrace } from "../helpers/specs.js";

// Fixed timing (test/helpers/specs.ts): a prefill pass costs 10 ms (the requests it prefills get
// their first token from it, with no decode step: SGLang samples it from the prefill forward), a
// decode-only pass 2 ms. Page 4 (the block size).
const row = (timestamp: number, input: number, output: number, id: number) => ({
  timestamp,
  input_length: input,
  output_length: output,
  hash_ids: Array.from({ length: Math.ceil(input / 4) }, (_, k) => id * 100 + k),
});

async function tokens(rows: object[], interval: number, over: Partial<WorkerRoleSpec> = {}) {
  const spec = traceSpec(writeTrace(rows), {
    role: { ...SGLANG_ROLE, ...(interval > 0 ? { prefillDecodeInterval: interval } : {}), ...over },
  });
  const { result } = await runReplay({ ...spec, engine: { ...spec.engine, backend: "sglang" } });
  return buildPerRequest(result).map((r) => ({
    first: r.first_token_ms,
    last: r.last_token_ms,
    ttft: r.ttft_ms,
    ttst: r.ttst_ms,
  }));
}

describe("scheduler.prefill_decode_interval (SGLang)", () => {
  // A (output 10) is prefilled in pass [0, 10); B arrives at 1.
  const rows = [row(0, 4, 10, 1), row(1, 4, 3, 2)];

  it("0 (the default): B is prefilled by the next pass and A's decode waits for it", async () => {
    const [a, b] = await tokens(rows, 0);
    expect(a.first).toBe(10);
    expect(b.first).toBe(20); // pass [10, 20) is B's extend pass; A emits nothing in it
    expect(a.last).toBe(20 + 2 * 9); // A's other 9 tokens from then on (B decodes beside it)
  });

  it("2: the two passes after A's prefill only decode, then B is prefilled", async () => {
    // Passes [10, 12) and [12, 14) decode A (SGLang's unit test: armed at 2, defers twice, then
    // not); pass [14, 24) prefills B.
    const [a, b] = await tokens(rows, 2);
    expect(a.first).toBe(10);
    expect(b.first).toBe(24);
    expect(b.ttft).toBe(23);
    // A's second token comes 2 ms after its first instead of waiting out B's 10 ms extend pass.
    expect(a.ttst).toBe(2);
    expect((await tokens(rows, 0))[0].ttst).toBe(12);
  });

  it("with nothing running the worker prefills at once, whatever the interval", async () => {
    // A has one token (done in its prefill pass): nothing decodes, so B is prefilled at 10.
    const [, b] = await tokens([row(0, 4, 1, 1), row(1, 4, 3, 2)], 8);
    expect(b.first).toBe(20);
  });

  it("defers the next chunk of a partial prompt too (no exemption for chunked requests)", async () => {
    // B's 24-token prompt runs in 8-token chunks while A decodes: off, the three chunk passes run
    // back to back; interval 1 puts a decode pass of A between them.
    const chunked = [row(0, 4, 20, 1), row(1, 24, 2, 2)];
    const sglang = { sglang: { ...SGLANG_DEFAULTS_SPEC, chunkedPrefillSize: 8 } };
    const [, offB] = await tokens(chunked, 0, sglang);
    const [, onB] = await tokens(chunked, 1, sglang);
    // Off: chunks at [10, 20), [20, 30), [30, 40) (the last one emits B's first token).
    expect(offB.first).toBe(40);
    // Interval 1: a 2 ms decode pass after A's prefill and after each of B's first two chunks.
    expect(onB.first).toBe(40 + 3 * 2);
  });

  it("with attention DP one rank's prefill defers every rank of the worker", async () => {
    // Two ranks: A (rank 0) is prefilled in [0, 10); B arrives at 1 on rank 1, which runs nothing.
    // Off, rank 1 prefills B in the next pass [10, 20) while rank 0 decodes A. Interval 2: A's
    // prefill armed the whole worker (SGLang synchronizes the extend flag across DP ranks), so the
    // passes [10, 12) and [12, 14) only decode and B is prefilled in [14, 24).
    const dp = { attentionData: 2, gpusPerWorker: 2 };
    const two = [row(0, 4, 10, 1), row(1, 4, 10, 2)];
    expect((await tokens(two, 0, dp)).map((r) => r.first)).toEqual([10, 20]);
    expect((await tokens(two, 2, dp)).map((r) => r.first)).toEqual([10, 24]);
  });
});
