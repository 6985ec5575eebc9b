/**
 * Conformance: the pending-desired guard and advisory mode as the replay adapter implements them
 * (`ai-dynamo/dynamo@20fb262:components/src/dynamo/planner/core/base.py`, `ai-dynamo/dynamo@84809e0:components/src/dynamo/planner/offline/replay_adapter.py`, `ai-dynamo/dynamo@b34225a:components/src/dynamo/planner/tests/offline/test_replay_adapter_scaling.py`, `ai-dynamo/dynamo@b36bc0a:components/src/dynamo/planner/tests/unit/test_planner_base_pending.py`; seed 000 "Replay in Advisory
 * Mode"). `PlannerReplayAdapter.onTick` is driven with hand-built TickSnapshots and a real PlannerCore on
 * the easy `throughput` target, whose decisions are predictable:
 *   decode: u = (scheduled KV + queued KV) / max_kv; u > 1.0 ⇒ N+1, all u < 0.6 and N > 1 ⇒ N−1;
 *   prefill: v = queued prompt tokens / context_length; v ≥ 1.0 ⇒ N+1, all v < 0.1 and N > 1 ⇒ N−1.
 *
 * After a scale decision the adapter reports `expected = target` and `*_scaling_in_progress = true`
 * until the pool's non-draining count (active + starting) equals the target; then the target is cleared
 * and `expected` is the non-draining count again (so a starting worker still reads as expected ≠ ready).
 */
import { describe, expect, it } from "vitest";
import { PlannerReplayAdapter, type ScalingEvent } from "../../src/autoscale/plannerAdapter.js";
import { PlannerCore } from "../../src/planner/plannerCore.js";
import type { EngineCapabilities, ForwardPassMetrics, PlannerSettings } from "../../src/planner/types.js";
import {
  emptyTrafficWindow,
  type PoolTopology,
  type TickSnapshot,
  type TrafficWindow,
} from "../../src/sim/scaling.js";
import { engineCaps, forwardPass, plannerSettings } from "../helpers/planner.js";

const CONTEXT_LENGTH = 4096;
const MAX_KV = 100_000;

function settings(over: Partial<PlannerSettings> = {}): PlannerSettings {
  return plannerSettings(over);
}

function caps(over: Partial<EngineCapabilities> = {}): EngineCapabilities {
  return engineCaps({
    maxNumBatchedTokens: 4500,
    contextLength: CONTEXT_LENGTH,
    maxKvTokens: MAX_KV,
    ...over,
  });
}

function fpm(workerId: number, f: Partial<ForwardPassMetrics> = {}): ForwardPassMetrics {
  return forwardPass(workerId, f);
}

/** Prefill queue levels (v = queued / context) and decode KV levels (u = kv / max_kv). */
const PREFILL = { hot: CONTEXT_LENGTH, neutral: CONTEXT_LENGTH / 2, cold: 0 } as const;
const DECODE = { hot: 1.1 * MAX_KV, neutral: 0.7 * MAX_KV, cold: 0 } as const;
type Level = "hot" | "neutral" | "cold";

interface Pool {
  readonly active: readonly number[];
  readonly starting?: readonly number[];
  readonly draining?: readonly number[];
  readonly level: Level;
}

function topology(p: Pool): PoolTopology {
  return { active: [...p.active], starting: [...(p.starting ?? [])], draining: [...(p.draining ?? [])] };
}

function window(durationS: number): TrafficWindow {
  return { ...emptyTrafficWindow(), durationS };
}

/** A disaggregated snapshot; FPMs come from active workers only (prefill ids 0.., decode ids 100..). */
function snap(ordinal: number, nowS: number, prefill: Pool, decode: Pool, windowS = 5): TickSnapshot {
  return {
    tickOrdinal: ordinal,
    nowMs: nowS * 1000,
    prefillFpm: prefill.active.map((w) => fpm(w, { sumQueuedPrefillTokens: PREFILL[prefill.level] })),
    decodeFpm: decode.active.map((w) => fpm(w, { sumDecodeKvTokens: DECODE[decode.level] })),
    prefillTopology: topology(prefill),
    decodeTopology: topology(decode),
    traffic: window(windowS),
  };
}

