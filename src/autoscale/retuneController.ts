/**
 * The retune controller in the replay (docs/retune.md §4–§10): retune-only KV-router retune (seed 000
 * Scenario 1: replica counts fixed, no inner Planner) and retune with scaling on (Scenario 2: each
 * candidate replay runs an inner Planner with the candidate's Planner fields; with throughput scaling
 * the history is bucketed for the load-predictor pre-sweep, a predictor swap and the inner Planner's
 * warm-up). An applied decision's Planner fields go back to the adapter, which applies them after
 * the decision tick.
 *
 * On every Planner tick (after the scaling pipeline) the controller records the ready worker counts,
 * records a decision whose decision tick has come (switching the router parameters when `applied`),
 * and launches the sweep of the window that came due: the window's rows of the Dynamo trace, one
 * `replay` sweep job per distinct candidate (the run's spec with the candidate's router parameters,
 * the ready counts at the window start, no Planner), scored and decided at once. The virtual clock
 * stands still while the sweep runs (the replay awaits `pendingWork()`), so the decision — and with
 * `measured` its latency — is known in the launch tick; it is recorded and takes effect on its
 * decision tick.
 */
import type { RunSpec } from "../config/runSpec.js";
import { seriesPredictorsOf } from "../planner/plannerCore.js";
import type { SeriesPredictors, WarmupWindow } from "../planner/predictors/series.js";
import {
  bucketsEndingAt,
  type CandidateResult,
  type CandidateSummary,
  candidateSet,
  decideWindow,
  formatWindowCounts,
  type LiveValue,
  livePlannerFields,
  observationCount,
  type PredictorPresweepRecord,
  predictorKey,
  presweepRecord,
  type RetuneDecision,
  type RetuneEventRecord,
  type RetunePoint,
  type RetuneWindow,
  ROUTER_LIVE_NAMES,
  type RouterParameters,
  replayGroups,
  runPresweep,
  type SweepReport,
  selectWindowRows,
  startupPoint,
  type WindowAttempt,
  windowDueAtTick,
  withPredictorWinner,
} from "../planner/retune/index.js";
import type { PlannerSettings, RetuneSettings } from "../planner/types.js";
import type { DynamoRequests } from "../traffic/dynamo/index.js";
import type { CandidateJob, CandidateReplays } from "./candidateReplays.js";

/** Ready worker counts of one tick (prefill null in an aggregated deployment). */
export interface ReadyCounts {
  readonly prefill: number | null;
  readonly decode: number;
}

/** What one sweep's process pool did (diagnostics; not part of prediction.json). */
export interface RetuneSweepInfo {
  readonly windowIndex: number;
  readonly jobs: number;
  /** Worker processes it started: its pool's first sweep starts them, later ones reuse them. */
  readonly processesStarted: number;
  /** Worker processes that ran its jobs. */
  readonly workers: number;
  /** Size of the window's request table as sent to each worker (serialized), bytes. */
  readonly tableBytes: number;
  readonly wallS: number;
  readonly timedOut: boolean;
}

/** One router's policy state as a tick records it (`router_policies`, docs/retune.md §10). */
export interface RouterPolicyState {
  readonly worker_type: string;
  readonly revision: number;
  readonly parameters: Readonly<Record<string, number>>;
}

/** What the controller asks of the replay at a tick. */
export interface RetuneTickResult {
  /** Router parameters to patch in now (an `applied` decision's tick), else null. */
  readonly routerParameters: RouterParameters | null;
  /** `runtime_decision.router_parameters`: the desired map per worker type, or null (§9, §10). */
  readonly desiredRouterParameters: Readonly<Record<string, Readonly<Record<string, number>>>> | null;
  /** Each router's revision and parameters before this tick's update. */
  readonly routerPolicies: readonly RouterPolicyState[];
  /**
   * An `applied` decision's Planner fields, to apply after this tick (so from the next tick): the
   * settings partial and, when it swaps the load predictor, the predictor prepared on its warm-up.
   */
  readonly plannerUpdate: {
    readonly settings: Partial<PlannerSettings>;
    readonly predictors?: SeriesPredictors;
  } | null;
  /** With `retune.planner`: the Planner fields (live names) this tick ran with; else null. */
  readonly plannerFields: Readonly<Record<string, LiveValue>> | null;
}

