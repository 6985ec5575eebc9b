/**
 * `fleetsim validate` warns about settings that run but defeat their purpose: a Planner budget at
 * or below the starting GPUs (seed 000: the Planner then holds every scale-up), and retune's
 * max_parallel above cpu_limit (seed 000 "Size the Run": cpu_limit ≥ max_parallel + 1).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Streams } from "../../src/cli/streams.js";
import { validateCommand } from "../../src/cli/validate.js";
import { cli } from "../helpers/cli.js";
import { RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE } from "../helpers/configHelpers.js";
import { syntheticTraffic } from "../helpers/configYaml.js";
import { dynamoTrace } from "../helpers/dynamoTraces.js";
import { retuneYaml } from "../helpers/retuneProject.js";
import { tempDir } from "../helpers/specs.js";

function configFile(text: string, files: Record<string, string> = {}): string {
  const dir = tempDir("fleetsim-validate-");
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  const path = join(dir, "prediction.yaml");
  writeFileSync(path, text);
  return path;
}

const SYNTHETIC = syntheticTraffic("{type: concurrency, concurrency: 4}", "{requests: 10}");

/** Two aggregated workers of tensor 2 (4 GPUs) with a Planner budget. */
function plannerConfig(maxNumGpus: number): string {
  return configFile(
    `${SYNTHETIC}${RUNNABLE_ENGINE}      parallelism: {replicas: 2, tensor: 2}
planner: {policy: enabled, target: load, max_num_gpus: ${maxNumGpus}}
`,
  );
}

function retuneConfig(maxParallel: number, execution = ""): string {
  return configFile(
    retuneYaml(
      RUNNABLE_ENGINE,
      `interval_seconds: 30
      max_parallel: ${maxParallel}
      router: {overlap_score_credit: {choices: [0.0, 1.0]}}`,
      execution,
    ),
    { "trace.jsonl": dynamoTrace(40, 500) },
  );
}

async function validate(config: string, cpuCount: number, format: "text" | "json" = "text") {
  let out = "";
  let err = "";
  const io: Streams = { out: (s) => (out += s), err: (s) => (err += s) };
  await validateCommand({ config, set: [], stack: "dynamo", format, host: { cpuCount } }, io);
  return { out, err };
}

describe("fleetsim validate warnings", () => {
  it("max_num_gpus equal to the starting GPUs: a warning on stderr, still ok (exit 0)", async () => {
    const r = await cli("validate", "-c", plannerConfig(4));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/: ok\n/);
    expect(r.err).toBe(
      "fleetsim: warning: planner.max_num_gpus = 4 is equal to the 4 GPUs the starting replicas use: the " +
        "Planner holds every scale-up it proposes; set max_num_gpus above the starting GPU count\n",
    );
  });

  it("max_num_gpus below the starting GPUs warns; above them does not", async () => {
    expect((await validate(plannerConfig(3), 8)).err).toContain(
      "planner.max_num_gpus = 3 is below the 4 GPUs the starting replicas use",
    );
    expect((await validate(plannerConfig(5), 8)).err).toBe("");
  });

  it("max_parallel above an explicit cpu_limit warns with the seed's guidance", async () => {
    const r = await validate(retuneConfig(3, "execution:\n  resources: {cpu_limit: 2}\n"), 16);
    expect(r.err).toBe(
      "fleetsim: warning: planner.retune.max_parallel = 3 exceeds execution.resources.cpu_limit = 2: the 3 " +
        "sweep workers share 2 CPUs, so sweeps take longer and may reach timeout_seconds; set cpu_limit to " +
        "at least max_parallel + 1 = 4, or lower max_parallel\n",
    );
    expect((await validate(retuneConfig(2, "execution:\n  resources: {cpu_limit: 2}\n"), 16)).err).toBe("");
  });

  it("cpu_limit auto is host CPUs minus one", async () => {
    expect((await validate(retuneConfig(2), 2)).err).toContain(
      "planner.retune.max_parallel = 2 exceeds execution.resources.cpu_limit = 1 (auto: 2 host CPUs minus one)",
    );
    expect((await validate(retuneConfig(2), 8)).err).toBe("");
  });

  it("predict prints the same warnings before its run, and still runs (exit 0)", async () => {
    const out = tempDir("fleetsim-predict-warn-");
    const r = await cli("predict", "-c", plannerConfig(4), "--output-dir", out, "--overwrite");
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(
      "fleetsim: warning: planner.max_num_gpus = 4 is equal to the 4 GPUs the starting replicas use: the " +
        "Planner holds every scale-up it proposes; set max_num_gpus above the starting GPU count\n",
    );
    const quiet = await cli("predict", "-c", plannerConfig(5), "--output-dir", out, "--overwrite");
    expect(quiet.code).toBe(0);
    expect(quiet.err).not.toContain("max_num_gpus");
  });

  it("--format json lists the warnings in the document (stderr stays empty)", async () => {
    const r = await validate(plannerConfig(4), 8, "json");
    expect(r.err).toBe("");
    const doc = JSON.parse(r.out);
    expect(doc.ok).toBe(true);
    expect(doc.warnings).toHaveLength(1);
    expect(doc.warnings[0]).toContain("planner.max_num_gpus = 4 is equal to the 4 GPUs");
    expect(JSON.parse((await validate(plannerConfig(5), 8, "json")).out).warnings).toEqual([]);
  });
  it("prefill_schedule_interval without attention DP warns that it has no effect; with DP it does not", async () => {
    const config = (parallelism: string) =>
      configFile(
        `${SYNTHETIC}${RUNNABLE_ENGINE}      parallelism: ${parallelism}
      scheduler: {prefill_schedule_interval: 4}
`,
      );
    expect((await validate(config("{replicas: 1}"), 8)).err).toBe(
      "fleetsim: warning: engine.workers.aggregated.scheduler.prefill_schedule_interval = 4 has no effect " +
        "without attention DP (parallelism.attention_data = 1): as in the reference, only attention-DP workers " +
        "admit prefills every N-th pass\n",
    );
    expect((await validate(config("{replicas: 1, attention_data: 2}"), 8)).err).toBe("");
  });

  it("prefill_decode_interval on disaggregated SGLang workers warns that it has no effect; aggregated it does not", async () => {
    const pd = configFile(
      `${SYNTHETIC}${RUNNABLE_PD_ENGINE.replace("  mode: disaggregated\n", "  mode: disaggregated\n  backend: sglang\n")}      scheduler: {prefill_decode_interval: 2}
`,
    );
    expect((await validate(pd, 8)).err).toBe(
      "fleetsim: warning: engine.workers.decode.scheduler.prefill_decode_interval = 2 has no effect on a decode " +
        "worker: it defers prefill while requests decode, and a decode worker never does both\n",
    );
    const agg = configFile(
      `${SYNTHETIC}${RUNNABLE_ENGINE.replace("  hardware: h200_sxm\n", "  hardware: h200_sxm\n  backend: sglang\n")}      scheduler: {prefill_decode_interval: 2}
`,
    );
    expect((await validate(agg, 8)).err).toBe("");
  });
});
