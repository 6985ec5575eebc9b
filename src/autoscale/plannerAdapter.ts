import { plannerConfigPayload } from "../knobs/planner.js";
import type {
  BootstrapInfo,
  FpmMetrics,
  FpmObservation,
  PlannerReport,
  PlannerTick,
  PoolTopologyRecord,
  ScalingEvent,
  TickDiagnosticsRecord,
} from "../output/planner.js";
import { canonicalJson } from "../planner/perfModel/bootstrap.js";
import { type PlannerCore, reportedScaleTo, type ScheduledTick } from "../planner/plannerCore.js";
import type {
  ForwardPassMetrics,
  PlannerEffects,
  PlannerSettings,
  ScalingDecision,
  TickDiagnostics,
  TrafficObservation,
  WorkerCounts,
} from "../planner/types.js";
import type {
  LifecycleOperation,
  PoolTopology,
  ScalingAction,
  ScalingPolicy,
  TickSnapshot,
  TrafficWindow,
} from "../sim/scaling.js";
import { emptyTrafficWindow, type MutableTrafficWindow } from "../sim/scaling.js";
import { sha256 } from "../util/sha256.js";
import type { RetuneController, RetuneTickResult } from "./retuneController.js";

/** The planner report's types live with the prediction.json contract (src/output/planner.ts). */
export type { BootstrapInfo, PlannerReport, ScalingEvent };

type Role = "prefill" | "decode";

/**
 * Drives a PlannerCore from the replay's ticks, as the Dynamo `ReplayPlannerAdapter` does
 * (`ai-dynamo/dynamo@84809e0:components/src/dynamo/planner/offline/replay_adapter.py`): builds the tick input (ready and expected worker counts, the latest FPM of
 * ready workers, traffic merged until a tick consumes it), turns decisions into replica targets,
 * remembers each target until the pool's non-draining count reaches it (scaling in progress
 * meanwhile), and records every tick and scaling event.
 *
 * Advisory mode runs every decision and applies none: targets are never returned, the Planner
 * sees its starting replicas as ready and expected, and changes go to
 * `recommended_scaling_events` instead of `scaling_events`.
 */
export class PlannerReplayAdapter implements ScalingPolicy {
  private readonly target: Record<Role, number | null> = { prefill: null, decode: null };
  private readonly recommended: Record<Role, number | null> = { prefill: null, decode: null };
  private readonly startCount: Record<Role, number>;
  private pending: MergedTraffic = emptyTrafficWindow();
  private readonly scalingEvents: ScalingEvent[] = [];
  private readonly recommendedEvents: ScalingEvent[] = [];
  private readonly ticks: PlannerTick[] = [];

  constructor(
    private readonly core: PlannerCore,
    start: { prefill: number; decode: number },
    private readonly bootstrap: BootstrapInfo,
    /** The retune controller when `planner.retune` is set (retune-only router retune). */
    readonly retune: RetuneController | null = null,
    /** Whether the workers speculate (`engine.speculation`): the accept length is then observed. */
    private readonly speculating = false,
  ) {
    this.startCount = { prefill: start.prefill, decode: start.decode };
    this.startSettings = core.settings;
  }

  private readonly startSettings: PlannerSettings;

  private get settings(): PlannerSettings {
    return this.core.settings;
  }

  initialTickMs(): number {
    return this.core.initialTickS(0) * 1000;
  }

