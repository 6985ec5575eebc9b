/**
 * Acceptance of the library API (issue 7 §1): the seed's Python examples translated to
 * TypeScript give the prediction.json of `fleetsim predict` with the equivalent YAML, byte for
 * byte apart from host-time keys.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type EngineArgsInput,
  type PlannerConfig,
  type ReplayReport,
  runSyntheticTraceReplay,
  runTraceReplay,
} from "../../src/index.js";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { cliPredict } from "../helpers/cli.js";
import { engineYaml, syntheticTraffic } from "../helpers/configYaml.js";
import { CONVERSATION_600S } from "../helpers/fixtures.js";
import { SEED_001 } from "../helpers/seed001.js";
import { tempDir } from "../helpers/specs.js";

/** The seed's conversation trace, its first 600 s (a committed fixture: runs without ../shared). */
const CONVERSATION = CONVERSATION_600S;
const MODEL = "nvidia/Llama-3.1-8B-Instruct-FP8";

/** Seed 000 "Run from Python": the canonical engine arguments of the aggregated baseline. */
const ENGINE: EngineArgsInput = {
  engine: {
    backend: "vllm",
    block_size: 64,
    max_num_batched_tokens: 8192,
    max_num_seqs: 256,
    timing_model: {
      type: "external",
      provider: "ais",
      config: { model: MODEL, system: "h200_sxm", backend: "vllm", worker_type: "aggregated" },
    },
  },
};

/** Seed 000 "Run from Python": the Planner of the aggregated baseline, PlannerConfig names. */
const PLANNER: PlannerConfig = {
  mode: "agg",
  optimization_target: "sla",
  enable_throughput_scaling: true,
  enable_load_scaling: true,
  throughput_adjustment_interval_seconds: 300,
  load_adjustment_interval_seconds: 10,
  max_gpu_budget: 4,
  ttft_ms: 1500,
  itl_ms: 50,
  decode_engine_num_gpu: 1, // GPU hours in the HTML report
};

/** Seed 000 "Run the aggregated baseline" (planner-aggregated.yaml) on the conversation trace. */
function aggregatedYaml(opts: { maxVirtualSeconds: number }): string {
  return `traffic:
  source:
    type: trace
    format: mooncake
    paths: [${CONVERSATION}]
    block_size: 512
  load: {type: trace_timestamps, speedup: 1.0}
  stop: {max_virtual_time_seconds: ${opts.maxVirtualSeconds}}
${SEED_001.aggregatedEngine}router:
  policy: round_robin
  prefill_load_model: {type: none}
${SEED_001.plannerHead}  max_num_gpus: 4
  min_workers: 1
evaluation:
  sla: {ttft_ms: 1500, itl_ms: 50}
`;
}

/** prediction.json of `fleetsim predict -c <yaml>`. */
async function predictFile(yaml: string, extra: string[] = []): Promise<string> {
  const dir = tempDir("fleetsim-api-");
  const config = join(dir, "prediction.yaml");
  writeFileSync(config, yaml);
  const out = join(dir, "out");
  const r = await cliPredict(config, out, "--format", "json", "--progress", "none", ...extra);
  expect(r.err).toContain("Saved full report to");
  expect(r.code).toBe(0);
  return readFileSync(join(out, "prediction.json"), "utf8");
}

/** The text with host-time summary keys removed (the only keys two runs may differ in). */
function withoutHostKeys(text: string): string {
  const doc = JSON.parse(text) as { summary: Record<string, number> };
  for (const key of HOST_TIME_KEYS) {
    expect(doc.summary).toHaveProperty(key);
    delete doc.summary[key];
  }
  return `${JSON.stringify(doc, null, 2)}\n`;
}

function expectSamePrediction(report: ReplayReport, file: string): void {
  // toJson() is toDict() serialized as predict serializes it.
  expect(report.toJson()).toBe(`${JSON.stringify(report.toDict(), null, 2)}\n`);
  expect(withoutHostKeys(report.toJson())).toBe(withoutHostKeys(file));
}

