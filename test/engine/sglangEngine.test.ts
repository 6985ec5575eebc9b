/**
 * The SGLang scheduler core (src/engine/sglangEngine.ts; `ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs` and its tests, `ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/tests.rs`: the SGLang
 * conformance tests; docs/backends.md).
 */
import { describe, expect, it } from "vitest";
import type { SglangEngine } from "../../src/engine/sglangEngine.js";
import { makeSequence } from "../../src/engine/workerEngine.js";
import { EngineHarness, engineConfig, sglangHarness } from "../helpers/engineHarness.js";

const SG = {
  schedulePolicy: "fifo" as const,
  maxPrefillTokens: 16384,
  chunkedPrefillSize: 8192,
  clipMaxNewTokens: 4096,
  scheduleConservativeness: 1,
};

const tokensOf = (h: EngineHarness<SglangEngine>, req: number) =>
  h.passes
    .flatMap((p) => p.signals)
    .filter(([r, k]) => r === req && (k === "Token" || k === "TokenAndComplete")).length;

/**
 * Mixed chunk at a chunk budget of 8 tokens (page 1): request 0 (4 tokens, 10 out) prefills alone
 * and is running when request 1, a `longLen`-token prompt (2 out), is queued.
 */
function mixedChunkBeside(longLen: number): EngineHarness<SglangEngine> {
  const prompts = [
    Array.from({ length: 4 }, (_, k) => 10 + k),
    Array.from({ length: longLen }, (_, k) => 100 + k),
  ];
  const h = sglangHarness(
    { blockSize: 1, numGpuBlocks: 1000, sglang: { ...SG, chunkedPrefillSize: 8, enableMixedChunk: true } },
    prompts,
  );
  h.submit(0, 4, 10);
  expect(h.pass().signals).toEqual([[0, "Token"]]); // alone: an ordinary extend pass
  h.submit(1, longLen, 2);
  return h;
}

describe("SGLang KV accounting (upstream sglang/tests.rs)", () => {
  it("a destination reserves the page-rounded prompt, without decode headroom: 12 tokens for 10 at page 4", () => {
    const h = sglangHarness({ role: "decode", blockSize: 4, numGpuBlocks: 8 }, [[1, 2]]);
    const s = makeSequence(0, 10, 50, new Float64Array([1, 2]), 0, 2, null);
    expect(h.engine.tryReserve(s)).toBe(0);
    expect(h.engine.cache.freePages).toBe(5);
    expect(s.kvPrivatePages * 4).toBe(12);
    expect(h.engine.auditKv([s])).toBeNull();
    h.engine.cancelReservation(s);
    expect(h.engine.cache.freePages).toBe(8);
  });

  it("an ordinary completion caches the page-aligned context: 8 of 9 tokens stay cached", () => {
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 8 }, [[1]]);
    h.submit(0, 5, 4); // 5 + 4 = 9 tokens at completion
    h.drain();
    expect(tokensOf(h, 0)).toBe(4);
    expect(h.engine.cache.treePages * 4).toBe(8);
    expect(h.engine.pool.activeBlocks).toBe(0);
    expect(h.engine.auditKv([])).toBeNull();
  });

  it("a prefill source holds its KV after its terminal token, until released", () => {
    const h = sglangHarness({ role: "prefill", blockSize: 4, numGpuBlocks: 8 }, [[1, 2]]);
    h.submit(0, 8, 1);
    h.drain();
    expect(h.passes.flatMap((p) => p.signals)).toEqual([[0, "PrefillDone"]]);
    expect(h.engine.heldCount).toBe(1);
    expect(h.engine.pool.activeBlocks).toBeGreaterThan(0);
    h.engine.releaseHeld(0);
    expect(h.engine.pool.activeBlocks).toBe(0);
    expect(h.engine.isIdle()).toBe(true);
  });
});