  onTick(snap: TickSnapshot): ScalingAction {
    const s = this.settings;
    const disagg = s.mode === "disagg";
    const nowS = snap.nowMs / 1000;
    const scheduled = this.core.schedule(nowS);
    mergeInto(this.pending, snap.traffic);
    let traffic: TrafficObservation | null = null;
    if (scheduled.needTrafficMetrics) {
      traffic = observationOf(this.pending, this.speculating);
      this.pending = emptyTrafficWindow();
    }
    const workers = this.workerCounts(snap, disagg);
    const effects = this.core.tick({
      nowS,
      traffic,
      workers,
      fpmPrefill: disagg ? (snap.prefillFpm ?? []) : null,
      fpmDecode: snap.decodeFpm,
    });
    let targetPrefill: number | null = null;
    let targetDecode: number | null = null;
    if (effects.scaleTo !== null) {
      if (disagg && effects.scaleTo.numPrefill !== null) {
        targetPrefill = this.decide("prefill", effects.scaleTo.numPrefill, snap.prefillTopology!, nowS);
      }
      if (effects.scaleTo.numDecode !== null) {
        targetDecode = this.decide("decode", effects.scaleTo.numDecode, snap.decodeTopology, nowS);
      }
    }
    // With load scaling on, the throughput loop only sets lower bounds: the load loop decides.
    const decided = scheduled.runLoadScaling || (scheduled.runThroughputScaling && !s.enableLoadScaling);
    if (s.advisory && decided) {
      // A decision that keeps a component at its current count resets that component's
      // recommendation (seed 000, advisory); a tick on which no deciding loop ran decided nothing.
      if (effects.scaleTo?.numPrefill == null) this.recommended.prefill = null;
      if (effects.scaleTo?.numDecode == null) this.recommended.decode = null;
    }
    const nextTickMs = effects.nextTickS * 1000;
    // Retune runs after the scaling pipeline (docs/retune.md §9 "Within a tick").
    const retune =
      this.retune?.onTick(snap.nowMs, {
        prefill: disagg ? snap.prefillTopology!.active.length : null,
        decode: snap.decodeTopology.active.length,
      }) ?? null;
    this.ticks.push(
      tickRecord(
        snap,
        scheduled,
        this.core.schedule(effects.nextTickS),
        traffic,
        workers,
        effects,
        targetPrefill,
        targetDecode,
        nextTickMs,
        disagg,
        retune,
      ),
    );
    // An applied decision's Planner fields take effect from the next tick (docs/retune.md §9).
    const update = retune?.plannerUpdate ?? null;
    if (update !== null) {
      this.core.updateSettings(
        update.settings,
        update.predictors === undefined ? {} : { predictors: update.predictors },
      );
    }
    const routerParameters = retune?.routerParameters ?? null;
    if (routerParameters === null) return { targetPrefill, targetDecode, nextTickMs };
    return { targetPrefill, targetDecode, nextTickMs, routerParameters };
  }

  pendingWork(): Promise<void> | null {
    return this.retune?.pendingWork() ?? null;
  }

  abort(): void {
    this.retune?.abort();
  }

  /** The planner section of prediction.json. */
  report(lifecycle: readonly LifecycleOperation[]): PlannerReport {
    // The configuration the run started with (retune may change Planner fields between ticks);
    // the knob table (knobs/planner.ts) names its fields.
    const s = this.startSettings;
    const config = plannerConfigPayload(s);
    const report: PlannerReport = {
      metadata: {
        mode: s.mode,
        advisory: s.advisory,
        planner_config_digest: sha256().update(canonicalJson(config)).digest("hex"),
        planner_config: config,
        builtin_plugin_ids: builtinPlugins(s),
        plugin_pipeline: ["observe", "predict", "propose", "reconcile", "constrain", "execute"],
        pipeline_schema_version: "planner-plugin-pipeline.v1",
        scale_interval_seconds: s.scaleIntervalS,
        bootstrap: this.bootstrap,
        details_captured: true,
      },
      scaling_events: this.scalingEvents,
      lifecycle_operations: lifecycle,
      ticks: this.ticks,
      total_ticks: this.ticks.length,
      html_report_path: null,
    };
    if (s.advisory) report.recommended_scaling_events = this.recommendedEvents;
    if (this.retune !== null) report.retune_events = [...this.retune.retuneEvents];
    return report;
  }

  private workerCounts(snap: TickSnapshot, disagg: boolean): WorkerCounts {
    if (this.settings.advisory) {
      // Nothing ever changes: the starting replicas are ready and expected.
      return {
        readyPrefill: disagg ? this.startCount.prefill : null,
        readyDecode: this.startCount.decode,
        expectedPrefill: disagg ? this.startCount.prefill : null,
        expectedDecode: this.startCount.decode,
        prefillScalingInProgress: false,
        decodeScalingInProgress: false,
      };
    }
    const pre = disagg ? this.roleCounts("prefill", snap.prefillTopology!) : null;
    const dec = this.roleCounts("decode", snap.decodeTopology);
    return {
      readyPrefill: pre?.ready ?? null,
      readyDecode: dec.ready,
      expectedPrefill: pre?.expected ?? null,
      expectedDecode: dec.expected,
      prefillScalingInProgress: pre?.inProgress ?? false,
      decodeScalingInProgress: dec.inProgress,
    };
  }

