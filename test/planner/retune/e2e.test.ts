/**
 * Retune-only KV-router retune end to end (docs/retune.md, seed 000 Scenario 1): windows, sweeps in
 * worker processes, decisions, the switch, the report; aggregated and disaggregated deployments.
 */
import { describe, expect, it } from "vitest";
import type { RunSpec } from "../../../src/config/runSpec.js";
import { HOST_TIME_KEYS } from "../../../src/metrics/summary.js";
import { runPrediction } from "../../../src/pipeline/index.js";
import type { RetuneEventRecord } from "../../../src/planner/retune/index.js";
import { loadYaml, RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE } from "../../helpers/configHelpers.js";
import { dynamoTrace } from "../../helpers/dynamoTraces.js";

const TRACE = { "trace.jsonl": dynamoTrace(110, 60) };

function config(retune: string, router = "{policy: kv_router, temperature: 0.0}", planner?: string): string {
  return `traffic:
  source: {type: trace, format: dynamo, paths: [trace.jsonl]}
  load: {type: trace_timestamps}
${RUNNABLE_ENGINE}router: ${router}
planner:
${
  planner ??
  `  policy: enabled
  enable_load_scaling: false
  enable_throughput_scaling: false
`
}  retune:
${retune
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => `    ${l}`)
  .join("\n")}
evaluation:
  sla: {ttft_ms: 1500, itl_ms: 50}
`;
}

const REPLICAS = "engine.workers.aggregated.parallelism.replicas=3";

function spec(retune: string, sets: string[] = [], router?: string, planner?: string): RunSpec {
  return loadYaml(config(retune, router, planner), { files: TRACE, sets: [REPLICAS, ...sets] });
}

function events(out: Awaited<ReturnType<typeof runPrediction>>): RetuneEventRecord[] {
  return (out.prediction.planner?.retune_events ?? []) as RetuneEventRecord[];
}

const BASE = `interval_seconds: 30
grace_seconds: 5
max_parallel: 1
`;

/** Searches overlap credit only: 2 × 1 × 1 grid points, the startup credit (1.0) among them. */
const TWO_POINTS = `${BASE}router: {overlap_score_credit: {choices: [0.0, 1.0]}, prefill_load_scale: 1.0, temperature: 0.0}`;
/** 12 points under a latency objective with no threshold: some candidate beats the startup point. */
const TWELVE_POINTS = `${BASE}objective: TTFT
min_improvement_percentage: 0
router: {overlap_score_credit: {choices: [0.0, 1.0]}, prefill_load_scale: {choices: [0.0, 1.0, 4.0]}, temperature: {choices: [0.0, 1.0]}}`;

const RUN = { capturePerRequest: false };

interface Tick {
  at_ms: number;
  runtime_decision: { router_parameters: Record<string, Record<string, number>> | null };
  router_policies?: { worker_type: string; revision: number; parameters: Record<string, number> }[];
}

function ticks(out: Awaited<ReturnType<typeof runPrediction>>): Tick[] {
  return (out.prediction.planner?.ticks ?? []) as Tick[];
}

function tickAt(out: Awaited<ReturnType<typeof runPrediction>>, ms: number): Tick {
  const t = ticks(out).find((x) => x.at_ms === ms);
  if (t === undefined) throw new Error(`no tick at ${ms} ms`);
  return t;
}

const STARTUP_ROUTER = { overlap_score_credit: 1, prefill_load_scale: 1, router_temperature: 0 };

