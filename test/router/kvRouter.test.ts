import { describe, expect, it } from "vitest";
import { KvRouter, resolveKvRouterOptions } from "../../src/router/kvRouter.js";
import { kvRouterOptionsForRole } from "../../src/router/placement.js";

/** Sequence hashes of a prompt's full blocks (tests pick small distinct integers; only equality matters). */
const blocks = (...h: number[]): Float64Array => Float64Array.from(h);

const A = 0;
const B = 1;
const BS = 16;

/** Caches `hashes` on `worker` through KV events, as an engine would (prefix first). */
function cache(router: KvRouter, worker: number, hashes: Float64Array): void {
  for (const h of hashes) router.onBlockStored(worker, h);
}

function route(router: KvRouter, hashes: Float64Array, isl: number, now = 0): number {
  return router.select(hashes, 0, hashes.length, isl, now);
}

function admit(
  router: KvRouter,
  worker: number,
  req: number,
  hashes: Float64Array,
  isl: number,
  now = 0,
): void {
  router.addRequest(worker, req, hashes, 0, hashes.length, isl, now, Number.NaN);
}

describe("KV router cost at temperature 0 (hand-computed)", () => {
  // Request q: 4 full blocks, 64 tokens. Worker A caches q's first 3 blocks and runs 2 requests:
  //   r1 = [101], 16 tokens: fully cached on A at admission → no prefill load, 1 live block (shared with q)
  //   r2 = [201], 20 tokens: uncached → 20 prefill tokens, 1 live block
  // so A: active prefill 20 tokens, active blocks {101, 201} = 2, q's new blocks = 4 − 1 (101 live) = 3.
  // Worker B is empty.
  const q = blocks(101, 102, 103, 104);
  const build = (overrides: { overlapScoreCredit?: number; prefillLoadScale?: number } = {}): KvRouter => {
    const router = new KvRouter({ blockSize: BS, ...overrides });
    router.addWorker(A);
    router.addWorker(B);
    cache(router, A, blocks(101, 102, 103));
    admit(router, A, 1, blocks(101), 16);
    admit(router, A, 2, blocks(201), 20);
    return router;
  };

  it("tracks the load terms that feed the cost", () => {
    const router = build();
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(3);
    expect(router.overlapBlocks(B, q, 0, 4)).toBe(0);
    expect(router.activePrefillTokens(A, 0)).toBe(20);
    expect(router.activeBlocks(A)).toBe(2);
    expect(router.activeBlocks(B)).toBe(0);
  });

  it("default weights: the cache credit outweighs A's load", () => {
    const router = build();
    // A: 1·max(0, (20 + 64)/16 − 1·3) + 2 + 3 = 2.25 + 5 = 7.25;  B: 64/16 + 0 + 4 = 8
    expect(route(router, q, 64)).toBe(A);
    expect(router.lastCost(A)).toBe(7.25);
    expect(router.lastCost(B)).toBe(8);
    expect(router.lastOverlapBlocks()).toBe(3);
  });

  it("overlapScoreCredit 0: the pick flips to the empty worker", () => {
    const router = build({ overlapScoreCredit: 0 });
    // A: (20 + 64)/16 + 5 = 10.25;  B: 4 + 4 = 8
    expect(route(router, q, 64)).toBe(B);
    expect(router.lastCost(A)).toBe(10.25);
    expect(router.lastCost(B)).toBe(8);
    expect(router.lastOverlapBlocks()).toBe(0);
  });

  it("setCostParameters changes the scoring from now on and keeps the tracked state", () => {
    const router = build();
    router.setCostParameters({ overlapScoreCredit: 0, prefillLoadScale: 1, temperature: 0 });
    expect(route(router, q, 64)).toBe(B);
    expect(router.lastCost(A)).toBe(10.25);
    expect(router.activeBlocks(A)).toBe(2);
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(3);
    expect(router.options.overlapScoreCredit).toBe(0);
    expect(() =>
      router.setCostParameters({ overlapScoreCredit: -1, prefillLoadScale: 1, temperature: 0 }),
    ).toThrow();
  });

  it("prefillLoadScale 0: only decode blocks matter", () => {
    const router = build({ prefillLoadScale: 0 });
    // A: 0 + 2 + 3 = 5;  B: 0 + 0 + 4 = 4
    expect(route(router, q, 64)).toBe(B);
    expect(router.lastCost(A)).toBe(5);
    expect(router.lastCost(B)).toBe(4);
  });

  it("a partial credit and the clamp at zero", () => {
    const router = build({ overlapScoreCredit: 0.5 });
    // A: (84/16 − 1.5) + 5 = 8.75;  B: 8
    expect(route(router, q, 64)).toBe(B);
    expect(router.lastCost(A)).toBe(8.75);
    // The prefill term never goes negative: a 40-token prompt with 3 cached blocks on an idle worker
    // has max(0, 40/16 − 3) = max(0, −0.5) = 0, leaving the decode term 0 + 3.
    const strong = new KvRouter({ blockSize: BS, overlapScoreCredit: 1 });
    strong.addWorker(A);
    cache(strong, A, blocks(101, 102, 103));
    route(strong, blocks(101, 102, 103), 40);
    expect(strong.lastCost(A)).toBe(3);
  });

  it("returns -1 with no eligible worker", () => {
    const router = new KvRouter({ blockSize: BS });
    expect(route(router, q, 64)).toBe(-1);
    expect(router.lastOverlapBlocks()).toBe(0);
  });
});

