/**
 * Library API errors name the API's own options, never the YAML config paths they are translated
 * into (docs/api.md "Errors"): retune's traffic requirements, the Planner's SLA target, values of
 * options that become part of a config mapping, and trace errors about a translated setting.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  runSyntheticTraceReplay,
  runTraceReplay,
  type SyntheticReplayOptions,
  TraceError,
  type TraceReplayOptions,
} from "../../src/index.js";
import { rejectionOf } from "../helpers/configHelpers.js";
import { dynamoTrace } from "../helpers/dynamoTraces.js";
import { tempDir, writeTrace } from "../helpers/specs.js";

/** A YAML config path at the start of a word: `traffic.source.type`, `evaluation.sla.ttft_ms`, … */
const CONFIG_PATH = /(?<![\w.])(traffic|engine|router|planner|evaluation|execution)\.[a-z_]+/;

const rejection = (run: () => Promise<unknown>) => rejectionOf(run, Error);

function paths(err: Error): string[] {
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).issues.map((i) => i.path);
}

const RETUNE_ONLY = {
  enable_load_scaling: false,
  enable_throughput_scaling: false,
  retune: { interval_seconds: 30, router: { overlap_score_credit: { choices: [0.0, 1.0] } } },
};
const SYNTHETIC: SyntheticReplayOptions = {
  inputTokens: 100,
  outputTokens: 10,
  requestCount: 10,
  requestRate: 1,
  modelName: "Qwen/Qwen3-8B",
};

describe("API errors name the API's options", () => {
  const mooncake = writeTrace([{ timestamp: 0, input_length: 700, output_length: 5, hash_ids: [1, 2] }]);
  const dir = tempDir();
  const dynamo = join(dir, "trace.jsonl");
  writeFileSync(dynamo, dynamoTrace(40, 500));

  it("retune with synthetic traffic: at plannerConfig.retune, pointing to runTraceReplay", async () => {
    const err = await rejection(() =>
      runSyntheticTraceReplay({ ...SYNTHETIC, routerMode: "kv_router", plannerConfig: RETUNE_ONLY }),
    );
    expect(paths(err)).toEqual(["plannerConfig.retune"]);
    expect(err.message).toContain("synthetic traffic cannot be retuned");
    expect(err.message).toContain('runTraceReplay(tracePaths, { traceFormat: "dynamo", … })');
    // Before: "requires a Dynamo request trace: inputTokens='trace' with traffic.source.format='dynamo'"
    expect(err.message).not.toMatch(CONFIG_PATH);
    expect(err.message).not.toContain("inputTokens='trace'");
    expect(err.message).not.toContain("requestRate='trace_timestamps'");
  });

  it("retune on a Mooncake trace, closed loop, capped: at traceFormat, replayConcurrency, maxSimTimeMs", async () => {
    const err = await rejection(() =>
      runTraceReplay(mooncake, {
        modelName: "Qwen/Qwen3-8B",
        routerMode: "kv_router",
        replayConcurrency: 3,
        maxSimTimeMs: 60_000,
        plannerConfig: RETUNE_ONLY,
      }),
    );
    expect(paths(err)).toEqual(["traceFormat", "replayConcurrency", "maxSimTimeMs"]);
    expect(err.message).toContain('set traceFormat: "dynamo"');
    expect(err.message).toContain("drop replayConcurrency (arrivalSpeedupRatio is allowed)");
    expect(err.message).toContain("drop maxSimTimeMs");
    expect(err.message).not.toMatch(CONFIG_PATH);
  });

  it("the same retune on a Dynamo trace on its timestamps runs", async () => {
    const report = await runTraceReplay(dynamo, {
      modelName: "Qwen/Qwen3-8B",
      traceFormat: "dynamo",
      routerMode: "kv_router",
      // No HTML report (it would go to planner_reports/ in the working directory).
      plannerConfig: {
        ...RETUNE_ONLY,
        report_interval_hours: null,
        retune: { ...RETUNE_ONLY.retune, max_parallel: 1 },
      },
    });
    expect(Array.isArray(report.planner?.retune_events)).toBe(true);
    expect(report.planner?.html_report_path).toBeNull();
  }, 60_000);

  it("optimization_target 'sla' with an e2e-only SLA: at slaE2eMs, not evaluation.sla", async () => {
    const err = await rejection(() =>
      runTraceReplay(dynamo, {
        modelName: "Qwen/Qwen3-8B",
        traceFormat: "dynamo",
        slaE2eMs: 1000,
        plannerConfig: { optimization_target: "sla", enable_throughput_scaling: true },
      }),
    );
    expect(paths(err)).toEqual(["slaE2eMs"]);
    expect(err.message).not.toMatch(CONFIG_PATH);
  });

  it("a bad arrivalSpeedupRatio or replayConcurrency is reported at the option itself", async () => {
    expect(paths(await rejection(() => runTraceReplay(mooncake, { arrivalSpeedupRatio: -1 })))).toEqual([
      "arrivalSpeedupRatio",
    ]);
    expect(paths(await rejection(() => runTraceReplay(mooncake, { replayConcurrency: 0 })))).toEqual([
      "replayConcurrency",
    ]);
    expect(
      paths(
        await rejection(() =>
          runSyntheticTraceReplay({ ...SYNTHETIC, requestRate: undefined, replayConcurrency: -2 }),
        ),
      ),
    ).toEqual(["replayConcurrency"]);
  });

  it("a trace error about a translated setting names the option (traceBlockSize)", async () => {
    const err = await rejection(() => runTraceReplay(dynamo, { traceFormat: "dynamo", traceBlockSize: 32 }));
    expect(err).toBeInstanceOf(TraceError);
    expect((err as TraceError).file).toBe(dynamo);
    expect(err.message).toContain("does not match traceBlockSize 32");
    expect(err.message).not.toMatch(CONFIG_PATH);
  });

  it("no error of a set of mistaken calls names a config path", async () => {
    const calls: [string, TraceReplayOptions][] = [
      ["retune without the KV router", { traceFormat: "dynamo", plannerConfig: RETUNE_ONLY }],
      [
        "retune searching nothing",
        {
          traceFormat: "dynamo",
          routerMode: "kv_router",
          plannerConfig: { ...RETUNE_ONLY, retune: { interval_seconds: 30 } },
        },
      ],
      ["a negative load interval", { plannerConfig: { load_adjustment_interval_seconds: -5 } }],
      [
        "a negative router temperature",
        { routerMode: "kv_router", routerConfig: { router_temperature: -1 } },
      ],
      ["a negative maxSimTimeMs", { maxSimTimeMs: -1 }],
    ];
    for (const [what, options] of calls) {
      const err = await rejection(() =>
        runTraceReplay(options.traceFormat === "dynamo" ? dynamo : mooncake, {
          modelName: "Qwen/Qwen3-8B",
          ...options,
        }),
      );
      expect(err.message, what).not.toMatch(CONFIG_PATH);
    }
  });
});