function adapter(s: PlannerSettings, start: { prefill: number; decode: number }): PlannerReplayAdapter {
  const core = new PlannerCore({
    settings: s,
    caps: { prefill: caps(), decode: caps() },
    bootstrap: null,
    warmup: null,
  });
  return new PlannerReplayAdapter(core, start, { status: "not_required" });
}

interface TickRecord {
  at_ms: number;
  input: {
    worker_counts: {
      ready_num_prefill: number | null;
      ready_num_decode: number | null;
      expected_num_prefill: number | null;
      expected_num_decode: number | null;
      prefill_scaling_in_progress: boolean;
      decode_scaling_in_progress: boolean;
      pending_num_prefill: number;
      pending_num_decode: number;
    };
  };
  effects: {
    scale_to: { num_prefill: number | null; num_decode: number | null } | null;
    diagnostics: Record<string, unknown>;
  };
  runtime_decision: { target_prefill: number | null; target_decode: number | null; next_tick_ms: number };
}

function ticks(a: PlannerReplayAdapter): TickRecord[] {
  return a.report([]).ticks as TickRecord[];
}

function last(a: PlannerReplayAdapter): TickRecord {
  const all = ticks(a);
  return all[all.length - 1];
}

function workers(
  ready: [number, number],
  expected: [number, number],
  inProgress: [boolean, boolean],
): TickRecord["input"]["worker_counts"] {
  return {
    ready_num_prefill: ready[0],
    ready_num_decode: ready[1],
    expected_num_prefill: expected[0],
    expected_num_decode: expected[1],
    prefill_scaling_in_progress: inProgress[0],
    decode_scaling_in_progress: inProgress[1],
    // A replay provisions a scale-up at once: nothing is ever pending.
    pending_num_prefill: 0,
    pending_num_decode: 0,
  };
}

const event = (
  at_s: number,
  component: ScalingEvent["component"],
  from_count: number,
  to_count: number,
): ScalingEvent => ({
  at_s,
  component,
  from_count,
  to_count,
  reason: to_count > from_count ? "scale_up" : "scale_down",
});

