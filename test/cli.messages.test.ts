/**
 * The messages `fleetsim predict` prints on stderr where the reference logs them: rows the Dynamo
 * trace reader dropped, and the Planner's start-up warnings and per-window retune counts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "./helpers/cli.js";
import { tempDir } from "./helpers/specs.js";

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

const ENGINE = `engine:
  model: Qwen/Qwen3-8B
  hardware: h200_sxm
  context_length: 4096
  workers:
    aggregated:
      parallelism: {replicas: 2}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 1000}}
      timing: {type: fixed, prefill_ms: 10, decode_ms: 2}
`;

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
});
