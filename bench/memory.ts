/**
 * `node --import tsx bench/memory.ts [--only NAME,…] [--skip-1m]`: the preflight's memory estimate
 * against the peak of real runs (docs/resources.md "Measured peaks"). Each case runs
 * `node dist/cli/bin.js predict` (run `npm run build` first) as its own process under
 * `/usr/bin/time -v` when present, and prints the estimate (`preflight_estimated_bytes`), the
 * measured peak (`peak_observed_rss_bytes`: sampled process tree and the process's kernel peak),
 * GNU time's maximum RSS of the fleetsim process (which also sees the output files being written,
 * after the monitor stopped) and estimate / measured peak.
 *
 * Cases: the seed walkthroughs (FAST'25 conversation trace in ../shared), retune Scenario 1 (the
 * trace converted as the seed does, max_parallel 4), generated traces (100,000 long or short
 * prompts, Mooncake and Dynamo), one million synthetic requests, 100,000 requests with
 * --capture-per-request, and one million requests (the conversation trace repeated 83 times, one
 * hour apart: 83 simulated hours with the seed's Planner).
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { convertMooncakeToDynamo, DEFAULT_ORIGIN_UNIX_MS } from "../src/traffic/dynamo/convert.js";
import { writeRepeatedTrace } from "./repeatedTrace.js";

const { values } = parseArgs({
  options: { only: { type: "string" }, "skip-1m": { type: "boolean", default: false } },
});
const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "dist", "cli", "bin.js");
const CONVERSATION = resolve(ROOT, "..", "shared", "traces", "mooncake-fast25", "conversation_trace.jsonl");
const SEED_AGG = readFileSync(join(ROOT, "examples", "seed-aggregated.yaml"), "utf8").replace(
  /paths: \[[^\]]*\]/,
  `paths: [${CONVERSATION}]`,
);
const SEED_DISAGG = readFileSync(join(ROOT, "examples", "seed-disaggregated.yaml"), "utf8").replace(
  /paths: \[[^\]]*\]/,
  `paths: [${CONVERSATION}]`,
);
if (!existsSync(BIN)) throw new Error("run `npm run build` first (bench/memory.ts runs dist/cli/bin.js)");

const dir = mkdtempSync(join(tmpdir(), "fleetsim-bench-memory-"));

/** Prompts of 0.2–1.8 × `meanInput` tokens, 2 shared blocks per group of requests. */
async function mooncake(path: string, rows: number, meanInput: number, ratePerS: number): Promise<void> {
  let seed = 1;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const out = createWriteStream(path);
  let next = 1_000_000;
  let buf = "";
  for (let i = 0; i < rows; i++) {
    const input = Math.max(64, Math.round(meanInput * (0.2 + 1.6 * rnd())));
    const output = 50 + Math.floor(rnd() * 550);
    const group = Math.floor(rnd() * 50);
    const ids = Array.from({ length: Math.ceil(input / 512) }, (_, b) => (b < 2 ? group * 10 + b : next++));
    buf += `${JSON.stringify({ timestamp: Math.round((i * 1000) / ratePerS), input_length: input, output_length: output, hash_ids: ids })}\n`;
    if (buf.length > 1 << 20) {
      out.write(buf);
      buf = "";
    }
  }
  out.write(buf);
  await new Promise<void>((res) => out.end(res));
}

const FIXED = `engine:
  model: test/model
  hardware: h200_sxm
  context_length: 131072
  workers:
    aggregated:
      parallelism: {replicas: 8}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 40000}}
      timing: {type: fixed, prefill_ms: 5, decode_ms: 2}
`;
const trace = (format: string, file: string) =>
  `traffic:\n  source: {type: trace, format: ${format}, paths: [${file}]${format === "mooncake" ? ", block_size: 512" : ""}}\n  load: {type: trace_timestamps}\n`;
const SCENARIO_1 = readFileSync(join(ROOT, "bench", "retune.ts"), "utf8")
  .split("const CONFIG = `")[1]
  .split("`;")[0]
  .replace("max_parallel: 1", "max_parallel: 4");

interface Case {
  name: string;
  prepare?: () => Promise<void>;
  yaml: () => string;
  args?: string[];
  needsShared?: boolean;
}

