/**
 * Conformance: tick cadence (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py` gcd rule; `ai-dynamo/dynamo@9452c2a:components/src/dynamo/planner/plugins/orchestrator/engine_adapter.py`). The pipeline ticks every
 * `scale_interval = gcd(enabled intervals)`, first at `start + scale_interval` (not 0); the load loop
 * runs at multiples of `load_adjustment_interval`, the throughput loop (and the traffic window it
 * consumes) at multiples of `throughput_adjustment_interval`; traffic windows are merged until a
 * traffic-consuming tick. Settings come from the config loader, so the gcd rule is exercised too.
 */
import { describe, expect, it } from "vitest";
import { PlannerReplayAdapter } from "../../src/autoscale/plannerAdapter.js";
import { capabilitiesOf } from "../../src/autoscale/plannerSetup.js";
import { PlannerCore } from "../../src/planner/plannerCore.js";
import type { PlannerSettings } from "../../src/planner/types.js";
import { emptyTrafficWindow, type TickSnapshot, type TrafficWindow } from "../../src/sim/scaling.js";
import { aggregatedRole, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";

function slaPlanner(
  load: number,
  throughput: number,
  extra = "",
): { core: PlannerCore; settings: PlannerSettings } {
  const spec = loadYaml(
    `planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: true
  enable_load_scaling: true
  load_adjustment_interval_seconds: ${load}
  throughput_adjustment_interval_seconds: ${throughput}
${extra}evaluation: {sla: {ttft_ms: 800, itl_ms: 40}}
${RUNNABLE_ENGINE}`,
  );
  const settings = spec.planner!;
  const core = new PlannerCore({
    settings,
    caps: { prefill: null, decode: capabilitiesOf(aggregatedRole(spec)) },
    bootstrap: null,
    warmup: null,
  });
  return { core, settings };
}

/** One request arrived and one completed (isl 100, osl 10) in each window. */
function window(durationS: number): TrafficWindow {
  return { ...emptyTrafficWindow(), durationS, numReq: 1, shapeCount: 1, sumIsl: 100, sumOsl: 10 };
}

function aggSnap(ordinal: number, nowMs: number, windowS: number): TickSnapshot {
  return {
    tickOrdinal: ordinal,
    nowMs,
    prefillFpm: null,
    decodeFpm: [],
    prefillTopology: null,
    decodeTopology: { active: [0], starting: [], draining: [] },
    traffic: window(windowS),
  };
}

interface Scheduled {
  at_s: number;
  at_monotonic_s: number;
  run_load_scaling: boolean;
  run_throughput_scaling: boolean;
  need_traffic_metrics: boolean;
  use_full_traffic_metrics: boolean;
  traffic_metrics_duration_s: number;
  need_worker_states: boolean;
  need_worker_fpm: boolean;
}

interface TickRecord {
  at_ms: number;
  scheduled_tick: Scheduled;
  input: { now_s: number; traffic: { duration_s: number; num_req: number; isl: number; osl: number } | null };
  effects: {
    next_tick: Scheduled;
    diagnostics: Record<string, unknown>;
    batch_drain_limits?: readonly unknown[];
  };
  runtime_decision: { next_tick_ms: number };
}

/** The keys of a tick's `effects.diagnostics` in the reference's prediction.json, sorted. */
const REFERENCE_DIAGNOSTIC_KEYS = [
  "audit_events",
  "engine_rps_decode",
  "engine_rps_prefill",
  "estimated_itl_ms",
  "estimated_ttft_ms",
  "execute_action",
  "held_over_plugins",
  "load_decision_reason",
  "load_decision_reason_decode",
  "load_decision_reason_prefill",
  "load_metadata_available",
  "plugin_overrides",
  "predicted_isl",
  "predicted_kv_hit_rate",
  "predicted_num_req",
  "predicted_osl",
  "reconcile_reasons",
  "short_circuit_reason",
  "throughput_decision_reason",
  "throughput_decision_reason_decode",
  "throughput_decision_reason_prefill",
  "throughput_lower_bound_decode",
  "throughput_lower_bound_prefill",
  "throughput_metadata_available",
];

/** Drives the adapter the way the replay does: from the initial tick, following `nextTickMs`. */
function drive(adapter: PlannerReplayAdapter, untilMs: number): TickRecord[] {
  let at = adapter.initialTickMs();
  let prev = 0;
  let ordinal = 0;
  while (at <= untilMs) {
    const action = adapter.onTick(aggSnap(ordinal++, at, (at - prev) / 1000));
    prev = at;
    at = action.nextTickMs!;
  }
  return adapter.report([]).ticks as TickRecord[];
}

describe("sla load 10 s / throughput 300 s ⇒ scale interval 10 s", () => {
  const { core, settings } = slaPlanner(10, 300);

  it("the loader derives the gcd", () => {
    expect(settings).toMatchObject({
      scaleIntervalS: 10,
      loadAdjustmentIntervalS: 10,
      throughputAdjustmentIntervalS: 300,
      enableLoadScaling: true,
      enableThroughputScaling: true,
    });
  });

  it("the first tick is at 10 s; the throughput loop runs only at multiples of 300 s", () => {
    expect(core.initialTickS(0)).toBe(10);
    expect(core.schedule(10)).toEqual({
      atS: 10,
      runLoadScaling: true,
      runThroughputScaling: false,
      needTrafficMetrics: false,
      useFullTrafficMetrics: false,
      trafficMetricsDurationS: 0,
      needWorkerFpm: true,
    });
    expect(core.schedule(290)).toMatchObject({ runLoadScaling: true, runThroughputScaling: false });
    expect(core.schedule(300)).toEqual({
      atS: 300,
      runLoadScaling: true,
      runThroughputScaling: true,
      needTrafficMetrics: true,
      useFullTrafficMetrics: true,
      trafficMetricsDurationS: 300,
      needWorkerFpm: true,
    });
    expect(core.schedule(310)).toMatchObject({ runThroughputScaling: false });
    expect(core.schedule(600)).toMatchObject({ runLoadScaling: true, runThroughputScaling: true });
  });

  it("driven through the replay adapter: 60 ticks to 600 s, throughput at 300 s and 600 s with 300 s of merged traffic", () => {
    const adapter = new PlannerReplayAdapter(core, { prefill: 0, decode: 1 }, { status: "installed" });
    expect(adapter.initialTickMs()).toBe(10_000);
    const ticks = drive(adapter, 600_000);
    expect(ticks).toHaveLength(60);
    expect(ticks.map((t) => t.at_ms)).toEqual(Array.from({ length: 60 }, (_, i) => 10_000 * (i + 1)));
    expect(ticks.every((t) => t.runtime_decision.next_tick_ms === t.at_ms + 10_000)).toBe(true);
    expect(ticks.every((t) => t.scheduled_tick.run_load_scaling)).toBe(true);
    const thr = ticks.filter((t) => t.scheduled_tick.run_throughput_scaling);
    expect(thr.map((t) => t.at_ms)).toEqual([300_000, 600_000]);
    // As the reference's ticks read: the throughput loop's window is its full 300 s interval; every
    // tick reads worker states and, with the load loop, FPMs; a tick announces the next one.
    for (const t of ticks) {
      const st = t.scheduled_tick;
      expect(st.at_monotonic_s).toBe(st.at_s);
      expect(st.use_full_traffic_metrics).toBe(st.run_throughput_scaling);
      expect(st.traffic_metrics_duration_s).toBe(st.run_throughput_scaling ? 300 : 0);
      expect(st.need_worker_states && st.need_worker_fpm).toBe(true);
    }
    for (let i = 0; i + 1 < ticks.length; i++)
      expect(ticks[i].effects.next_tick).toEqual(ticks[i + 1].scheduled_tick);
    // Traffic is consumed only there: 30 windows of 10 s merged, lengths weighted by completed shapes.
    for (const t of ticks) {
      if (t.scheduled_tick.run_throughput_scaling) {
        expect(t.input.traffic).toEqual({
          duration_s: 300,
          num_req: 30,
          isl: 100,
          osl: 10,
          // No KV-routed admission in the window: 0, as the reference's replay reports it.
          kv_hit_rate: 0,
          accept_length: 1,
        });
        expect(t.effects.diagnostics["throughput_decision_reason"]).toBeDefined();
      } else {
        expect(t.input.traffic).toBeNull();
        expect(t.effects.diagnostics["throughput_decision_reason"]).toBeNull();
      }
      // No FPM in these snapshots: the load loop runs every tick and reports it.
      expect(t.effects.diagnostics["load_decision_reason"]).toBe("no_fpm_data");
      // Stopped at that gate, no role's decision ran: no metadata flag.
      expect(t.effects.diagnostics["load_metadata_available"]).toEqual({});
      // The throughput loop sizes the aggregated pool whenever it sees demand.
      expect(t.effects.diagnostics["throughput_metadata_available"]).toEqual(
        t.scheduled_tick.run_throughput_scaling ? { decode: true } : {},
      );
      // Every key of the reference's `TickDiagnostics` (ai-dynamo 1.6.0.dev20261023), the plugin
      // pipeline's as a pipeline with no plugins writes them.
      expect(Object.keys(t.effects.diagnostics).sort()).toEqual(REFERENCE_DIAGNOSTIC_KEYS);
      expect(t.effects.diagnostics).toMatchObject({
        execute_action: "apply",
        short_circuit_reason: "",
        audit_events: [],
        held_over_plugins: [],
        plugin_overrides: [],
        reconcile_reasons: {},
      });
      expect(t.effects.batch_drain_limits).toEqual([]);
    }
  });
});

describe("sla load 7 s / throughput 180 s ⇒ scale interval 1 s", () => {
  const { core, settings } = slaPlanner(7, 180, "  load_predictor: constant\n");

  it("the loader derives the millisecond gcd 1 s", () => {
    expect(settings).toMatchObject({
      scaleIntervalS: 1,
      loadAdjustmentIntervalS: 7,
      throughputAdjustmentIntervalS: 180,
    });
  });

  it("over 1260 one-second ticks: load every 7 s (180×), throughput every 180 s (7×), both only at 1260 s", () => {
    expect(core.initialTickS(0)).toBe(1);
    const load: number[] = [];
    const thr: number[] = [];
    const idle: number[] = [];
    for (let t = 1; t <= 1260; t++) {
      const s = core.schedule(t);
      if (s.runLoadScaling) load.push(t);
      if (s.runThroughputScaling) thr.push(t);
      if (!s.runLoadScaling && !s.runThroughputScaling) idle.push(t);
      expect(s.needTrafficMetrics).toBe(s.runThroughputScaling);
    }
    expect(load).toEqual(Array.from({ length: 180 }, (_, i) => 7 * (i + 1)));
    expect(thr).toEqual([180, 360, 540, 720, 900, 1080, 1260]);
    expect(load.filter((t) => thr.includes(t))).toEqual([1260]);
    expect(idle).toHaveLength(1260 - 180 - 7 + 1);
  });

  it("driven through the replay adapter: a tick every second from 1 s, the loops only when due", () => {
    const adapter = new PlannerReplayAdapter(core, { prefill: 0, decode: 1 }, { status: "installed" });
    expect(adapter.initialTickMs()).toBe(1000);
    const ticks = drive(adapter, 181_000);
    expect(ticks).toHaveLength(181);
    expect(ticks.map((t) => t.at_ms)).toEqual(Array.from({ length: 181 }, (_, i) => 1000 * (i + 1)));
    for (const t of ticks) {
      const s = t.at_ms / 1000;
      expect(t.scheduled_tick.run_load_scaling).toBe(s % 7 === 0);
      expect(t.scheduled_tick.run_throughput_scaling).toBe(s === 180);
      expect(t.effects.diagnostics["load_decision_reason"] !== null).toBe(s % 7 === 0);
      expect(t.effects.diagnostics["throughput_decision_reason"] !== null).toBe(s === 180);
    }
    // 180 one-second windows merged into the throughput tick's observation.
    expect(ticks[179].input.traffic).toMatchObject({ duration_s: 180, num_req: 180 });
    // The window after it starts afresh.
    expect(ticks[180].input.traffic).toBeNull();
  });
});