describe("pool configurations", () => {
  it("decode router: cost = live blocks + all of the request's blocks, no overlap credit, no prefill, no dedupe", () => {
    const router = new KvRouter(kvRouterOptionsForRole("decode", { blockSize: BS }));
    expect(router.options).toMatchObject({
      overlapScoreCredit: 0,
      trackPrefillTokens: false,
      assumeKvReuse: false,
      trackActiveBlocks: true,
    });
    router.addWorker(A);
    router.addWorker(B);
    cache(router, B, blocks(101, 102, 103)); // ignored by the cost
    admit(router, A, 1, blocks(101, 102), 40); // 2 blocks (the 8-token tail is not a full block)
    admit(router, B, 2, blocks(301), 20);
    admit(router, B, 3, blocks(302), 20);
    admit(router, B, 4, blocks(303), 20);
    expect(router.activePrefillTokens(A, 0)).toBe(0);
    const q = blocks(101, 102, 103);
    // A: 2 + 3 = 5 (r1's blocks 101, 102 are not deduplicated);  B: 3 + 3 = 6
    expect(route(router, q, 50)).toBe(A);
    expect(router.lastCost(A)).toBe(5);
    expect(router.lastCost(B)).toBe(6);
    // Two requests with the same prompt on one worker count twice.
    admit(router, A, 5, blocks(101, 102), 40);
    expect(router.activeBlocks(A)).toBe(4);
    expect(route(router, q, 50)).toBe(B);
    expect(router.lastCost(A)).toBe(7);
  });

  it("the same state under the aggregated router deduplicates the shared prefix", () => {
    const router = new KvRouter({ blockSize: BS, prefillLoadScale: 0 });
    router.addWorker(A);
    admit(router, A, 1, blocks(101, 102), 40);
    admit(router, A, 5, blocks(101, 102), 40);
    expect(router.activeBlocks(A)).toBe(2);
    route(router, blocks(101, 102, 103), 50);
    expect(router.lastCost(A)).toBe(2 + 1);
  });

  it("prefill router: no decode term, only prefill tokens and overlap", () => {
    const router = new KvRouter(kvRouterOptionsForRole("prefill", { blockSize: BS }));
    expect(router.options.trackActiveBlocks).toBe(false);
    router.addWorker(A);
    router.addWorker(B);
    const q = blocks(101, 102, 103, 104);
    cache(router, A, blocks(101, 102, 103));
    // Ten requests on A whose prefill is done: invisible to the prefill router.
    for (let r = 0; r < 10; r++) {
      admit(router, A, r, blocks(500 + r, 600 + r), 32);
      router.markPrefillCompleted(A, r, 0);
    }
    expect(router.activeBlocks(A)).toBe(0);
    // A: 64/16 − 3 = 1;  B: 64/16 = 4
    expect(route(router, q, 64)).toBe(A);
    expect(router.lastCost(A)).toBe(1);
    expect(router.lastCost(B)).toBe(4);
    // One 64-token prompt still prefilling on A: (64 + 64)/16 − 3 = 5 > 4.
    admit(router, A, 99, blocks(900, 901, 902, 903), 64);
    expect(route(router, q, 64)).toBe(B);
    expect(router.lastCost(A)).toBe(5);
  });

  it("validates options", () => {
    expect(() => resolveKvRouterOptions({ blockSize: 0 })).toThrow(/blockSize/);
    expect(() => resolveKvRouterOptions({ blockSize: 16, temperature: -1 })).toThrow(/temperature/);
    expect(() => resolveKvRouterOptions({ blockSize: 16, overlapScoreCredit: Number.NaN })).toThrow(
      /overlapScoreCredit/,
    );
    expect(() =>
      resolveKvRouterOptions({ blockSize: 16, prefillLoadModel: "aic", trackPrefillTokens: false }),
    ).toThrow(/aic/);
    expect(resolveKvRouterOptions({ blockSize: 16 })).toEqual({
      blockSize: 16,
      overlapScoreCredit: 1,
      prefillLoadScale: 1,
      temperature: 0,
      trackActiveBlocks: true,
      trackPrefillTokens: true,
      assumeKvReuse: true,
      prefillLoadModel: "none",
      seed: 0xd1a05eed,
    });
  });
});

