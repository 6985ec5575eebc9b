/**
 * The preflight's memory estimate against the peak a run really reaches (docs/resources.md
 * "Measured peaks"): `fleetsim predict` runs as its own process, so resource-runtime.json's
 * `peak_observed_rss_bytes` is the highest of the sampled process-tree RSS and the process's own
 * kernel high-water mark; the estimate (`preflight_estimated_bytes`) must be within 1.5× of it,
 * either way, so that a limit sized from a measured peak (seed 000 "Size the Run") is not refused.
 * The traces are generated here: nothing outside the repository is read.
 */
import { createWriteStream, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { engineYaml, fixedTiming, syntheticTraffic } from "../helpers/configYaml.js";
import { dynamoTrace } from "../helpers/dynamoTraces.js";
import { fleetsimSync } from "../helpers/process.js";
import { retuneYaml } from "../helpers/retuneProject.js";
import { tempDir } from "../helpers/specs.js";

/**
 * A Mooncake trace of `rows` requests: prompts of 0.2–1.8 × `meanInput` tokens, a prefix shared
 * per group; with `sessions`, every two rows are the turns of one session.
 */
async function writeMooncakeTrace(
  path: string,
  rows: number,
  meanInput: number,
  ratePerS: number,
  sessions = false,
) {
  let seed = 7;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const out = createWriteStream(path);
  let next = 1_000_000;
  let buf = "";
  for (let i = 0; i < rows; i++) {
    const input = Math.max(64, Math.round(meanInput * (0.2 + 1.6 * rnd())));
    const blocks = Math.ceil(input / 512);
    const group = Math.floor(rnd() * 50);
    const ids = Array.from({ length: blocks }, (_, b) => (b < 2 ? group * 10 + b : next++));
    const row = {
      timestamp: Math.round((i * 1000) / ratePerS),
      input_length: input,
      output_length: 8,
      hash_ids: ids,
      ...(sessions ? { session_id: `s${i >> 1}` } : {}),
    };
    buf += `${JSON.stringify(row)}\n`;
    if (buf.length > 1 << 20) {
      out.write(buf);
      buf = "";
    }
  }
  out.write(buf);
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}

/** `fleetsim predict` in its own process; returns resource-runtime.json. */
function predictProcess(dir: string, yaml: string): Record<string, number> {
  const config = join(dir, "prediction.yaml");
  writeFileSync(config, yaml);
  const out = join(dir, "out");
  const r = fleetsimSync(["predict", "--stack", "dynamo", "-c", config, "--output-dir", out]);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(readFileSync(join(out, "resource-runtime.json"), "utf8"));
}

function expectWithin(rt: Record<string, number>, factor: number): void {
  const estimate = rt["preflight_estimated_bytes"];
  const peak = rt["peak_observed_rss_bytes"];
  const ratio = estimate / peak;
  expect(ratio, `estimate ${estimate} vs measured peak ${peak}`).toBeGreaterThan(1 / factor);
  expect(ratio, `estimate ${estimate} vs measured peak ${peak}`).toBeLessThan(factor);
  // The process's own kernel peak is folded into the reported peak.
  expect(peak).toBeGreaterThanOrEqual(rt["peak_process_rss_bytes"]);
  expect(peak).toBeGreaterThanOrEqual(rt["peak_sampled_rss_bytes"]);
}

const FIXED_ENGINE = engineYaml({
  contextLength: 65536,
  replicas: 8,
  blocks: 40000,
  timing: fixedTiming(5, 2),
});

describe("the preflight estimate is within 1.5× of the measured peak", () => {
  it.each([
    {
      sessions: false,
      what: "a generated trace of 60,000 long prompts, streamed (the rows in flight and the request log)",
    },
    {
      sessions: true,
      what: "the same prompts as sessions of two turns, held as a table (the prompts' block hashes dominate)",
    },
  ])(
    "$what",
    async ({ sessions }) => {
      const dir = tempDir("fleetsim-estimate-");
      await writeMooncakeTrace(join(dir, "trace.jsonl"), 60_000, 12_000, 100, sessions);
      const rt = predictProcess(
        dir,
        `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps}
${FIXED_ENGINE}`,
      );
      expectWithin(rt, 1.5);
    },
    120_000,
  );

  it("300,000 synthetic requests (the per-request columns dominate)", () => {
    const rt = predictProcess(
      tempDir("fleetsim-estimate-"),
      syntheticTraffic("{type: concurrency, concurrency: 64}", "{requests: 300000}", [640, 4]) + FIXED_ENGINE,
    );
    expectWithin(rt, 1.5);
  }, 120_000);

  it("retune with two sweep worker processes (the workers dominate)", () => {
    const dir = tempDir("fleetsim-estimate-");
    writeFileSync(join(dir, "trace.jsonl"), dynamoTrace(110, 60));
    const rt = predictProcess(
      dir,
      retuneYaml(
        RUNNABLE_ENGINE.replace("kv_cache:", "parallelism: {replicas: 3}\n      kv_cache:"),
        `interval_seconds: 30
        grace_seconds: 5
        max_parallel: 2
        router: {overlap_score_credit: {choices: [0.0, 0.5, 1.0]}, prefill_load_scale: {choices: [0.5, 1.0]}}`,
        "execution:\n  resources: {cpu_limit: 2}\n",
      ),
    );
    expectWithin(rt, 1.5);
  }, 120_000);
});