/** The Planner settings a point sets: its Planner fields and its predictor's defined fields. */
function plannerSettingsOf(point: RetunePoint): Partial<PlannerSettings> {
  const out: Record<string, unknown> = { ...point.planner };
  for (const [k, v] of Object.entries(point.predictor)) if (v !== undefined) out[k] = v;
  return out as Partial<PlannerSettings>;
}

/** A relative tolerance for tick times (seconds on a binary grid). */
const EPS = 1e-9;

function liveRouter(p: RouterParameters): Record<string, number> {
  return {
    [ROUTER_LIVE_NAMES.overlapScoreCredit]: p.overlapScoreCredit,
    [ROUTER_LIVE_NAMES.prefillLoadScale]: p.prefillLoadScale,
    [ROUTER_LIVE_NAMES.temperature]: p.temperature,
  };
}

export class RetuneController {
  private readonly retune: RetuneSettings;
  private readonly planner: PlannerSettings;
  private readonly startup: RetunePoint;
  private current: RetunePoint;
  /** The router parameters in force (the startup ones until an `applied` decision switches them). */
  private inForce: RouterParameters | null;
  private revision = 0;
  private readonly workerTypes: readonly string[];
  /** Ready counts per tick, keyed by whole virtual milliseconds. */
  private readonly readyAt = new Map<number, ReadyCounts>();
  /** Decided, waiting for its decision tick. */
  private pending: RetuneDecision | null = null;
  private work: Promise<void> | null = null;
  private readonly aborter = new AbortController();
  private ordinal = 0;
  private readonly events: RetuneEventRecord[] = [];
  private readonly sweeps: RetuneSweepInfo[] = [];
  private readonly completion: Float64Array;
  private readonly clock: { originMs: number; speedup: number };
  /** A predictor prepared for the pending decision's swap, or null. */
  private pendingPredictors: SeriesPredictors | null = null;
  /** The point whose Planner fields the Planner runs with (changes apply after the decision tick). */
  private plannerInForce: RetunePoint;
  private readonly searchesPlanner: boolean;
  private inFlight: { readonly windowIndex: number; readonly candidates: number } | null = null;

  constructor(
    private readonly spec: RunSpec,
    private readonly requests: DynamoRequests,
    start: ReadyCounts,
    /** Runs the candidate replays of a window (the pipeline's sweep workers). */
    private readonly replays: CandidateReplays,
    private readonly log: (line: string) => void = () => {},
    /** `load_predictor_warmup_trace` (a Dynamo trace before the replayed one), or null. */
    private readonly history: DynamoRequests | null = null,
  ) {
    const planner = spec.planner;
    const retune = planner?.retune;
    if (planner === null || retune === undefined || retune === null) {
      throw new Error("internal: RetuneController needs planner.retune");
    }
    this.planner = planner;
    this.retune = retune;
    this.startup = startupPoint(spec.router, planner);
    this.current = this.startup;
    this.plannerInForce = this.startup;
    this.searchesPlanner = retune.plannerDimensions.length > 0 || retune.loadPredictorCandidates !== null;
    this.inForce = this.startup.router;
    this.workerTypes = spec.engine.mode === "aggregated" ? ["aggregated"] : ["prefill", "decode"];
    // The replay starts with its replicas ready at t = 0, the first window's start (**fleetsim
    // choice**: the first tick fires one Δ later, so this count is recorded here).
    this.readyAt.set(0, start);
    // A row without `total_time_ms` has no known completion and cannot be censored (§4).
    const n = requests.count;
    this.completion = new Float64Array(n);
    for (let i = 0; i < n; i++)
      this.completion[i] = requests.completionKnown[i] ? requests.endMs[i] : Number.NaN;
    const speedup = spec.load.type === "trace_timestamps" ? spec.load.speedup : 1;
    this.clock = { originMs: n > 0 ? requests.startMs[0] : 0, speedup };
  }

  /** `planner.retune_events`: every decision whose decision tick came. */
  get retuneEvents(): readonly RetuneEventRecord[] {
    return this.events;
  }

  /** The sweeps run so far (process counts; diagnostics and tests). */
  get sweepInfo(): readonly RetuneSweepInfo[] {
    return this.sweeps;
  }