describe("prefix index from KV events", () => {
  const q = blocks(11, 12, 13, 14);

  it("stored blocks raise the overlap, a removed leaf lowers it by one, a gap stops the walk", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    router.addWorker(B);
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(0);
    router.onBlockStored(A, 11);
    router.onBlockStored(A, 12);
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(2);
    router.onBlockStored(A, 13);
    router.onBlockStored(A, 14);
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(4);
    router.onBlockRemoved(A, 14); // leaf first, as engines evict
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(3);
    router.onBlockRemoved(A, 12);
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(1); // 13 is still held but no longer leading
    expect(router.overlapBlocks(B, q, 0, 4)).toBe(0);
    // Offsets into a packed hash column.
    const packed = blocks(7, 7, 11, 12, 13);
    expect(router.overlapBlocks(A, packed, 2, 3)).toBe(1);
    router.onBlockRemoved(A, 999); // unknown: no-op
    router.onBlockStored(A, 11); // repeated: idempotent
    expect(router.indexedBlocks()).toBe(2);
  });

  it("select reports the chosen worker's overlap and handles large 53-bit hashes", () => {
    const big = blocks(2 ** 52 + 1, 2 ** 53 - 1, 2 ** 40 + 7);
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    router.addWorker(B);
    cache(router, B, big.subarray(0, 2));
    expect(router.select(big, 0, 3, 48, 0)).toBe(B);
    expect(router.lastOverlapBlocks()).toBe(2);
  });

  it("removeWorker forgets the worker and ignores its later events", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    router.addWorker(B);
    cache(router, A, q);
    expect(route(router, q, 64)).toBe(A);
    router.removeWorker(A);
    expect(router.workers()).toEqual([B]);
    expect(route(router, q, 64)).toBe(B);
    router.onBlockStored(A, 11); // a draining engine still reports: ignored
    router.addWorker(A);
    expect(router.overlapBlocks(A, q, 0, 4)).toBe(0);
    expect(router.indexedBlocks()).toBe(0);
    router.removeWorker(7); // unknown: no-op
    expect(() => router.addWorker(A)).toThrow(/already/);
    expect(() => router.onBlockStored(B, -1)).toThrow(/hash/);
  });

  it("keeps eligible workers in id order whatever the add order, and many workers (> 32 bitset slots)", () => {
    const router = new KvRouter({ blockSize: BS });
    for (const w of [40, 3, 17, 0]) router.addWorker(w);
    expect(router.workers()).toEqual([0, 3, 17, 40]);
    for (let w = 50; w < 120; w++) router.addWorker(w);
    cache(router, 101, q.subarray(0, 3));
    cache(router, 40, q.subarray(0, 2));
    expect(route(router, q, 64)).toBe(101);
    expect(router.lastOverlapBlocks()).toBe(3);
    router.removeWorker(101);
    expect(route(router, q, 64)).toBe(40);
    expect(router.lastOverlapBlocks()).toBe(2);
  });
});

