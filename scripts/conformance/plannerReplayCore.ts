/**
 * The Planner compared apart from the engines (docs/conformance.md "Golden fixtures", Known
 * differences 4): one reference run of a Planner case recorded tick by tick — the FPMs, worker
 * counts and traffic its Planner was given, the decision and estimates it made — with the bootstrap
 * FPMs it installed (captured by scripts/reference/bootstrap_capture), and the same inputs fed to
 * fleetsim's PlannerCore. The harness (run.ts) reports it and writes it as a golden with
 * `--goldens`; test/conformance/reference.plannerReplay.test.ts replays the goldens.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { capabilitiesOf } from "../../src/autoscale/plannerSetup.js";
import { loadConfig } from "../../src/config/load.js";
import { PlannerCore, reportedScaleTo } from "../../src/planner/plannerCore.js";
import { type ForwardPassMetrics, forwardPassMetrics } from "../../src/planner/types.js";

/** The seed Planner cases whose replay is kept as a golden. */
export const PLANNER_REPLAY_CASES: readonly string[] = [
  "seed-agg-planner",
  "seed-agg-startup-0",
  "seed-agg-startup-60",
  "seed-agg-startup-180",
  "seed-disagg-planner",
  "seed-disagg-budget-4",
  // Polynomial timing: chunk-bound mixed passes whose refits turn intercept-only, so the
  // Planner prices with the last accepted plane (docs/planner.md "Perf model").
  "seed-agg-startup-0-polynomial",
  "seed-agg-startup-60-polynomial",
];

/** An FPM as one row, in this order. */
export const FPM_FIELDS = [
  "wall_time",
  "s.num_prefill_requests",
  "s.sum_prefill_tokens",
  "s.var_prefill_length",
  "s.sum_prefill_kv_tokens",
  "s.num_decode_requests",
  "s.sum_decode_kv_tokens",
  "s.var_decode_kv_tokens",
  "q.num_prefill_requests",
  "q.sum_prefill_tokens",
  "q.var_prefill_length",
  "q.num_decode_requests",
  "q.sum_decode_kv_tokens",
  "q.var_decode_kv_tokens",
] as const;

type Row = readonly number[];
type Json = Record<string, unknown>;

export interface ReplayTick {
  readonly now_s: number;
  readonly worker_counts: Record<string, number | boolean | null>;
  readonly traffic: Record<string, number | null> | null;
  readonly fpm: {
    readonly prefill: [string, number, Row][] | null;
    readonly decode: [string, number, Row][] | null;
  };
  readonly expect: {
    readonly scale_to: { num_prefill: number | null; num_decode: number | null } | null;
    readonly estimated_ttft_ms: number | null;
    readonly estimated_itl_ms: number | null;
    readonly load_decision_reason: string | null;
    readonly throughput_decision_reason: string | null;
  };
}

export interface ReplayGolden {
  readonly case: string;
  readonly reference: Record<string, string>;
  /** The case's YAML (model ids, not the harness's local model folders). */
  readonly config: string;
  readonly fpmFields: readonly string[];
  readonly bootstrap: { readonly prefill: Row[]; readonly decode: Row[] };
  readonly scalingEvents: number;
  readonly ticks: readonly ReplayTick[];
}

function row(m: Json): number[] {
  return FPM_FIELDS.map((f) => {
    const [part, key] = f.includes(".") ? f.split(".") : [null, f];
    const src = (part === "s" ? m["scheduled_requests"] : part === "q" ? m["queued_requests"] : m) as
      | Json
      | undefined;
    return Number(src?.[key as string] ?? 0);
  });
}

function observations(list: Json[] | null | undefined): [string, number, number[]][] | null {
  if (list === null || list === undefined) return null;
  return list.map((o) => {
    const m = o["metrics"] as Json;
    return [String(o["worker_id"]), Number(m["dp_rank"]), row(m)];
  });
}

