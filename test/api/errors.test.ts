/**
 * The library API's typed errors (ConfigError with the option's path, TraceError with file and
 * line), `predict` on a config object, the HTML report's default location, and the package
 * entry's exports against docs/api.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { defaultReportPath } from "../../src/api/htmlReport.js";
import * as api from "../../src/index.js";
import {
  predict,
  ReplayAborted,
  runSyntheticTraceReplay,
  runTraceReplay,
  TraceError,
  type TraceReplayOptions,
} from "../../src/index.js";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { cliPredict } from "../helpers/cli.js";
import { firstIssueAt, rejectionOf } from "../helpers/configHelpers.js";
import { tempDir, writeTrace } from "../helpers/specs.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** A small runnable deployment: polynomial timing, fixed capacity (mocker defaults), a known model. */
const SMALL: TraceReplayOptions = {
  extraEngineArgs: { max_num_seqs: 8 },
  modelName: "Qwen/Qwen3-8B",
  numWorkers: 2,
};

const ROWS = [
  { timestamp: 0, input_length: 700, output_length: 5, hash_ids: [1, 2] },
  { timestamp: 10, input_length: 900, output_length: 3, hash_ids: [1, 3] },
  { timestamp: 2000, input_length: 300, output_length: 4, hash_ids: [4] },
];

/** The ConfigError a call rejects with. */
const configError = (run: () => Promise<unknown>) => rejectionOf(run);
const issueAt = firstIssueAt;

describe("API argument errors are ConfigErrors whose paths name the options", () => {
  const trace = writeTrace(ROWS);

  it("a Planner value the config rejects is reported at its PlannerConfig name", async () => {
    const err = await configError(() =>
      runTraceReplay(trace, {
        ...SMALL,
        plannerConfig: { max_gpu_budget: 0, load_scaling_down_sensitivity: 120 },
      }),
    );
    expect(err.configPath).toBe("runTraceReplay");
    expect(issueAt(err, "plannerConfig.max_gpu_budget").message).toContain("positive integer or -1");
    issueAt(err, "plannerConfig.load_scaling_down_sensitivity");
    expect(err.message).toContain("plannerConfig.max_gpu_budget");
    expect(err.message).not.toContain("max_num_gpus");
  });

  it("misspelled options and PlannerConfig fields get a did-you-mean", async () => {
    const err = await configError(() =>
      runTraceReplay(trace, {
        ...SMALL,
        traceFromat: "mooncake",
        plannerConfig: { max_gpu_budgte: 4 },
      } as TraceReplayOptions),
    );
    expect(issueAt(err, "traceFromat").hint).toBe("did you mean 'traceFormat'?");
    expect(issueAt(err, "plannerConfig.max_gpu_budgte").hint).toBe("did you mean 'max_gpu_budget'?");
  });

  it("engine arguments are reported at the argument, in the canonical form too", async () => {
    // Checked by the config schema after translation.
    const err = await configError(() =>
      runTraceReplay(trace, { ...SMALL, extraEngineArgs: { engine: { max_num_seqs: 0 } } }),
    );
    issueAt(err, "extraEngineArgs.engine.max_num_seqs");
    // Checked by the translation itself.
    const typo = await configError(() =>
      runTraceReplay(trace, { ...SMALL, extraEngineArgs: { block_sise: 16 } } as TraceReplayOptions),
    );
    expect(issueAt(typo, "extraEngineArgs.block_sise").hint).toBe("did you mean 'block_size'?");
  });

  it("Planner targets must be positive numbers of milliseconds", async () => {
    const err = await configError(() =>
      runTraceReplay(trace, {
        ...SMALL,
        plannerConfig: { optimization_target: "sla", ttft_ms: -5, itl_ms: "fast" as unknown as number },
      }),
    );
    expect(issueAt(err, "plannerConfig.ttft_ms").message).toContain("positive number of milliseconds");
    expect(issueAt(err, "plannerConfig.itl_ms").message).toContain("positive number of milliseconds");
  });

  it("mode must match the engine arguments; P/D arguments need both roles", async () => {
    const err = await configError(() =>
      runTraceReplay(trace, { ...SMALL, plannerConfig: { mode: "disagg" } }),
    );
    expect(issueAt(err, "plannerConfig.mode").message).toContain("expected 'agg'");
    const pd = await configError(() => runTraceReplay(trace, { prefillEngineArgs: {} }));
    issueAt(pd, "decodeEngineArgs");
  });

  it("a plannerConfig YAML file's mistakes name the file, line and column", async () => {
    const dir = tempDir("fleetsim-api-err-");
    const file = join(dir, "planner.yaml");
    writeFileSync(file, "optimization_target: load\nmin_endpoint: -3\n");
    const err = await configError(() => runTraceReplay(trace, { ...SMALL, plannerConfig: file }));
    expect(issueAt(err, "plannerConfig.min_endpoint").source).toBe(`${file}, line 2, column 1`);
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "mode: [agg\n");
    const syntax = await configError(() => runTraceReplay(trace, { ...SMALL, plannerConfig: bad }));
    expect(syntax.configPath).toBe(bad);
    expect(syntax.issues[0].line).toBeGreaterThan(0);
    const inline = await configError(() => runTraceReplay(trace, { ...SMALL, plannerConfig: "{mode: agg}" }));
    expect(issueAt(inline, "plannerConfig").message).toContain("invalid inline JSON");
  });

  it("a missing trace file is reported at tracePaths", async () => {
    const err = await configError(() => runTraceReplay(join(tempDir(), "none.jsonl"), SMALL));
    expect(issueAt(err, "tracePaths.0").message).toContain("trace file not found");
  });

  it("synthetic traffic needs exactly one arrival option", async () => {
    const err = await configError(() =>
      runSyntheticTraceReplay({
        inputTokens: 10,
        outputTokens: 2,
        requestCount: 3,
        requestRate: 1,
        replayConcurrency: 2,
      }),
    );
    expect(err.configPath).toBe("runSyntheticTraceReplay");
    issueAt(err, "replayConcurrency");
  });

  it("htmlReportPath with report_interval_hours: null is a contradiction", async () => {
    const err = await configError(() =>
      runTraceReplay(trace, {
        ...SMALL,
        plannerConfig: { report_interval_hours: null },
        htmlReportPath: join(tempDir(), "r.html"),
      }),
    );
    issueAt(err, "htmlReportPath");
  });
});

