import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { recommendationSchema } from "../../src/output/recommendation.js";
import { cli, setFlags } from "../helpers/cli.js";
import { configFile, engineYaml } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

/**
 * A small recommendation over a trace beside it: polynomial timing and fixed KV capacity, so each
 * candidate replays in milliseconds; parallelism from the default preset within 4 GPUs.
 */
function project(
  extra = "",
  optimization = "target: goodput_per_gpu\n  constraints: {max_candidate_gpus: 4}",
) {
  const dir = tempDir("fleetsim-recommend-");
  const rows: string[] = [];
  for (let i = 0; i < 24; i++) {
    rows.push(
      JSON.stringify({
        timestamp: i * 40,
        input_length: 600 + 37 * (i % 5),
        output_length: 12 + (i % 7),
        hash_ids: [i % 3, 10 + i],
      }),
    );
  }
  const { config } = configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps, speedup: 2}
${engineYaml({
  parallelism: "{preset: default}",
  scheduler: "{max_batched_tokens: {choices: [2048, 8192]}, max_sequences: 64}",
  blocks: 512,
  timing: "{type: polynomial}",
})}evaluation:
  sla: {ttft_ms: 2000, itl_ms: 200}
optimization:
  ${optimization}
optimizer: {algorithm: bayesian, max_trials: 4, parallelism: 2, candidate_timeout_seconds: 60, seed: 7}
execution:
  resources: {cpu_limit: 2}