  /** The sweep in flight: its window and candidate count (the progress line shows it), else null. */
  get sweepProgress(): { readonly windowIndex: number; readonly candidates: number } | null {
    return this.inFlight;
  }

  /** Stops a sweep in flight (its workers are killed); later sweeps start already stopped. */
  abort(): void {
    this.aborter.abort();
  }

  /** The sweep the last tick launched, until the replay has awaited it. */
  pendingWork(): Promise<void> | null {
    const w = this.work;
    this.work = null;
    return w;
  }

  /** One Planner tick at `nowMs`, after the scaling pipeline (docs/retune.md §9 "Within a tick"). */
  onTick(nowMs: number, ready: ReadyCounts): RetuneTickResult {
    const policies = this.routerPolicies();
    this.readyAt.set(Math.round(nowMs), ready);
    const nowS = nowMs / 1000;
    const tickS = this.planner.scaleIntervalS;
    let patch: RouterParameters | null = null;
    const plannerFields = this.searchesPlanner ? livePlannerFields(this.plannerInForce) : null;
    let plannerUpdate: RetuneTickResult["plannerUpdate"] = null;

    const pending = this.pending;
    if (pending !== null && pending.timing !== null && nowS >= pending.timing.decidedAtS * (1 - EPS) - EPS) {
      this.pending = null;
      const prepared = this.pendingPredictors;
      this.pendingPredictors = null;
      this.events.push(pending.record);
      this.current = pending.current;
      if (pending.routerParameters !== null && this.retune.router !== null) {
        patch = pending.routerParameters;
        this.inForce = patch;
        this.revision++;
      }
      if (pending.record.outcome === "applied" && Object.keys(pending.plannerChanges).length > 0) {
        // Applied after this tick's pipeline ran: the Planner uses them from the next tick (§9).
        const swaps = predictorKey(pending.current.predictor) !== predictorKey(this.plannerInForce.predictor);
        plannerUpdate =
          swaps && prepared !== null
            ? { settings: plannerSettingsOf(pending.current), predictors: prepared }
            : { settings: plannerSettingsOf(pending.current) };
        this.plannerInForce = pending.current;
      }
    }

    const window = windowDueAtTick(nowS, this.retune, tickS);
    if (window !== null) this.launch(window);

    return {
      routerParameters: patch,
      desiredRouterParameters: this.desired(),
      routerPolicies: policies,
      plannerUpdate,
      plannerFields,
    };
  }

  private desired(): Record<string, Record<string, number>> | null {
    if (this.retune.router === null || this.planner.advisory || this.inForce === null) return null;
    const map: Record<string, Record<string, number>> = {};
    for (const t of this.workerTypes) map[t] = liveRouter(this.inForce);
    return map;
  }

  private routerPolicies(): RouterPolicyState[] {
    const p = this.inForce;
    if (p === null) return [];
    return this.workerTypes.map((t) => ({
      worker_type: t,
      revision: this.revision,
      parameters: liveRouter(t === "decode" ? { ...p, overlapScoreCredit: 0 } : p),
    }));
  }

  private decide(window: RetuneWindow, numRequests: number, attempt: WindowAttempt): RetuneDecision {
    this.ordinal++;
    return decideWindow(
      { ordinal: this.ordinal, window, numRequests, previous: this.current, attempt },
      {
        settings: this.retune,
        tickS: this.planner.scaleIntervalS,
        advisory: this.planner.advisory,
        predictorBase: this.planner,
      },
    );
  }

  /** Records a decision that needs no sweep (busy, not launched) on this tick. */
  private recordNow(decision: RetuneDecision): void {
    this.events.push(decision.record);
  }

