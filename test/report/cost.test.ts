import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Prediction } from "../../src/output/prediction.js";
import { cliPredict } from "../helpers/cli.js";
import { configFile } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

/** A priced run: aggregated or P/D on two GPU systems, fixed timing, an SLA. */
function project(engine: string, extra = "") {
  const dir = tempDir("fleetsim-cost-");
  const rows = Array.from({ length: 12 }, (_, i) =>
    JSON.stringify({ timestamp: i * 50, input_length: 400, output_length: 8, hash_ids: [i] }),
  );
  const { config } = configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps}
${engine}
evaluation: {sla: {ttft_ms: 1000, itl_ms: 100}}
${extra}`,
    { dir, files: { "trace.jsonl": `${rows.join("\n")}\n` } },
  );
  return { config, out: join(dir, "out") };
}

const AGG = `engine:
  model: test/model
  hardware: h100_sxm
  context_length: 4096
  workers:
    aggregated:
      parallelism: {replicas: 2, tensor: 2}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 256}}
      timing: {type: fixed, prefill_ms: 5, decode_ms: 1}`;

const PD = `engine:
  mode: disaggregated
  model: test/model
  hardware: h200_sxm
  context_length: 4096
  kv_transfer: {bytes_per_token: 1000}
  workers:
    prefill:
      hardware: b200_sxm
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 256}}
      timing: {type: fixed, prefill_ms: 5, decode_ms: 1}
    decode:
      parallelism: {replicas: 2}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 256}}
      timing: {type: fixed, prefill_ms: 5, decode_ms: 1}`;

async function predict(p: { config: string; out: string }, ...args: string[]): Promise<Prediction> {
  const r = await cliPredict(p.config, p.out, "--overwrite", ...args);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
}

describe("cost of a run (docs/cost.md)", () => {
  it("prices gpu_hours at the default table, per million output tokens and per good request", async () => {
    const doc = await predict(project(AGG));
    const s = doc.summary;
    expect(doc.run.cost).toEqual({ usd_per_gpu_hour: { h100_sxm: 2.7 } });
    expect(s.cost_usd).toBeCloseTo(s.gpu_hours * 2.7, 12);
    expect(s.cost_per_million_output_tokens_usd).toBeCloseTo(
      ((s.cost_usd ?? 0) / s.total_output_tokens) * 1e6,
      9,
    );
    expect(s.goodput_completed_requests).toBeGreaterThan(0);
    expect(s.cost_per_good_request_usd).toBeCloseTo(
      (s.cost_usd ?? 0) / (s.goodput_completed_requests ?? 1),
      12,
    );
  });

  it("prices each P/D pool at its own GPU system, with --set overrides", async () => {
    const doc = await predict(project(PD), "--set", "cost.usd_per_gpu_hour.b200_sxm=10");
    const s = doc.summary;
    expect(doc.run.cost).toEqual({ usd_per_gpu_hour: { b200_sxm: 10, h200_sxm: 3.6 } });
    const expected =
      (s.prefill_worker_seconds * s.prefill_gpus_per_worker * 10 +
        s.decode_worker_seconds * s.decode_gpus_per_worker * 3.6) /
      3600;
    expect(s.cost_usd).toBeCloseTo(expected, 12);
  });

  it("leaves the other keys unchanged, and a misspelt GPU system is an unknown key with a hint", async () => {
    const a = await predict(project(AGG));
    const b = await predict(project(AGG, "cost: {usd_per_gpu_hour: {h100_sxm: 1}}"));
    const strip = (s: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(s).filter(
          ([k]) => !k.startsWith("cost_") && !k.startsWith("processed_") && k !== "wall_time_ms",
        ),
      );
    expect(strip(b.summary)).toEqual(strip(a.summary));
    expect(b.summary.cost_usd).toBeCloseTo((a.summary.cost_usd ?? 0) / 2.7, 12);
    const p = project(AGG, "cost: {usd_per_gpu_hour: {h100_smx: 1}}");
    const r = await cliPredict(p.config, p.out);
    expect(r.code).toBe(2);
    expect(r.err).toContain("cost.usd_per_gpu_hour.h100_smx");
    expect(r.err).toContain("did you mean 'h100_sxm'?");
  });
});

describe("timeseries.good_completions (docs/metrics.md)", () => {
  it("counts good requests per completion bucket, summing to the summary's goodput counts", async () => {
    const doc = await predict(project(AGG));
    const t = doc.timeseries;
    const sum = (xs: readonly number[] | undefined) => (xs ?? []).reduce((a, b) => a + b, 0);
    expect(t.good_completions?.length).toBe(t.completions.length);
    expect(sum(t.good_completions)).toBe(doc.summary.goodput_completed_requests);
    for (const [i, g] of (t.good_completions ?? []).entries())
      expect(g).toBeLessThanOrEqual(t.completions[i]);
    const goodTokens = (doc.summary.goodput_output_throughput_tok_s ?? 0) * (doc.summary.duration_ms / 1000);
    expect(sum(t.good_output_tokens)).toBeCloseTo(goodTokens, 6);
  });
});