describe("runTraceReplay: the seed's Python examples against fleetsim predict", () => {
  it("aggregated baseline with the Planner: same prediction.json, HTML report written and linked", async () => {
    const htmlReportPath = join(tempDir("fleetsim-api-html-"), "report.html");
    const report = await runTraceReplay(CONVERSATION, {
      traceFormat: "mooncake",
      traceBlockSize: 512,
      extraEngineArgs: ENGINE,
      numWorkers: 2,
      plannerConfig: PLANNER,
      slaTtftMs: 1500,
      slaItlMs: 50,
      maxSimTimeMs: 3_600_000,
      htmlReportPath,
    });
    const file = await predictFile(aggregatedYaml({ maxVirtualSeconds: 3600 }));

    // The seed's prints.
    expect(report.planner?.metadata.bootstrap.status).toBe("installed");
    expect(report.planner?.scaling_events.length).toBeGreaterThan(0);
    expect(report.summary["gpu_hours"]).toBeGreaterThan(0);
    expect(report.planner?.html_report_path).toBe(htmlReportPath);
    const html = readFileSync(htmlReportPath, "utf8");
    expect(html.startsWith("<!doctype html>") || html.startsWith("<!DOCTYPE html>")).toBe(true);

    // toDict() carries the report's path (as the reference's to_dict); predict writes none.
    const dict = report.toDict() as { planner: { html_report_path: string | null } };
    expect(dict.planner.html_report_path).toBe(htmlReportPath);
    expect(JSON.parse(file).planner.html_report_path).toBeNull();
    const withoutPath = JSON.parse(report.toJson()) as { planner: { html_report_path: string | null } };
    withoutPath.planner.html_report_path = null;
    expect(withoutHostKeys(`${JSON.stringify(withoutPath, null, 2)}\n`)).toBe(withoutHostKeys(file));

    // Typed fields are the document's parts.
    expect(report.summary).toEqual(JSON.parse(report.toJson()).summary);
    expect(report.coverage).toEqual({
      capture_per_request: false,
      capture_planner_details: true,
      capture_canonical_evidence: false,
      per_request_records: 0,
    });
    expect(report.perRequest).toBeNull();
    expect(report.timeseries.t_ms.length).toBeGreaterThan(0);
  });

  it("disaggregated comparison (seed step 2): same prediction.json", async () => {
    const role = (workerType: "prefill" | "decode", maxNumSeqs: number): EngineArgsInput => ({
      engine: {
        backend: "vllm",
        block_size: 64,
        max_num_batched_tokens: 8192,
        max_num_seqs: maxNumSeqs,
        kv_transfer_bandwidth: 400,
        kv_transfer_timing_mode: "destination_missing",
        timing_model: {
          type: "external",
          provider: "ais",
          config: { model: MODEL, system: "h200_sxm", backend: "vllm", worker_type: workerType },
        },
      },
    });
    const report = await runTraceReplay([CONVERSATION], {
      traceBlockSize: 512,
      prefillEngineArgs: role("prefill", 64),
      decodeEngineArgs: role("decode", 256),
      plannerConfig: {
        mode: "disagg",
        optimization_target: "sla",
        enable_throughput_scaling: true,
        enable_load_scaling: true,
        throughput_adjustment_interval_seconds: 300,
        load_adjustment_interval_seconds: 10,
        max_gpu_budget: 4,
        prefill_min_endpoint: 1,
        decode_min_endpoint: 1,
        ttft_ms: 1500,
        itl_ms: 50,
        report_interval_hours: null,
        live_dashboard_port: 0,
      },
      slaTtftMs: 1500,
      slaItlMs: 50,
      // The seed replays one hour; the fixture holds its first ten minutes (a cap of twenty).
      maxSimTimeMs: 1_200_000,
    });
    const yaml = aggregatedYaml({ maxVirtualSeconds: 1200 })
      .replace(/engine:\n[\s\S]*?\nrouter:/, `${SEED_001.disaggregatedEngine}router:`)
      .replace("  min_workers: 1\n", "  prefill_min_workers: 1\n  decode_min_workers: 1\n");
    const file = await predictFile(yaml);
    expect(report.planner?.metadata["mode"]).toBe("disagg");
    expect(report.planner?.html_report_path).toBeNull();
    expectSamePrediction(report, file);
  });

  it("synthetic traffic (Poisson arrivals, per-request records): same prediction.json", async () => {
    const report = await runSyntheticTraceReplay({
      inputTokens: 1024,
      outputTokens: 64,
      requestCount: 60,
      requestRate: 20,
      arrivalSeed: 7,
      extraEngineArgs: { block_size: 32, max_num_seqs: 16, num_gpu_blocks: 2000 },
      numWorkers: 2,
      modelName: "Qwen/Qwen3-8B",
      slaE2eMs: 4000,
      capturePerRequest: true,
    });
    const file = await predictFile(
      `${syntheticTraffic("{type: poisson, requests_per_second: 20, seed: 7}", "{requests: 60}", [1024, 64])}${engineYaml(
        {
          model: "Qwen/Qwen3-8B",
          hardware: "unspecified",
          contextLength: "max",
          replicas: 2,
          scheduler: "{max_sequences: 16}",
          kvCache: "{block_size: 32, capacity: {type: fixed, blocks: 2000}}",
          timing: "{type: polynomial}",
        },
      )}evaluation:
  sla: {e2e_ms: 4000}
`,
      ["--capture-per-request"],
    );
    expect(report.perRequest?.length).toBe(60);
    expect(report.planner).toBeNull();
    expectSamePrediction(report, file);
  });
});

