/**
 * `engine.perf_database`: the op-level timing model over the parquet perf-data tree gives the
 * prediction of the built-in compact tables derived from it. Needs ../shared/perf-data
 * (npm run test:shared); a missing perf database directory: test/cli/cli.test.ts.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, setFlags } from "../helpers/cli.js";
import { configFile, engineYaml } from "../helpers/configYaml.js";
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
  const { config } = configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps}
${engineYaml({
  model: "nvidia/Llama-3.1-8B-Instruct-FP8",
  replicas: 2,
  kvCache: "{block_size: 64, capacity: {type: default}}",
  timing: "{type: default}",
})}`,
    { dir },
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
      ...setFlags(`engine.perf_database=${PERF_DATA}`),
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

  it("reads <gpu>/<backend>/ of the perf database with timing.op_tables: backend, and says when it is missing", async () => {
    const p = project();
    // A tree with an SGLang folder for H200 (vLLM's rows relabelled: only the layout is under test).
    const tree = join(p.dir, "tree");
    const src = join(PERF_DATA, "h200_sxm");
    const version = readdirSync(join(src, "vllm"))[0];
    mkdirSync(join(tree, "h200_sxm", "sglang", version), { recursive: true });
    for (const f of readdirSync(join(src, "vllm", version))) {
      copyFileSync(join(src, "vllm", version, f), join(tree, "h200_sxm", "sglang", version, f));
    }
    for (const f of ["system.yaml", "nccl_perf.parquet"])
      copyFileSync(join(src, f), join(tree, "h200_sxm", f));
    /** An SGLang run with its own op tables over `database`: its stderr and run info. */
    const sglangOver = async (database: string, name: string) => {
      const r = await cli(
        "predict",
        "-c",
        p.config,
        ...setFlags(
          "engine.backend=sglang",
          "engine.workers.aggregated.timing={type: default, op_tables: backend}",
          `engine.perf_database=${database}`,
        ),
        "--output-dir",
        join(p.dir, name),
      );
      expect(r.code, r.err).toBe(0);
      return { err: r.err, run: JSON.parse(readFileSync(join(p.dir, name, "prediction.json"), "utf8")).run };
    };
    const own = await sglangOver(tree, "own");
    expect(own.err).not.toContain("op tables");
    expect(own.run.topology.aggregated.timing_backend).toBeUndefined();
    const missing = await sglangOver(PERF_DATA, "missing");
    expect(missing.err).toContain(
      "passes on h200_sxm are priced from the vLLM op tables (no SGLang op tables for h200_sxm in the perf database)",
    );
    expect(missing.run.topology.aggregated.timing_backend).toBe("vllm");
  });
});