describe("retune-only router retune (seed 000 Scenario 1)", () => {
  it("records one decision per due window with the expected ids, windows and times", async () => {
    const s = spec(TWO_POINTS);
    expect(s.planner?.retune?.gridSize).toBe(2);
    const out = await runPrediction(s, RUN);
    const ev = events(out);
    // 110 s of traffic: windows 0–2 come due at 35, 65 and 95 s and decide one tick later (D = 0).
    expect(ev.map((e) => e.decision_id)).toEqual(["retune-1-w0", "retune-2-w1", "retune-3-w2"]);
    expect(ev.map((e) => [e.window_start_s, e.window_end_s])).toEqual([
      [0, 30],
      [30, 60],
      [60, 90],
    ]);
    expect(ev.map((e) => e.as_of_s)).toEqual([35, 65, 95]);
    expect(ev.map((e) => e.launched_at_s)).toEqual([35, 65, 95]);
    expect(ev.map((e) => e.decided_at_s)).toEqual([40, 70, 100]);
    for (const e of ev) {
      expect(e.num_candidates).toBe(2);
      expect(e.num_requests).toBeGreaterThan(0);
      expect(e.decision_latency_s).toBe(0);
      expect(e.sweep_wall_s).toBeGreaterThan(0);
      expect(e.baseline_score).not.toBeNull();
      // The current point is a candidate (the grid point equal to it): it is scored.
      expect(e.top.map(([p]) => p.router)).toContainEqual(e.previous.router);
    }
    expect(ev[0].previous.router).toEqual(STARTUP_ROUTER);
    // Every tick records the parameters in force and each router's state before the tick.
    for (const t of ticks(out)) {
      expect(Object.keys(t.runtime_decision.router_parameters ?? {})).toEqual(["aggregated"]);
      expect(t.router_policies?.map((p) => p.worker_type)).toEqual(["aggregated"]);
    }
    // One sweep per window, two replays each, in one worker process (max_parallel 1) that the
    // first sweep starts and the later ones reuse.
    expect(out.retuneSweeps?.map((x) => [x.windowIndex, x.jobs, x.workers, x.processesStarted])).toEqual([
      [0, 2, 1, 1],
      [1, 2, 1, 0],
      [2, 2, 1, 0],
    ]);
  }, 60_000);

  it("applies a better candidate at the decision tick and searches from it next", async () => {
    const out = await runPrediction(spec(TWELVE_POINTS), RUN);
    const ev = events(out);
    expect(ev[0].outcome).toBe("applied");
    expect(ev[0].num_candidates).toBe(12);
    expect(ev[0].best_score as number).toBeLessThan(ev[0].baseline_score as number);
    const chosen = ev[0].chosen?.router;
    expect(chosen).not.toEqual(STARTUP_ROUTER);
    // Before the decision tick the startup parameters are in force; from it, the chosen ones.
    expect(tickAt(out, 35_000).runtime_decision.router_parameters).toEqual({ aggregated: STARTUP_ROUTER });
    expect(tickAt(out, 40_000).runtime_decision.router_parameters).toEqual({ aggregated: chosen });
    expect(tickAt(out, 40_000).router_policies?.[0]).toEqual({
      worker_type: "aggregated",
      revision: 0,
      parameters: STARTUP_ROUTER,
    });
    expect(tickAt(out, 45_000).router_policies?.[0]).toEqual({
      worker_type: "aggregated",
      revision: 1,
      parameters: chosen,
    });
    expect(ev[1].previous.router).toEqual(chosen);
  }, 60_000);

  it("keeps a single candidate equal to the current point (common random numbers)", async () => {
    const out = await runPrediction(
      spec(`${BASE}router: {overlap_score_credit: 1.0, prefill_load_scale: 1.0, temperature: 0.0}`),
      RUN,
    );
    const ev = events(out);
    expect(ev).toHaveLength(3);
    for (const e of ev) {
      expect(e.outcome).toBe("kept");
      expect(e.num_candidates).toBe(1);
      expect(e.best_score).toBe(e.baseline_score);
      expect(e.chosen).toEqual(e.previous);
    }
  }, 60_000);

  it("advisory: records advisory decisions and leaves the summary of the run without retune", async () => {
    const advisory = await runPrediction(spec(TWELVE_POINTS, ["planner.advisory=true"]), RUN);
    const baseline = await runPrediction(spec(TWELVE_POINTS, ["planner={policy: disabled}"]), RUN);
    const ev = events(advisory);
    expect(ev.length).toBe(3);
    expect(ev.some((e) => e.outcome === "advisory")).toBe(true);
    for (const e of ev) {
      expect(["advisory", "kept"]).toContain(e.outcome);
      // Nothing changes: every window searches from the startup point.
      expect(e.previous.router).toEqual(STARTUP_ROUTER);
    }
    for (const t of ticks(advisory)) expect(t.runtime_decision.router_parameters).toBeNull();
    expect(baseline.prediction.planner).toBeNull();
    const strip = (x: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(x).filter(([k]) => !HOST_TIME_KEYS.includes(k as never)));
    expect(strip(advisory.prediction.summary as unknown as Record<string, unknown>)).toEqual(
      strip(baseline.prediction.summary as unknown as Record<string, unknown>),
    );
  }, 60_000);

  it("a tiny timeout_seconds yields timeout and changes nothing", async () => {
    const out = await runPrediction(spec(`${TWO_POINTS}\ntimeout_seconds: 0.001`), RUN);
    const ev = events(out);
    expect(ev).toHaveLength(3);
    for (const e of ev) {
      expect(e.outcome).toBe("timeout");
      expect(e.chosen).toBeNull();
      expect(e.previous.router).toEqual(STARTUP_ROUTER);
    }
  }, 60_000);

  it("max_parallel 2 runs each sweep in 2 worker processes, started once for the run", async () => {
    const out = await runPrediction(spec(TWO_POINTS, ["planner.retune.max_parallel=2"]), RUN);
    expect(out.retuneSweeps?.map((x) => x.workers)).toEqual([2, 2, 2]);
    expect(out.retuneSweeps?.map((x) => x.processesStarted)).toEqual([2, 0, 0]);
    expect(events(out)).toHaveLength(3);
  }, 60_000);

  it("measured decision latency: D is the sweep's wall time, the decision one tick later", async () => {
    const out = await runPrediction(
      spec(TWO_POINTS, ["planner.retune.decision_latency_seconds=measured"]),
      RUN,
    );
    for (const e of events(out)) {
      expect(e.decision_latency_s).toBe(e.sweep_wall_s);
      // A sweep of well under Δ = 5 s: ready at launch + Δ.
      expect(e.decided_at_s).toBe((e.launched_at_s as number) + 5);
    }
  }, 60_000);
});