describe("runTraceReplay: plannerConfig forms and planner details", () => {
  /** Ten minutes of the seed example without the HTML report: fast, and the Planner scales in it. */
  const SHORT = {
    traceBlockSize: 512,
    extraEngineArgs: ENGINE,
    numWorkers: 2,
    slaTtftMs: 1500,
    slaItlMs: 50,
    maxSimTimeMs: 600_000,
  } as const;
  const QUIET: PlannerConfig = { ...PLANNER, report_interval_hours: null };

  it("a mapping, inline JSON, a JSON file and a YAML file give the same prediction", async () => {
    const dir = tempDir("fleetsim-api-planner-");
    const jsonFile = join(dir, "planner.json");
    writeFileSync(jsonFile, JSON.stringify(QUIET, null, 2));
    const yamlFile = join(dir, "planner.yaml");
    writeFileSync(
      yamlFile,
      Object.entries(QUIET)
        .map(([k, v]) => `${k}: ${v === null ? "null" : String(v)}`)
        .join("\n"),
    );
    const forms: (PlannerConfig | string)[] = [QUIET, JSON.stringify(QUIET), jsonFile, yamlFile];
    const texts: string[] = [];
    for (const plannerConfig of forms) {
      const report = await runTraceReplay(CONVERSATION, { ...SHORT, plannerConfig });
      expect(report.planner?.html_report_path).toBeNull();
      texts.push(withoutHostKeys(report.toJson()));
    }
    expect(new Set(texts).size).toBe(1);
    const doc = JSON.parse(texts[0]);
    expect(doc.planner.scaling_events.length).toBeGreaterThan(0);
    // And that is predict's prediction for the equivalent YAML.
    expect(texts[0]).toBe(withoutHostKeys(await predictFile(aggregatedYaml({ maxVirtualSeconds: 600 }))));
  });

  it("the Planner's own targets and the report's SLA are separate settings, as in the Python API", async () => {
    const tight: PlannerConfig = { ...QUIET, ttft_ms: 400, itl_ms: 20 };
    // Targets 400/20 ms; goodput judged against 1500/50 ms.
    const apart = await runTraceReplay(CONVERSATION, { ...SHORT, plannerConfig: tight });
    // Targets and SLA both 400/20 ms: predict's single setting (evaluation.sla).
    const same = await runTraceReplay(CONVERSATION, {
      ...SHORT,
      slaTtftMs: 400,
      slaItlMs: 20,
      plannerConfig: tight,
    });
    // Loose targets (60 s / 1 s): on this trace 1500/50 ms scale up as 400/20 ms do (the ITL
    // estimates are ~118 ms), so the contrast is with targets the estimates stay below.
    const loose = await runTraceReplay(CONVERSATION, {
      ...SHORT,
      plannerConfig: { ...QUIET, ttft_ms: 60_000, itl_ms: 1000 },
    });
    const meta = apart.planner!.metadata as unknown as {
      planner_config: { ttft_ms: number; itl_ms: number };
    };
    expect(meta.planner_config.ttft_ms).toBe(400);
    expect(meta.planner_config.itl_ms).toBe(20);
    // The Planner scaled on its targets: the same decisions as with SLA = targets …
    expect(apart.planner!.scaling_events).toEqual(same.planner!.scaling_events);
    expect(apart.planner!.ticks).toEqual(same.planner!.ticks);
    // … which are not the decisions it takes with loose targets.
    expect(apart.planner!.scaling_events).not.toEqual(loose.planner!.scaling_events);
    // The latencies are those of that Planner, while goodput is judged against 1500/50 ms.
    expect(apart.summary.mean_ttft_ms).toBe(same.summary.mean_ttft_ms);
    expect(apart.summary.goodput_completed_requests).toBeGreaterThan(
      same.summary.goodput_completed_requests ?? Number.POSITIVE_INFINITY,
    );
  });

  it("engine arguments without a model and GPU leave the perf-model bootstrap at not_configured_load_only", async () => {
    const anonymous: EngineArgsInput = {
      engine: { block_size: 64, max_num_batched_tokens: 8192, max_num_seqs: 256 },
    };
    const lean = await runTraceReplay(CONVERSATION, {
      ...SHORT,
      extraEngineArgs: anonymous,
      plannerConfig: QUIET,
    });
    const bootstrap = (lean.planner!.metadata as unknown as { bootstrap: Record<string, unknown> }).bootstrap;
    expect(bootstrap).toEqual({ status: "not_configured_load_only" });
    // The same engine named through its AIS timing model is bootstrapped (priced benchmark passes).
    const named = await runTraceReplay(CONVERSATION, { ...SHORT, plannerConfig: QUIET });
    const namedBootstrap = (named.planner!.metadata as unknown as { bootstrap: Record<string, unknown> })
      .bootstrap;
    expect(namedBootstrap.status).toBe("installed");
    expect(namedBootstrap.decode_fpm_count).toBeGreaterThan(0);
  });

  it("capturePlannerDetails: false drops ticks, lifecycle operations and the report, keeps the rest", async () => {
    const defaultDir = resolve("planner_reports");
    const before = listing(defaultDir);
    const full = await runTraceReplay(CONVERSATION, { ...SHORT, plannerConfig: QUIET });
    const lean = await runTraceReplay(CONVERSATION, {
      ...SHORT,
      plannerConfig: { ...PLANNER, report_interval_hours: 24 },
      capturePlannerDetails: false,
    });
    expect(listing(defaultDir)).toEqual(before);
    const f = full.planner!;
    const l = lean.planner!;
    expect(f.ticks.length).toBeGreaterThan(0);
    expect(f.lifecycle_operations.length).toBeGreaterThan(0);
    expect(l.ticks).toEqual([]);
    expect(l.lifecycle_operations).toEqual([]);
    expect(l.html_report_path).toBeNull();
    expect(l.scaling_events).toEqual(f.scaling_events);
    expect(l.total_ticks).toBe(f.total_ticks);
    expect(l.metadata).toEqual({ ...f.metadata, details_captured: false });
    expect(lean.coverage.capture_planner_details).toBe(false);
    expect(lean.summary).toEqual({ ...full.summary, ...pick(lean.summary, HOST_TIME_KEYS) });
    const dict = lean.toDict() as { planner: { ticks: unknown[] } };
    expect(dict.planner.ticks).toEqual([]);
  });
});

function listing(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

function pick(summary: Readonly<Record<string, number>>, keys: readonly string[]): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [k, summary[k]]));
}
