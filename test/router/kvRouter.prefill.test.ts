import { describe, expect, it } from "vitest";
import { KvRouter } from "../../src/router/kvRouter.js";
import { PrefillBacklog } from "../../src/router/prefillBacklog.js";

const S = 1000; // ms per second

describe("AIC prefill load decay through the router", () => {
  // Reference: test_prefill_load_estimator_decays_offline_router_active_tokens (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/tests.rs`):
  // one 64-token request, block size 64, predicted prefill 10 s → 64 at 0 s, 32 at 5 s, 0 at 10 s.
  it("64 → 32 → 0 tokens with a 10 s prediction", () => {
    const router = new KvRouter({ blockSize: 64, prefillLoadModel: "aic" });
    router.addWorker(0);
    const hashes = Float64Array.of(77);
    expect(router.select(hashes, 0, 1, 64, 0)).toBe(0);
    router.addRequest(0, 1, hashes, 0, 1, 64, 0, 10 * S);
    expect(router.activePrefillTokens(0, 0)).toBe(64);
    expect(router.activePrefillTokens(0, 5 * S)).toBe(32);
    expect(router.activePrefillTokens(0, 10 * S)).toBe(0);
    expect(router.activePrefillTokens(0, 20 * S)).toBe(0);
    // The decayed load is what select() charges: (32 + 64)/64 = 1.5 blocks + 2 decode blocks.
    router.select(Float64Array.of(78), 0, 1, 64, 5 * S);
    expect(router.lastCost(0)).toBe(1.5 + 2);
  });

  it("model none ignores predictions: prefill load stays until the first token", () => {
    const router = new KvRouter({ blockSize: 64 });
    router.addWorker(0);
    router.addRequest(0, 1, Float64Array.of(77), 0, 1, 64, 0, 10 * S);
    expect(router.activePrefillTokens(0, 60 * S)).toBe(64);
    router.markPrefillCompleted(0, 1, 60 * S);
    expect(router.activePrefillTokens(0, 60 * S)).toBe(0);
  });

  it("rejects a negative or infinite prediction under aic, accepts NaN (no prediction)", () => {
    const router = new KvRouter({ blockSize: 64, prefillLoadModel: "aic" });
    router.addWorker(0);
    const h = Float64Array.of(1);
    expect(() => router.addRequest(0, 1, h, 0, 1, 64, 0, -1)).toThrow(/predicted/);
    expect(() => router.addRequest(0, 1, h, 0, 1, 64, 0, Number.POSITIVE_INFINITY)).toThrow(/predicted/);
    router.addRequest(0, 1, h, 0, 1, 64, 0, Number.NaN);
    expect(router.activePrefillTokens(0, 100 * S)).toBe(64);
  });
});

// Cases from ai-dynamo/dynamo lib/kv-router/src/sequences/prefill_tracker.rs tests.
describe("PrefillBacklog (oldest-request decay)", () => {
  it("only the oldest request decays; past its own tokens the decay spills over", () => {
    const b = new PrefillBacklog();
    b.add(1, 100, 10 * S, 0);
    b.add(2, 60, 6 * S, 2 * S);
    expect(b.activeTokens(2 * S)).toBe(160 - 20); // 100 tokens/10 s for 2 s; request 2 untouched
    expect(b.activeTokens(5 * S)).toBe(160 - 50);
    expect(b.activeTokens(12 * S)).toBe(160 - 120); // anchor's rate applied to the whole backlog
    expect(b.activeTokens(30 * S)).toBe(0);
  });

  it("with an unpredicted request present, only the anchor decays (ceil), down to zero", () => {
    const b = new PrefillBacklog();
    b.add(1, 100, 10 * S, 0);
    b.add(2, 60, Number.NaN, 0);
    expect(b.activeTokens(2.5 * S)).toBe(75 + 60);
    expect(b.activeTokens(3.333 * S)).toBe(Math.ceil(100 * (1 - 3.333 / 10)) + 60);
    expect(b.activeTokens(12 * S)).toBe(60);
  });

  it("an unpredicted anchor does not decay", () => {
    const b = new PrefillBacklog();
    b.add(1, 100, Number.NaN, 0);
    b.add(2, 60, 6 * S, 0);
    expect(b.activeTokens(100 * S)).toBe(160);
  });

  it("removing the anchor re-anchors the next request at the removal time", () => {
    const b = new PrefillBacklog();
    b.add(1, 100, 10 * S, 0);
    b.add(2, 40, 8 * S, 0);
    expect(b.remove(1, 3 * S)).toBe(true);
    expect(b.activeTokens(3 * S)).toBe(40);
    expect(b.activeTokens(5 * S)).toBe(30);
  });

  it("removing a later request keeps the anchor and its clock", () => {
    const b = new PrefillBacklog();
    b.add(1, 30, 6 * S, 0);
    b.add(2, 20, 4 * S, 0);
    expect(b.remove(2, 2 * S)).toBe(true);
    expect(b.activeTokens(2 * S)).toBe(20);
  });

  it("a zero-duration anchor is complete at once", () => {
    const b = new PrefillBacklog();
    b.add(1, 100, 0, 0);
    b.add(2, 60, 6 * S, 0);
    expect(b.activeTokens(0)).toBe(60);
    expect(b.activeTokens(3 * S)).toBe(60);
  });

  it("duplicate removal is idempotent and an empty backlog is zero", () => {
    const b = new PrefillBacklog();
    b.add(1, 50, 10 * S, 0);
    b.add(2, 30, 10 * S, 0);
    expect(b.remove(1, 0)).toBe(true);
    expect(b.remove(1, 0)).toBe(false);
    expect(b.fullTokens).toBe(30);
    expect(b.remove(2, 0)).toBe(true);
    expect(b.size).toBe(0);
    expect(b.activeTokens(5 * S)).toBe(0);
  });
});