/** The same retune on a 2P + 2D disaggregated deployment. */
function pdSpec(retune: string, planner?: string): RunSpec {
  const yaml = config(retune, undefined, planner).replace(RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE);
  return loadYaml(yaml, {
    files: TRACE,
    sets: ["engine.workers.prefill.parallelism.replicas=2", "engine.workers.decode.parallelism.replicas=2"],
  });
}

describe("retune of a disaggregated deployment", () => {
  it("retunes the prefill and decode routers together; the decode router keeps zero overlap credit", async () => {
    const s = pdSpec(TWELVE_POINTS);
    expect(s.engine.mode).toBe("disaggregated");
    const out = await runPrediction(s, RUN);
    const ev = events(out);
    expect(ev.map((e) => e.decision_id)).toEqual(["retune-1-w0", "retune-2-w1", "retune-3-w2"]);
    for (const e of ev) {
      expect(e.num_candidates).toBe(12);
      expect(e.num_requests).toBeGreaterThan(0);
      expect(["applied", "kept"]).toContain(e.outcome);
    }
    // Every tick: the desired map names both worker types; the decode router's live overlap credit is 0.
    for (const t of ticks(out)) {
      expect(Object.keys(t.runtime_decision.router_parameters ?? {})).toEqual(["prefill", "decode"]);
      expect(t.router_policies?.map((p) => p.worker_type)).toEqual(["prefill", "decode"]);
      expect(t.router_policies?.[1].parameters.overlap_score_credit).toBe(0);
    }
    const applied = ev.find((e) => e.outcome === "applied");
    if (applied === undefined) throw new Error("expected an applied decision among the three windows");
    const chosen = applied.chosen?.router;
    const at = (applied.decided_at_s as number) * 1000;
    expect(tickAt(out, at).runtime_decision.router_parameters).toEqual({ prefill: chosen, decode: chosen });
    // From the next tick both routers carry the patch (revision + 1); decode still gives no overlap credit.
    const after = tickAt(out, at + 5000).router_policies ?? [];
    const before = tickAt(out, at).router_policies ?? [];
    expect(after[0]).toEqual({
      worker_type: "prefill",
      revision: before[0].revision + 1,
      parameters: chosen,
    });
    expect(after[1]).toEqual({
      worker_type: "decode",
      revision: before[1].revision + 1,
      parameters: { ...chosen, overlap_score_credit: 0 },
    });
    // One sweep per window, one process (max_parallel 1, started once), one replay per distinct
    // candidate.
    expect(out.retuneSweeps?.map((x) => [x.windowIndex, x.jobs, x.workers, x.processesStarted])).toEqual([
      [0, 12, 1, 1],
      [1, 12, 1, 0],
      [2, 12, 1, 0],
    ]);
  }, 60_000);

  it("with scaling on, candidate replays run an inner Planner over both roles", async () => {
    const planner = `  policy: enabled
  target: sla
  enable_load_scaling: true
  enable_throughput_scaling: true
  throughput_adjustment_interval_seconds: 10
  load_adjustment_interval_seconds: 5
  max_num_gpus: 8
`;
    const retune = `${BASE}objective: TTFT
min_improvement_percentage: 0
planner: {load_scaling_down_sensitivity: {choices: [70, 80]}}`;
    const a = await runPrediction(pdSpec(retune, planner), RUN);
    const b = await runPrediction(pdSpec(retune, planner), RUN);
    const ev = events(a);
    expect(ev).toHaveLength(3);
    for (const e of ev) {
      expect(e.num_candidates).toBe(2);
      expect(e.baseline_score).not.toBeNull();
    }
    // The outer Planner scales the roles as usual while retune runs.
    expect((a.prediction.planner?.scaling_events ?? []).length).toBeGreaterThan(0);
    // Deterministic: same config, same decisions and summary (host-time keys aside).
    const strip = (x: Awaited<ReturnType<typeof runPrediction>>) => {
      const summary: Record<string, unknown> = { ...x.prediction.summary };
      for (const k of HOST_TIME_KEYS) delete summary[k];
      return { summary, ev: events(x).map((e) => [e.outcome, e.chosen, e.best_score]) };
    };
    expect(strip(a)).toEqual(strip(b));
  }, 120_000);
});