  private launch(window: RetuneWindow): void {
    if (this.pending !== null) {
      // Never produced under the virtual clock (D and the timeout are at most T), kept for safety.
      this.recordNow(this.decide(window, 0, { kind: "busy" }));
      return;
    }
    const counts = this.readyAt.get(Math.round(window.startS * 1000));
    if (counts === undefined) {
      this.recordNow(
        this.decide(window, 0, {
          kind: "not_launched",
          reason: `no ready worker counts were recorded at the window start (${window.startS} s)`,
        }),
      );
      return;
    }
    if (counts.decode === 0 || counts.prefill === 0) {
      this.recordNow(
        this.decide(window, 0, {
          kind: "not_launched",
          reason: `a role had no ready worker at the window start (${window.startS} s)`,
        }),
      );
      return;
    }
    const r = this.requests;
    const throughput = !this.retune.retuneOnly && this.planner.enableThroughputScaling;
    const membership = selectWindowRows(
      { arrivalMs: r.startMs, completionMs: this.completion, requestId: r.requestIds },
      window,
      this.clock,
      throughput ? this.retune.historyS : null,
    );
    const rows = membership.window;
    // request_end rows without output_tokens that arrived in the window (the reader dropped them).
    let dropped = 0;
    for (const ms of r.droppedStartMs) if (ms >= membership.startMs && ms < membership.endMs) dropped++;
    this.log(
      formatWindowCounts(window, rows.length, { ...membership.counts, dropped, agentContextStripped: 0 }),
    );
    const set = candidateSet(this.retune, this.startup, this.current);
    // With throughput scaling: the history and window traffic, bucketed at the throughput interval (§5).
    const traffic = throughput ? this.trafficBuckets(membership) : null;
    let presweep: PredictorPresweepRecord | null = null;
    let candidates = set.candidates;
    let prepared: SeriesPredictors | null = null;
    const cands = this.retune.loadPredictorCandidates;
    if (traffic !== null && cands !== null && rows.length > 0) {
      const t0 = performance.now();
      const evalSteps = Math.ceil(this.retune.intervalS / this.planner.throughputAdjustmentIntervalS - 1e-9);
      const result = runPresweep(cands, this.planner, traffic.toWindowEnd, evalSteps);
      const winner = result.winner;
      candidates = withPredictorWinner(set, winner?.fields ?? null);
      if (winner !== null && predictorKey(winner.fields) !== predictorKey(this.current.predictor)) {
        // The swap's predictor, prepared on its warm-up traffic beside the sweep (§9 "Predictor swap").
        const p = seriesPredictorsOf({
          ...this.planner,
          ...plannerSettingsOf({ ...this.current, predictor: winner.fields }),
        });
        p.warm(traffic.toWindowEnd.map((b) => ({ numReq: b.numReq, avgIsl: b.avgIsl, avgOsl: b.avgOsl })));
        prepared = p;
      }
      presweep = presweepRecord(result, (performance.now() - t0) / 1000);
    }
    const warmupObservations = traffic === null ? null : observationCount(traffic.toWindowEnd);
    const base = { candidates, currentIndex: set.currentIndex, presweep };
    if (rows.length === 0) {
      const sweepReport: SweepReport = {
        ...base,
        wallS: 0,
        timedOut: false,
        error: null,
        results: [],
        predictorWarmupObservations: warmupObservations,
      };
      this.pending = this.decide(window, 0, { kind: "swept", sweep: sweepReport });
      return;
    }
    const groups = replayGroups(candidates);
    const innerWarmup = traffic?.toWindowStart;
    const jobs: CandidateJob[] = groups.map((g) => ({
      spec: this.candidateSpec(candidates[g.indices[0]].point, counts),
      capturePerRequest: false,
      ...(innerWarmup === undefined ? {} : { plannerWarmup: innerWarmup }),
    }));
    const started = performance.now();
    this.inFlight = { windowIndex: window.index, candidates: candidates.length };
    this.work = this.replays(
      { rows, jobs },
      {
        maxParallel: this.retune.maxParallel,
        timeoutMs: this.retune.timeoutS * 1000,
        signal: this.aborter.signal,
      },
    )
      .then(
        (outcome) => {
          const results: CandidateResult[] = new Array(candidates.length);
          groups.forEach((g, j) => {
            const res = outcome.results[j];
            const c: CandidateResult =
              res.status === "ok"
                ? { status: "ok", summary: res.value.summary as unknown as CandidateSummary }
                : res;
            for (const i of g.indices) results[i] = c;
          });
          const wallS = outcome.wallMs / 1000;
          this.sweeps.push({
            windowIndex: window.index,
            jobs: jobs.length,
            processesStarted: outcome.processesStarted,
            workers: outcome.pids.length,
            tableBytes: outcome.sharedBytes,
            wallS,
            timedOut: outcome.timedOut,
          });
          return { ...base, wallS, timedOut: outcome.timedOut, error: null, results };
        },
        (err: unknown) => ({
          ...base,
          wallS: (performance.now() - started) / 1000,
          timedOut: false,
          error: `the sweep failed: ${err instanceof Error ? err.message : String(err)}`,
          results: [],
        }),
      )
      .then((s) => {
        this.inFlight = null;
        const sweepReport: SweepReport = { ...s, predictorWarmupObservations: warmupObservations };
        this.pending = this.decide(window, rows.length, { kind: "swept", sweep: sweepReport });
        this.pendingPredictors = prepared;
      });
  }

