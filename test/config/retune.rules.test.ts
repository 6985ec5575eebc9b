/**
 * One bad `planner.retune` input per row: a valid retune config plus `--set` flags (or other
 * YAML), and the row asserts the dotted path and the exact message of the one issue it produces.
 */
import { describe, expect, it } from "vitest";
import { issueAt, loadError, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { dynamoRow } from "../helpers/dynamoTraces.js";
import { RETUNE_ONLY_PLANNER } from "../helpers/retuneProject.js";

const TRACE = "replay.jsonl";
const FILES = { [TRACE]: `${dynamoRow("r0", 1_760_000_000_000)}\n`, "mooncake.jsonl": "" };

const TRAFFIC = `traffic:
  source: {type: trace, format: dynamo, paths: [${TRACE}]}
  load: {type: trace_timestamps}
`;

/** Retune-only, router temperature searched: valid (see the first test). */
const BASE = `${TRAFFIC}router: {policy: kv_router}
${RETUNE_ONLY_PLANNER}    interval_seconds: 600
    router: {temperature: {choices: [0.0, 1.0]}}
${RUNNABLE_ENGINE}`;

/** An SLA Planner with both loops (10 s / 300 s ⇒ a 10 s tick), retuned on its Planner fields. */
const SLA_BOTH = `${TRAFFIC}router: {policy: kv_router}
evaluation: {sla: {ttft_ms: 800, itl_ms: 40}}
planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: true
  enable_load_scaling: true
  load_adjustment_interval_seconds: 10
  throughput_adjustment_interval_seconds: 300
  retune:
    interval_seconds: 600
    planner: default
${RUNNABLE_ENGINE}`;

const R = "planner.retune";
const RP = "planner.retune.planner";
const TEMP = "planner.retune.router.temperature";

const TO_SLA_THROUGHPUT_ONLY = [
  "planner.target=sla",
  "evaluation.sla={ttft_ms: 800, itl_ms: 40}",
  "planner.enable_throughput_scaling=true",
  "planner.retune.interval_seconds=720",
];
const TO_SLA_LOAD_ONLY = [
  "planner.target=sla",
  "evaluation.sla={ttft_ms: 800, itl_ms: 40}",
  "planner.enable_load_scaling=true",
];

interface Case {
  readonly name: string;
  readonly sets?: readonly string[];
  /** A whole config instead of BASE. */
  readonly yaml?: string;
  readonly path: string;
  readonly message: string;
}

const PRESET_NAMES =
  "'constant_last', 'arima_raw', 'arima_log1p', 'prophet_w20_raw', 'prophet_w20_log1p', 'prophet_w50_raw', " +
  "'prophet_w50_log1p', 'kalman_default_raw', 'kalman_default_log1p', 'kalman_reactive_raw' or 'kalman_reactive_log1p'";

const CASES: readonly Case[] = [
  // keys and values of the section
  {
    name: "unknown retune key",
    sets: [`${R}.window_seconds=600`],
    path: `${R}.window_seconds`,
    message: "Extra inputs are not permitted",
  },
  {
    name: "missing interval",
    sets: [`${R}={router: {temperature: 1}}`],
    path: `${R}.interval_seconds`,
    message: "Field required",
  },
  {
    name: "zero interval",
    sets: [`${R}.interval_seconds=0`],
    path: `${R}.interval_seconds`,
    message: "Input should be greater than 0",
  },
  {
    name: "negative grace",
    sets: [`${R}.grace_seconds=-1`],
    path: `${R}.grace_seconds`,
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "fractional max_parallel",
    sets: [`${R}.max_parallel=1.5`],
    path: `${R}.max_parallel`,
    message: "Input should be a valid integer, got number 1.5",
  },
  {
    name: "zero max_candidates",
    sets: [`${R}.max_candidates=0`],
    path: `${R}.max_candidates`,
    message: "Input should be greater than or equal to 1",
  },
  {
    name: "decision latency neither a number nor measured",
    sets: [`${R}.decision_latency_seconds=wall`],
    path: `${R}.decision_latency_seconds`,
    message: "Input should be a number greater than or equal to 0 or 'measured'",
  },
  {
    name: "negative decision latency",
    sets: [`${R}.decision_latency_seconds=-5`],
    path: `${R}.decision_latency_seconds`,
    message: "Input should be a number greater than or equal to 0 or 'measured'",
  },
  {
    name: "decision latency longer than the interval",
    sets: [`${R}.decision_latency_seconds=601`],
    path: `${R}.decision_latency_seconds`,
    message: `${R}.decision_latency_seconds (601) must be at most ${R}.interval_seconds (600), so that at most one sweep is in flight`,
  },
  {
    name: "timeout longer than the interval",
    sets: [`${R}.timeout_seconds=900`],
    path: `${R}.timeout_seconds`,
    message: `${R}.timeout_seconds (900) must be at most ${R}.interval_seconds (600), so that at most one sweep is in flight`,
  },
  {
    name: "decision_latency_scale without measured",
    sets: [`${R}.decision_latency_scale=2`],
    path: `${R}.decision_latency_scale`,
    message: `${R}.decision_latency_scale applies only with ${R}.decision_latency_seconds='measured'; remove it or set decision_latency_seconds: measured`,
  },
  {
    name: "measured latency above 1 rejects the default timeout",
    sets: [`${R}.decision_latency_seconds=measured`, `${R}.decision_latency_scale=1.5`],
    path: `${R}.decision_latency_scale`,
    message:
      `${R}.decision_latency_scale=1.5 rejects the default ${R}.timeout_seconds (= interval_seconds, 600): ` +
      "with decision_latency_seconds='measured', lower timeout_seconds to at most interval_seconds / decision_latency_scale (400)",
  },
  {
    name: "measured latency with a timeout above interval / scale",
    sets: [
      `${R}.decision_latency_seconds=measured`,
      `${R}.decision_latency_scale=2`,
      `${R}.timeout_seconds=301`,
    ],
    path: `${R}.timeout_seconds`,
    message: `${R}.timeout_seconds (301) must be at most ${R}.interval_seconds / ${R}.decision_latency_scale (600 / 2 = 300) with decision_latency_seconds='measured'`,
  },
  {
    name: "non-positive decision_latency_scale",
    sets: [`${R}.decision_latency_seconds=measured`, `${R}.decision_latency_scale=0`],
    path: `${R}.decision_latency_scale`,
    message: "Input should be greater than 0",
  },
  {
    name: "negative min_improvement_percentage",
    sets: [`${R}.min_improvement_percentage=-1`],
    path: `${R}.min_improvement_percentage`,
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "unknown objective",
    sets: [`${R}.objective=goodput_per_gpu`],
    path: `${R}.objective`,
    message:
      "Input should be 'Goodput', 'GoodputPerGPU', 'Throughput', 'ThroughputPerGPU', 'ThroughputPerUser', 'TTFT' or 'E2ELatency'",
  },
  {
    name: "scoring SLA with an objective that ignores it",
    sets: [`${R}.objective=Throughput`, `${R}.sla_ttft_ms=1000`],
    path: `${R}.sla_ttft_ms`,
    message: `${R}.sla_ttft_ms has no effect with ${R}.objective='Throughput': only the Goodput objectives use the scoring SLA`,
  },
  {
    name: "non-positive scoring SLA",
    sets: [`${R}.sla_itl_ms=0`],
    path: `${R}.sla_itl_ms`,
    message: "Input should be greater than 0",
  },
  // requirements (seed 000 "Requirements")
  {
    name: "retune with the Planner disabled",
    sets: ["planner.policy=disabled"],
    path: R,
    message: "planner.retune requires planner.policy='enabled' (policy 'disabled' runs no Planner)",
  },
  {
    name: "a Mooncake trace",
    sets: ["traffic.source={type: trace, format: mooncake, paths: [mooncake.jsonl]}"],
    path: R,
    message:
      "planner.retune requires a Dynamo request trace: traffic.source.type='trace' with traffic.source.format='dynamo' (got format 'mooncake')",
  },
  {
    name: "a Dynamo trace under concurrency load",
    sets: ["traffic.load={type: concurrency, concurrency: 4}"],
    path: R,
    message:
      "planner.retune requires traffic.load.type='trace_timestamps' (got 'concurrency'); speedup is allowed",
  },
  {
    name: "a virtual-time stop",
    sets: ["traffic.stop.max_virtual_time_seconds=3600"],
    path: "traffic.stop.max_virtual_time_seconds",
    message:
      "traffic.stop.max_virtual_time_seconds is rejected with planner.retune: retune replays the trace to its end",
  },
  {
    name: "retune.router under round robin",
    sets: ["router.policy=round_robin"],
    path: `${R}.router`,
    message: `${R}.router requires router.policy='kv_router' (got 'round_robin'): retune searches KV-router parameters`,
  },
  {
    name: "nothing to search",
    sets: [`${R}.router=null`],
    path: R,
    message: "planner.retune needs router or planner: with neither there is nothing to search",
  },
  {
    name: "Planner fields in retune-only mode",
    sets: [`${R}.planner=default`],
    path: RP,
    message:
      `${RP} has no effect in retune-only mode (planner.enable_load_scaling and planner.enable_throughput_scaling ` +
      "both false: the Planner never scales); remove it or enable a scaling mode",
  },
  {
    name: "a load-scaling knob without load scaling",
    sets: [...TO_SLA_THROUGHPUT_ONLY, `${RP}={load_scaling_down_sensitivity: {choices: [70, 90]}}`],
    path: `${RP}.load_scaling_down_sensitivity`,
    message: `${RP}.load_scaling_down_sensitivity has no effect without load scaling; remove it or set planner.enable_load_scaling: true`,
  },
  {
    name: "the load predictor without throughput scaling",
    sets: [...TO_SLA_LOAD_ONLY, `${RP}={load_predictor: default}`],
    path: `${RP}.load_predictor`,
    message:
      `${RP}.load_predictor needs throughput scaling (planner.target='sla' with planner.enable_throughput_scaling: true): ` +
      "only throughput scaling uses the load predictor",
  },
  {
    name: "history without throughput scaling",
    sets: [`${R}.history_seconds=3600`],
    path: `${R}.history_seconds`,
    message: `${R}.history_seconds needs throughput scaling: retune reads trace history only for an inner Planner that scales on throughput`,
  },
  {
    name: "retune-only mode with a null load interval",
    sets: ["planner.load_adjustment_interval_seconds=null"],
    path: "planner.load_adjustment_interval_seconds",
    message:
      "planner.load_adjustment_interval_seconds is null, but retune-only mode ticks every planner.load_adjustment_interval_seconds; set a number of seconds > 0 or remove it",
  },
  {
    name: "sla with one flag left to its default is not retune-only",
    yaml: BASE.replace("  enable_load_scaling: false\n", ""),
    sets: ["planner.target=sla", "evaluation.sla={ttft_ms: 800, itl_ms: 40}"],
    path: "planner",
    message:
      "planner.policy='enabled' needs a scaling mode: with planner.target='sla', set planner.enable_throughput_scaling or " +
      "planner.enable_load_scaling to true; for retune-only mode set both planner.enable_throughput_scaling and " +
      "planner.enable_load_scaling to false explicitly",
  },
  // intervals against the tick
  {
    name: "interval off the retune-only tick",
    sets: ["planner.load_adjustment_interval_seconds=7"],
    path: `${R}.interval_seconds`,
    message: `${R}.interval_seconds (600) must be a multiple of the Planner's tick, 7 s (planner.load_adjustment_interval_seconds in retune-only mode)`,
  },
  {
    name: "interval shorter than the tick",
    sets: [`${R}.interval_seconds=2`],
    path: `${R}.interval_seconds`,
    message: `${R}.interval_seconds (2) must be a multiple of the Planner's tick, 5 s (planner.load_adjustment_interval_seconds in retune-only mode)`,
  },
  {
    name: "interval off the gcd tick of both loops",
    yaml: SLA_BOTH,
    sets: [`${R}.interval_seconds=605`],
    path: `${R}.interval_seconds`,
    message: `${R}.interval_seconds (605) must be a multiple of the Planner's tick, 10 s (the millisecond gcd of the enabled adjustment intervals)`,
  },
  {
    name: "a grid larger than max_candidates",
    sets: [`${R}.router={}`, `${R}.max_candidates=100`],
    path: R,
    message:
      "planner.retune searches 108 grid points (3 × 9 × 4), more than planner.retune.max_candidates (100); " +
      "narrow the domains or raise max_candidates",
  },
  // router domains
  {
    name: "unknown router knob",
    sets: [`${R}.router.policy=kv_router`],
    path: `${R}.router.policy`,
    message: "Extra inputs are not permitted",
  },
  {
    name: "host cache weight",
    sets: [`${R}.router.host_cache_hit_weight=0.5`],
    path: `${R}.router.host_cache_hit_weight`,
    message:
      `${R}.router.host_cache_hit_weight cannot be retuned: the startup router configuration also uses it to count ` +
      "cached tokens, which a runtime router update does not change",
  },
  {
    name: "disk cache weight",
    sets: [`${R}.router.disk_cache_hit_weight={choices: [0.1]}`],
    path: `${R}.router.disk_cache_hit_weight`,
    message:
      `${R}.router.disk_cache_hit_weight cannot be retuned: the startup router configuration also uses it to count ` +
      "cached tokens, which a runtime router update does not change",
  },
  {
    name: "shared cache multiplier",
    sets: [`${R}.router.shared_cache_multiplier=2`],
    path: `${R}.router.shared_cache_multiplier`,
    message: `${R}.router.shared_cache_multiplier cannot be retuned: the replay reports no shared cache hits, so no candidate could show its effect`,
  },
  {
    name: "a bare list is never a domain",
    sets: [`${TEMP}=[0.0, 1.0]`],
    path: TEMP,
    message: `${TEMP} is a bare YAML list, which is never a domain; write {choices: [...]}`,
  },
  {
    name: "empty choices",
    sets: [`${TEMP}={choices: []}`],
    path: `${TEMP}.choices`,
    message: "List should have at least 1 item(s)",
  },
  {
    name: "choices not a list",
    sets: [`${TEMP}={choices: 1.0}`],
    path: `${TEMP}.choices`,
    message: "Input should be a valid list, got number 1",
  },
  {
    name: "repeated choice",
    sets: [`${TEMP}={choices: [1.0, 0.5, 1]}`],
    path: `${TEMP}.choices.2`,
    message: `${TEMP}.choices.2 repeats 1: choices must be unique`,
  },
  {
    name: "choice out of the knob's range",
    sets: [`${R}.router.overlap_score_credit={choices: [0.5, 1.5]}`],
    path: `${R}.router.overlap_score_credit.choices.1`,
    message: "Input should be less than or equal to 1",
  },
  {
    name: "negative pinned knob",
    sets: [`${R}.router.prefill_load_scale=-1`],
    path: `${R}.router.prefill_load_scale`,
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "string pinned knob",
    sets: [`${TEMP}=hot`],
    path: TEMP,
    message: "Input should be a valid number, got string 'hot'",
  },
  {
    name: "choices and range together",
    sets: [`${TEMP}={choices: [0.0], range: {min: 0, max: 1, step: 0.5}}`],
    path: TEMP,
    message: `${TEMP} must set exactly one of choices or range`,
  },
  {
    name: "empty domain mapping",
    sets: [`${TEMP}={}`],
    path: TEMP,
    message: `${TEMP} must set exactly one of choices or range`,
  },
  {
    name: "unknown domain key",
    sets: [`${TEMP}={values: [0.0, 1.0]}`],
    path: `${TEMP}.values`,
    message: "Extra inputs are not permitted",
  },
  {
    name: "log range",
    sets: [`${TEMP}={range: {min: 0.1, max: 1, scale: log}}`],
    path: `${TEMP}.range.scale`,
    message: `${TEMP}.range.scale='log' has no finite grid; use scale: linear with a step, or {choices: [...]}`,
  },
  {
    name: "range without step",
    sets: [`${TEMP}={range: {min: 0, max: 1}}`],
    path: `${TEMP}.range`,
    message: `${TEMP}.range needs step: retune searches a finite grid`,
  },
  {
    name: "range without max",
    sets: [`${TEMP}={range: {min: 0, step: 0.5}}`],
    path: `${TEMP}.range.max`,
    message: "Field required",
  },
  {
    name: "range upside down",
    sets: [`${TEMP}={range: {min: 1, max: 0, step: 0.5}}`],
    path: `${TEMP}.range`,
    message: `${TEMP}.range.min (1) must be at most ${TEMP}.range.max (0)`,
  },
  {
    name: "integer range with a fractional step",
    yaml: SLA_BOTH,
    sets: [`${RP}={load_scaling_down_sensitivity: {range: {min: 70, max: 90, step: 2.5}}}`],
    path: `${RP}.load_scaling_down_sensitivity.range.step`,
    message: "Input should be a valid integer, got number 2.5",
  },
  {
    name: "range through an invalid value",
    yaml: SLA_BOTH,
    sets: [`${RP}={fpm_sample_bucket_size: {range: {min: 4, max: 16, step: 4}}}`],
    path: `${RP}.fpm_sample_bucket_size.range`,
    message:
      `${RP}.fpm_sample_bucket_size.range expands to 8, which is invalid: {path} must be a perfect square (1, 4, 9, 16, ...), got 8`.replace(
        "{path}",
        `${RP}.fpm_sample_bucket_size.range`,
      ),
  },
  {
    name: "range too long",
    sets: [`${TEMP}={range: {min: 0, max: 1000, step: 0.01}}`],
    path: `${TEMP}.range`,
    message: `${TEMP}.range expands to 100001 values, more than 10000; use a larger step`,
  },
  // planner domains
  {
    name: "planner as a bare list",
    yaml: SLA_BOTH,
    sets: [`${RP}=[load_scaling_down_sensitivity]`],
    path: RP,
    message: `${RP} is a bare YAML list, which is never a domain; write 'default' or a mapping of fields`,
  },
  {
    name: "planner as an unknown keyword",
    yaml: SLA_BOTH,
    sets: [`${RP}=all`],
    path: RP,
    message: "Input should be 'default' or a mapping of Planner fields to domains, got string 'all'",
  },
  {
    name: "planner searching nothing",
    yaml: SLA_BOTH,
    sets: [`${RP}={}`],
    path: RP,
    message: `${RP} searches no Planner field; name the fields to search or use 'default'`,
  },
  {
    name: "unknown planner field",
    yaml: SLA_BOTH,
    sets: [`${RP}={max_num_gpus: 4}`],
    path: `${RP}.max_num_gpus`,
    message: "Extra inputs are not permitted",
  },
  {
    name: "a schedule field",
    yaml: SLA_BOTH,
    sets: [`${RP}={load_adjustment_interval_seconds: {choices: [5, 10]}}`],
    path: `${RP}.load_adjustment_interval_seconds`,
    message: `${RP}.load_adjustment_interval_seconds cannot be retuned: it changes the Planner's scaling modes or tick schedule`,
  },
  {
    name: "a predictor knob as a grid dimension",
    yaml: SLA_BOTH,
    sets: [`${RP}={prophet_window_size: {choices: [20, 50]}}`],
    path: `${RP}.prophet_window_size`,
    message:
      `${RP}.prophet_window_size is searched only by the load-predictor pre-sweep, never as a grid dimension; ` +
      `use ${RP}.load_predictor: default or {preset: [...]}`,
  },
  {
    name: "the load predictor as a knob",
    yaml: SLA_BOTH,
    sets: [`${RP}={load_predictor: {choices: [arima, kalman]}}`],
    path: `${RP}.load_predictor`,
    message: `Input should be 'default' or {preset: [...]} with preset names ${PRESET_NAMES} (the pre-sweep chooses the load predictor; it is never a grid dimension), got a knob domain`,
  },
  {
    name: "unknown preset name",
    yaml: SLA_BOTH,
    sets: [`${RP}={load_sensitivity: {preset: [aggressive, lazy]}}`],
    path: `${RP}.load_sensitivity.preset.1`,
    message: "Input should be 'aggressive', 'default' or 'conservative'",
  },
  {
    name: "repeated preset",
    yaml: SLA_BOTH,
    sets: [`${RP}={fpm_sampling: {preset: [small, small]}}`],
    path: `${RP}.fpm_sampling.preset.1`,
    message: `${RP}.fpm_sampling.preset.1 repeats 'small': presets must be unique`,
  },
  {
    name: "preset list as a bare list",
    yaml: SLA_BOTH,
    sets: [`${RP}={load_sensitivity: [aggressive]}`],
    path: `${RP}.load_sensitivity`,
    message: `${RP}.load_sensitivity is a bare YAML list, which is never a domain; write {preset: [...]}`,
  },
  {
    name: "a preset group with its own knob",
    yaml: SLA_BOTH,
    sets: [`${RP}={load_sensitivity: default, load_min_observations: 5}`],
    path: `${RP}.load_sensitivity`,
    message: `${RP}.load_sensitivity cannot be combined with ['load_min_observations']: the preset sets them`,
  },
  {
    name: "a Planner value outside its field's range",
    yaml: SLA_BOTH,
    sets: [`${RP}={load_scaling_down_sensitivity: {choices: [90, 110]}}`],
    path: `${RP}.load_scaling_down_sensitivity.choices.1`,
    message: "Input should be less than or equal to 100",
  },
];

describe("planner.retune: bad inputs", () => {
  it("the base configs are valid", () => {
    // The omitted router knobs search their default domains: 3 × 9 × 2.
    expect(loadYaml(BASE, { files: FILES }).planner?.retune?.gridSize).toBe(54);
    expect(loadYaml(SLA_BOTH, { files: FILES }).planner?.retune?.gridSize).toBe(3);
  });

  it("has distinct cases", () => {
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES)("$name", (c) => {
    const err = loadError(c.yaml ?? BASE, { sets: c.sets, files: FILES });
    expect(err.issues, err.format()).toHaveLength(1);
    expect(issueAt(err, c.path).message).toBe(c.message);
    // Every issue says where it came from.
    const issue = issueAt(err, c.path);
    expect(issue.source !== undefined || issue.line !== undefined).toBe(true);
  });

  it("an issue in the file points at its line", () => {
    const err = loadError(
      BASE.replace("interval_seconds: 600", "interval_seconds: 600\n    grace_seconds: -2"),
      {
        files: FILES,
      },
    );
    expect(issueAt(err, `${R}.grace_seconds`)).toMatchObject({ line: 11, column: 20 });
  });

  it("independent rules are reported together", () => {
    const err = loadError(BASE, {
      files: FILES,
      sets: [
        "traffic.load={type: concurrency, concurrency: 4}",
        "router.policy=round_robin",
        `${R}.history_seconds=60`,
      ],
    });
    expect(err.issues.map((i) => i.path).sort()).toEqual([R, `${R}.history_seconds`, `${R}.router`]);
  });

  it("retune rules do not judge a traffic section that has issues of its own", () => {
    const err = loadError(BASE, { files: FILES, sets: ["traffic.load.speedup=-1"] });
    expect(err.issues.map((i) => i.path)).toEqual(["traffic.load.speedup"]);
  });
});
