/**
 * Configs and inputs that used to be accepted silently (issue 13 §8): each is now an exit-2 error
 * with a path, or a run that says what went wrong.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { issueAt, loadError, loadYaml, RUNNABLE_ENGINE, tempDir } from "../helpers/configHelpers.js";
import { configFile, syntheticTraffic } from "../helpers/configYaml.js";

const TRAFFIC = syntheticTraffic("{type: concurrency, concurrency: 4}", "{requests: 10}");

describe("wrong configs and inputs", () => {
  it("more pipeline stages than the model has layers, or tensor ranks than heads, is an error at the key", () => {
    // Qwen3-8B: 36 layers, 32 attention heads (built-in catalog).
    const err = loadError(`${TRAFFIC}${RUNNABLE_ENGINE}`, {
      sets: [
        "engine.workers.aggregated.parallelism.pipeline=37",
        "engine.workers.aggregated.parallelism.tensor=64",
      ],
    });
    expect(issueAt(err, "engine.workers.aggregated.parallelism.pipeline").message).toBe(
      "37 pipeline stages for a model of 36 layers",
    );
    expect(issueAt(err, "engine.workers.aggregated.parallelism.tensor").message).toBe(
      "64 tensor ranks for a model of 32 attention heads",
    );
    // An unknown model with polynomial timing and fixed capacity stays accepted, unchecked.
    const unknown = loadYaml(`${TRAFFIC}${RUNNABLE_ENGINE.replace("Qwen/Qwen3-8B", "test/model")}`, {
      sets: ["engine.workers.aggregated.parallelism.pipeline=37", "engine.context_length=8192"],
    });
    expect(unknown.engine.mode === "aggregated" && unknown.engine.aggregated.pipeline).toBe(37);
  });

  it("a KV cache too small for every prompt: the run warns and the fleet block counts the rejected requests", async () => {
    const dir = tempDir();
    const { config } = configFile(`${TRAFFIC}${RUNNABLE_ENGINE.replace("blocks: 1000", "blocks: 1")}`, {
      dir,
      name: "c.yaml",
    });
    const r = await cli("predict", "-c", config, "--output-dir", join(dir, "out"), "--progress", "none");
    expect(r.code).toBe(0);
    expect(r.err).toContain("fleetsim: warning: 10 of 10 requests were rejected");
    expect(r.err).toContain("1 blocks × 64 tokens");
    expect(r.out).toContain("Not Completed: 10 of 10 requests");
  });

  it("convert refuses to write over its input", async () => {
    const dir = tempDir();
    const input = join(dir, "trace.jsonl");
    const text = `${JSON.stringify({ timestamp: 0, input_length: 4, output_length: 2, hash_ids: [1] })}\n`;
    writeFileSync(input, text);
    const r = await cli("convert", "--input", input, "--output", join(dir, ".", "trace.jsonl"));
    expect(r.code).toBe(2);
    expect(r.err).toContain("is the input file");
    expect(readFileSync(input, "utf8")).toBe(text);
  });

  it("a trace value of 1e400 is named as too large, not 'null'; a device as the trace is not 'not found'", async () => {
    const dir = tempDir();
    const trace = join(dir, "t.jsonl");
    writeFileSync(trace, '{"timestamp": 0, "input_length": 1e400, "output_length": 2, "hash_ids": [1]}\n');
    const config = join(dir, "c.yaml");
    const yaml = (path: string) =>
      `traffic:\n  source: {type: trace, format: mooncake, paths: [${path}]}\n  load: {type: trace_timestamps}\n${RUNNABLE_ENGINE}`;
    writeFileSync(config, yaml(trace));
    const a = await cli("predict", "-c", config, "--output-dir", join(dir, "out"), "--progress", "none");
    expect(a.code).toBe(2);
    expect(a.err).toContain("t.jsonl:1: field 'input_length'");
    expect(a.err).toContain("too large to represent");
    expect(a.err).not.toContain("got null");
    writeFileSync(config, yaml("/dev/zero"));
    const b = await cli("validate", "-c", config);
    expect(b.code).toBe(2);
    expect(b.err).toContain("the trace is not a regular file (a device, FIFO or socket): /dev/zero");
  });
});