const CASES: Case[] = [
  { name: "seed-aggregated", yaml: () => SEED_AGG, needsShared: true },
  { name: "seed-disaggregated", yaml: () => SEED_DISAGG, needsShared: true },
  {
    name: "retune-scenario-1",
    needsShared: true,
    prepare: async () => {
      await convertMooncakeToDynamo({
        input: CONVERSATION,
        traceBlockSize: 512,
        originUnixMs: DEFAULT_ORIGIN_UNIX_MS,
        target: {
          splitAtMs: 1_200_000,
          history: join(dir, "history.jsonl"),
          replay: join(dir, "replay.jsonl"),
        },
      });
    },
    yaml: () => SCENARIO_1,
  },
  {
    name: "mooncake-100k-long",
    prepare: () => mooncake(join(dir, "long.jsonl"), 100_000, 12_000, 40),
    yaml: () => trace("mooncake", "long.jsonl") + FIXED,
  },
  {
    name: "mooncake-100k-short",
    prepare: () => mooncake(join(dir, "short.jsonl"), 100_000, 1200, 40),
    yaml: () => trace("mooncake", "short.jsonl") + FIXED,
  },
  {
    name: "dynamo-100k-long",
    prepare: async () => {
      if (!existsSync(join(dir, "long.jsonl"))) await mooncake(join(dir, "long.jsonl"), 100_000, 12_000, 40);
      await convertMooncakeToDynamo({
        input: join(dir, "long.jsonl"),
        traceBlockSize: 512,
        originUnixMs: DEFAULT_ORIGIN_UNIX_MS,
        target: { output: join(dir, "long-dynamo.jsonl") },
      });
    },
    yaml: () => trace("dynamo", "long-dynamo.jsonl") + FIXED,
  },
  {
    name: "synthetic-1m",
    yaml: () =>
      `traffic:\n  source: {type: synthetic, input_tokens: 640, output_tokens: 4}\n  load: {type: concurrency, concurrency: 64}\n  stop: {requests: 1000000}\n${FIXED}`,
  },
  {
    name: "capture-100k-short",
    prepare: async () => {
      if (!existsSync(join(dir, "short.jsonl"))) await mooncake(join(dir, "short.jsonl"), 100_000, 1200, 40);
    },
    yaml: () =>
      `${trace("mooncake", "short.jsonl") + FIXED}execution:\n  resources: {shutdown_timeout_seconds: 120}\n`,
    args: ["--capture-per-request"],
  },
  {
    name: "conversation-1m-planner",
    needsShared: true,
    prepare: () => writeRepeatedTrace(CONVERSATION, join(dir, "conversation-1m.jsonl"), 1_000_000),
    yaml: () =>
      `${SEED_AGG.replace(/paths: \[[^\]]*\]/, "paths: [conversation-1m.jsonl]").replace(
        /max_virtual_time_seconds: \d+/,
        "max_virtual_time_seconds: 400000",
      )}execution:\n  resources: {initialization_timeout_seconds: 600, shutdown_timeout_seconds: 120}\n`,
  },
];

const only = values.only?.split(",") ?? null;
const gnuTime = existsSync("/usr/bin/time");
const gb = (n: number | null | undefined): string => (typeof n === "number" ? (n / 1e9).toFixed(3) : "—");
console.log("case\testimate GB\tmeasured peak GB\tGNU time max RSS GB\testimate / measured");
try {
  for (const c of CASES) {
    if (only !== null && !only.includes(c.name)) continue;
    if (values["skip-1m"] && c.name.includes("1m")) continue;
    if (c.needsShared && !existsSync(CONVERSATION)) {
      console.log(`${c.name}\tskipped: ${CONVERSATION} is missing`);
      continue;
    }
    await c.prepare?.();
    const config = join(dir, `${c.name}.yaml`);
    writeFileSync(config, c.yaml());
    const out = join(dir, `out-${c.name}`);
    const argv = [
      BIN,
      "predict",
      "--stack",
      "dynamo",
      "-c",
      config,
      "--output-dir",
      out,
      "--format",
      "json",
      ...(c.args ?? []),
    ];
    const r = gnuTime
      ? spawnSync("/usr/bin/time", ["-v", process.execPath, ...argv], {
          encoding: "utf8",
          maxBuffer: 1 << 26,
        })
      : spawnSync(process.execPath, argv, { encoding: "utf8", maxBuffer: 1 << 26 });
    if (r.status !== 0) {
      console.log(`${c.name}\tfailed (exit ${r.status}): ${r.stderr.split("\n").slice(0, 3).join(" ")}`);
      continue;
    }
    const rt = JSON.parse(readFileSync(join(out, "resource-runtime.json"), "utf8"));
    const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
    const maxRss = m === null ? null : Number(m[1]) * 1024;
    const ratio = rt.preflight_estimated_bytes / rt.peak_observed_rss_bytes;
    console.log(
      `${c.name}\t${gb(rt.preflight_estimated_bytes)}\t${gb(rt.peak_observed_rss_bytes)}\t${gb(maxRss)}\t${ratio.toFixed(2)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
