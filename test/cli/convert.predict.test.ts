/**
 * `fleetsim predict` on a converted trace gives the summary of the Mooncake original (all keys but
 * the host-time ones), for open-loop and closed-loop load, round-robin and KV-aware routing.
 *
 * The trace is the bundled sample without its session structure: a Dynamo standard trace is
 * open-loop (every request arrives at its recorded time), whereas a Mooncake session turn arrives a
 * `delay` after its previous turn *finished in the simulation*, so a trace with sessions cannot
 * replay identically after conversion (docs/traces.md).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { cli, cliPredict } from "../helpers/cli.js";
import { configFile, engineYaml } from "../helpers/configYaml.js";
import { CONVERSATION_600S, CONVERSATION_600S_ROWS } from "../helpers/fixtures.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SAMPLE = join(ROOT, "examples/sample_trace.jsonl");
/** The FAST'25 conversation trace's first 600 s (a committed fixture: runs without ../shared). */
const CONVERSATION = CONVERSATION_600S;

const dir = mkdtempSync(join(tmpdir(), "fleetsim-convert-predict-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The sample's timestamped rows with session_id and delay removed: 291 independent requests. */
function flatSample(): string {
  const rows = readFileSync(SAMPLE, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => typeof r["timestamp"] === "number")
    .map(({ session_id: _s, delay: _d, ...rest }) => rest);
  const path = join(dir, "flat_trace.jsonl");
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

function config(name: string, source: string, load: string, router: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    `traffic:
  source: ${source}
  load: ${load}
${engineYaml({
  contextLength: 16384,
  replicas: 2,
  kvCache: "{block_size: 64, prefix_caching: true, capacity: {type: fixed, blocks: 300}}",
  timing: "{type: polynomial}",
})}router: ${router}
evaluation:
  sla: {ttft_ms: 200, itl_ms: 20}
`,
  );
  return path;
}

async function summary(configPath: string, out: string): Promise<Record<string, number>> {
  const r = await cli("predict", "-c", configPath, "--output-dir", join(dir, out), "--format", "json");
  expect(r.code, r.err).toBe(0);
  const s = JSON.parse(r.out) as Record<string, number>;
  for (const key of HOST_TIME_KEYS) delete s[key];
  return s;
}

describe("predict: the FAST'25 conversation trace, many same-millisecond arrivals", () => {
  it("replays identically after conversion (ties keep file order)", async () => {
    const dynamo = join(dir, "conversation-dynamo.jsonl");
    const conv = await cli("convert", "--input", CONVERSATION, "--output", dynamo);
    expect(conv.code, conv.err).toBe(0);
    const load = "{type: trace_timestamps, speedup: 4}";
    const router = "{policy: round_robin}";
    const m = await summary(
      config(
        "cm",
        `{type: trace, format: mooncake, paths: [${CONVERSATION}], block_size: 512}`,
        load,
        router,
      ),
      "cm",
    );
    const d = await summary(
      config("cd", `{type: trace, format: dynamo, paths: [${dynamo}]}`, load, router),
      "cd",
    );
    expect(d.num_requests).toBe(CONVERSATION_600S_ROWS);
    expect(d).toEqual(m);
  });
});

describe("predict: a converted trace replays like its Mooncake original", async () => {
  const mooncake = flatSample();
  const dynamo = join(dir, "converted", "flat-dynamo.jsonl.gz");
  const conv = await cli("convert", "--input", mooncake, "--output", dynamo);

  const cases = [
    {
      name: "timestamps, kv router",
      load: "{type: trace_timestamps, speedup: 4}",
      router: "{policy: kv_router}",
    },
    { name: "timestamps, round robin", load: "{type: trace_timestamps}", router: "{policy: round_robin}" },
    {
      name: "concurrency, kv router",
      load: "{type: concurrency, concurrency: 12}",
      router: "{policy: kv_router}",
    },
  ];
  let k = 0;
  for (const c of cases) {
    it(c.name, async () => {
      expect(conv.code, conv.err).toBe(0);
      const i = k++;
      const m = await summary(
        config(
          `m${i}`,
          `{type: trace, format: mooncake, paths: [${mooncake}], block_size: 512}`,
          c.load,
          c.router,
        ),
        `m${i}`,
      );
      // The converted trace is read through a directory path, with the embedded block size.
      const d = await summary(
        config(`d${i}`, `{type: trace, format: dynamo, paths: [${dirname(dynamo)}]}`, c.load, c.router),
        `d${i}`,
      );
      expect(d.num_requests).toBe(291);
      expect(d.completed_requests).toBeGreaterThan(0);
      // Prefix reuse happens, so equal summaries also mean equal prefix sharing.
      expect(m.prefix_cache_reused_ratio).toBeGreaterThan(0);
      expect(d).toEqual(m);
    });
  }
});

describe("planner.retune on a converted trace", () => {
  async function setup(planner: string): Promise<{ config: string; out: string }> {
    const { tempDir } = await import("../helpers/specs.js");
    const dir = tempDir();
    const trace = join(dir, "replay.jsonl");
    const conv = await cli("convert", "--input", "examples/sample_trace.jsonl", "--output", trace);
    expect(conv.code, conv.err).toBe(0);
    const { config } = configFile(
      `traffic:
  source: {type: trace, format: dynamo, paths: [replay.jsonl]}
  load: {type: trace_timestamps}
engine:
  model: nvidia/Llama-3.1-8B-Instruct-FP8
  hardware: h200_sxm
  workers: {aggregated: {parallelism: {replicas: 2}}}
router: {policy: kv_router}
planner:
  policy: enabled
${planner}  retune:
    interval_seconds: 30
    grace_seconds: 5
    router: {overlap_score_credit: 1.0, prefill_load_scale: 1.0, temperature: {choices: [0.0, 1.0]}}
`,
      { dir, name: "retune.yaml" },
    );
    return { config, out: join(dir, "out") };
  }

  it("runs a retune-only router retune and reports its decisions", async () => {
    const p = await setup("  enable_load_scaling: false\n  enable_throughput_scaling: false\n");
    const r = await cliPredict(p.config, p.out);
    expect(r.code, r.err).toBe(0);
    const prediction = JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
    const events = prediction.planner.retune_events as { decision_id: string; num_candidates: number }[];
    expect(Array.isArray(events)).toBe(true);
    events.forEach((e, i) => {
      expect(e.decision_id).toBe(`retune-${i + 1}-w${i}`);
      expect(e.num_candidates).toBe(2);
    });
  }, 60_000);

  it("runs retune with load scaling on (an inner Planner in the candidate replays)", async () => {
    const p = await setup("  enable_load_scaling: true\n  enable_throughput_scaling: false\n");
    const r = await cliPredict(p.config, p.out);
    expect(r.code, r.err).toBe(0);
    const prediction = JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
    expect(Array.isArray(prediction.planner.retune_events)).toBe(true);
  }, 60_000);
});
