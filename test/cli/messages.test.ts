/**
 * The messages `fleetsim predict` prints on stderr where the reference logs them: rows the Dynamo
 * trace reader dropped, and the Planner's start-up warnings and per-window retune counts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { engineYaml, fixedTiming } from "../helpers/configYaml.js";
import { dynamoTrace } from "../helpers/dynamoTraces.js";
import { tempDir } from "../helpers/specs.js";

const T0 = 1_760_000_000_000;

function dynamoRow(id: string, atMs: number, output: number | null): string {
  const request: Record<string, unknown> = {
    request_id: id,
    request_received_ms: T0 + atMs,
    replay: { trace_block_size: 64, input_length: 64, input_sequence_hashes: [atMs + 1] },
  };
  if (output !== null) request["output_tokens"] = output;
  return JSON.stringify({
    schema: "dynamo.request.trace.v1",
    event_type: "request_end",
    event_time_unix_ms: T0 + atMs,
    request,
  });
}

const ENGINE = engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: 4096,
  replicas: 2,
  blocks: 1000,
  timing: fixedTiming(10, 2),
});

/** A project directory with a Dynamo trace (`rows`) and `prediction.yaml` (`extra` appended). */
function project(rows: readonly string[], extra = ""): string {
  const dir = tempDir("fleetsim-messages-");
  writeFileSync(join(dir, "trace.jsonl"), `${rows.join("\n")}\n`);
  writeFileSync(
    join(dir, "prediction.yaml"),
    `traffic:\n  source: {type: trace, format: dynamo, paths: [trace.jsonl]}\n  load: {type: trace_timestamps}\n${ENGINE}${extra}`,
  );
  return dir;
}

async function predict(dir: string, ...args: string[]) {
  const r = await cli(
    "predict",
    "-c",
    join(dir, "prediction.yaml"),
    "--output-dir",
    join(dir, "out"),
    "--stack",
    "dynamo",
    "--progress",
    "none",
    ...args,
  );
  expect(r.code, r.err).toBe(0);
  return r;
}

const ROWS = Array.from({ length: 12 }, (_, i) => dynamoRow(`r${i}`, i * 400, 4));

describe("predict's messages on stderr", () => {
  it("request_end rows without output_tokens are dropped with a warning that counts them", async () => {
    const dir = project([...ROWS, dynamoRow("x1", 100, null), dynamoRow("x2", 200, null)]);
    const r = await predict(dir);
    expect(r.err).toBe(
      `fleetsim: warning: ${join(dir, "trace.jsonl")}: dropped 2 request_end rows without output_tokens (12 requests kept)\n`,
    );
    expect(r.out).toContain("Saved full report to:");
  });

  it("a clean trace prints nothing on stderr", async () => {
    const r = await predict(project(ROWS));
    expect(r.err).toBe("");
  });

  it("the AIPerf table ends with the role's timing provenance, as the reference's engine stack prints it", async () => {
    const r = await predict(project(ROWS));
    const table = r.out.slice(0, r.out.indexOf("\n\n"));
    expect(table.split("\n").at(-1)).toBe(
      "Timing (aggregated): estimator=fixed; source=configured; data_version=unavailable (configured timing does not use performance data)",
    );
  });

  it("an advisory replay logs an [ADVISORY] warning at start-up", async () => {
    const r = await predict(project(ROWS, "planner: {policy: enabled, advisory: true}\n"));
    expect(r.err).toBe(
      "fleetsim: warning: [ADVISORY] the Planner runs in advisory mode: it decides on every tick and " +
        "applies nothing; the replicas stay as configured and its changes are listed in " +
        "planner.recommended_scaling_events\n",
    );
    const plain = await predict(project(ROWS, "planner: {policy: enabled}\n"));
    expect(plain.err).toBe("");
  });

  it("a bootstrap that cannot be priced warns and falls back to load-based scaling", async () => {
    const dir = project(
      ROWS,
      "planner: {policy: enabled, target: sla, throughput_adjustment_interval_seconds: 2, load_adjustment_interval_seconds: 1}\n" +
        "evaluation: {sla: {ttft_ms: 1500, itl_ms: 50}}\n",
    );
    // Fixed timing and capacity run any model id; the op-level bootstrap cannot price this one.
    const r = await predict(dir, "--set", "engine.model=acme/not-a-model");
    const lines = r.err.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^fleetsim: warning: the Planner's perf-model bootstrap could not price acme\/not-a-model on h200_sxm .*; throughput regression will not be bootstrapped$/,
    );
    expect(lines[1]).toBe(
      "fleetsim: warning: throughput-based scaling regression requires a perf-model bootstrap; " +
        "falling back to load-based scaling only",
    );
    const doc = JSON.parse(readFileSync(join(dir, "out", "prediction.json"), "utf8"));
    expect(doc.planner.metadata.bootstrap.status).toBe("session_failed_load_only");
    const ticks = doc.planner.ticks as {
      scheduled_tick: { run_throughput_scaling: boolean; run_load_scaling: boolean };
    }[];
    expect(ticks.length).toBeGreaterThan(0);
    expect(
      ticks.every((t) => !t.scheduled_tick.run_throughput_scaling && t.scheduled_tick.run_load_scaling),
    ).toBe(true);
  });

  it("retune logs each window's counts at info level", async () => {
    const dir = tempDir("fleetsim-messages-");
    writeFileSync(join(dir, "trace.jsonl"), dynamoTrace(80, 60));
    writeFileSync(
      join(dir, "prediction.yaml"),
      `traffic:\n  source: {type: trace, format: dynamo, paths: [trace.jsonl]}\n  load: {type: trace_timestamps}\n${ENGINE}` +
        "router: {policy: kv_router, temperature: 0.0}\n" +
        "planner:\n  policy: enabled\n  enable_load_scaling: false\n  enable_throughput_scaling: false\n" +
        "  retune:\n    interval_seconds: 30\n    grace_seconds: 5\n    max_parallel: 1\n" +
        "    router: {overlap_score_credit: {choices: [0.0, 1.0]}, prefill_load_scale: 1.0, temperature: 0.0}\n" +
        "evaluation: {sla: {ttft_ms: 1500, itl_ms: 50}}\n",
    );
    const r = await predict(dir);
    const info = r.err.split("\n").filter((l) => l.startsWith("fleetsim: info: retune window"));
    expect(info.length).toBeGreaterThanOrEqual(1);
    expect(info[0]).toMatch(/^fleetsim: info: retune window 0 \[0, 30\) s: \d+ requests/);
  }, 120_000);
});