describe("pending-desired guard (replay adapter, test_planner_base_pending.py)", () => {
  it("a scale-up reports expected = target and scaling in progress until the non-draining count matches, then clears", () => {
    const a = adapter(settings(), { prefill: 1, decode: 1 });
    const P1: Pool = { active: [0], level: "neutral" };

    // 5 s: decode u = 1.1 ⇒ 1 → 2. The target goes to the replay and an event is recorded.
    const r1 = a.onTick(snap(0, 5, P1, { active: [100], level: "hot" }));
    expect(r1).toEqual({ targetPrefill: null, targetDecode: 2, nextTickMs: 10_000 });
    expect(last(a).input.worker_counts).toEqual(workers([1, 1], [1, 1], [false, false]));
    // The record names the unchanged prefill role at its ready count, as the reference writes it.
    expect(last(a).effects.scale_to).toEqual({ num_prefill: 1, num_decode: 2 });
    expect(a.report([]).scaling_events).toEqual([event(5, "decode", 1, 2)]);

    // 10 s: the pool has not grown yet (non-draining 1 ≠ target 2): pending ⇒ expected 2, in progress,
    // and the load loop is frozen for both roles even though decode is still hot.
    const r2 = a.onTick(snap(1, 10, P1, { active: [100], level: "hot" }));
    expect(r2).toEqual({ targetPrefill: null, targetDecode: null, nextTickMs: 15_000 });
    expect(last(a).input.worker_counts).toEqual(workers([1, 1], [1, 2], [false, true]));
    expect(last(a).effects.diagnostics["load_decision_reason"]).toBe("scaling_in_progress");

    // 15 s: a second worker is starting: non-draining 2 = target ⇒ the target is cleared. Expected is the
    // non-draining count (2) against 1 ready, which still reads as scaling in progress to the load loop.
    a.onTick(snap(2, 15, P1, { active: [100], starting: [101], level: "hot" }));
    expect(last(a).input.worker_counts).toEqual(workers([1, 1], [1, 2], [false, false]));
    expect(last(a).effects.diagnostics["load_decision_reason"]).toBe("scaling_in_progress");
    expect(last(a).effects.scale_to).toBeNull();

    // 20 s: ready; both workers hot ⇒ the loop decides again, from 2.
    const r4 = a.onTick(snap(3, 20, P1, { active: [100, 101], level: "hot" }));
    expect(last(a).input.worker_counts).toEqual(workers([1, 2], [1, 2], [false, false]));
    expect(r4.targetDecode).toBe(3);
    expect(a.report([]).scaling_events).toEqual([event(5, "decode", 1, 2), event(20, "decode", 2, 3)]);
  });

  it("a scale-down settles on the non-draining count: a draining worker does not keep it pending", () => {
    const a = adapter(settings(), { prefill: 1, decode: 3 });
    const P1: Pool = { active: [0], level: "neutral" };
    const r1 = a.onTick(snap(0, 5, P1, { active: [100, 101, 102], level: "cold" }));
    expect(r1.targetDecode).toBe(2);
    expect(a.report([]).scaling_events).toEqual([event(5, "decode", 3, 2)]);

    // Worker 102 drains (still in the total, not in non-draining): 2 = target ⇒ cleared, not in progress.
    const r2 = a.onTick(snap(1, 10, P1, { active: [100, 101], draining: [102], level: "cold" }));
    expect(last(a).input.worker_counts).toEqual(workers([1, 2], [1, 2], [false, false]));
    expect(r2.targetDecode).toBe(1);
    expect(a.report([]).scaling_events).toEqual([event(5, "decode", 3, 2), event(10, "decode", 2, 1)]);
  });

  it("mismatch in the other direction (over the target) also reports pending", () => {
    const a = adapter(settings(), { prefill: 1, decode: 3 });
    const P1: Pool = { active: [0], level: "neutral" };
    a.onTick(snap(0, 5, P1, { active: [100, 101, 102], level: "cold" }));
    // The pool still shows 3 non-draining workers: expected stays the target 2.
    a.onTick(snap(1, 10, P1, { active: [100, 101, 102], level: "cold" }));
    expect(last(a).input.worker_counts).toEqual(workers([1, 3], [1, 2], [false, true]));
    expect(last(a).runtime_decision).toMatchObject({ target_prefill: null, target_decode: null });
  });

  it("independent axes: a pending prefill target flags prefill only; each role clears on its own count", () => {
    const a = adapter(settings(), { prefill: 1, decode: 1 });

    // 5 s: prefill v = 1.0 ⇒ 1 → 2; decode neutral keeps its count (no decode target, no decode event).
    const r1 = a.onTick(snap(0, 5, { active: [0], level: "hot" }, { active: [100], level: "neutral" }));
    expect(r1).toMatchObject({ targetPrefill: 2, targetDecode: null });
    expect(a.report([]).scaling_events).toEqual([event(5, "prefill", 1, 2)]);

    // 10 s: prefill pending; decode's expected is its own non-draining count. The disagg load loop is
    // frozen for both roles while either scales (`ai-dynamo/dynamo@936d819:components/src/dynamo/planner/core/load_scaling.py`), so hot decode waits.
    a.onTick(snap(1, 10, { active: [0], level: "neutral" }, { active: [100], level: "hot" }));
    expect(last(a).input.worker_counts).toEqual(workers([1, 1], [2, 1], [true, false]));
    expect(last(a).effects.diagnostics).toMatchObject({
      load_decision_reason: "scaling_in_progress",
      load_decision_reason_prefill: "scaling_in_progress",
      load_decision_reason_decode: "scaling_in_progress",
    });

    // 15 s: prefill has its second worker: cleared; now decode scales on its own axis.
    const r3 = a.onTick(snap(2, 15, { active: [0, 1], level: "neutral" }, { active: [100], level: "hot" }));
    expect(last(a).input.worker_counts).toEqual(workers([2, 1], [2, 1], [false, false]));
    expect(r3).toMatchObject({ targetPrefill: null, targetDecode: 2 });

    // 20 s: decode pending, prefill settled.
    a.onTick(snap(3, 20, { active: [0, 1], level: "neutral" }, { active: [100], level: "neutral" }));
    expect(last(a).input.worker_counts).toEqual(workers([2, 1], [2, 2], [false, true]));
    expect(a.report([]).scaling_events).toEqual([event(5, "prefill", 1, 2), event(15, "decode", 1, 2)]);
  });

  it("both roles pending settle independently", () => {
    const a = adapter(settings(), { prefill: 1, decode: 1 });
    const r1 = a.onTick(snap(0, 5, { active: [0], level: "hot" }, { active: [100], level: "hot" }));
    expect(r1).toMatchObject({ targetPrefill: 2, targetDecode: 2 });
    a.onTick(snap(1, 10, { active: [0, 1], level: "neutral" }, { active: [100], level: "neutral" }));
    expect(last(a).input.worker_counts).toEqual(workers([2, 1], [2, 2], [false, true]));
    a.onTick(snap(2, 15, { active: [0, 1], level: "neutral" }, { active: [100, 101], level: "neutral" }));
    expect(last(a).input.worker_counts).toEqual(workers([2, 2], [2, 2], [false, false]));
    expect(last(a).effects.diagnostics["load_decision_reason"]).toBe("no_change");
  });

  it("no decision ⇒ no targets, no events, nothing pending", () => {
    const a = adapter(settings(), { prefill: 1, decode: 1 });
    for (let i = 0; i < 3; i++) {
      const r = a.onTick(
        snap(i, 5 * (i + 1), { active: [0], level: "neutral" }, { active: [100], level: "neutral" }),
      );
      expect(r).toEqual({ targetPrefill: null, targetDecode: null, nextTickMs: 5000 * (i + 2) });
      expect(last(a).input.worker_counts).toEqual(workers([1, 1], [1, 1], [false, false]));
    }
    const report = a.report([]);
    expect(report.scaling_events).toEqual([]);
    expect(report.recommended_scaling_events).toBeUndefined();
    expect(report.total_ticks).toBe(3);
  });
});

