/**
 * A fuzzer for fleetsim's user-facing input (issue 13 §10): mutated configs, `--set` values and
 * trace lines, run through the CLI in process. Every case must end in exit 0, 2 or 3, with no
 * stack trace, an error that names the file (or the `--set` flag) it is about, within a few
 * seconds, and leave no file behind when it fails. Used by test/fuzz/fuzz.test.ts (a few thousand
 * cases in `npm test`) and scripts/fuzz.ts (`npm run fuzz`, 100,000 and more).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { runCli } from "../../src/cli/main.js";
import { engineYaml, fixedTiming, syntheticTraffic } from "../helpers/configYaml.js";

/** Valid configs the mutations start from (small, fast: fixed or polynomial timing, fixed KV). */
export const BASE_CONFIGS: readonly string[] = [
  `${syntheticTraffic("{type: concurrency, concurrency: 4}", "{requests: 12}")}${engineYaml({
    replicas: 2,
    kvCache: "{block_size: 16, capacity: {type: fixed, blocks: 512}}",
    timing: fixedTiming(2, 1),
  })}`,
  `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 16}
  load: {type: trace_timestamps, speedup: 2.0}
${engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: null,
  parallelism: "{replicas: 1, tensor: 1}",
  scheduler: "{max_batched_tokens: 2048, max_sequences: 32}",
  kvCache: "{block_size: 16, capacity: {type: fixed, blocks: 1000}}",
  timing: "{type: polynomial}",
})}router: {policy: kv_router, temperature: 0.0}
planner:
  policy: enabled
  target: load
  enable_throughput_scaling: false
  load_adjustment_interval_seconds: 1
  max_num_gpus: 4
evaluation:
  sla: {ttft_ms: 500, itl_ms: 50}
`,
  `${syntheticTraffic("{type: constant_rate, requests_per_second: 20}", "{requests: 10}", [128, 8])}engine:
  mode: disaggregated
  model: test/model
  hardware: h200_sxm
  context_length: 4096
  kv_transfer: {bytes_per_token: 1000, bandwidth_gb_per_second: 10}
  workers:
    prefill:
      parallelism: {replicas: 1}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 256}}
      timing: {type: fixed, prefill_ms: 3, decode_ms: 1}
    decode:
      parallelism: {replicas: 1}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 256}}
      timing: {type: fixed, prefill_ms: 3, decode_ms: 1}
`,
];

/** A small Mooncake trace the trace-based config reads. */
export const BASE_TRACE: readonly Record<string, unknown>[] = [
  { timestamp: 0, input_length: 40, output_length: 3, hash_ids: [1, 2, 3] },
  { timestamp: 50, input_length: 48, output_length: 2, hash_ids: [1, 2, 4] },
  { timestamp: 120, input_length: 16, output_length: 0, hash_ids: [5] },
];

/** Config paths the `--set` fuzzer aims at (real keys, their parents, and near misses). */
const SET_PATHS = [
  "engine.workers.aggregated.parallelism.replicas",
  "engine.workers.aggregated.parallelism.tensor",
  "engine.workers.aggregated.parallelism.pipeline",
  "engine.workers.aggregated.kv_cache.capacity",
  "engine.workers.aggregated.kv_cache.block_size",
  "engine.workers.aggregated.scheduler.max_batched_tokens",
  "engine.workers.aggregated.timing",
  "engine.workers.aggregated.startup_seconds",
  "engine.context_length",
  "engine.model",
  "engine.mode",
  "traffic.load",
  "traffic.stop.requests",
  "traffic.stop.max_virtual_time_seconds",
  "traffic.source",
  "router",
  "router.temperature",
  "planner",
  "planner.max_num_gpus",
  "planner.load_adjustment_interval_seconds",
  "planner.throughput_adjustment_interval_seconds",
  "evaluation.sla.ttft_ms",
  "execution.resources.memory_limit_gb",
  "engine.workrs.aggregated",
  "traffic..load",
  "",
];