  /**
   * The history (`history_seconds` before the window, from the replayed trace and
   * `load_predictor_warmup_trace`) and window traffic, bucketed at the throughput interval: ending
   * at the window end (pre-sweep, predictor swap) and ending at the window start (the inner Planner's
   * predictor warm-up). Trace milliseconds; warm-up trace rows are not censored (they ended before
   * the replay began).
   */
  private trafficBuckets(m: ReturnType<typeof selectWindowRows>): {
    toWindowEnd: WarmupWindow[];
    toWindowStart: WarmupWindow[];
  } {
    const r = this.requests;
    const h = this.history;
    const replayRows = [...m.history, ...m.window];
    const n = (h?.count ?? 0) + replayRows.length;
    const timestampMs = new Float64Array(n);
    const inputLength = new Int32Array(n);
    const outputLength = new Int32Array(n);
    let j = 0;
    if (h !== null) {
      for (let i = 0; i < h.count; i++, j++) {
        timestampMs[j] = h.startMs[i];
        inputLength[j] = h.inputLength[i];
        outputLength[j] = h.outputLength[i];
      }
    }
    for (const i of replayRows) {
      timestampMs[j] = r.startMs[i];
      inputLength[j] = r.inputLength[i];
      outputLength[j] = r.outputLength[i];
      j++;
    }
    const cols = { timestampMs, inputLength, outputLength };
    const intervalMs = this.planner.throughputAdjustmentIntervalS * 1000 * this.clock.speedup;
    const strip = (b: { numReq: number; avgIsl: number; avgOsl: number }): WarmupWindow => ({
      numReq: b.numReq,
      avgIsl: b.avgIsl,
      avgOsl: b.avgOsl,
    });
    return {
      toWindowEnd: bucketsEndingAt(cols, { startMs: m.historyStartMs, endMs: m.endMs }, intervalMs).map(
        strip,
      ),
      toWindowStart: bucketsEndingAt(cols, { startMs: m.historyStartMs, endMs: m.startMs }, intervalMs).map(
        strip,
      ),
    };
  }

  /**
   * The run's spec as one candidate replay: its router parameters, the recorded replicas; in
   * retune-only mode no Planner, with scaling on an inner Planner (the run's settings with the
   * candidate's Planner fields, retune removed, `advisory: false`; its predictor warm-up comes with
   * the job).
   */
  private candidateSpec(point: RetunePoint, counts: ReadyCounts): RunSpec {
    const spec = this.spec;
    const router =
      spec.router.policy === "kv_router" && point.router !== null
        ? { ...spec.router, ...point.router }
        : spec.router;
    const engine =
      spec.engine.mode === "aggregated"
        ? { ...spec.engine, aggregated: { ...spec.engine.aggregated, replicas: counts.decode } }
        : {
            ...spec.engine,
            prefill: { ...spec.engine.prefill, replicas: counts.prefill ?? spec.engine.prefill.replicas },
            decode: { ...spec.engine.decode, replicas: counts.decode },
          };
    const goodput = this.retune.objective === "Goodput" || this.retune.objective === "GoodputPerGPU";
    // The Goodput objectives score against the scoring SLA (§7); the others keep the run's own.
    const sla = goodput
      ? { ttftMs: this.retune.slaTtftMs, itlMs: this.retune.slaItlMs, e2eMs: null }
      : spec.sla;
    const planner: PlannerSettings | null = this.retune.retuneOnly
      ? null
      : {
          ...this.planner,
          ...plannerSettingsOf(point),
          retune: null,
          advisory: false,
          loadPredictorWarmupTrace: null,
        };
    return { ...spec, router, engine, sla, planner };
  }
}
