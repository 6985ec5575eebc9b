/**
 * The seed configs with `--set engine.backend=…` (docs/backends.md) on the conversation trace:
 * each backend runs them, says its passes are priced from the vLLM op tables, and gives results
 * that differ from vLLM's where the schedulers do.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, cliPredict } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

interface Run {
  readonly summary: Record<string, number>;
  readonly run: {
    backend: string;
    topology: Record<string, { timing_backend?: string; block_size: number }>;
  };
  readonly err: string;
}

/** A seed without its Planner (fixed replicas), the first `seconds` of the trace. */
async function predict(seed: string, seconds: number, ...sets: string[]): Promise<Run> {
  const out = join(tempDir(), "out");
  const args = ["predict", "-c", seed, "--output-dir", out, "--set", "planner={policy: disabled}"];
  args.push("--set", `traffic.stop.max_virtual_time_seconds=${seconds}`);
  for (const s of sets) args.push("--set", s);
  const r = await cli(...args);
  expect(r.code, r.err).toBe(0);
  const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
  return { summary: doc.summary, run: doc.run, err: r.err };
}

const PRICED_FROM_VLLM =
  /engine\.backend '(sglang|trtllm)': its scheduler is simulated, but passes on [a-z0-9_]+ are priced from the vLLM op tables/;

describe("examples/seed-aggregated.yaml per backend", () => {
  const SEED = "examples/seed-aggregated.yaml";

  it("TRT-LLM and SGLang run it, say how they are priced, and differ from vLLM", async () => {
    const vllm = await predict(SEED, 900);
    expect(vllm.err).not.toMatch(PRICED_FROM_VLLM);
    for (const backend of ["trtllm", "sglang"]) {
      const r = await predict(SEED, 900, `engine.backend=${backend}`);
      expect(r.err).toMatch(PRICED_FROM_VLLM);
      expect(r.run.backend).toBe(backend);
      expect(r.run.topology["aggregated"]?.timing_backend).toBe("vllm");
      expect(r.summary["num_requests"]).toBe(vllm.summary["num_requests"]);
      expect(r.summary["completed_requests"]).toBeGreaterThan(0);
      expect(r.summary["mean_ttft_ms"]).not.toBe(vllm.summary["mean_ttft_ms"]);
    }
  });
});

describe("examples/seed-disaggregated.yaml with SGLang", () => {
  const SEED = "examples/seed-disaggregated.yaml";

  it("runs the prefill/decode seed and differs from vLLM", async () => {
    const vllm = await predict(SEED, 600);
    const sglang = await predict(SEED, 600, "engine.backend=sglang");
    expect(sglang.err).toMatch(PRICED_FROM_VLLM);
    expect(sglang.run.topology["prefill"]?.timing_backend).toBe("vllm");
    expect(sglang.run.topology["decode"]?.block_size).toBe(64);
    expect(sglang.summary["num_requests"]).toBe(vllm.summary["num_requests"]);
    expect(sglang.summary["completed_requests"]).toBeGreaterThan(0);
    expect(sglang.summary["mean_ttft_ms"]).not.toBe(vllm.summary["mean_ttft_ms"]);
  });

  it("refuses TRT-LLM disaggregated with a config error at engine.backend", async () => {
    const out = join(tempDir(), "out");
    const r = await cliPredict(SEED, out, "--set", "engine.backend=trtllm");
    expect(r.code).toBe(2);
    expect(r.err).toContain("engine.backend");
    expect(r.err).toContain("does not support engine.mode='disaggregated'");
  });
});
