/**
 * Speculative decoding on the SGLang core (src/engine/sglangEngine.ts; docs/speculation.md "On
 * SGLang"; the reference's SGLang mocker decode step, `ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`): bursts, the drafts a
 * request may verify, draft pages reserved for the batch and the rejected ones freed, retraction
 * counting the drafts' pages, hand-offs, prefill workers, mixed chunk off, and the off switch (the
 * full-acceptance burst run both cores share is in speculation.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { SglangEngine } from "../../src/engine/sglangEngine.js";
import { makeSequence, type SglangEngineConfig } from "../../src/engine/workerEngine.js";
import { DraftRecorder, speculationSpec as spec } from "../helpers/draftRecorder.js";
import { type EngineHarness, sglangHarness } from "../helpers/engineHarness.js";
import { SGLANG_DEFAULTS_SPEC } from "../helpers/specs.js";

/** Tokens `req` got in each pass. */
const tokensPerPass = (h: EngineHarness<SglangEngine>, req: number) =>
  h.passes.map(
    (p) => p.signals.filter(([r, k]) => r === req && (k === "Token" || k === "TokenAndComplete")).length,
  );

const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("SGLang speculative decoding: bursts", () => {
  it("no draft accepted: the draft pages are taken for the pass and the rejected ones freed after it", () => {
    const page = 4;
    const timing = new DraftRecorder();
    const h = sglangHarness(
      { blockSize: page, numGpuBlocks: 64, speculation: spec([0, 0, 0]) },
      [[1]],
      timing,
    );
    h.submit(0, 5, 20);
    let generated = 0;
    while (h.engine.hasWork()) {
      generated += h.pass().signals.length;
      if (!h.engine.hasWork()) break;
      // SGLang takes a generated token's slot at generation: the request holds exactly the pages
      // of its prompt and its tokens so far, none of the drafts'.
      expect(h.engine.auditKv([])).toBeNull();
      expect(h.engine.pool.activeBlocks).toBe(Math.ceil((5 + generated) / page));
    }
    expect(generated).toBe(20);
    expect(total(tokensPerPass(h, 0))).toBe(20);
    // Every decode pass but the last verified drafts (3, then fewer near the end) and emitted one token.
    expect(timing.drafts.filter(([n]) => n > 0).length).toBe(18);
    expect(h.engine.pool.activeBlocks).toBe(0);
  });

  it("accepted drafts enter the radix tree: at completion the page-aligned context is cached", () => {
    const page = 4;
    const h = sglangHarness({ blockSize: page, numGpuBlocks: 64, speculation: spec([1, 1, 1]) }, [[11, 12]]);
    h.submit(0, 8, 13);
    h.drain();
    expect(tokensPerPass(h, 0)).toEqual([1, 4, 4, 4]);
    expect(h.engine.cache.treePages).toBe(Math.floor((8 + 13) / page));
    expect(h.engine.pool.activeBlocks).toBe(0);
  });
});

describe("SGLang speculative decoding: KV pressure", () => {
  /** Two requests of 4 + 6 tokens prefilled together into 14 pages of 1 (10 taken after the first tokens). */
  function twoRequests(over: Partial<SglangEngineConfig>): EngineHarness<SglangEngine> {
    const h = sglangHarness(
      { blockSize: 1, numGpuBlocks: 14, sglang: { ...SGLANG_DEFAULTS_SPEC, clipMaxNewTokens: 1 }, ...over },
      [
        [1, 2, 3, 4],
        [5, 6, 7, 8],
      ],
    );
    h.submit(0, 4, 6);
    h.submit(1, 4, 6);
    expect(h.pass().signals).toEqual([
      [0, "Token"],
      [1, "Token"],
    ]);
    return h;
  }

  it("the retraction check counts each request's token and drafts (the reference's max_burst pages)", () => {
    // 4 pages free: one token each fits, 1 + 3 drafts each (8 pages) does not.
    const plain = twoRequests({});
    plain.pass();
    expect(plain.engine.preemptions).toBe(0);
    const spec3 = twoRequests({ speculation: spec([1, 1, 1]) });
    spec3.pass();
    expect(spec3.engine.preemptions).toBe(1);
    // Both still end with exactly their output, the KV conserved pass by pass. (The retracted
    // request is prefilled again in an extend pass, which never retracts: were it retracted there,
    // it would be prefilled and retracted pass after pass while the other never decodes.)
    for (let passes = 0; spec3.engine.hasWork(); passes++) {
      expect(passes).toBeLessThan(50);
      spec3.pass();
      expect(spec3.engine.auditKv([])).toBeNull();
    }
    expect(total(tokensPerPass(spec3, 0))).toBe(6);
    expect(total(tokensPerPass(spec3, 1))).toBe(6);
    expect(spec3.engine.pool.activeBlocks).toBe(0);
  });
});