describe("request lifecycle", () => {
  it("addRequest / markPrefillCompleted / free move the load terms", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    router.addWorker(B);
    cache(router, A, blocks(1, 2));
    const p = blocks(1, 2, 3); // 3 full blocks of a 56-token prompt, 2 cached on A
    router.addRequest(A, 7, p, 0, 3, 56, 0, Number.NaN);
    expect(router.activePrefillTokens(A, 0)).toBe(56 - 32); // uncached tokens only
    expect(router.activeBlocks(A)).toBe(3); // full blocks; the 8-token tail is not counted
    expect(router.markPrefillCompleted(A, 7, 1)).toBe(true);
    expect(router.activePrefillTokens(A, 1)).toBe(0);
    expect(router.activeBlocks(A)).toBe(3);
    expect(router.markPrefillCompleted(A, 7, 1)).toBe(true); // idempotent
    expect(router.free(A, 7, 2)).toBe(true);
    expect(router.activeBlocks(A)).toBe(0);
    // Unknown requests: documented no-ops, as in the reference.
    expect(router.free(A, 7, 3)).toBe(false);
    expect(router.markPrefillCompleted(A, 12345, 3)).toBe(false);
  });

  it("free releases the prefill load of a request still prefilling", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    admit(router, A, 1, blocks(5, 6), 40);
    expect(router.activePrefillTokens(A, 0)).toBe(40);
    router.free(A, 1, 0);
    expect(router.activePrefillTokens(A, 0)).toBe(0);
  });

  it("a fully cached prompt adds no prefill load", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    cache(router, A, blocks(1, 2));
    admit(router, A, 1, blocks(1, 2), 32);
    expect(router.activePrefillTokens(A, 0)).toBe(0);
    expect(router.activeBlocks(A)).toBe(2);
  });

  it("shared blocks count once and stay live until their last request is freed", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    admit(router, A, 1, blocks(1, 2, 3), 48);
    admit(router, A, 2, blocks(1, 2, 4, 5), 64);
    expect(router.activeBlocks(A)).toBe(5);
    router.free(A, 1, 0);
    expect(router.activeBlocks(A)).toBe(4);
    // Request 2 still prefills 64 tokens; the candidate's new blocks on A: 1, 2 are live, 3 is not.
    route(router, blocks(1, 2, 3), 48);
    expect(router.lastCost(A)).toBe((64 + 48) / 16 + 4 + 1);
    router.free(A, 2, 0);
    expect(router.activeBlocks(A)).toBe(0);
  });

  it("rejects caller bugs: duplicate ids, non-eligible workers, the wrong worker", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    router.addWorker(B);
    admit(router, A, 1, blocks(1), 16);
    expect(() => admit(router, A, 1, blocks(1), 16)).toThrow(/already live/);
    expect(() => admit(router, 9, 2, blocks(1), 16)).toThrow(/non-eligible/);
    expect(() => router.free(B, 1, 0)).toThrow(/lives on worker 0/);
    expect(() => router.markPrefillCompleted(B, 1, 0)).toThrow(/lives on worker 0/);
  });

  it("a removed worker's live requests can still be completed; its slot then starts clean", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    router.addWorker(B);
    admit(router, A, 1, blocks(1, 2), 32);
    router.removeWorker(A);
    expect(router.activeBlocks(A)).toBe(2); // draining: load still known
    expect(router.markPrefillCompleted(A, 1, 0)).toBe(true);
    expect(router.free(A, 1, 0)).toBe(true);
    router.addWorker(2); // may reuse A's slot
    router.addWorker(A);
    expect(router.activeBlocks(2)).toBe(0);
    expect(router.activeBlocks(A)).toBe(0);
    expect(router.activePrefillTokens(2, 0)).toBe(0);
    route(router, blocks(1, 2), 32);
    expect(router.lastCost(2)).toBe(router.lastCost(B));
  });

  it("a draining worker that returns keeps its live load", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    admit(router, A, 1, blocks(1, 2), 32);
    router.removeWorker(A);
    router.addWorker(A);
    expect(router.activeBlocks(A)).toBe(2);
    expect(router.activePrefillTokens(A, 0)).toBe(32);
  });

  it("the caller may reuse its hash buffer after addRequest", () => {
    const router = new KvRouter({ blockSize: BS });
    router.addWorker(A);
    const buf = blocks(1, 2);
    admit(router, A, 1, buf, 32);
    buf.fill(9);
    router.free(A, 1, 0);
    expect(router.activeBlocks(A)).toBe(0);
  });
});