/** The replay golden of a reference run: its prediction.json and the bootstrap FPMs it installed. */
export function replayGoldenOf(
  name: string,
  config: string,
  prediction: Json,
  bootstrap: { prefill: Json[]; decode: Json[] },
  reference: Record<string, string>,
): ReplayGolden {
  const planner = prediction["planner"] as Json;
  const ticks = (planner["ticks"] as Json[]).map((t): ReplayTick => {
    const input = t["input"] as Json;
    const effects = t["effects"] as Json;
    const d = effects["diagnostics"] as Json;
    const fpm = input["fpm_observations"] as Json;
    return {
      now_s: Number(input["now_s"]),
      worker_counts: input["worker_counts"] as ReplayTick["worker_counts"],
      traffic: (input["traffic"] ?? null) as ReplayTick["traffic"],
      fpm: {
        prefill: observations(fpm["prefill"] as Json[] | null),
        decode: observations(fpm["decode"] as Json[] | null),
      },
      expect: {
        scale_to: (effects["scale_to"] ?? null) as ReplayTick["expect"]["scale_to"],
        estimated_ttft_ms: (d["estimated_ttft_ms"] ?? null) as number | null,
        estimated_itl_ms: (d["estimated_itl_ms"] ?? null) as number | null,
        load_decision_reason: (d["load_decision_reason"] ?? null) as string | null,
        throughput_decision_reason: (d["throughput_decision_reason"] ?? null) as string | null,
      },
    };
  });
  return {
    case: name,
    reference,
    config,
    fpmFields: FPM_FIELDS,
    bootstrap: { prefill: bootstrap.prefill.map(row), decode: bootstrap.decode.map(row) },
    scalingEvents: (planner["scaling_events"] as unknown[]).length,
    ticks,
  };
}

/** A row in `FPM_FIELDS` order as an FPM of worker `id`. */
function fpmOf(id: number, dpRank: number, r: Row): ForwardPassMetrics {
  return forwardPassMetrics(id, {
    dpRank,
    wallTimeS: r[0],
    numPrefillRequests: r[1],
    sumPrefillTokens: r[2],
    varPrefillLength: r[3],
    sumPrefillKvTokens: r[4],
    numDecodeRequests: r[5],
    sumDecodeKvTokens: r[6],
    varDecodeKvTokens: r[7],
    numQueuedPrefill: r[8],
    sumQueuedPrefillTokens: r[9],
    varQueuedPrefillLength: r[10],
    numQueuedDecode: r[11],
    sumQueuedDecodeKvTokens: r[12],
    varQueuedDecodeKvTokens: r[13],
  });
}

const observed = (list: [string, number, Row][] | null) =>
  list === null ? null : list.map(([w, dp, r]) => fpmOf(Number(w), dp, r));

/** One tick of a replay: the reference's outputs and fleetsim's on the same inputs. */
export interface ReplayedTick {
  readonly nowS: number;
  /** Same load and throughput decision reasons and the same targets. */
  readonly sameDecision: boolean;
  readonly detail: string;
  readonly ttftMs: readonly [number | null, number | null];
  readonly itlMs: readonly [number | null, number | null];
  /**
   * Whether a role's perf model has been fed more passes than a store keeps by this tick: from
   * then on a store may have retired a pass from a tie of equally full cells, which the reference
   * decides by hash order (docs/planner.md "Perf model"), so estimates may part slightly.
   */
  readonly retentionFull: boolean;
}

/** The relative difference of two estimates: 0 when both are absent, ∞ when one is. */
export function estimateDifference([ref, fs]: readonly [number | null, number | null]): number {
  if (ref === null || fs === null) return ref === fs ? 0 : Number.POSITIVE_INFINITY;
  return Math.abs(fs - ref) / Math.max(1, Math.abs(ref));
}

