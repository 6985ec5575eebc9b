import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { cli, cliPredict, setFlags } from "../helpers/cli.js";
import { configFile, engineYaml } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

/** A small valid config over a trace in the same temp dir. */
function project(opts: { rows?: string[]; extraYaml?: string } = {}) {
  const rows = opts.rows ?? [
    '{"timestamp": 0, "input_length": 700, "output_length": 5, "hash_ids": [1, 2]}',
    '{"timestamp": 10, "input_length": 900, "output_length": 3, "hash_ids": [1, 3]}',
    '{"timestamp": 25, "input_length": 300, "output_length": 4, "hash_ids": [4]}',
  ];
  return configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps}
${engineYaml({ replicas: 2, blocks: 256, timing: "{type: polynomial}" })}${opts.extraYaml ?? ""}`,
    { dir: tempDir("fleetsim-cli-"), files: { "trace.jsonl": `${rows.join("\n")}\n` } },
  );
}

describe("fleetsim predict: success paths", () => {
  it("writes prediction.json with sorted keys, prints the table and the saved line", async () => {
    const p = project();
    const r = await cliPredict(p.config, p.out);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("NVIDIA AIPerf | LLM Metrics");
    expect(r.out).toContain("Time to First Token (ms)");
    expect(r.out.trimEnd().endsWith(`Saved full report to: ${join(p.out, "prediction.json")}`)).toBe(true);
    const text = readFileSync(join(p.out, "prediction.json"), "utf8");
    const doc = JSON.parse(text);
    expect(Object.keys(doc)).toEqual(["coverage", "per_request", "planner", "run", "summary", "timeseries"]);
    expect(doc.planner).toBeNull();
    expect(doc.per_request).toBeNull();
    expect(doc.summary.completed_requests).toBe(3);
    expect(Object.keys(doc.summary)).toEqual([...Object.keys(doc.summary)].sort());
    expect(text.startsWith('{\n  "coverage": {\n    "capture_canonical_evidence": false')).toBe(true);
    expect(existsSync(join(p.out, "requests.jsonl"))).toBe(false);
  });

  it("--capture-per-request writes requests.jsonl and fills per_request", async () => {
    const p = project();
    const r = await cliPredict(p.config, p.out, "--capture-per-request");
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
    const lines = readFileSync(join(p.out, "requests.jsonl"), "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(doc.per_request).toHaveLength(3);
    expect(JSON.parse(lines[0])).toEqual(doc.per_request[0]);
    expect(doc.coverage.per_request_records).toBe(3);
    // Requests 0 and 1 share hash id 1 (512 tokens = 8 engine blocks); request 1 lands on worker 1,
    // so round robin gives it no reuse, but every record is complete.
    expect(doc.per_request.map((x: { decode_worker_idx: number }) => x.decode_worker_idx)).toEqual([0, 1, 0]);
  });

  it("--format json prints the summary as one compact sorted JSON object", async () => {
    const p = project();
    const r = await cliPredict(p.config, p.out, "--format", "json");
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]);
    expect(summary.num_requests).toBe(3);
    expect(r.err).toContain("Saved full report to:");
  });

  it("is deterministic: two runs give byte-identical prediction.json except host-time keys", async () => {
    const p = project();
    const a = await cli("predict", "-c", p.config, "--output-dir", join(p.dir, "a"), "--capture-per-request");
    const b = await cli("predict", "-c", p.config, "--output-dir", join(p.dir, "b"), "--capture-per-request");
    expect([a.code, b.code]).toEqual([0, 0]);
    const strip = (path: string) =>
      readFileSync(path, "utf8")
        .split("\n")
        .filter((l) => !HOST_TIME_KEYS.some((k) => l.includes(`"${k}"`)))
        .join("\n");
    expect(strip(join(p.dir, "a", "prediction.json"))).toBe(strip(join(p.dir, "b", "prediction.json")));
    expect(readFileSync(join(p.dir, "a", "requests.jsonl"), "utf8")).toBe(
      readFileSync(join(p.dir, "b", "requests.jsonl"), "utf8"),
    );
  });

  it("--set overrides apply before validation (replicas, load)", async () => {
    const p = project();
    const r = await cliPredict(
      p.config,
      p.out,
      "--capture-per-request",
      ...setFlags(
        "engine.workers.aggregated.parallelism.replicas=1",
        "traffic.load={type: concurrency, concurrency: 1}",
      ),
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
    expect(doc.per_request.every((x: { decode_worker_idx: number }) => x.decode_worker_idx === 0)).toBe(true);
    // Closed loop with one slot: each request arrives when the previous one finished.
    const recs = doc.per_request as { arrival_time_ms: number; terminal_time_ms: number }[];
    expect(recs[1].arrival_time_ms).toBe(recs[0].terminal_time_ms);
    expect(recs[2].arrival_time_ms).toBe(recs[1].terminal_time_ms);
  });

  it("--overwrite replaces only fleetsim's own files", async () => {
    const p = project();
    mkdirSync(p.out);
    writeFileSync(join(p.out, "notes.txt"), "keep me");
    writeFileSync(join(p.out, "requests.jsonl"), "stale");
    const r = await cliPredict(p.config, p.out, "--overwrite");
    expect(r.code).toBe(0);
    expect(readFileSync(join(p.out, "notes.txt"), "utf8")).toBe("keep me");
    expect(existsSync(join(p.out, "requests.jsonl"))).toBe(false);
    expect(readdirSync(p.out).sort()).toEqual(["notes.txt", "prediction.json", "resource-runtime.json"]);
  });

  it("prints help with examples and the version", async () => {
    const help = await cli("predict", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toContain("Examples:");
    const version = await cli("--version");
    expect(version.code).toBe(0);
    expect(version.out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

/**
 * Runs a failing case and checks exit code 2, the message, and that nothing was written. A
 * `predict` without `--output-dir` gets a fresh one, so that a `./fleetsim-output` left in the
 * working directory (the README's quick start) cannot decide which error comes first.
 */
async function expectUserError(argv: string[], ...fragments: (string | RegExp)[]): Promise<string> {
  const ownOutput = argv[0] === "predict" && !argv.includes("--output-dir");
  const r = await cli(...argv, ...(ownOutput ? ["--output-dir", join(tempDir("fleetsim-cli-"), "out")] : []));
  expect(r.code, r.err).toBe(2);
  expect(r.out).toBe("");
  expect(r.err).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/); // no stack trace
  for (const f of fragments) {
    if (typeof f === "string") expect(r.err).toContain(f);
    else expect(r.err).toMatch(f);
  }
  return r.err;
}

describe("fleetsim predict: bad input exits 2 with a clear message", () => {
  it("unknown config key: dotted path, line and column", async () => {
    const p = project({ extraYaml: "evaluation:\n  sla: {ttft_ms: 100, itl_msec: 5}\n" });
    await expectUserError(
      ["predict", "-c", p.config, "--output-dir", p.out],
      "prediction.yaml",
      "evaluation.sla.itl_msec",
      "Extra inputs are not permitted (line 14, column 23)",
    );
    expect(existsSync(p.out)).toBe(false);
  });

  it("unknown key introduced by --set names the flag", async () => {
    const p = project();
    await expectUserError(
      ["predict", "-c", p.config, "--output-dir", p.out, "--set", "engine.workers.aggregated.schedular.x=1"],
      "engine.workers.aggregated.schedular",
      "Extra inputs are not permitted",
      "--set engine.workers.aggregated.schedular.x=1",
    );
  });

  /** Bad `--set` values on the valid project: the flags and what the error must say. */
  const BAD_SETS: readonly { name: string; sets: string[]; fragments: string[] }[] = [
    { name: "--set without '='", sets: ["engine.model"], fragments: ["--set", "engine.model"] },
    {
      name: "--set with a sequence index",
      sets: ["traffic.source.paths.0=x.jsonl"],
      fragments: ["sequence indexes are unsupported"],
    },
    {
      name: "--set with a wrongly typed value",
      sets: ["engine.workers.aggregated.parallelism.replicas=two"],
      fragments: [
        "engine.workers.aggregated.parallelism.replicas",
        "--set engine.workers.aggregated.parallelism.replicas=two",
      ],
    },
    {
      name: "default timing for a model fleetsim cannot find",
      sets: ["engine.workers.aggregated.timing={type: default}"],
      fragments: ["engine.model", "unknown model 'test/model'"],
    },
    {
      name: "default KV capacity when the weights do not fit",
      sets: [
        "engine.model=meta-llama/Llama-3.1-70B",
        "engine.workers.aggregated.kv_cache.capacity={type: default}",
      ],
      fragments: ["engine.workers.aggregated.kv_cache.capacity", "needs", "raise tensor or pipeline"],
    },
    {
      name: "missing trace file",
      sets: ["traffic.source.paths=[missing.jsonl]"],
      fragments: ["missing.jsonl", "not found"],
    },
  ];
  for (const c of BAD_SETS) {
    it(c.name, async () => {
      const p = project();
      await expectUserError(["predict", "-c", p.config, ...setFlags(...c.sets)], ...c.fragments);
    });
  }

  /** Bad trace rows (the trace is the one row): what the error must say. */
  const BAD_ROWS: readonly { name: string; row: string; fragments: string[] }[] = [
    {
      name: "trace line missing output_length names the field",
      row: '{"timestamp": 0, "input_length": 10, "hash_ids": [1]}',
      fragments: ["trace.jsonl:1", "output_length"],
    },
    {
      name: "trace line with a negative input_length",
      row: '{"timestamp": 0, "input_length": -3, "output_length": 1, "hash_ids": [1]}',
      fragments: ["trace.jsonl:1", "input_length"],
    },
    {
      name: "trace line whose hash_ids is not an array",
      row: '{"timestamp": 0, "input_length": 3, "output_length": 1, "hash_ids": 7}',
      fragments: ["trace.jsonl:1", "hash_ids"],
    },
    { name: "empty trace", row: "", fragments: ["trace.jsonl"] },
  ];
  for (const c of BAD_ROWS) {
    it(c.name, async () => {
      const p = project({ rows: [c.row] });
      await expectUserError(["predict", "-c", p.config], ...c.fragments);
    });
  }

  it("missing config file", async () => {
    const p = project();
    await expectUserError(
      ["predict", "-c", join(p.dir, "nope.yaml")],
      "nope.yaml",
      "cannot read config file",
    );
  });

  it("invalid YAML with its position", async () => {
    const p = project();
    writeFileSync(p.config, "engine:\n  model: [unclosed\n  hardware: h200_sxm\n");
    await expectUserError(["predict", "-c", p.config], "invalid YAML", /line \d+/);
  });

  it("an unknown planner key", async () => {
    const p = project({ extraYaml: "planner:\n  policy: enabled\n  scale_every: 5\n" });
    await expectUserError(
      ["predict", "-c", p.config, "--output-dir", p.out],
      "planner.scale_every",
      "Extra inputs are not permitted",
    );
  });

  it("--stack engine rejects a router section", async () => {
    const p = project({ extraYaml: "router:\n  policy: round_robin\n" });
    await expectUserError(["predict", "-c", p.config, "--stack", "engine"], "router");
  });

  it("poisson load does not accept concurrency", async () => {
    const p = project();
    writeFileSync(
      p.config,
      "traffic:\n  source: {type: synthetic}\n  load: {type: poisson, requests_per_second: 2, concurrency: 3}\n  stop: {requests: 5}\nengine: {model: m, hardware: h200_sxm, context_length: 4096, workers: {aggregated: {timing: {type: polynomial}, kv_cache: {capacity: {type: fixed, blocks: 100}}}}}\n",
    );
    await expectUserError(
      ["predict", "-c", p.config],
      "traffic.load.type='poisson' does not accept ['concurrency']",
    );
  });

  it("unknown CLI option", async () => {
    const p = project();
    const r = await cli("predict", "-c", p.config, "--bogus");
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown option '--bogus'");
  });

  it("invalid --format choice", async () => {
    const p = project();
    const r = await cli("predict", "-c", p.config, "--format", "yaml");
    expect(r.code).toBe(2);
    expect(r.err).toContain("Allowed choices are table, json");
  });

  it("missing -c", async () => {
    const r = await cli("predict");
    expect(r.code).toBe(2);
    expect(r.err).toContain("required option '-c, --config <path>'");
  });

  it("malformed trace line: file and line number", async () => {
    const p = project({
      rows: ['{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]}', "{not json"],
    });
    await expectUserError(
      ["predict", "-c", p.config, "--output-dir", p.out],
      "trace.jsonl:2",
      "invalid JSON",
    );
    expect(existsSync(p.out)).toBe(false);
  });

  it("non-empty output directory without --overwrite; existing files untouched", async () => {
    const p = project();
    mkdirSync(p.out);
    writeFileSync(join(p.out, "prediction.json"), "old");
    await expectUserError(["predict", "-c", p.config, "--output-dir", p.out], "is not empty", "--overwrite");
    expect(readFileSync(join(p.out, "prediction.json"), "utf8")).toBe("old");
  });

  it("output path that is a file", async () => {
    const p = project();
    writeFileSync(p.out, "x");
    await expectUserError(["predict", "-c", p.config, "--output-dir", p.out], "not a directory");
  });

  it("a config error leaves existing results intact even with --overwrite", async () => {
    const p = project();
    mkdirSync(p.out);
    writeFileSync(join(p.out, "prediction.json"), "old");
    await expectUserError(
      ["predict", "-c", p.config, "--output-dir", p.out, "--overwrite", "--set", "engine.bogus=1"],
      "engine.bogus",
    );
    expect(readFileSync(join(p.out, "prediction.json"), "utf8")).toBe("old");
  });
});

describe("fleetsim predict with the op-level timing model", () => {
  it("refuses a perf database directory that does not exist", async () => {
    const p = project();
    await expectUserError(
      [
        "predict",
        "-c",
        p.config,
        ...setFlags(
          "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8",
          "engine.workers.aggregated.timing={type: default}",
          "engine.perf_database=no/such/dir",
        ),
      ],
      "engine.perf_database",
      "perf database directory not found",
    );
  });
});
