/**
 * Issue acceptance on the FAST'25 conversation trace: the KV router against round robin with 4
 * aggregated workers, and the seed's disaggregated walkthrough (planner removed).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

type Summary = Record<string, number>;

async function predict(config: string, ...sets: string[]): Promise<{ summary: Summary; text: string }> {
  const out = join(tempDir(), "out");
  // Fixed replicas: routing and topology are compared without the Planner.
  const args = ["predict", "-c", config, "--output-dir", out, "--set", "planner={policy: disabled}"];
  for (const s of sets) args.push("--set", s);
  const r = await cli(...args);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  const text = readFileSync(join(out, "prediction.json"), "utf8");
  return { summary: JSON.parse(text).summary as Summary, text };
}

describe("KV router vs round robin, 4 aggregated workers, conversation trace", () => {
  it("the KV router reuses more prefix cache and gives a lower mean TTFT", async () => {
    const four = "engine.workers.aggregated.parallelism.replicas=4";
    const rr = (await predict("examples/seed-aggregated.yaml", four, "router={policy: round_robin}")).summary;
    const kv = (await predict("examples/seed-aggregated.yaml", four, "router={policy: kv_router}")).summary;
    console.log(
      `round_robin: reuse ${rr.prefix_cache_reused_ratio.toFixed(4)}, mean TTFT ${rr.mean_ttft_ms.toFixed(1)} ms\n` +
        `kv_router:   reuse ${kv.prefix_cache_reused_ratio.toFixed(4)}, mean TTFT ${kv.mean_ttft_ms.toFixed(1)} ms`,
    );
    expect(rr.completed_requests).toBe(12031);
    expect(kv.completed_requests).toBe(12031);
    expect(kv.prefix_cache_reused_ratio).toBeGreaterThan(rr.prefix_cache_reused_ratio);
    expect(kv.mean_ttft_ms).toBeLessThan(rr.mean_ttft_ms);
  });
});

describe("seed disaggregated walkthrough (planner disabled), conversation trace", () => {
  it("runs and reports per-role worker-seconds and GPU-hours that add up", async () => {
    const { summary: s } = await predict("examples/seed-disaggregated.yaml");
    expect(s.num_requests).toBe(12031);
    expect(s.completed_requests).toBeGreaterThan(0);
    expect(s.prefill_worker_seconds).toBeGreaterThan(0);
    expect(s.decode_worker_seconds).toBeGreaterThan(0);
    // One prefill and one decode worker, provisioned for the whole (identical) span.
    expect(s.prefill_worker_seconds).toBeCloseTo(s.decode_worker_seconds, 9);
    expect([s.prefill_gpus_per_worker, s.decode_gpus_per_worker]).toEqual([1, 1]);
    expect(s.gpu_hours).toBeCloseTo(
      (s.prefill_worker_seconds * s.prefill_gpus_per_worker +
        s.decode_worker_seconds * s.decode_gpus_per_worker) /
        3600,
      12,
    );
    expect(s.duration_ms).toBeLessThanOrEqual(3_600_000);
  });

  it("is deterministic with a KV router at temperature > 0", async () => {
    const sets = [
      "router={policy: kv_router, temperature: 0.5}",
      "engine.workers.decode.parallelism.replicas=3",
      "engine.workers.prefill.parallelism.replicas=2",
    ];
    const a = await predict("examples/seed-disaggregated.yaml", ...sets);
    const b = await predict("examples/seed-disaggregated.yaml", ...sets);
    const strip = (t: string) =>
      t.replace(/"(wall_time_ms|processed_tokens_per_s|processed_output_tokens_per_s)": [^,\n]+/g, "");
    expect(strip(a.text)).toBe(strip(b.text));
    expect(a.summary.completed_requests).toBe(12031);
  });
});
