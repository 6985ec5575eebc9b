/**
 * Retune with autoscaling on (docs/retune.md, seed 000 Scenario 2): `target: sla`, both scaling flags
 * on, `retune.planner: default` — candidate replays with an inner Planner, Planner fields applied from
 * the tick after the decision, the load-predictor pre-sweep over a Dynamo warm-up trace, advisory.
 */
import { describe, expect, it } from "vitest";
import type { RunSpec } from "../../../src/config/runSpec.js";
import { HOST_TIME_KEYS } from "../../../src/metrics/summary.js";
import { runPrediction } from "../../../src/pipeline/index.js";
import { PlannerCore } from "../../../src/planner/plannerCore.js";
import type { RetuneEventRecord } from "../../../src/planner/retune/index.js";
import { loadYaml, RUNNABLE_ENGINE } from "../../helpers/configHelpers.js";

const T0 = 1_760_000_000_000;

/**
 * Dynamo request rows from `fromS` to `toS` (seconds after T0), one every `gapMs`, a 2 s recorded
 * latency. Prompts of 1–3k tokens and 2 s load ticks: an aggregated worker's SLA estimates need
 * `load_min_observations` mixed (prefill + decode) passes observed live (docs/planner.md "Perf
 * model"), so the inner Planners of a 30 s window act, and differ, only when mixed passes come often.
 */
