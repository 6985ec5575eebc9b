/**
 * `planner.load_predictor_warmup_trace` (seed 000 "Configure the Planner Section"): a file, a
 * directory of JSONL or JSONL.GZ shards, or a glob; a relative path resolves against the working
 * directory. The shards are read together as one trace.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { readWarmupTrace } from "../../src/autoscale/plannerSetup.js";
import { extractMetricsFromMooncake } from "../../src/planner/trafficWindows.js";
import type { PlannerSettings } from "../../src/planner/types.js";
import { issueAt, loadError, loadYaml, RUNNABLE_ENGINE, writeFiles } from "../helpers/configHelpers.js";

const KEY = "planner.load_predictor_warmup_trace";

function mooncake(rows: readonly [number, number, number][]): string {
  return rows
    .map(([timestamp, input, output]) =>
      JSON.stringify({ timestamp, input_length: input, output_length: output, hash_ids: [1] }),
    )
    .join("\n");
}

function dynamo(rows: readonly [number, number, number][]): string {
  return rows
    .map(([ms, input, output], i) =>
      JSON.stringify({
        schema: "dynamo.request.trace.v1",
        event_type: "request_end",
        event_time_unix_ms: 1_760_000_000_000 + ms,
        request: {
          request_id: `r${ms}-${i}`,
          request_received_ms: 1_760_000_000_000 + ms,
          output_tokens: output,
          replay: {
            trace_block_size: 512,
            input_length: input,
            input_sequence_hashes: Array.from({ length: Math.ceil(input / 512) }, (_, k) => i * 10 + k + 1),
          },
        },
      }),
    )
    .join("\n");
}

const FIRST: [number, number, number][] = [
  [0, 100, 10],
  [1_000, 300, 30],
];
const SECOND: [number, number, number][] = [
  [200_000, 500, 50],
  [201_000, 700, 70],
];

function config(warmup: string): string {
  return `planner: {policy: enabled, load_predictor_warmup_trace: '${warmup}'}\n${RUNNABLE_ENGINE}`;
}

function warmupOf(yaml: string, workDir: string): string | null {
  return loadYaml(yaml, { workDir: () => workDir }).planner?.loadPredictorWarmupTrace ?? null;
}

describe("load_predictor_warmup_trace: where it is looked for", () => {
  it("a relative path resolves against the working directory, not the config's directory", () => {
    const work = writeFiles({ "warm/up.jsonl": mooncake(FIRST) });
    expect(warmupOf(config("warm/up.jsonl"), work)).toBe(join(work, "warm/up.jsonl"));
  });

  it("a file that exists only next to the config is not found, and the error says where it looked", () => {
    const work = writeFiles({});
    const err = loadError(config("warm/up.jsonl"), {
      files: { "warm/up.jsonl": mooncake(FIRST) },
      workDir: () => work,
    });
    const issue = issueAt(err, KEY);
    expect(issue.message).toContain(join(work, "warm/up.jsonl"));
    expect(issue.message).toContain("trace file not found");
    expect(issue.message).toContain("working directory");
  });

  it("accepts an existing directory of shards and a glob", () => {
    const work = writeFiles({ "hist/a.jsonl": mooncake(FIRST), "hist/b.jsonl": mooncake(SECOND) });
    expect(warmupOf(config("hist"), work)).toBe(join(work, "hist"));
    expect(warmupOf(config("hist/*.jsonl"), work)).toBe(join(work, "hist/*.jsonl"));
  });

  it("a directory without shards, a glob matching nothing and two copies of one shard are errors", () => {
    const work = writeFiles({
      "empty/readme.txt": "no shards",
      "both/a.jsonl": mooncake(FIRST),
      "both/a.jsonl.gz": "",
    });
    const message = (warmup: string) =>
      issueAt(loadError(config(warmup), { workDir: () => work }), KEY).message;
    expect(message("empty")).toContain("directory holds no .jsonl or .jsonl.gz file");
    expect(message("empty/*.jsonl")).toContain("no file matches the pattern");
    expect(message("both")).toContain("both a plain and a gzipped copy of one shard match");
  });
});

function settings(path: string): PlannerSettings {
  return { loadPredictorWarmupTrace: path } as PlannerSettings;
}

describe("load_predictor_warmup_trace: shards are read as one trace", () => {
  it("a directory of Mooncake shards (plain and gzip) gives the windows of the concatenated trace", async () => {
    const dir = writeFiles({ "one.jsonl": mooncake([...FIRST, ...SECOND]) });
    const parts = writeFiles({ "x/a.jsonl": mooncake(FIRST) });
    writeFileSync(join(parts, "x/b.jsonl.gz"), gzipSync(mooncake(SECOND)));

    const whole = await readWarmupTrace(settings(join(dir, "one.jsonl")));
    const sharded = await readWarmupTrace(settings(join(parts, "x")));
    const globbed = await readWarmupTrace(settings(join(parts, "x", "*.jsonl*")));
    if (whole?.format !== "mooncake" || sharded?.format !== "mooncake" || globbed?.format !== "mooncake") {
      throw new Error("expected Mooncake warm-up traces");
    }
    const windows = (t: typeof whole) => extractMetricsFromMooncake(t, 180);
    expect(windows(sharded)).toEqual(windows(whole));
    expect(windows(globbed)).toEqual(windows(whole));
    // Two windows with traffic 180 s apart: requests from both shards are counted.
    expect(windows(sharded).map((w) => w.numReq)).toEqual([2, 2]);
  });

  it("Dynamo request-trace shards share one time origin", async () => {
    const parts = writeFiles({
      "d/trace.000001.jsonl": dynamo(FIRST),
      "d/trace.000002.jsonl": dynamo(SECOND),
    });
    const trace = await readWarmupTrace(settings(join(parts, "d", "trace.*.jsonl")));
    if (trace?.format !== "dynamo") throw new Error("expected a Dynamo warm-up trace");
    expect(trace.requests.count).toBe(4);
    expect([...trace.requests.startMs].map((ms) => ms - 1_760_000_000_000)).toEqual([
      0, 1_000, 200_000, 201_000,
    ]);
  });

  it("refuses a mix of Dynamo and Mooncake shards", async () => {
    const parts = writeFiles({ "m/a.jsonl": dynamo(FIRST), "m/b.jsonl": mooncake(SECOND) });
    await expect(readWarmupTrace(settings(join(parts, "m")))).rejects.toThrow(
      "mixes Dynamo request traces and Mooncake traces",
    );
  });
});