/** YAML values with teeth: extremes, wrong types, aliases, deep nesting, odd characters. */
const nastyValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "0",
    "-1",
    "1e307",
    "1e400",
    "-1e400",
    ".nan",
    ".inf",
    "2147483648",
    "9007199254740993",
    "0.0000001",
    "null",
    "~",
    "true",
    "''",
    "[]",
    "{}",
    "*a",
    "&a [1, *a]",
    "[&a [x,x,x,x,x,x,x,x,x,x], [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]]",
    "{type: fixed, blocks: 1}",
    "{type: fixed, prefill_ms: -1, decode_ms: 0}",
    "{type: constant_rate, requests_per_second: 1e-9}",
    "{policy: kv_router, temperature: 1e308}",
    "{policy: enabled, max_num_gpus: 0}",
    "!!binary aGVsbG8=",
    "!!python/object:os.system ls",
    "'\u0000'",
    "é\u202e",
    "- a\n- b",
    "a: b: c",
    "{a: 1, a: 2}",
    "[".repeat(80) + "]".repeat(80),
    "x".repeat(5000),
  ),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
  fc.string({ maxLength: 30 }),
  fc.double().map(String),
  fc.integer().map(String),
);

export type ConfigMutation =
  | { kind: "set"; path: string; value: string }
  | { kind: "replaceLine"; line: number; text: string }
  | { kind: "deleteLine"; line: number }
  | { kind: "insert"; offset: number; text: string }
  | { kind: "truncate"; at: number }
  | { kind: "duplicateLine"; line: number };

const mutation: fc.Arbitrary<ConfigMutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), path: fc.constantFrom(...SET_PATHS), value: nastyValue }),
  fc.record({
    kind: fc.constant("replaceLine" as const),
    line: fc.nat(40),
    text: fc.oneof(
      nastyValue.map((v) => `  foo: ${v}`),
      nastyValue.map((v) => `      replicas: ${v}`),
      fc.string({ maxLength: 40 }),
    ),
  }),
  fc.record({ kind: fc.constant("deleteLine" as const), line: fc.nat(40) }),
  fc.record({
    kind: fc.constant("insert" as const),
    offset: fc.nat(2000),
    text: fc.oneof(
      fc.constantFrom("\t", ":", "-", "{", "[", "&x ", "*x", "\n  ", "#", "\u0000", "'", '"'),
      fc.string({ maxLength: 8 }),
    ),
  }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat(2000) }),
  fc.record({ kind: fc.constant("duplicateLine" as const), line: fc.nat(40) }),
);

/** Trace lines: valid rows with one field broken, and lines that are not rows at all. */
const traceLine: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      field: fc.constantFrom("timestamp", "input_length", "output_length", "hash_ids", "session_id", "extra"),
      value: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(-1, "__INF__", 2 ** 53 + 1, 1.5, "12", null, [], [-1], [1.5], ["a"], {}),
      ),
      drop: fc.boolean(),
    })
    .map(({ field, value, drop }) => {
      const row: Record<string, unknown> = { ...BASE_TRACE[1] };
      if (drop) delete row[field];
      else row[field] = value;
      return JSON.stringify(row).replace('"__INF__"', "1e400");
    }),
  fc.constantFrom(
    "",
    "{",
    "[]",
    "null",
    "not json",
    '{"timestamp": 1e400}',
    "\u0000\u0001",
    "{}".repeat(1000),
  ),
  fc.string({ maxLength: 60 }),
);

export interface FuzzCase {
  readonly base: number;
  readonly mutations: readonly ConfigMutation[];
  /** Extra trace lines appended (for the trace-based base config). */
  readonly traceLines: readonly string[];
  /** Run `predict` (reads the trace, writes outputs) instead of `validate`. */
  readonly predict: boolean;
}

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.record({
  base: fc.nat(BASE_CONFIGS.length - 1),
  mutations: fc.array(mutation, { minLength: 0, maxLength: 3 }),
  traceLines: fc.array(traceLine, { maxLength: 2 }),
  predict: fc.boolean(),
});

function applyText(text: string, m: ConfigMutation): string {
  const lines = text.split("\n");
  switch (m.kind) {
    case "set":
      return text;
    case "replaceLine":
      lines[m.line % lines.length] = m.text;
      return lines.join("\n");
    case "deleteLine":
      lines.splice(m.line % lines.length, 1);
      return lines.join("\n");
    case "duplicateLine": {
      const i = m.line % lines.length;
      lines.splice(i, 0, lines[i]);
      return lines.join("\n");
    }
    case "insert": {
      const at = m.offset % (text.length + 1);
      return text.slice(0, at) + m.text + text.slice(at);
    }
    case "truncate":
      return text.slice(0, m.at % (text.length + 1));
  }
}