/** fleetsim's PlannerCore on the golden's recorded ticks, tick by tick. */
export function replayPlanner(g: ReplayGolden): ReplayedTick[] {
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-replay-"));
  try {
    writeFileSync(join(dir, "config.yaml"), g.config);
    // The replay needs no traffic (the ticks carry what the Planner saw), but the config names a trace.
    for (const path of g.config.match(/[\w.-]+\.jsonl/g) ?? []) writeFileSync(join(dir, path), "");
    const spec = loadConfig({
      configPath: join(dir, "config.yaml"),
      sets: [],
      stack: "dynamo",
      workDir: dir,
    });
    const engine = spec.engine;
    const settings = spec.planner;
    if (settings === null) throw new Error(`${g.case}: no planner section`);
    const core = new PlannerCore({
      settings,
      caps: {
        prefill: engine.mode === "disaggregated" ? capabilitiesOf(engine.prefill) : null,
        decode: capabilitiesOf(engine.mode === "disaggregated" ? engine.decode : engine.aggregated),
      },
      bootstrap: {
        prefill: g.bootstrap.prefill.map((r) => fpmOf(0, 0, r)),
        decode: g.bootstrap.decode.map((r) => fpmOf(0, 0, r)),
      },
      warmup: null,
    });
    // Passes each store has learned from (bootstrap included), by role and kind of pass: a pass
    // with work and a time. A prefill or decode model has one store, an aggregated one per kind.
    const agg = engine.mode !== "disaggregated";
    const fed = new Map<string, number>();
    const feed = (role: "prefill" | "decode", r: Row) => {
      if (!(r[0] > 0) || !(r[2] > 0 || r[5] > 0)) return;
      const key = agg ? `${r[2] > 0}/${r[5] > 0}` : role;
      fed.set(key, (fed.get(key) ?? 0) + 1);
    };
    for (const r of g.bootstrap.prefill) feed(agg ? "decode" : "prefill", r);
    for (const r of g.bootstrap.decode) feed("decode", r);
    const capacity = settings.maxNumFpmSamples;
    return g.ticks.map((t): ReplayedTick => {
      for (const [, , r] of t.fpm.prefill ?? []) feed("prefill", r);
      for (const [, , r] of t.fpm.decode ?? []) feed("decode", r);
      const w = t.worker_counts;
      const tr = t.traffic;
      core.schedule(t.now_s);
      const workers = {
        readyPrefill: w["ready_num_prefill"] as number | null,
        readyDecode: w["ready_num_decode"] as number | null,
        expectedPrefill: w["expected_num_prefill"] as number | null,
        expectedDecode: w["expected_num_decode"] as number | null,
        prefillScalingInProgress: w["prefill_scaling_in_progress"] as boolean,
        decodeScalingInProgress: w["decode_scaling_in_progress"] as boolean,
      };
      const out = core.tick({
        nowS: t.now_s,
        traffic:
          tr === null
            ? null
            : {
                durationS: Number(tr["duration_s"]),
                numReq: Number(tr["num_req"]),
                isl: Number(tr["isl"]),
                osl: Number(tr["osl"]),
                kvHitRate: tr["kv_hit_rate"] ?? null,
                acceptLength: tr["accept_length"] ?? null,
              },
        workers,
        fpmPrefill: observed(t.fpm.prefill),
        fpmDecode: observed(t.fpm.decode),
      });
      const d = out.diagnostics;
      // The tick's scale_to as the tick record writes it (an unchanged role of a disaggregated
      // decision named at its ready count, as the reference names it): compared as written.
      const want = t.expect.scale_to;
      const got = reportedScaleTo(out.scaleTo, workers, settings.mode);
      const targets = (p: number | null | undefined, dd: number | null | undefined) =>
        `${p ?? "-"}/${dd ?? "-"}`;
      const wantText = want === null ? "null" : targets(want.num_prefill, want.num_decode);
      const gotText = got === null ? "null" : targets(got.numPrefill, got.numDecode);
      const reasons = [d.loadDecisionReason ?? null, d.throughputDecisionReason ?? null];
      const sameDecision =
        wantText === gotText &&
        reasons[0] === t.expect.load_decision_reason &&
        reasons[1] === t.expect.throughput_decision_reason;
      return {
        nowS: t.now_s,
        sameDecision,
        detail: `reference ${wantText} (${t.expect.load_decision_reason}, ${t.expect.throughput_decision_reason}), fleetsim ${gotText} (${reasons[0]}, ${reasons[1]})`,
        ttftMs: [t.expect.estimated_ttft_ms, d.estimatedTtftMs ?? null],
        itlMs: [t.expect.estimated_itl_ms, d.estimatedItlMs ?? null],
        retentionFull: [...fed.values()].some((n) => n > capacity),
      };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