${extra}`,
    { dir, name: "recommendation.yaml", files: { "trace.jsonl": `${rows.join("\n")}\n` } },
  );
  return { dir, config, out: join(dir, "out") };
}

describe("fleetsim recommend", () => {
  it("writes the ledger, the CSV and runnable YAMLs, ranks them, and each YAML predicts its candidate's metrics", async () => {
    const p = project();
    const r = await cli("recommend", "-c", p.config, "--output-dir", p.out);
    expect(r.err).not.toContain("failed");
    expect(r.code).toBe(0);
    const doc = recommendationSchema.parse(
      JSON.parse(readFileSync(join(p.out, "recommendation.json"), "utf8")),
    );
    expect(doc.counts.trials).toBe(4);
    expect(doc.counts.evaluated + doc.counts.unsupported + doc.counts.resource_limited).toBe(
      doc.candidates.length,
    );
    expect(doc.views.top_n.length).toBe(doc.counts.feasible);
    const lines = r.out.trim().split("\n");
    expect(lines[0]).toBe("fleetsim recommendations");
    expect(lines[1]).toMatch(/^1: score=[0-9.e+]+ used_gpus=\d+ config=.*recommendations\/0001\.yaml$/);
    expect(lines.at(-1)).toBe(`Saved full result to: ${join(p.out, "recommendation.json")}`);

    // Scores are best first, and the files map one to one to the view.
    const byId = new Map(doc.candidates.map((c) => [c.candidate_id, c]));
    const scores = doc.views.top_n.map((id) => byId.get(id)?.score ?? 0);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const yamls = readdirSync(join(p.out, "recommendations")).sort();
    expect(yamls).toEqual(doc.views.top_n.map((_, i) => `${String(i + 1).padStart(4, "0")}.yaml`));

    const csv = readFileSync(join(p.out, "recommendation.csv"), "utf8").trim().split("\n");
    expect(csv[0]).toBe(
      "schema_version,candidate_id,status,reason_category,reason,used_gpus,score,config_json,prediction_config_json,metrics_json,objectives_json,provenance_json,is_top_n,is_pareto,peak_gpus,mean_gpus",
    );
    expect(csv.length).toBe(doc.candidates.length + 1);
    // A fixed deployment provisions its own GPUs throughout: peak and mean are its used_gpus.
    for (const c of doc.candidates.filter((x) => x.status === "feasible")) {
      expect(c.peak_gpus).toBe(c.used_gpus);
      expect(c.mean_gpus).toBeCloseTo(c.used_gpus!, 6);
    }

    // The best YAML is a concrete predict input whose summary is the candidate's metrics.
    const best = byId.get(doc.views.top_n[0]);
    const predicted = await cli(
      "predict",
      "--stack",
      "engine",
      "-c",
      join(p.out, "recommendations", "0001.yaml"),
      "--output-dir",
      join(p.dir, "best"),
      "--format",
      "json",
    );
    expect(predicted.code).toBe(0);
    const summary = JSON.parse(predicted.out) as Record<string, unknown>;
    for (const k of HOST_TIME_KEYS) delete summary[k];
    // A candidate's metrics are the summary's numbers (provenance, eviction and power are not metrics).
    expect(Object.fromEntries(Object.entries(summary).filter(([, v]) => typeof v === "number"))).toEqual(
      best?.metrics,
    );
    expect(summary["prediction_provenance"]).toBeTypeOf("object");
    expect(best?.used_gpus).toBe(best?.provenance["topology"] === undefined ? -1 : gpusOf(best.provenance));
  });

  it("is deterministic (same input and seed, same recommendation.json), prints JSON rows, and needs --overwrite", async () => {
    const a = project();
    const b = project();
    const ra = await cli("recommend", "-c", a.config, "--output-dir", a.out);
    const rb = await cli("recommend", "-c", b.config, "--output-dir", b.out, "--format", "json");
    expect([ra.code, rb.code]).toEqual([0, 0]);
    const read = (dir: string) => {
      const d = JSON.parse(readFileSync(join(dir, "recommendation.json"), "utf8"));
      expect(d.provenance.config.traffic.source.paths).toEqual(["trace.jsonl"]);
      return d;
    };
    expect(read(a.out)).toEqual(read(b.out));
    const rows = JSON.parse(rb.out) as {
      rank: number;
      score: number;
      used_gpus: number;
      config_path: string;
    }[];
    expect(rows[0].rank).toBe(1);
    expect(rows[0].config_path).toBe(join(b.out, "recommendations", "0001.yaml"));
    expect(ra.out).toContain(
      `used_gpus=${rows[0].used_gpus} config=${join(a.out, "recommendations", "0001.yaml")}`,
    );

    const again = await cli(
      "recommend",
      "-c",
      a.config,
      "--output-dir",
      a.out,
      ...setFlags("optimizer.max_trials=1"),
    );
    expect(again.code).toBe(2);
    expect(again.err).toContain("not empty");
    const over = await cli(
      "recommend",
      "-c",
      a.config,
      "--output-dir",
      a.out,
      "--overwrite",
      ...setFlags("optimizer.max_trials=1"),
    );
    expect(over.code).toBe(0);
    // The earlier run's YAMLs beyond the new selection are gone with --overwrite.
    expect(readdirSync(join(a.out, "recommendations"))).toEqual(["0001.yaml"]);
  });

  it("exits 1 with the files written and no YAML when no candidate is feasible", async () => {
    const p = project(
      "",
      "target: goodput_per_gpu\n  strict_sla: true\n  constraints: {max_candidate_gpus: 4}",
    );
    writeFileSync(p.config, readFileSync(p.config, "utf8").replace("ttft_ms: 2000", "ttft_ms: 0.001"));
    const r = await cli(
      "recommend",
      "-c",
      p.config,
      "--output-dir",
      p.out,
      ...setFlags("optimizer.max_trials=2"),
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain("No feasible candidate found.");
    const doc = recommendationSchema.parse(
      JSON.parse(readFileSync(join(p.out, "recommendation.json"), "utf8")),
    );
    expect(doc.counts.feasible).toBe(0);
    expect(
      doc.candidates.every((c) => c.status === "infeasible" && c.reason_category === "sla_constraint"),
    ).toBe(true);
    expect(existsSync(join(p.out, "recommendations"))).toBe(false);
  });

  it("exits 3 when candidates do not fit the host memory budget, recording them as resource_limited", async () => {
    const p = project();
    writeFileSync(
      p.config,
      readFileSync(p.config, "utf8").replace("{cpu_limit: 2}", "{cpu_limit: 2, memory_limit_gb: 0.001}"),
    );
    const r = await cli("recommend", "-c", p.config, "--output-dir", p.out);
    expect(r.code).toBe(3);
    const doc = recommendationSchema.parse(
      JSON.parse(readFileSync(join(p.out, "recommendation.json"), "utf8")),
    );
    expect(doc.counts.resource_limited).toBe(doc.candidates.length);
    expect(doc.candidates[0].reason_category).toBe("resource_limit");
    expect(doc.counts.evaluated).toBe(0);
  });

  it("refuses a domain where the reference keeps values concrete, at its line (exit 2, nothing written)", async () => {
    const p = project();
    writeFileSync(
      p.config,
      readFileSync(p.config, "utf8").replace(
        "context_length: 8192",
        "context_length: {choices: [4096, 8192]}",
      ),
    );
    const r = await cli("recommend", "-c", p.config, "--output-dir", p.out);
    expect(r.code).toBe(2);
    expect(r.err).toContain("engine.context_length");
    expect(r.err).toContain("fixed during a recommendation");
    expect(r.err).toMatch(/line 7, column \d+/);
    expect(existsSync(p.out)).toBe(false);
  });

  it("rejects a goodput target without an SLA, and a bare list where a domain is meant", async () => {
    const p = project();
    const noSla = await cli("recommend", "-c", p.config, "--output-dir", p.out, "--set", "evaluation={}");
    expect(noSla.code).toBe(2);
    expect(noSla.err).toContain("needs at least one evaluation.sla bound");
    const bare = await cli(
      "recommend",
      "-c",
      p.config,
      "--output-dir",
      p.out,
      ...setFlags("engine.workers.aggregated.scheduler.max_sequences=[32, 64]"),
    );
    expect(bare.code).toBe(2);
    expect(bare.err).toContain("engine.workers.aggregated.scheduler.max_sequences");
  });
});

function gpusOf(provenance: Record<string, unknown>): number {
  const t = provenance["topology"] as Record<string, { replicas: number; gpus_per_worker: number }>;
  return Object.entries(t)
    .filter(([k]) => k !== "deployment_mode")
    .reduce((s, [, r]) => s + r.replicas * r.gpus_per_worker, 0);
}