  /** Ready count, and expected = the pending target until the non-draining count reaches it. */
  private roleCounts(
    role: Role,
    topo: PoolTopology,
  ): { ready: number; expected: number; inProgress: boolean } {
    const nonDraining = topo.active.length + topo.starting.length;
    if (this.target[role] !== null && this.target[role] === nonDraining) this.target[role] = null;
    const target = this.target[role];
    return { ready: topo.active.length, expected: target ?? nonDraining, inProgress: target !== null };
  }

  /** Records a decision for one role; returns the target to apply (null in advisory mode). */
  private decide(role: Role, to: number, topo: PoolTopology, nowS: number): number | null {
    const s = this.settings;
    const component = s.mode === "agg" ? "agg" : role;
    if (s.advisory) {
      const from = this.startCount[role];
      if (to !== from && to !== this.recommended[role]) {
        this.recommendedEvents.push({
          at_s: nowS,
          component,
          from_count: from,
          to_count: to,
          reason: to > from ? "scale_up" : "scale_down",
        });
      }
      this.recommended[role] = to === from ? null : to;
      return null;
    }
    const from = topo.active.length + topo.starting.length;
    if (to === from) return null;
    this.scalingEvents.push({
      at_s: nowS,
      component,
      from_count: from,
      to_count: to,
      reason: to > from ? "scale_up" : "scale_down",
    });
    this.target[role] = to;
    return to;
  }
}

/** Windows merged until a tick consumes them. */
type MergedTraffic = MutableTrafficWindow;

/** Windows merge until a tick consumes them: durations and counts add, averages weight by count. */
function mergeInto(m: MergedTraffic, w: TrafficWindow): void {
  m.durationS += w.durationS;
  m.numReq += w.numReq;
  m.shapeCount += w.shapeCount;
  m.sumIsl += w.sumIsl;
  m.sumOsl += w.sumOsl;
  m.hitRateCount += w.hitRateCount;
  m.sumKvHitRate += w.sumKvHitRate;
  m.acceptForwards += w.acceptForwards;
  m.acceptTokens += w.acceptTokens;
}

function observationOf(m: MergedTraffic, speculating: boolean): TrafficObservation | null {
  if (m.durationS <= 0) return null;
  return {
    durationS: m.durationS,
    numReq: m.numReq,
    isl: m.shapeCount > 0 ? m.sumIsl / m.shapeCount : 0,
    osl: m.shapeCount > 0 ? m.sumOsl / m.shapeCount : 0,
    // 0 for a window without KV-routed admissions, as the reference's replay reports it
    // (`ai-dynamo/dynamo@fe06e46:lib/mocker/src/replay/offline/components/types.rs` `drain`).
    kvHitRate: m.hitRateCount > 0 ? m.sumKvHitRate / m.hitRateCount : 0,
    acceptLength: acceptLengthOf(m, speculating),
  };
}

/**
 * The window's accept length (`ai-dynamo/dynamo@fdf4b3d:lib/mocker/src/replay/offline/planner_hook.rs` `avg_accept_length`): tokens emitted per decode
 * forward, merged by forward count. Speculating workers report the mean over the sequence passes
 * that verified drafts (vLLM's mean acceptance length), none for a window without such a pass, so
 * the Planner keeps its last value. Without speculation every forward emits one token: 1 for a
 * window with completed requests, as before speculation was simulated.
 */
export function acceptLengthOf(m: TrafficWindow, speculating: boolean): number | null {
  if (!speculating) return m.shapeCount > 0 ? 1 : null;
  return m.acceptForwards > 0 ? m.acceptTokens / m.acceptForwards : null;
}

function builtinPlugins(s: PlannerSettings): string[] {
  const ids: string[] = [];
  if (s.enableThroughputScaling) ids.push("builtin_load_predict", "builtin_throughput_propose");
  if (s.enableLoadScaling) ids.push("builtin_load_propose");
  return ids;
}

