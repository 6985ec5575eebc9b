/**
 * `engine.perf_database`: the op-level timing model over the parquet perf-data tree gives the
 * prediction of the built-in compact tables derived from it. Needs ../shared/perf-data
 * (npm run test:shared); a missing perf database directory: test/cli/cli.test.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";
import { PERF_DATA } from "./data.js";

/** Three requests on two workers of the FP8 Llama-3.1-8B, default timing and KV capacity. */
function project(): { dir: string; config: string } {
  const dir = tempDir("fleetsim-perfdb-");
  writeFileSync(
    join(dir, "trace.jsonl"),
    [
      '{"timestamp": 0, "input_length": 700, "output_length": 5, "hash_ids": [1, 2]}',
      '{"timestamp": 10, "input_length": 900, "output_length": 3, "hash_ids": [1, 3]}',
      '{"timestamp": 25, "input_length": 300, "output_length": 4, "hash_ids": [4]}',
    ].join("\n") + "\n",
  );
  const config = join(dir, "prediction.yaml");
  writeFileSync(
    config,
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps}
engine:
  model: nvidia/Llama-3.1-8B-Instruct-FP8
  hardware: h200_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 2}
      kv_cache: {block_size: 64, capacity: {type: default}}
      timing: {type: default}
`,
  );
  return { dir, config };
}

describe("fleetsim predict with the op-level timing model over a perf database", () => {
  it("gives the same prediction from the built-in tables and from the parquet perf database", async () => {
    const p = project();
    const a = await cli("predict", "-c", p.config, "--output-dir", join(p.dir, "compact"));
    const b = await cli(
      "predict",
      "-c",
      p.config,
      "--set",
      `engine.perf_database=${PERF_DATA}`,
      "--output-dir",
      join(p.dir, "parquet"),
    );
    expect([a.code, b.code], a.err + b.err).toEqual([0, 0]);
    const sa = JSON.parse(readFileSync(join(p.dir, "compact", "prediction.json"), "utf8")).summary;
    const sb = JSON.parse(readFileSync(join(p.dir, "parquet", "prediction.json"), "utf8")).summary;
    expect(sa.completed_requests).toBe(3);
    expect(sb.completed_requests).toBe(3);
    expect(sb.duration_ms).toBeCloseTo(sa.duration_ms, 0);
    expect(Math.abs(sb.mean_ttft_ms - sa.mean_ttft_ms) / sa.mean_ttft_ms).toBeLessThan(0.01);
  });
});