describe("advisory mode: decides, never sends targets, never records pending ones", () => {
  it("recommendations are listed once per change; a hold resets them so a repeat is listed again", () => {
    const a = adapter(settings({ advisory: true }), { prefill: 1, decode: 1 });
    const P1: Pool = { active: [0], level: "neutral" };

    // 5 s: recommend decode 1 → 2; nothing goes to the replay.
    expect(a.onTick(snap(0, 5, P1, { active: [100], level: "hot" }))).toEqual({
      targetPrefill: null,
      targetDecode: null,
      nextTickMs: 10_000,
    });
    expect(last(a).effects.scale_to).toEqual({ num_prefill: 1, num_decode: 2 });

    // 10 s: same recommendation: not listed again. No pending target: expected = starting counts.
    a.onTick(snap(1, 10, P1, { active: [100], level: "hot" }));
    expect(last(a).input.worker_counts).toEqual(workers([1, 1], [1, 1], [false, false]));
    expect(last(a).effects.scale_to).toEqual({ num_prefill: 1, num_decode: 2 });
    expect(last(a).runtime_decision).toMatchObject({ target_prefill: null, target_decode: null });

    // 15 s: the decision keeps decode at its current count ⇒ its recommendation resets.
    a.onTick(snap(2, 15, P1, { active: [100], level: "neutral" }));
    expect(last(a).effects.scale_to).toBeNull();

    // 20 s: the same recommendation after the hold is listed again.
    a.onTick(snap(3, 20, P1, { active: [100], level: "hot" }));

    const report = a.report([]);
    expect(report.metadata["advisory"]).toBe(true);
    expect(report.scaling_events).toEqual([]);
    expect(report.recommended_scaling_events).toEqual([event(5, "decode", 1, 2), event(20, "decode", 1, 2)]);
  });

  it("the Planner always sees its starting replicas as ready and expected, whatever the snapshot says", () => {
    const a = adapter(settings({ advisory: true }), { prefill: 1, decode: 2 });
    // A snapshot that disagrees with the starting counts (should never happen in advisory replay).
    a.onTick(
      snap(0, 5, { active: [0, 1], level: "neutral" }, { active: [100], starting: [101], level: "neutral" }),
    );
    expect(last(a).input.worker_counts).toEqual(workers([1, 2], [1, 2], [false, false]));
  });

  it("a scale-down recommendation is listed against the starting count", () => {
    const a = adapter(settings({ advisory: true }), { prefill: 1, decode: 3 });
    a.onTick(snap(0, 5, { active: [0], level: "neutral" }, { active: [100, 101, 102], level: "cold" }));
    a.onTick(snap(1, 10, { active: [0], level: "neutral" }, { active: [100, 101, 102], level: "cold" }));
    expect(a.report([]).recommended_scaling_events).toEqual([event(5, "decode", 3, 2)]);
  });

  it("a decision that keeps one component resets only that component's recommendation", () => {
    const a = adapter(settings({ advisory: true }), { prefill: 1, decode: 1 });
    // 5 s: decode recommended 1 → 2.
    a.onTick(snap(0, 5, { active: [0], level: "neutral" }, { active: [100], level: "hot" }));
    // 10 s: prefill recommended 1 → 2; the same decision keeps decode at 1 ⇒ decode's recommendation resets.
    a.onTick(snap(1, 10, { active: [0], level: "hot" }, { active: [100], level: "neutral" }));
    // The record names decode at its ready count (the reference's form); the decision keeps it.
    expect(last(a).effects.scale_to).toEqual({ num_prefill: 2, num_decode: 1 });
    // 15 s: decode 1 → 2 again is listed again; prefill (kept at 1 now) resets.
    a.onTick(snap(2, 15, { active: [0], level: "neutral" }, { active: [100], level: "hot" }));
    // 20 s: prefill 1 → 2 again is listed again; decode 2 (unchanged recommendation) is not.
    a.onTick(snap(3, 20, { active: [0], level: "hot" }, { active: [100], level: "hot" }));
    expect(a.report([]).recommended_scaling_events).toEqual([
      event(5, "decode", 1, 2),
      event(10, "prefill", 1, 2),
      event(15, "decode", 1, 2),
      event(20, "prefill", 1, 2),
    ]);
  });

  it("a tick on which no loop runs decides nothing and keeps the recommendation (load 10 s on a 5 s cadence)", () => {
    // Ticks every 5 s, the load loop every 10 s (the cadence sla with load 10 s / throughput 15 s gets).
    const a = adapter(settings({ advisory: true, loadAdjustmentIntervalS: 10 }), { prefill: 1, decode: 1 });
    const P1: Pool = { active: [0], level: "neutral" };
    a.onTick(snap(0, 5, P1, { active: [100], level: "hot" }));
    expect(ticks(a)[0].effects.diagnostics["load_decision_reason"]).toBeNull();
    a.onTick(snap(1, 10, P1, { active: [100], level: "hot" })); // load: recommend 2
    a.onTick(snap(2, 15, P1, { active: [100], level: "hot" })); // no loop
    a.onTick(snap(3, 20, P1, { active: [100], level: "hot" })); // load: same recommendation
    expect(a.report([]).recommended_scaling_events).toEqual([event(10, "decode", 1, 2)]);
  });

  it("with load scaling on, a throughput-only tick (lower bounds only) keeps the recommendation too", () => {
    // Ticks every 5 s; load every 10 s; throughput every 15 s (it only sets lower bounds).
    const s = settings({
      advisory: true,
      enableThroughputScaling: true,
      loadAdjustmentIntervalS: 10,
      throughputAdjustmentIntervalS: 15,
    });
    const a = adapter(s, { prefill: 1, decode: 1 });
    const P1: Pool = { active: [0], level: "neutral" };
    for (let i = 0; i < 6; i++) a.onTick(snap(i, 5 * (i + 1), P1, { active: [100], level: "hot" }));
    const all = ticks(a);
    const loops = all.map((t) => [
      t.at_ms / 1000,
      t.effects.diagnostics["load_decision_reason"] !== null,
      t.effects.diagnostics["throughput_decision_reason"] !== null,
    ]);
    expect(loops).toEqual([
      [5, false, false],
      [10, true, false],
      [15, false, true],
      [20, true, false],
      [25, false, false],
      [30, true, true],
    ]);
    expect(a.report([]).recommended_scaling_events).toEqual([event(10, "decode", 1, 2)]);
  });
});