describe("abort", () => {
  it("an aborted signal stops the replay and rejects with ReplayAborted", async () => {
    const synthetic = { inputTokens: 64, outputTokens: 4, replayConcurrency: 64, ...SMALL } as const;
    const early = new AbortController();
    early.abort();
    await expect(
      runSyntheticTraceReplay({ ...synthetic, requestCount: 10, signal: early.signal }),
    ).rejects.toBeInstanceOf(ReplayAborted);
    const late = new AbortController();
    const started = performance.now();
    const run = runSyntheticTraceReplay({ ...synthetic, requestCount: 300_000, signal: late.signal });
    setTimeout(() => late.abort(), 200);
    await expect(run).rejects.toBeInstanceOf(ReplayAborted);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

describe("trace errors", () => {
  it("a malformed trace line rejects with a TraceError naming the file and line", async () => {
    const dir = tempDir("fleetsim-api-trace-");
    const path = join(dir, "trace.jsonl");
    writeFileSync(path, `${JSON.stringify(ROWS[0])}\n{"timestamp": 5, "input_length": 3\n`);
    const err = await runTraceReplay(path, SMALL).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TraceError);
    expect((err as TraceError).file).toBe(path);
    expect((err as TraceError).line).toBe(2);
  });
});

describe("predict(config)", () => {
  it("runs the YAML-shaped object like fleetsim predict runs the file (relative paths from baseDir)", async () => {
    const file = join(ROOT, "examples", "aggregated.yaml");
    const config = parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const report = await predict(config, { baseDir: join(ROOT, "examples") });
    const out = join(tempDir("fleetsim-api-predict-"), "out");
    const r = await cliPredict(file, out, "--format", "json", "--progress", "none");
    expect(r.code).toBe(0);
    const strip = (text: string): string => {
      const doc = JSON.parse(text);
      for (const key of HOST_TIME_KEYS) delete doc.summary[key];
      return JSON.stringify(doc);
    };
    expect(strip(report.toJson())).toBe(strip(readFileSync(join(out, "prediction.json"), "utf8")));
    expect(report.summary["completed_requests"]).toBeGreaterThan(0);
  });

  it("reports config mistakes at their config paths", async () => {
    const err = await configError(() =>
      predict({ engine: { model: "m", hardware: "h200_sxm", mode: "aggregatd" } }),
    );
    expect(err.configPath).toBe("predict");
    expect(issueAt(err, "engine.mode").message).toContain("'aggregated' or 'disaggregated'");
  });

  it("writes the HTML report when asked (fleetsim predict never does)", async () => {
    const html = join(tempDir("fleetsim-api-predict-html-"), "nested", "report.html");
    const config = parse(readFileSync(join(ROOT, "examples", "aggregated.yaml"), "utf8")) as Record<
      string,
      unknown
    >;
    const report = await predict(config, { baseDir: join(ROOT, "examples"), htmlReportPath: html });
    expect(existsSync(html)).toBe(true);
    expect(report.planner).toBeNull();
  });
});

describe("the HTML report's default location", () => {
  it("is planner_reports/ under the working directory, never overwriting an earlier report", () => {
    const dir = tempDir("fleetsim-api-default-");
    const now = new Date("2026-03-04T05:06:07.890Z");
    const first = defaultReportPath(dir, now);
    expect(first).toBe(join(dir, "planner_reports", "planner-report-20260304T050607Z.html"));
    mkdirSync(join(dir, "planner_reports"));
    writeFileSync(first, "");
    expect(defaultReportPath(dir, now)).toBe(
      join(dir, "planner_reports", "planner-report-20260304T050607Z-2.html"),
    );
  });
});

describe("package entry", () => {
  it("exports every value docs/api.md lists, and only those", () => {
    const doc = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
    const section = doc.split("## Exports")[1]?.split("\n## ")[0] ?? "";
    const listed = (kind: string): string[] => {
      const line = section.split("\n").find((l) => l.startsWith(`- ${kind}:`)) ?? "";
      return [...line.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort();
    };
    expect(Object.keys(api).sort()).toEqual(listed("Values"));
    const entry = readFileSync(join(ROOT, "src", "index.ts"), "utf8");
    const types = listed("Types");
    expect(types.length).toBeGreaterThan(10);
    for (const name of types) expect(entry).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