describe("SGLang speculative decoding: roles and modes", () => {
  it("a decode worker's first pass after the hand-off has no drafts; the next ones do", () => {
    const timing = new DraftRecorder();
    const h = sglangHarness(
      { role: "decode", blockSize: 4, numGpuBlocks: 64, speculation: spec([1, 1]) },
      [[1, 2]],
      timing,
    );
    const s = makeSequence(0, 8, 10, new Float64Array([1, 2]), 0, 2, null);
    expect(h.engine.tryReserve(s)).toBe(0);
    h.engine.activate(s);
    h.drain();
    expect(tokensPerPass(h, 0)).toEqual([1, 3, 3, 3]);
    expect(timing.drafts).toEqual([
      [0, 0],
      [1, 2],
      [1, 2],
      [1, 2],
    ]);
    expect(h.engine.pool.activeBlocks).toBe(0);
  });

  it("a prefill worker never speculates", () => {
    const timing = new DraftRecorder();
    const h = sglangHarness({ role: "prefill", speculation: spec([1, 1]) }, [[]], timing);
    h.submit(0, 6, 1);
    expect(h.pass().signals).toEqual([[0, "PrefillDone"]]);
    expect(timing.drafts).toEqual([[0, 0]]);
  });

  it("mixed chunk is off while speculating (SGLang turns it off): a prefill pass is an extend pass", () => {
    const chunked = { ...SGLANG_DEFAULTS_SPEC, chunkedPrefillSize: 8, enableMixedChunk: true };
    const r0DuringChunks = (over: Partial<SglangEngineConfig>) => {
      const prompts = [
        Array.from({ length: 4 }, (_, k) => 10 + k),
        Array.from({ length: 24 }, (_, k) => 100 + k),
      ];
      const h = sglangHarness({ blockSize: 1, numGpuBlocks: 1000, sglang: chunked, ...over }, prompts);
      h.submit(0, 4, 20);
      h.pass();
      h.submit(1, 24, 2);
      // r1 prefills in the next passes (its chunks); r0's tokens meanwhile.
      return [h.pass(), h.pass(), h.pass()].map((p) => p.signals.filter(([r]) => r === 0).length);
    };
    expect(r0DuringChunks({})).toEqual([1, 1, 1]);
    expect(r0DuringChunks({ speculation: spec([1]) })).toEqual([0, 0, 0]);
  });

  it("off: the passes are exactly those of an engine without the option", () => {
    const run = (over: Partial<SglangEngineConfig>) => {
      const timing = new DraftRecorder();
      const h = sglangHarness({ blockSize: 2, numGpuBlocks: 24, ...over }, [[1], [1, 2], [3]], timing);
      h.submit(0, 6, 9);
      h.submit(1, 9, 5);
      h.pass();
      h.submit(2, 3, 12);
      h.drain();
      return { passes: h.passes, drafts: timing.drafts, preemptions: h.engine.preemptions };
    };
    expect(run({ speculation: null })).toEqual(run({}));
  });
});

describe("SGLang speculative decoding: the acceptance profile", () => {
  /** Eight requests of 16 + 64 tokens at page 1 with K = 3 drafts at `rate` each. */
  function eight(
    rate: number,
    seed = 42,
  ): { passes: number; tokens: number; drafting: number; emitted: number } {
    const h = sglangHarness(
      { blockSize: 1, numGpuBlocks: 4000, speculation: spec([rate, rate, rate], seed) },
      [],
    );
    for (let r = 0; r < 8; r++) h.submit(r, 16, 64);
    let drafting = 0;
    let emitted = 0;
    while (h.engine.hasWork()) {
      h.pass();
      drafting += h.engine.stats.specDrafts;
      emitted += h.engine.stats.specTokens;
      expect(h.engine.auditKv([])).toBeNull();
    }
    const tokens = h.passes.reduce((n, p) => n + p.signals.filter(([, k]) => k !== "Complete").length, 0);
    return { passes: h.passes.length, tokens, drafting, emitted };
  }

  it("higher acceptance: fewer passes for the same tokens, more tokens per verify pass", () => {
    const runs = [0, 0.3, 0.6, 0.9, 1].map((r) => eight(r));
    for (const run of runs) expect(run.tokens).toBe(8 * 64);
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i].passes).toBeLessThan(runs[i - 1].passes);
      expect(runs[i].emitted / runs[i].drafting).toBeGreaterThan(runs[i - 1].emitted / runs[i - 1].drafting);
    }
    // Rate 0: one token per verify pass; rate 1: K + 1 (the bursts near the end draft fewer).
    expect(runs[0].emitted / runs[0].drafting).toBe(1);
    expect(runs[0].passes).toBe(64);
    expect(runs[4].passes).toBe(1 + Math.ceil(63 / 4));
  });

  it("is deterministic per seed: the same seed gives the same passes, another seed other bursts", () => {
    expect(eight(0.6, 7)).toEqual(eight(0.6, 7));
    expect(eight(0.6, 7)).not.toEqual(eight(0.6, 8));
  });
});