describe("SGLang scheduling", () => {
  it("chunks a long prompt at chunked_prefill_size and emits the first token with the last chunk", () => {
    const h = sglangHarness({ blockSize: 1, sglang: { ...SG, chunkedPrefillSize: 8 } }, [[]]);
    h.submit(0, 20, 2);
    expect(h.pass().signals).toEqual([]);
    expect(h.pass().signals).toEqual([]);
    expect(h.pass().signals).toEqual([[0, "Token"]]);
    expect(h.pass().signals).toEqual([[0, "TokenAndComplete"]]);
    expect(h.admissions).toEqual([{ req: 0, at: 0, reused: 0 }]);
  });

  it("an extend pass starves decode: running requests wait while a long prompt prefills", () => {
    const prompts = [
      Array.from({ length: 4 }, (_, k) => 10 + k),
      Array.from({ length: 24 }, (_, k) => 100 + k),
    ];
    const h = sglangHarness(
      { blockSize: 1, numGpuBlocks: 1000, sglang: { ...SG, chunkedPrefillSize: 8 } },
      prompts,
    );
    h.submit(0, 4, 10);
    h.pass(); // r0 prefills and gets its first token
    h.submit(1, 24, 2);
    // Three chunk passes of r1: r0 emits nothing in any of them.
    for (let i = 0; i < 3; i++) {
      const signals = h.pass().signals;
      expect(signals.some(([r]) => r === 0)).toBe(false);
    }
    // The last chunk gave r1 its first token; then both decode together.
    expect(h.passes[3].signals).toEqual([[1, "Token"]]);
    expect(h.pass().signals).toEqual([
      [0, "Token"],
      [1, "TokenAndComplete"],
    ]);
  });

  it("a prefill pass's first tokens come from the prefill forward: no decode row priced or reported", () => {
    // Fixed timing (prefill 10 ms, decode 2 ms): the reference's SGLang core gives a lone request
    // its first token at the end of a 10 ms pass (`simulate_prefill_first_tokens`, no decode
    // scheduled), then one 2 ms decode pass per token.
    const h = sglangHarness({ blockSize: 1, numGpuBlocks: 1000, sglang: SG }, [[]]);
    h.submit(0, 16, 3);
    const first = h.pass();
    expect(first.signals).toEqual([[0, "Token"]]);
    expect(first.duration).toBe(10);
    expect(h.engine.stats.numPrefillRequests).toBe(1);
    expect(h.engine.stats.numDecodeRequests).toBe(0);
    expect(h.engine.stats.sumDecodeKvTokens).toBe(0);
    h.drain();
    expect(h.passes.map((p) => p.duration)).toEqual([10, 2, 2]);
  });

  it("with mixed chunk, the running requests are the pass's decode rows and the newly prefilled are not", () => {
    const h = mixedChunkBeside(8);
    // 7 of r1's 8 tokens beside r0's decode: r0 is the one decode row.
    h.pass();
    expect(h.engine.stats.numDecodeRequests).toBe(1);
    expect(h.engine.stats.sumDecodeKvTokens).toBe(4 + 1);
    // r1's last token with its first output token, r0 decoding beside it: still one decode row.
    const rec = h.pass();
    expect(rec.signals).toEqual([
      [1, "Token"],
      [0, "Token"],
    ]);
    expect(h.engine.stats.numDecodeRequests).toBe(1);
    expect(h.engine.stats.sumDecodeKvTokens).toBe(4 + 2);
  });

  it("enable_mixed_chunk: running requests decode in each chunk pass, one chunk token each", () => {
    const h = mixedChunkBeside(24);
    // r0 decodes beside each chunk of r1, which gets 8 − 1 = 7 tokens a pass (its decode token
    // comes off the chunk budget): 7 + 7 + 7 + 3, its first token in the fourth pass.
    for (let i = 0; i < 3; i++) expect(h.pass().signals).toEqual([[0, "Token"]]);
    expect(h.pass().signals).toEqual([
      [1, "Token"],
      [0, "Token"],
    ]);
    expect(tokensOf(h, 0)).toBe(5);
    // Then the running batch is r1, r0 (mix_with_running's order: the new requests first).
    expect(h.pass().signals).toEqual([
      [1, "TokenAndComplete"],
      [0, "Token"],
    ]);
  });

  it("enable_mixed_chunk: a prompt of exactly chunked_prefill_size is chunked while others run, not held back", () => {
    const h = mixedChunkBeside(8);
    // 8 tokens against a budget of 8 − 1: 7 now, 1 in the next pass with its first token.
    expect(h.pass().signals).toEqual([[0, "Token"]]);
    expect(h.pass().signals).toEqual([
      [1, "Token"],
      [0, "Token"],
    ]);
  });

  it("vLLM keeps decoding during the same long prefill (mixed batches)", () => {
    const prompts = [
      Array.from({ length: 4 }, (_, k) => 10 + k),
      Array.from({ length: 24 }, (_, k) => 100 + k),
    ];
    const h = new EngineHarness(
      engineConfig({ blockSize: 1, numGpuBlocks: 1000, maxBatchedTokens: 9 }),
      prompts,
    );
    h.submit(0, 4, 10);
    h.pass();
    h.submit(1, 24, 2);
    // r0 decodes one token beside each 8-token chunk of r1.
    for (let i = 0; i < 3; i++) expect(h.pass().signals.some(([r]) => r === 0)).toBe(true);
  });

  it("reuses a cached prefix up to input_len − 1 tokens: a fully cached prompt recomputes its last page", () => {
    // SGLang's `Req.init_next_round_input` matches at most input_len − 1 tokens, so a request that
    // owes a token computes its last one to sample from (a page at a time: 8 of 12 tokens reused
    // at page 4); a zero-output request has nothing to sample and reuses all 12.
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 32 }, [
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3],
    ]);
    h.submit(0, 12, 1);
    h.drain();
    h.submit(1, 12, 1);
    h.drain();
    h.submit(2, 12, 0);
    h.drain();
    expect(h.admissions.map((a) => a.reused)).toEqual([0, 8, 12]);
  });

  it("chunks a request to what is left of the pass's chunk budget, matching its cached prefix first", () => {
    // Page 4, chunked_prefill_size 16. r0 (8 tokens) fills 8 of the budget; r1's 16-token prompt,
    // 8 of them cached by r2 earlier, extends 8 tokens: it fits the 8 left and joins the batch
    // (budgets are charged what a request computes, not its cached prefix). r3's 12 new tokens
    // then do not fit what is left: the next pass takes them whole.
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 64, sglang: { ...SG, chunkedPrefillSize: 16 } }, [
      [10, 11],
      [1, 2, 3, 4],
      [1, 2],
      [20, 21, 22],
    ]);
    h.submit(2, 8, 0); // caches pages 1, 2
    h.drain();
    h.submit(0, 8, 2);
    h.submit(1, 16, 2);
    h.submit(3, 12, 2);
    const first = h.pass();
    expect(first.signals).toEqual([
      [0, "Token"],
      [1, "Token"],
    ]);
    expect(h.engine.stats.sumPrefillTokens).toBe(8 + 8);
    expect(h.admissions.find((a) => a.req === 1)?.reused).toBe(8);
    // r3 did not fit the 0 tokens left; it is prefilled whole in the next pass.
    expect(h.pass().signals).toEqual([[3, "Token"]]);
  });

  it("chunks a short request that does not fit what is left of the chunk budget", () => {
    // Page 4, chunked_prefill_size 16: r0 takes 12, r1's 12 tokens get the 4 left now and the
    // other 8 (with its first token) in the next pass.
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 64, sglang: { ...SG, chunkedPrefillSize: 16 } }, [
      [10, 11, 12],
      [20, 21, 22],
    ]);
    h.submit(0, 12, 2);
    h.submit(1, 12, 2);
    expect(h.pass().signals).toEqual([[0, "Token"]]);
    expect(h.engine.stats.sumPrefillTokens).toBe(12 + 4);
    expect(h.pass().signals).toEqual([[1, "Token"]]);
    expect(h.engine.stats.sumPrefillTokens).toBe(8);
  });

  it("retracts the request with the fewest output tokens and resets new_token_ratio", () => {
    // 12 pages of 4: r0 and r1 (4 + 20 tokens each, 6 pages at completion) cannot both finish.
    const h = sglangHarness(
      { blockSize: 4, numGpuBlocks: 10, sglang: { ...SG, scheduleConservativeness: 0.01 } },
      [[1], [2]],
    );
    h.submit(0, 4, 20);
    h.pass();
    h.pass();
    h.submit(1, 4, 20);
    h.drain();
    expect(h.engine.preemptions).toBeGreaterThan(0);
    expect(tokensOf(h, 0)).toBe(20);
    expect(tokensOf(h, 1)).toBe(20);
    // r1 (fewer outputs) was the one retracted: admitted twice.
    expect(h.admissions.filter((a) => a.req === 1).length).toBe(2);
    expect(h.admissions.filter((a) => a.req === 0).length).toBe(1);
    expect(h.engine.auditKv([])).toBeNull();
    expect(h.engine.pool.activeBlocks).toBe(0);
  });

  it("new_token_ratio starts at 0.7 × conservativeness and decays to 14 % of that over 600 passes", () => {
    const h = sglangHarness({ sglang: { ...SG, scheduleConservativeness: 2 } }, [[]]);
    expect(h.engine.newTokenRatio).toBeCloseTo(1.4);
    h.submit(0, 4, 700);
    for (let i = 0; i < 300; i++) h.pass();
    expect(h.engine.newTokenRatio).toBeCloseTo(1.4 - 300 * ((1.4 - 0.196) / 600));
    for (let i = 0; i < 350; i++) h.pass();
    expect(h.engine.newTokenRatio).toBeCloseTo(0.196);
  });

  it("reserves running requests' expected output: a head that fits vLLM waits", () => {
    // 25 pages of 4 = 100 tokens. r0 (8 + 60) runs; ratio 0.7 reserves 0.7 × 60 = 42 tokens, so
    // r1 (40-token prompt + 20 output reserve) does not fit the 100 − 12 − 42 left.
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 25 }, [
      [1, 2],
      Array.from({ length: 10 }, (_, k) => 50 + k),
    ]);
    h.submit(0, 8, 60);
    h.pass();
    h.submit(1, 40, 20);
    h.pass();
    expect(h.admissions.map((a) => a.req)).toEqual([0]);
  });

  it("LPM admits the longest cached prefix first", () => {
    const h = sglangHarness(
      { blockSize: 4, numGpuBlocks: 100, maxSequences: 1, sglang: { ...SG, schedulePolicy: "lpm" } },
      [
        [1, 2, 3, 4],
        [9, 8, 7, 6],
        [1, 2, 3, 4],
        [5, 5, 5, 5],
      ],
    );
    h.submit(0, 16, 1);
    h.drain();
    // r1 (no hit), r3 (no hit) and r2 (16 cached tokens) wait; LPM takes r2 first.
    h.submit(1, 16, 1);
    h.submit(3, 16, 1);
    h.submit(2, 16, 1);
    h.drain();
    expect(h.admissions.map((a) => a.req)).toEqual([0, 2, 1, 3]);
  });

  it("makes its KV events visible to the router at pass end", () => {
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 8 }, [[1, 2]]);
    const stored: number[] = [];
    h.engine.pool.setListener({ onBlockStored: (x) => stored.push(x), onBlockRemoved: () => {} });
    h.submit(0, 8, 3);
    h.engine.startPass(0);
    expect(stored).toEqual([]);
    h.engine.takeSignals();
    expect(stored).toEqual([1, 2]);
  });

  it("counts a finishing request in the batch and its pages as used until the pass ends (time series)", () => {
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 8 }, [[1]]);
    h.submit(0, 6, 1); // prefill + its only token in one pass: it finishes in it
    h.engine.startPass(0);
    expect(h.engine.runningCount).toBe(0);
    expect(h.engine.inFlightBatchCount).toBe(1);
    expect(h.engine.inFlightActiveBlocks).toBe(2);
    h.engine.takeSignals();
    expect(h.engine.inFlightBatchCount).toBe(0);
    expect(h.engine.inFlightActiveBlocks).toBe(0);
  });

  it("rejects a prompt larger than the whole cache", () => {
    const h = sglangHarness({ blockSize: 4, numGpuBlocks: 2 }, [[1, 2, 3]]);
    h.submit(0, 12, 1);
    expect(h.pass().signals).toEqual([[0, "Rejected"]]);
    expect(h.engine.isIdle()).toBe(true);
  });
});