function dynamoRows(fromS: number, toS: number, gapMs: number, idPrefix: string): string {
  const lines: string[] = [];
  for (let i = 0, t = fromS * 1000; t < toS * 1000; i++, t += gapMs) {
    const blocks = 16 + (i % 33);
    const group = Math.floor(i / 5) % 7;
    const hashes = Array.from({ length: blocks }, (_, b) => (b < 3 ? group * 1000 + b : i * 100 + b));
    // Bursty: every other 10 s the rate doubles (a second request 10 ms later).
    const burst = Math.floor(t / 10_000) % 2 === 0 ? [0, 10] : [0];
    for (const dt of burst) {
      lines.push(
        JSON.stringify({
          schema: "dynamo.request.trace.v1",
          event_type: "request_end",
          event_time_unix_ms: T0 + t + dt + 2000,
          request: {
            request_id: `${idPrefix}-${i}-${dt}`,
            request_received_ms: T0 + t + dt,
            total_time_ms: 2000,
            output_tokens: 20 + (i % 30),
            replay: { trace_block_size: 64, input_length: blocks * 64, input_sequence_hashes: hashes },
          },
        }),
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

// History: 100 s ending before the replay; replay: 100 s starting at T0 + 100 s. A request every
// 100 ms (bursts of two): a pass that completes a prompt beside no decode counts as a prefill-only
// pass (docs/planner.md "What runs"), so the mixed passes need this much traffic to come often.
const FILES = {
  "history.jsonl": dynamoRows(0, 100, 200, "h"),
  "trace.jsonl": dynamoRows(100, 200, 100, "r"),
};

const RETUNE = `  retune:
    interval_seconds: 30
    grace_seconds: 5
    max_parallel: 2
    objective: TTFT
    min_improvement_percentage: 0
    planner: default
`;

function config(retune: string | null): string {
  return `traffic:
  source: {type: trace, format: dynamo, paths: [trace.jsonl]}
  load: {type: trace_timestamps}
${RUNNABLE_ENGINE}router: {policy: kv_router}
planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: true
  enable_load_scaling: true
  throughput_adjustment_interval_seconds: 10
  load_adjustment_interval_seconds: 2
  load_predictor_warmup_trace: history.jsonl
${retune ?? ""}evaluation:
  sla: {ttft_ms: 1500, itl_ms: 50}
`;
}

// Three workers at the start: room for the inner Planners to scale down, where the scale-down
// sensitivities the sweep compares part (with two, every window's candidates tie since the
// Planner keeps a store's last plane when a refit is not a model; docs/planner.md "Perf model").
const REPLICAS = "engine.workers.aggregated.parallelism.replicas=3";

function spec(retune: string | null, sets: string[] = []): RunSpec {
  return loadYaml(config(retune), { files: FILES, sets: [REPLICAS, ...sets] });
}

const RUN = { capturePerRequest: false };
type Out = Awaited<ReturnType<typeof runPrediction>>;

function events(out: Out): RetuneEventRecord[] {
  return (out.prediction.planner?.retune_events ?? []) as RetuneEventRecord[];
}

interface Tick {
  at_ms: number;
  retune_planner_fields?: Record<string, unknown>;
}

function ticks(out: Out): Tick[] {
  return (out.prediction.planner?.ticks ?? []) as Tick[];
}

describe("retune with autoscaling on (seed 000 Scenario 2)", () => {
  it("sweeps with an inner Planner, pre-sweeps the predictor and applies Planner fields from the next tick", async () => {
    const s = spec(RETUNE);
    expect(s.planner?.retune?.retuneOnly).toBe(false);
    expect(s.planner?.retune?.loadPredictorCandidates?.length).toBe(11);
    const out = await runPrediction(s, RUN);
    const ev = events(out);
    // 100 s of replay: windows 0–2 come due at 35, 65 and 95 s.
    expect(ev.map((e) => e.window_index)).toEqual([0, 1, 2]);
    for (const e of ev) {
      expect(["applied", "kept", "failed"]).toContain(e.outcome);
      expect(e.num_requests).toBeGreaterThan(0);
      // load_scaling_down_sensitivity {70, 80, 90} + startup/current.
      expect(e.num_candidates).toBeGreaterThanOrEqual(3);
      const p = e.predictor_presweep;
      expect(p).not.toBeNull();
      expect(p?.eval_steps).toBe(3);
      expect(Object.keys(p?.losses ?? {})).toHaveLength(11);
      // A winner named, or none (every candidate keeps the current predictor).
      if (p?.winner !== null) expect(Object.keys(p?.losses ?? {})).toContain(p?.winner);
      expect(p?.warmup_steps).toBeGreaterThan(0);
    }
    // Every tick echoes the Planner fields it ran with; an applied change shows from the next tick.
    const all = ticks(out);
    expect(all.every((t) => t.retune_planner_fields !== undefined)).toBe(true);
    const applied = ev.filter((e) => e.outcome === "applied" && Object.keys(e.planner_changes).length > 0);
    expect(applied.length).toBeGreaterThan(0);
    const a = applied[0];
    const at = (ms: number) => all.find((t) => t.at_ms === ms)?.retune_planner_fields;
    const decidedMs = a.decided_at_s * 1000;
    const nextMs = decidedMs + 2000;
    for (const [k, v] of Object.entries(a.planner_changes)) {
      expect(at(decidedMs)?.[k]).toEqual(a.previous.planner[k]);
      expect(at(nextMs)?.[k]).toEqual(v);
    }
    if (a.predictor_warmup !== null) expect(a.predictor_warmup).toBeGreaterThan(0);
  }, 120_000);

  it("advisory: decisions are recorded and the summary equals the run without retune", async () => {
    const advisory = await runPrediction(spec(RETUNE, ["planner.advisory=true"]), RUN);
    const plain = await runPrediction(spec(null, ["planner.advisory=true"]), RUN);
    const ev = events(advisory);
    expect(ev).toHaveLength(3);
    for (const e of ev) {
      expect(["advisory", "kept", "failed"]).toContain(e.outcome);
      expect(e.predictor_warmup).toBeNull();
      // Nothing changes: every window searches from the startup point.
      expect(e.previous).toEqual(ev[0].previous);
    }
    const strip = (x: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(x).filter(([k]) => !HOST_TIME_KEYS.includes(k as never)));
    expect(strip(advisory.prediction.summary as unknown as Record<string, unknown>)).toEqual(
      strip(plain.prediction.summary as unknown as Record<string, unknown>),
    );
  }, 120_000);

  it("reads a Dynamo load_predictor_warmup_trace without retune", async () => {
    const out = await runPrediction(spec(null), RUN);
    expect(out.prediction.planner).not.toBeNull();
  }, 60_000);
});

describe("PlannerCore.updateSettings", () => {
  it("changes fields from the next tick and rejects schedule fields", () => {
    const s = spec(RETUNE).planner;
    if (s === null) throw new Error("no planner");
    const core = new PlannerCore({
      settings: s,
      caps: {
        prefill: null,
        decode: {
          numGpu: 1,
          gpuCostPerReplica: 1,
          maxNumBatchedTokens: 8192,
          maxNumSeqs: 256,
          contextLength: 32768,
          maxKvTokens: 64000,
          kvCacheBlockSize: 64,
          speculativeNextn: 0,
          attentionData: 1,
        },
      },
      bootstrap: null,
      warmup: null,
    });
    core.updateSettings({ loadScalingDownSensitivity: 90, maxNumFpmSamples: 32, loadPredictor: "constant" });
    expect(core.settings.loadScalingDownSensitivity).toBe(90);
    expect(core.settings.maxNumFpmSamples).toBe(32);
    expect(() => core.updateSettings({ scaleIntervalS: 1 })).toThrow(/cannot change/);
  });
});