function fpmRecord(f: ForwardPassMetrics): FpmMetrics {
  return {
    version: 1,
    worker_id: String(f.workerId),
    dp_rank: f.dpRank,
    counter_id: 0,
    wall_time: f.wallTimeS,
    scheduled_requests: {
      num_prefill_requests: f.numPrefillRequests,
      sum_prefill_tokens: f.sumPrefillTokens,
      sum_prefill_kv_tokens: f.sumPrefillKvTokens,
      var_prefill_length: f.varPrefillLength,
      num_decode_requests: f.numDecodeRequests,
      sum_decode_kv_tokens: f.sumDecodeKvTokens,
      var_decode_kv_tokens: f.varDecodeKvTokens,
    },
    queued_requests: {
      num_prefill_requests: f.numQueuedPrefill,
      sum_prefill_tokens: f.sumQueuedPrefillTokens,
      var_prefill_length: f.varQueuedPrefillLength,
      num_decode_requests: f.numQueuedDecode,
      sum_decode_kv_tokens: f.sumQueuedDecodeKvTokens,
      var_decode_kv_tokens: f.varQueuedDecodeKvTokens,
    },
  };
}

function fpmList(list: readonly ForwardPassMetrics[] | null): FpmObservation[] | null {
  if (list === null) return null;
  return list.map((f) => ({ worker_id: String(f.workerId), dp_rank: f.dpRank, metrics: fpmRecord(f) }));
}

const EMPTY_POOL: PoolTopologyRecord = {
  active: [],
  active_count: 0,
  starting: [],
  starting_count: 0,
  draining: [],
  draining_count: 0,
};

function topologyRecord(t: PoolTopology | null): PoolTopologyRecord | null {
  if (t === null) return null;
  return {
    active: t.active,
    active_count: t.active.length,
    starting: t.starting,
    starting_count: t.starting.length,
    draining: t.draining,
    draining_count: t.draining.length,
  };
}

/** A `ScheduledTick` as the tick records write it. */
function scheduledRecord(t: ScheduledTick): PlannerTick["scheduled_tick"] {
  return {
    at_s: t.atS,
    at_monotonic_s: t.atS,
    run_load_scaling: t.runLoadScaling,
    run_throughput_scaling: t.runThroughputScaling,
    need_traffic_metrics: t.needTrafficMetrics,
    use_full_traffic_metrics: t.useFullTrafficMetrics,
    traffic_metrics_duration_s: t.trafficMetricsDurationS,
    need_worker_states: true,
    need_worker_fpm: t.needWorkerFpm,
  };
}

/** A tick's `scale_to` (`PlannerEffects.scale_to`, reference key names). */
function scaleToRecord(d: ScalingDecision | null): PlannerTick["effects"]["scale_to"] {
  return d === null ? null : { num_prefill: d.numPrefill, num_decode: d.numDecode };
}