export interface FuzzOutcome {
  readonly code: number;
  readonly err: string;
  readonly ms: number;
  /** Why the case breaks the contract, or null. */
  readonly problem: string | null;
}

const ALLOWED_CODES = new Set([0, 2, 3]);
/** The longest one case may take (a hang or a quadratic blow-up fails the case). */
export const CASE_LIMIT_MS = 5_000;

/** Runs one case in a fresh temp directory (removed afterwards) and checks the contract. */
export async function runFuzzCase(c: FuzzCase): Promise<FuzzOutcome> {
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-fuzz-"));
  try {
    let text = BASE_CONFIGS[c.base];
    const sets: string[] = [];
    for (const m of c.mutations) {
      if (m.kind === "set") sets.push(`${m.path}=${m.value}`);
      else text = applyText(text, m);
    }
    const config = join(dir, "config.yaml");
    writeFileSync(config, text);
    const trace = [...BASE_TRACE.map((r) => JSON.stringify(r)), ...c.traceLines].join("\n");
    writeFileSync(join(dir, "trace.jsonl"), `${trace}\n`);
    const out = join(dir, "out");
    // A mutation may ask for a legitimately huge workload (3 million requests is a valid run of
    // minutes): such cases are validated, not run, so every case stays a few seconds.
    const predict = c.predict && !asksForLargeWorkload(text, sets, c.traceLines);
    const args = predict
      ? ["predict", "-c", config, "--stack", "dynamo", "--output-dir", out, "--progress", "none"]
      : ["validate", "-c", config, "--stack", "dynamo"];
    for (const s of sets) args.push("--set", s);
    let err = "";
    const t0 = performance.now();
    const code = await runCli(args, { out: () => {}, err: (s) => (err += s) });
    const ms = performance.now() - t0;
    return { code, err, ms, problem: problemOf(code, err, ms, predict ? out : null) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the mutated config or an override may describe more than a small workload. */
function asksForLargeWorkload(text: string, sets: readonly string[], traceLines: readonly string[]): boolean {
  if (sets.some((s) => /^(traffic|engine\.workers\.[a-z]+\.timing)/.test(s))) return true;
  // A row far from the others in time makes a trace span centuries: the Planner ticks through
  // them (a valid, unboundedly long run; the heap guard stops it, but only after seconds).
  for (const line of traceLines) {
    const t = /"timestamp":\s*(-?[0-9.eE+-]+)/.exec(line);
    if (t !== null && !(Math.abs(Number(t[1])) <= 1e7)) return true;
  }
  for (const m of text.matchAll(/(requests|requests_per_second|concurrency|speedup|_ms):\s*([^\s,}]+)/g)) {
    const v = Number(m[2]);
    if (!(Number.isFinite(v) && v >= 0.01 && v <= 1000)) return true;
  }
  return false;
}

function problemOf(code: number, err: string, ms: number, out: string | null): string | null {
  if (!ALLOWED_CODES.has(code)) return `exit ${code}: ${err.slice(0, 500)}`;
  if (/\n\s+at .+\(.+:\d+:\d+\)/.test(err) || err.includes("internal error"))
    return `stack trace: ${err.slice(0, 500)}`;
  if (ms > CASE_LIMIT_MS) return `took ${Math.round(ms)} ms`;
  if (code === 2) {
    if (!err.startsWith("fleetsim: error: ")) return `exit 2 without an error line: ${err.slice(0, 300)}`;
    const names = /config\.yaml|trace\.jsonl|--set|--output-dir|--stack|option|argument/;
    if (!names.test(err)) return `exit 2 without a path: ${err.slice(0, 300)}`;
    if (err.length > 20_000) return `message of ${err.length} characters`;
  }
  // A resource refusal or stop (exit 3) leaves its plan or runtime record, by design (docs/resources.md).
  const records = code === 3 ? ["resource-plan.json", "resource-runtime.json"] : [];
  if (code !== 0 && out !== null && existsSync(out) && readdirSync(out).some((n) => !records.includes(n))) {
    return `exit ${code} left files: ${readdirSync(out).join(", ")}`;
  }
  return null;
}