function tickRecord(
  snap: TickSnapshot,
  scheduled: ScheduledTick,
  next: ScheduledTick,
  traffic: TrafficObservation | null,
  workers: WorkerCounts,
  effects: PlannerEffects,
  targetPrefill: number | null,
  targetDecode: number | null,
  nextTickMs: number,
  disagg: boolean,
  retune: RetuneTickResult | null,
): PlannerTick {
  const record: PlannerTick = {
    ordinal: snap.tickOrdinal,
    at_ms: snap.nowMs,
    scheduled_tick: scheduledRecord(scheduled),
    input: {
      now_s: scheduled.atS,
      traffic:
        traffic === null
          ? null
          : {
              duration_s: traffic.durationS,
              num_req: traffic.numReq,
              isl: traffic.isl,
              osl: traffic.osl,
              kv_hit_rate: traffic.kvHitRate,
              accept_length: traffic.acceptLength,
            },
      worker_counts: {
        ready_num_prefill: workers.readyPrefill,
        ready_num_decode: workers.readyDecode,
        expected_num_prefill: workers.expectedPrefill,
        expected_num_decode: workers.expectedDecode,
        prefill_scaling_in_progress: workers.prefillScalingInProgress,
        decode_scaling_in_progress: workers.decodeScalingInProgress,
        // A replay provisions a scale-up at once (starting workers), so nothing is ever pending.
        pending_num_prefill: 0,
        pending_num_decode: 0,
      },
      fpm_observations: {
        prefill: disagg ? fpmList(snap.prefillFpm) : null,
        decode: fpmList(snap.decodeFpm),
      },
    },
    // An aggregated deployment has no prefill pool: the reference records it empty.
    topology: {
      prefill: disagg ? topologyRecord(snap.prefillTopology) : EMPTY_POOL,
      decode: topologyRecord(snap.decodeTopology),
    },
    effects: {
      scale_to: scaleToRecord(reportedScaleTo(effects.scaleTo, workers, disagg ? "disagg" : "agg")),
      next_tick: scheduledRecord(next),
      diagnostics: diagnosticsRecord(effects.diagnostics),
      // No plugin limits how fast a batch of workers drains.
      batch_drain_limits: [],
    },
    runtime_decision: {
      target_prefill: targetPrefill,
      target_decode: targetDecode,
      next_tick_ms: nextTickMs,
      router_parameters: retune?.desiredRouterParameters ?? null,
    },
  };
  // With retune, each router's revision and parameters before this tick's update (§10).
  if (retune !== null) record.router_policies = retune.routerPolicies;
  // With `retune.planner`: the retunable Planner fields this tick ran with (live names).
  if (retune?.plannerFields != null) record.retune_planner_fields = retune.plannerFields;
  return record;
}

/**
 * The prediction.json name of each `TickDiagnostics` field: a field added on either side without
 * its pair here does not compile.
 */
const DIAGNOSTIC_NAMES: {
  readonly [K in keyof Required<Omit<TickDiagnostics, RoleFlagDiagnostics>>]: keyof TickDiagnosticsRecord;
} = {
  estimatedTtftMs: "estimated_ttft_ms",
  estimatedItlMs: "estimated_itl_ms",
  predictedNumReq: "predicted_num_req",
  predictedIsl: "predicted_isl",
  predictedOsl: "predicted_osl",
  predictedKvHitRate: "predicted_kv_hit_rate",
  engineRpsPrefill: "engine_rps_prefill",
  engineRpsDecode: "engine_rps_decode",
  throughputLowerBoundPrefill: "throughput_lower_bound_prefill",
  throughputLowerBoundDecode: "throughput_lower_bound_decode",
  loadDecisionReason: "load_decision_reason",
  loadDecisionReasonPrefill: "load_decision_reason_prefill",
  loadDecisionReasonDecode: "load_decision_reason_decode",
  throughputDecisionReason: "throughput_decision_reason",
  throughputDecisionReasonPrefill: "throughput_decision_reason_prefill",
  throughputDecisionReasonDecode: "throughput_decision_reason_decode",
};

/** The per-role flag fields of `TickDiagnostics`: objects, `{}` when the tick set none. */
type RoleFlagDiagnostics = "loadMetadataAvailable" | "throughputMetadataAvailable";

/**
 * `TickDiagnostics` in snake_case, every field: null where the tick did not compute it, `{}` for a
 * per-role flag it set for no role, as the reference writes them. Then the plugin pipeline's
 * fields (`dynamo/planner/plugins/orchestrator/pipeline.py` in ai-dynamo 1.6.0.dev20261023): the
 * Planner here is that pipeline with no plugins, whose every tick applies its proposal with
 * nothing overridden, held over or short-circuited, as the reference writes on every tick of the
 * seed walkthroughs.
 */
function diagnosticsRecord(d: TickDiagnostics): TickDiagnosticsRecord {
  const out: Record<string, unknown> = {};
  for (const [k, name] of Object.entries(DIAGNOSTIC_NAMES) as [keyof TickDiagnostics, string][]) {
    out[name] = d[k] ?? null;
  }
  out.load_metadata_available = d.loadMetadataAvailable ?? {};
  out.throughput_metadata_available = d.throughputMetadataAvailable ?? {};
  out.execute_action = "apply";
  out.short_circuit_reason = "";
  out.audit_events = [];
  out.held_over_plugins = [];
  out.plugin_overrides = [];
  out.reconcile_reasons = {};
  return out as TickDiagnosticsRecord;
}
