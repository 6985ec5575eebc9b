/**
 * npm run conformance — the differential harness of docs/conformance.md: every configuration of
 * cases.ts through NVIDIA's aisimulate (the reference environment of `npm run reference:setup`)
 * and through fleetsim (dist/, built by the npm script), on the same YAML, compared key by key;
 * then the forward-pass estimator grid. Writes the generated part of docs/conformance.md and the
 * raw results to .reference/conformance/.
 *
 *   npm run conformance [-- --only REGEX] [--jobs N] [--goldens] [--no-estimates]
 *
 * --goldens also writes the golden fixtures (test/golden/reference/<case>.json) of the cases
 * marked `golden`, which `npm test` checks fleetsim against without Python.
 */
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { gunzipSync } from "node:zlib";
import { stringify } from "yaml";
import { estimateCommand } from "../../src/cli/estimate.js";
import { CASES, type ConformanceCase, LOCAL_MODELS, polynomialTwin, TRACE_FILES } from "./cases.js";
import {
  compareKeys,
  comparePerRequest,
  comparePlanners,
  compareSummaries,
  DEFAULT_TOLERANCE,
  type KeyReport,
  type MetricRow,
  type PerRequestReport,
  type PlannerReport,
  requestRecords,
  summaryOf,
} from "./compare.js";
import { type GoldenFile, goldenOf, REFERENCE_GOLDEN_DIR } from "./goldens.js";
import {
  estimateDifference,
  PLANNER_REPLAY_CASES,
  type ReplayGolden,
  replayGoldenOf,
  replayPlanner,
} from "./plannerReplayCore.js";
import { referenceConventionSets, referenceSchedulerSets } from "./referenceConventions.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const VENV = join(ROOT, ".reference", "venv");
const WORK = join(ROOT, ".reference", "conformance");
const MODELS = join(ROOT, ".reference", "models");
const DOC = join(ROOT, "docs", "conformance.md");
const FLEETSIM = join(ROOT, "dist", "cli", "bin.js");
const BOOTSTRAP_FILE = "reference-bootstrap.json";
const PLANNER_GOLDEN_DIR = join(ROOT, "test", "golden", "reference-planner", "replay");

interface Args {
  only: RegExp | null;
  jobs: number;
  goldens: boolean;
  estimates: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { only: null, jobs: 2, goldens: false, estimates: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--only") args.only = new RegExp(argv[++i] ?? "");
    else if (a === "--jobs") args.jobs = Math.max(1, Number(argv[++i]));
    else if (a === "--goldens") args.goldens = true;
    else if (a === "--no-estimates") args.estimates = false;
    else {
      console.error(
        `conformance: unknown option ${a}\nusage: npm run conformance -- [--only REGEX] [--jobs N] [--goldens] [--no-estimates]`,
      );
      process.exit(2);
    }
  }
  return args;
}

interface Exec {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

function exec(
  cmd: string,
  argv: string[],
  cwd: string,
  input?: string,
  env: Record<string, string> = {},
): Promise<Exec> {
  const started = process.hrtime.bigint();
  return new Promise((done) => {
    const child = spawn(cmd, argv, {
      cwd,
      // No network here: the reference must not try the Hugging Face Hub.
      env: { ...process.env, HF_HUB_OFFLINE: "1", NO_COLOR: "1", FLEETSIM_CHECK_INVARIANTS: "1", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdin.end(input ?? "");
    child.on("close", (code) =>
      done({ code: code ?? -1, stdout, stderr, seconds: Number(process.hrtime.bigint() - started) / 1e9 }),
    );
  });
}

function referenceVersions(): Record<string, string> {
  const script =
    "import importlib.metadata as m, json, sys; print(json.dumps({n: m.version(n) for n in ('aisimulate','ai-dynamo','ai-dynamo-runtime')} | {'python': sys.version.split()[0]}))";
  const out = runSync(join(VENV, "bin", "python"), ["-c", script]);
  return JSON.parse(out) as Record<string, string>;
}

function runSync(cmd: string, argv: string[]): string {
  return execFileSync(cmd, argv, { encoding: "utf8" });
}

/** Writes the case's folder: config.yaml and its trace, both tools read the same file. */
function materialize(c: ConformanceCase): string {
  const dir = join(WORK, c.id);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (c.trace !== undefined) {
    const t = TRACE_FILES[c.trace];
    const src = join(ROOT, t.repoPath);
    if (src.endsWith(".gz")) writeFileSync(join(dir, t.file), gunzipSync(readFileSync(src)));
    else copyFileSync(src, join(dir, t.file));
  }
  let text: string;
  if (typeof c.config === "string") text = c.config;
  else {
    const doc = structuredClone(c.config) as { engine?: { model?: string } };
    const local = doc.engine?.model !== undefined ? LOCAL_MODELS[doc.engine.model] : undefined;
    if (local !== undefined && doc.engine !== undefined) doc.engine.model = join(MODELS, local);
    text = stringify(doc);
  }
  writeFileSync(join(dir, "config.yaml"), text);
  return dir;
}

interface Side {
  code: number;
  seconds: number;
  /** The first line of stderr that names an error, for a failed run. */
  error: string | null;
  prediction: Record<string, unknown> | null;
  requests: Record<string, unknown>[] | null;
}

/**
 * `fleetsim-conventions`: fleetsim again, under the reference's conventions where fleetsim keeps
 * its own (docs/conformance.md "Reproducing the reference's numbers").
 */
type Tool = "reference" | "fleetsim" | "fleetsim-conventions";

async function runSide(tool: Tool, c: ConformanceCase, dir: string, outName: string = tool): Promise<Side> {
  const out = join(dir, outName);
  const argv = [
    "predict",
    "--stack",
    c.stack,
    "-c",
    "config.yaml",
    "--output-dir",
    out,
    "--overwrite",
    "--format",
    "json",
  ];
  if (c.perRequest) argv.push("--capture-per-request");
  // Both engine stacks report their KV capacity estimate per role with `--detail memory` (the
  // reference's Dynamo stack does not export one); the summary is the same with or without it.
  if (c.stack === "engine") argv.push("--detail", "memory");
  const config = readFileSync(join(dir, "config.yaml"), "utf8");
  if (tool === "fleetsim") argv.push(...referenceSchedulerSets(config));
  if (tool === "fleetsim-conventions") argv.push(...referenceConventionSets(config));
  // The reference's Dynamo stack also writes the bootstrap FPMs its Planner installed, for the
  // Planner replay (plannerReplayCore.ts; scripts/reference/bootstrap_capture).
  if (tool === "reference") rmSync(join(dir, BOOTSTRAP_FILE), { force: true });
  const capture: Record<string, string> =
    c.stack === "dynamo"
      ? {
          BOOT_OUT: join(dir, BOOTSTRAP_FILE),
          PYTHONPATH: join(ROOT, "scripts", "reference", "bootstrap_capture"),
        }
      : {};
  const run =
    tool === "reference"
      ? await exec(join(VENV, "bin", "aisimulate"), argv, dir, undefined, capture)
      : await exec(process.execPath, [FLEETSIM, ...argv], dir);
  writeFileSync(join(dir, `${outName}.stderr.txt`), run.stderr);
  const predictionPath = join(out, "prediction.json");
  const prediction =
    run.code === 0 && existsSync(predictionPath)
      ? (JSON.parse(readFileSync(predictionPath, "utf8")) as Record<string, unknown>)
      : null;
  const requestsPath = join(out, "requests.jsonl");
  const requests =
    prediction !== null && existsSync(requestsPath)
      ? readFileSync(requestsPath, "utf8")
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : null;
  const error =
    run.code === 0
      ? null
      : (run.stderr
          .split("\n")
          .map((l) => stripVTControlCharacters(l).trim())
          .filter(
            (l) =>
              /error|failed|invalid|not permitted|unknown|exist|must|cannot/i.test(l) &&
              !/^\s*(INFO|WARN)/.test(l),
          )
          .at(-1) ??
        run.stderr.trim().split("\n").at(-1) ??
        "");
  return { code: run.code, seconds: run.seconds, error, prediction, requests };
}

export interface CaseResult {
  readonly id: string;
  readonly group: string;
  readonly about: string;
  readonly stack: string;
  readonly reference: { code: number; seconds: number; error: string | null };
  readonly fleetsim: { code: number; seconds: number; error: string | null };
  readonly metrics: MetricRow[];
  /** The same comparison with fleetsim under the reference's conventions (empty when either run failed). */
  readonly conventionMetrics: MetricRow[];
  readonly topKeys: KeyReport | null;
  readonly summaryKeys: KeyReport | null;
  readonly requestKeys: KeyReport | null;
  readonly coverageKeys: KeyReport | null;
  readonly perRequest: PerRequestReport | null;
  /** The same, with fleetsim under the reference's conventions. */
  readonly conventionPerRequest: PerRequestReport | null;
  readonly planner: PlannerReport | null;
  /** The same, with fleetsim under the reference's conventions. */
  readonly conventionPlanner: PlannerReport | null;
  /** fleetsim's Planner on the reference's recorded ticks (plannerReplayCore.ts). */
  readonly plannerReplay: {
    readonly ticks: number;
    readonly sameDecisions: number;
    /** Ticks whose TTFT and ITL estimates equal the reference's to a part in 10⁹. */
    readonly sameEstimates: number;
    readonly maxDifference: number;
  } | null;
  /** KV capacity per role in blocks: [reference, fleetsim] (engine stack only). */
  readonly kvBlocks: Record<string, [number | null, number | null]> | null;
  /**
   * The case's polynomial twin (cases.ts `polynomialTwin`): the reference against fleetsim under
   * the conventions with every role priced by the polynomial timing both share; null when the
   * case is priced alike already or did not run on both tools.
   */
  readonly polynomialTwin: {
    readonly exits: [number, number];
    readonly metrics: MetricRow[];
    /** The twin's scaling events against the reference's (a case with the Planner; else null). */
    readonly planner: PlannerReport | null;
  } | null;
  /**
   * The router cases (whose reference runs are not repeatable, Known differences 12): each summary
   * value's lowest and highest over `REFERENCE_REPEATS` runs of the reference; null elsewhere.
   */
  readonly referenceSpread: Record<string, [number, number]> | null;
}

/**
 * Runs of the reference per router case, to measure its run-to-run spread: three understated it
 * (`disagg-kv-router`'s `std_ttst_ms` over 0.307–0.310 ms in three runs, 0.299–0.316 ms in seven,
 * 2026-12-07).
 */
const REFERENCE_REPEATS = 7;

/** The reference again (`REFERENCE_REPEATS` runs in all) on a router case: each value's range. */
async function referenceSpreadOf(
  c: ConformanceCase,
  dir: string,
  first: Record<string, unknown>,
): Promise<CaseResult["referenceSpread"]> {
  if (c.group !== "router") return null;
  const runs = [summaryOf(first)];
  for (let k = 2; k <= REFERENCE_REPEATS; k++) {
    const again = await runSide("reference", c, dir, `reference-run-${k}`);
    if (again.prediction !== null) runs.push(summaryOf(again.prediction));
  }
  const spread: Record<string, [number, number]> = {};
  for (const [key, v] of Object.entries(runs[0]!)) {
    if (typeof v !== "number") continue;
    const values = runs.map((r) => r[key]).filter((x): x is number => typeof x === "number");
    spread[key] = [Math.min(...values), Math.max(...values)];
  }
  return spread;
}

/** Runs a case's polynomial twin, if it has one, once the case itself ran on both tools. */
async function runTwin(
  c: ConformanceCase,
  kvBlocks: CaseResult["kvBlocks"],
): Promise<CaseResult["polynomialTwin"]> {
  const referenceBlocks: Record<string, number> = {};
  for (const [role, [reference, fleetsim]] of Object.entries(kvBlocks ?? {}))
    if (reference !== null && reference !== fleetsim) referenceBlocks[role] = reference;
  const twin = polynomialTwin(c, referenceBlocks);
  if (twin === null) return null;
  const dir = materialize(twin);
  const ref = await runSide("reference", twin, dir);
  const fs = await runSide("fleetsim-conventions", twin, dir);
  const both = ref.prediction !== null && fs.prediction !== null;
  const rp = ref.prediction?.["planner"] as Record<string, unknown> | null | undefined;
  return {
    exits: [ref.code, fs.code],
    metrics: both ? compareSummaries(summaryOf(ref.prediction!), summaryOf(fs.prediction!)) : [],
    planner:
      both && rp !== null && rp !== undefined
        ? comparePlanners(rp, fs.prediction!["planner"] as Record<string, unknown> | null | undefined)
        : null,
  };
}

/** Each role's KV blocks: the reference's memory detail, fleetsim's run topology. */
function kvBlocksOf(
  reference: Record<string, unknown>,
  fleetsim: Record<string, unknown>,
): Record<string, [number | null, number | null]> | null {
  const details = reference["details"] as
    | { sections?: { memory?: { roles?: Record<string, { estimated_num_gpu_blocks?: number }> } } }
    | undefined;
  const roles = details?.sections?.memory?.roles;
  if (roles === undefined) return null;
  const topology = ((fleetsim["run"] as Record<string, unknown> | undefined)?.["topology"] ?? {}) as Record<
    string,
    { kv_blocks?: number }
  >;
  const out: Record<string, [number | null, number | null]> = {};
  for (const role of Object.keys(roles).sort())
    out[role] = [roles[role]?.estimated_num_gpu_blocks ?? null, topology[role]?.kv_blocks ?? null];
  return out;
}

/** The case's YAML as the goldens keep it: model ids, not the harness's local model folders. */
function caseYaml(c: ConformanceCase): string {
  return typeof c.config === "string" ? c.config : stringify(c.config);
}

async function runCase(
  c: ConformanceCase,
): Promise<{ result: CaseResult; golden: GoldenFile | null; replay: ReplayGolden | null }> {
  const dir = materialize(c);
  const [ref, fs] = [await runSide("reference", c, dir), await runSide("fleetsim", c, dir)];
  const conventions = await runSide("fleetsim-conventions", c, dir);
  let metrics: MetricRow[] = [];
  let conventionMetrics: MetricRow[] = [];
  let topKeys: KeyReport | null = null;
  let summaryKeys: KeyReport | null = null;
  let requestKeys: KeyReport | null = null;
  let coverageKeys: KeyReport | null = null;
  let perRequest: PerRequestReport | null = null;
  let conventionPerRequest: PerRequestReport | null = null;
  let planner: PlannerReport | null = null;
  let conventionPlanner: PlannerReport | null = null;
  let kvBlocks: CaseResult["kvBlocks"] = null;
  if (ref.prediction !== null && fs.prediction !== null) {
    kvBlocks = kvBlocksOf(ref.prediction, fs.prediction);
    const rs = summaryOf(ref.prediction);
    const fss = summaryOf(fs.prediction);
    metrics = compareSummaries(rs, fss);
    if (conventions.prediction !== null)
      conventionMetrics = compareSummaries(rs, summaryOf(conventions.prediction));
    topKeys = compareKeys(ref.prediction, fs.prediction, new Set(Object.keys(rs)));
    summaryKeys = compareKeys(rs, fss);
    const rc = ref.prediction["coverage"];
    const fc = fs.prediction["coverage"];
    if (typeof rc === "object" && rc !== null && typeof fc === "object" && fc !== null)
      coverageKeys = compareKeys(rc as Record<string, unknown>, fc as Record<string, unknown>);
    if (ref.requests !== null && fs.requests !== null && ref.requests.length > 0 && fs.requests.length > 0) {
      requestKeys = compareKeys(ref.requests[0]!, fs.requests[0]!);
      perRequest = comparePerRequest(requestRecords(ref.requests), requestRecords(fs.requests));
      if (conventions.requests !== null && conventions.requests.length > 0)
        conventionPerRequest = comparePerRequest(
          requestRecords(ref.requests),
          requestRecords(conventions.requests),
        );
    }
    const rp = ref.prediction["planner"] as Record<string, unknown> | null | undefined;
    const fp = fs.prediction["planner"] as Record<string, unknown> | null | undefined;
    if ((rp !== null && rp !== undefined) || (fp !== null && fp !== undefined))
      planner = comparePlanners(rp, fp);
    const cp = conventions.prediction?.["planner"] as Record<string, unknown> | null | undefined;
    if (planner !== null && conventions.prediction !== null) conventionPlanner = comparePlanners(rp, cp);
  }
  const twin = ref.prediction !== null && fs.prediction !== null ? await runTwin(c, kvBlocks) : null;
  const referenceSpread = ref.prediction !== null ? await referenceSpreadOf(c, dir, ref.prediction) : null;
  let replay: ReplayGolden | null = null;
  let plannerReplay: CaseResult["plannerReplay"] = null;
  const bootstrapPath = join(dir, BOOTSTRAP_FILE);
  if (ref.prediction !== null && ref.prediction["planner"] && existsSync(bootstrapPath)) {
    replay = replayGoldenOf(
      c.id,
      caseYaml(c),
      ref.prediction,
      JSON.parse(readFileSync(bootstrapPath, "utf8")),
      {},
    );
    const ticks = replayPlanner(replay);
    plannerReplay = {
      ticks: ticks.length,
      sameDecisions: ticks.filter((t) => t.sameDecision).length,
      sameEstimates: ticks.filter(
        (t) => Math.max(estimateDifference(t.ttftMs), estimateDifference(t.itlMs)) <= 1e-9,
      ).length,
      maxDifference: Math.max(
        0,
        ...ticks.map((t) => Math.max(estimateDifference(t.ttftMs), estimateDifference(t.itlMs))),
      ),
    };
  }
  const result: CaseResult = {
    id: c.id,
    group: c.group,
    about: c.about,
    stack: c.stack,
    reference: { code: ref.code, seconds: ref.seconds, error: ref.error },
    fleetsim: { code: fs.code, seconds: fs.seconds, error: fs.error },
    metrics,
    conventionMetrics,
    topKeys,
    summaryKeys,
    requestKeys,
    coverageKeys,
    perRequest,
    conventionPerRequest,
    planner,
    conventionPlanner,
    plannerReplay,
    kvBlocks,
    polynomialTwin: twin,
    referenceSpread,
  };
  const golden =
    c.golden === true && ref.prediction !== null
      ? goldenOf(
          c,
          ref.prediction,
          ref.requests,
          metrics,
          perRequest,
          conventionMetrics,
          conventionPerRequest,
          conventionPlanner === null ? null : conventionPlanner.sameEvents,
        )
      : null;
  const mark = caseAgrees(result) ? "agrees" : "DIVERGES";
  console.log(
    `${c.id.padEnd(34)} ref exit ${ref.code} (${ref.seconds.toFixed(1)} s)  fleetsim exit ${fs.code} (${fs.seconds.toFixed(1)} s)  ${mark}`,
  );
  return { result, golden, replay };
}

/** Every summary metric within the tolerance (or both runs refused the input with the same exit code). */
export function caseAgrees(r: CaseResult): boolean {
  if (r.reference.code !== 0 || r.fleetsim.code !== 0) return r.reference.code === r.fleetsim.code;
  return r.metrics.length > 0 && r.metrics.every((m) => m.ok) && (r.planner === null || r.planner.sameEvents);
}

// ---------------------------------------------------------------- forward-pass estimates

interface EstimateQuery {
  model: string;
  system: string;
  backend: string;
  tp: number;
  /** Expert-parallel ranks of an MoE model whose experts are not tensor-sharded (absent: its experts follow TP). */
  moe_ep?: number;
  moe_tp?: number;
  phase: "prefill" | "decode";
  batch: number;
  tokens: number;
  /** Prefill only: cached prompt tokens before the `tokens` new ones (a chunk over a prefix). */
  prefix?: number;
}

interface EstimateRow extends EstimateQuery {
  reference: number | null;
  fleetsim: number | null;
  /** A prefill past the context-attention tables: fleetsim with the reference's quadratic rule (Known differences 3). */
  fleetsimQuadratic: number | null;
  error: string | null;
}

/** The context-attention tables' longest measured sequence (docs/timing.md "Beyond the tables"). */
const CONTEXT_TABLES_LONGEST = 16_384;

const ESTIMATE_MODELS: ReadonlyArray<{ model: string; tp: number; ep?: number }> = [
  { model: "meta-llama/Meta-Llama-3.1-8B", tp: 1 },
  { model: "Qwen/Qwen3-32B", tp: 2 },
  { model: "meta-llama/Meta-Llama-3.1-70B", tp: 4 },
  { model: "Qwen/Qwen3-30B-A3B", tp: 2 },
  // MLA (the measured module on vLLM) and shared experts, experts spread over 8 ranks.
  { model: "deepseek-ai/DeepSeek-V3", tp: 8, ep: 8 },
];

function estimateQueries(): EstimateQuery[] {
  const out: EstimateQuery[] = [];
  for (const { model, tp, ep } of ESTIMATE_MODELS)
    for (const system of ["h200_sxm", "h100_sxm"]) {
      const moe = ep === undefined ? {} : { moe_tp: 1, moe_ep: ep };
      for (const tokens of [128, 1024, 8192, 32768])
        out.push({ model, system, backend: "vllm", tp, ...moe, phase: "prefill", batch: 1, tokens });
      // Chunked prefill and prefix-cache hits: new tokens over a cached prefix, inside the
      // context-attention tables (16,384 tokens in all) and past them.
      for (const [tokens, prefix] of [
        [512, 12_288],
        [2_048, 8_192],
        [8_192, 8_192],
        [8_192, 16_384],
        [8_192, 57_344],
      ] as const)
        out.push({ model, system, backend: "vllm", tp, ...moe, phase: "prefill", batch: 1, tokens, prefix });
      for (const batch of [1, 8, 64, 256])
        for (const tokens of [128, 1024, 8192, 32768]) {
          if (batch * tokens > 2_000_000) continue;
          out.push({ model, system, backend: "vllm", tp, ...moe, phase: "decode", batch, tokens });
        }
    }
  return out;
}

async function fleetsimEstimate(q: EstimateQuery, extrapolation: "sqrt" | "quadratic"): Promise<number> {
  let text = "";
  await estimateCommand(
    {
      model: q.model,
      hardware: q.system,
      backend: "vllm",
      tensor: q.tp,
      pipeline: 1,
      moeTensor: q.moe_tp ?? (q.model.includes("A3B") ? q.tp : 1),
      moeExpert: q.moe_ep ?? 1,
      prefillTokens: q.phase === "prefill" ? q.tokens : undefined,
      prefix: q.prefix ?? 0,
      batch: q.batch,
      context: q.phase === "decode" ? q.tokens : undefined,
      perfDatabase: undefined,
      contextAttentionExtrapolation: extrapolation,
      format: "json",
    },
    { out: (s) => (text += s), err: () => {} },
  );
  return (JSON.parse(text) as { total_ms: number }).total_ms;
}

async function runEstimates(): Promise<EstimateRow[]> {
  const queries = estimateQueries();
  const ref = await exec(
    join(VENV, "bin", "python"),
    [join(ROOT, "scripts", "reference", "estimate.py")],
    ROOT,
    JSON.stringify(queries.map((q) => ({ ...q, moe_tp: q.model.includes("A3B") ? q.tp : undefined }))),
  );
  if (ref.code !== 0) throw new Error(`estimate.py failed: ${ref.stderr.slice(-2000)}`);
  const answers = JSON.parse(ref.stdout) as Array<{ ms?: number; error?: string }>;
  const rows: EstimateRow[] = [];
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i]!;
    let fleetsim: number | null = null;
    let fleetsimQuadratic: number | null = null;
    let error = answers[i]?.error ?? null;
    try {
      fleetsim = await fleetsimEstimate(q, "sqrt");
      if (q.phase === "prefill" && q.tokens + (q.prefix ?? 0) > CONTEXT_TABLES_LONGEST)
        fleetsimQuadratic = await fleetsimEstimate(q, "quadratic");
    } catch (e) {
      error = `${error ?? ""} fleetsim: ${(e as Error).message.split("\n")[0]}`.trim();
    }
    rows.push({ ...q, reference: answers[i]?.ms ?? null, fleetsim, fleetsimQuadratic, error });
  }
  return rows;
}

// ---------------------------------------------------------------- the document

function pct(d: number | null): string {
  if (d === null) return "—";
  if (!Number.isFinite(d)) return d > 0 ? "+∞" : "−∞";
  const v = d * 100;
  return `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(Math.abs(v) < 10 ? 2 : 1)} %`;
}

function num(v: number | null): string {
  if (v === null) return "—";
  const a = Math.abs(v);
  if (a !== 0 && (a < 0.01 || a >= 1e7)) return v.toExponential(3);
  return v.toLocaleString("en-US", { maximumFractionDigits: a < 10 ? 3 : a < 1000 ? 2 : 0 });
}

const HEADLINE = [
  "completed_requests",
  "mean_ttft_ms",
  "p90_ttft_ms",
  "mean_itl_ms",
  "mean_e2e_latency_ms",
  "output_throughput_tok_s",
  "gpu_hours",
  "prefix_cache_reused_ratio",
] as const;

function keyLine(label: string, k: KeyReport | null): string[] {
  if (k === null) return [];
  const parts: string[] = [];
  if (k.onlyReference.length > 0) parts.push(`only in the reference: \`${k.onlyReference.join("`, `")}\``);
  if (k.onlyFleetsim.length > 0) parts.push(`only in fleetsim: \`${k.onlyFleetsim.join("`, `")}\``);
  if (k.typeMismatches.length > 0) parts.push(`types differ: ${k.typeMismatches.join("; ")}`);
  return [`- ${label}: ${parts.length === 0 ? "same keys and types" : parts.join("; ")}`];
}

type CaseMetric = MetricRow & { readonly id: string };

/** The 12 values furthest outside the tolerance. */
function largestDivergences(rows: readonly CaseMetric[]): CaseMetric[] {
  return rows
    .filter((m) => m.diff !== null && Number.isFinite(m.diff) && !m.ok)
    .sort((a, b) => Math.abs(b.diff!) - Math.abs(a.diff!))
    .slice(0, 12);
}

function divergenceTable(lines: string[], title: string, rows: readonly CaseMetric[]): void {
  if (rows.length === 0) return;
  lines.push(
    "",
    title,
    "",
    "| configuration | metric | reference | fleetsim | difference |",
    "|---|---|---:|---:|---:|",
  );
  for (const w of rows)
    lines.push(`| ${w.id} | \`${w.key}\` | ${num(w.reference)} | ${num(w.fleetsim)} | ${pct(w.diff)} |`);
}

/** A configuration's values outside the tolerance under the conventions, split by its polynomial twin. */
interface Attribution {
  readonly id: string;
  readonly off: readonly MetricRow[];
  /** Of `off`, those within the tolerance on the twin: a difference of pass pricing. */
  readonly priced: readonly MetricRow[];
  /**
   * Of `off`, the rest, each with its difference on the twin (null: no twin, or no such value) and
   * the reference's own run-to-run range where it was measured (router cases).
   */
  readonly rest: ReadonlyArray<{
    readonly row: MetricRow;
    readonly twin: MetricRow | null;
    readonly spread: readonly [number, number] | null;
  }>;
  readonly twin: CaseResult["polynomialTwin"];
}

/** fleetsim's value within the reference's run-to-run range, widened by the tolerance. */
function withinSpread(value: number | null, spread: readonly [number, number] | null): boolean {
  if (value === null || spread === null) return false;
  const [lo, hi] = spread;
  return value >= lo - Math.abs(lo) * DEFAULT_TOLERANCE && value <= hi + Math.abs(hi) * DEFAULT_TOLERANCE;
}

function attributionsOf(ran: readonly CaseResult[]): Attribution[] {
  return ran
    .filter((r) => r.conventionMetrics.length > 0)
    .map((r) => {
      const off = r.conventionMetrics.filter((m) => !m.ok);
      const onTwin = (m: MetricRow): MetricRow | null =>
        r.polynomialTwin?.metrics.find((t) => t.key === m.key) ?? null;
      const priced = off.filter((m) => onTwin(m)?.ok === true);
      const rest = off
        .filter((m) => onTwin(m)?.ok !== true)
        .map((row) => ({ row, twin: onTwin(row), spread: r.referenceSpread?.[row.key] ?? null }));
      return { id: r.id, off, priced, rest, twin: r.polynomialTwin };
    });
}

/** The attribution table: what the twin explains, and the rest by name (at most 8 per configuration). */
function attributionTable(lines: string[], attributions: readonly Attribution[]): void {
  lines.push(
    "",
    "### What pass pricing explains",
    "",
    "Every configuration that ran on both tools, under the reference's conventions. A configuration priced by the op-level model is run again on both tools with every role on the polynomial timing they share, and with the reference's KV blocks where fleetsim sizes a role's cache differently (`scripts/conformance/cases.ts` `polynomialTwin`; nothing else changes). A value outside 2 % that agrees within 2 % on the twin differs through the pricing of passes or the cache's size (Known differences 3, 10, 13 and 16) and not through scheduling, caching, routing, the Planner or a metric's definition. This is evidence, not proof: a twin also runs at another load, so a regime a metric is sensitive to can differ. The last column lists the other values, with their difference under the conventions and on the twin (— where the configuration is priced alike already), and on the router cases the range of the reference's own value over " +
      `${REFERENCE_REPEATS} runs ("within": fleetsim's value lies in it, widened by ${DEFAULT_TOLERANCE * 100} %).`,
    "",
    "| configuration | outside 2 % | of those, within 2 % on the twin | twin within 2 % | the others: difference → on the twin |",
    "|---|---:|---:|---:|---|",
  );
  for (const a of attributions) {
    const twinCell =
      a.twin === null
        ? "—"
        : a.twin.metrics.length === 0
          ? `exit ${a.twin.exits[0]}/${a.twin.exits[1]}`
          : `${a.twin.metrics.filter((m) => m.ok).length}/${a.twin.metrics.length}`;
    const shown = a.rest.slice(0, 8).map(({ row, twin, spread }) => {
      const own =
        spread === null
          ? ""
          : ` (the reference's runs: ${num(spread[0])} … ${num(spread[1])}${withinSpread(row.fleetsim, spread) ? ", within" : ""})`;
      return `\`${row.key}\` ${pct(row.diff)} → ${twin === null ? "—" : pct(twin.diff)}${own}`;
    });
    if (a.rest.length > 8) shown.push(`and ${a.rest.length - 8} more`);
    lines.push(
      `| ${a.id} | ${a.off.length} | ${a.twin === null ? "—" : a.priced.length} | ${twinCell} | ${shown.join("; ")} |`,
    );
  }
}

function renderDocument(
  results: readonly CaseResult[],
  estimates: readonly EstimateRow[] | null,
  versions: Record<string, string>,
  freeze: string,
): string {
  const ran = results.filter((r) => r.reference.code === 0 && r.fleetsim.code === 0);
  const agree = results.filter(caseAgrees);
  const allRows = ran.flatMap((r) => r.metrics.map((m) => ({ id: r.id, ...m })));
  const metricAgree = allRows.filter((m) => m.ok).length;
  const worst = largestDivergences(allRows);
  const conventionRows = ran.flatMap((r) => r.conventionMetrics.map((m) => ({ id: r.id, ...m })));
  const conventionAgree = conventionRows.filter((m) => m.ok).length;
  const conventionCases = ran.filter((r) => r.conventionMetrics.length > 0);
  const conventionCasesAgree = conventionCases.filter((r) => r.conventionMetrics.every((m) => m.ok)).length;
  const lines: string[] = [];
  const date = new Date().toISOString().slice(0, 10);
  lines.push(
    `Generated by \`npm run conformance\` on ${date} against aisimulate ${versions["aisimulate"]}, ai-dynamo ${versions["ai-dynamo"]} (runtime ${versions["ai-dynamo-runtime"]}), Python ${versions["python"]}; fleetsim ${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version} at \`${gitHead()}\`.`,
    "",
    "### Headline",
    "",
    `- ${results.length} configurations; ${ran.length} ran on both tools, ${results.length - ran.length} are bad inputs or failed on one side (exit codes below).`,
    `- ${agree.length} of ${results.length} agree: every summary metric within ${DEFAULT_TOLERANCE * 100} % and the same scaling decisions (bad inputs: the same exit code).`,
    `- ${metricAgree} of ${allRows.length} summary metric values (host-time keys excluded) are within ${DEFAULT_TOLERANCE * 100} %.`,
    `- Under the reference's conventions (fleetsim with Known differences 2, 3, 8, 9, 11 and 15 switched off; "Reproducing the reference's numbers" above): ${conventionAgree} of ${conventionRows.length} values within ${DEFAULT_TOLERANCE * 100} %, and every summary metric within ${DEFAULT_TOLERANCE * 100} % on ${conventionCasesAgree} of ${conventionCases.length} configurations.`,
  );
  const attribution = attributionsOf(ran);
  const offCount = attribution.reduce((n, a) => n + a.off.length, 0);
  const pricedCount = attribution.reduce((n, a) => n + a.priced.length, 0);
  const spreadCount = attribution.reduce(
    (n, a) => n + a.rest.filter((x) => withinSpread(x.row.fleetsim, x.spread)).length,
    0,
  );
  lines.push(
    `- Of the ${offCount} values outside ${DEFAULT_TOLERANCE * 100} % under the conventions, ${pricedCount} are within ${DEFAULT_TOLERANCE * 100} % once both tools price every pass with the polynomial timing they share, on the reference's KV blocks (each op-level configuration's twin, "What pass pricing explains" below): their difference is in how a pass is priced or the cache sized (Known differences 3, 10, 13 and 16). The other ${offCount - pricedCount} are listed there, configuration by configuration; ${spreadCount} of them lie within the reference's own run-to-run range (widened by ${DEFAULT_TOLERANCE * 100} %) over ${REFERENCE_REPEATS} runs of the router cases, whose ties it breaks at random (Known differences 12).`,
  );
  divergenceTable(lines, "Largest divergences:", worst);
  divergenceTable(
    lines,
    "Largest divergences under the reference's conventions (what those differences do not explain):",
    largestDivergences(conventionRows),
  );
  attributionTable(lines, attribution);
  lines.push(
    "",
    "### Configurations × headline metrics",
    "",
    "Each cell: reference / fleetsim (difference). ✓ = every summary metric within 2 % (and, with the Planner, the same scaling events). Within 2 %: the summary metrics within 2 % as fleetsim runs by default, then under the reference's conventions.",
    "",
    `| configuration | stack | exit ref/fs | ${HEADLINE.map((h) => `\`${h}\``).join(" | ")} | within 2 % | agrees |`,
    `|---|---|---|${HEADLINE.map(() => "---").join("|")}|---|---|`,
  );
  for (const r of results) {
    const cells = HEADLINE.map((h) => {
      const m = r.metrics.find((x) => x.key === h);
      return m === undefined ? "—" : `${num(m.reference)} / ${num(m.fleetsim)} (${pct(m.diff)})`;
    });
    const count = (rows: readonly MetricRow[]): string =>
      rows.length === 0 ? "—" : `${rows.filter((m) => m.ok).length}/${rows.length}`;
    lines.push(
      `| ${r.id} | ${r.stack} | ${r.reference.code}/${r.fleetsim.code} | ${cells.join(" | ")} | ${count(r.metrics)} · ${count(r.conventionMetrics)} | ${caseAgrees(r) ? "✓" : "✗"} |`,
    );
  }
  const planners = results.filter((r) => r.planner !== null);
  if (planners.length > 0) {
    lines.push(
      "",
      "### Planner",
      "",
      "Each tool in its own closed loop (its Planner learning from its own engines' passes), then fleetsim's Planner on the reference's recorded ticks (the same FPMs, worker counts and traffic, and the reference's bootstrap FPMs; Known differences 4): ticks with the same decision, ticks whose TTFT and ITL estimates equal the reference's to a part in 10⁹, and the largest relative difference of an estimate. The column \"under the conventions\": fleetsim's closed loop again with the reference's pricing conventions (\"Reproducing the reference's numbers\"): its scaling events, and whether they are the reference's; \"on the polynomial twin\": the same for the case's twin (\"What pass pricing explains\"), both tools pricing every pass alike.",
      "",
      "| configuration | scaling events ref / fs | same decisions | first difference | under the conventions: events · same | on the polynomial twin: events ref / fs · same | ticks ref / fs | lifecycle ops ref / fs | retune events ref / fs | advisory recommendations ref / fs | on the reference's ticks: same decisions · same estimates · largest difference |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const r of planners) {
      const p = r.planner!;
      const q = r.plannerReplay;
      const replayCell =
        q === null
          ? "—"
          : `${q.sameDecisions}/${q.ticks} · ${q.sameEstimates}/${q.ticks} · ${q.maxDifference === 0 ? "0" : q.maxDifference.toExponential(1)}`;
      const c = r.conventionPlanner;
      const conventionCell =
        c === null ? "—" : `${c.fleetsimEvents} · ${c.sameEvents ? "yes" : `no (from ${c.firstDifference})`}`;
      const t = r.polynomialTwin?.planner ?? null;
      const twinCell =
        t === null
          ? "—"
          : `${t.referenceEvents} / ${t.fleetsimEvents} · ${t.sameEvents ? "yes" : `no (from ${t.firstDifference})`}`;
      lines.push(
        `| ${r.id} | ${p.referenceEvents} / ${p.fleetsimEvents} | ${p.sameEvents ? "yes" : "no"} | ${p.firstDifference ?? "—"} | ${conventionCell} | ${twinCell} | ${p.referenceTicks} / ${p.fleetsimTicks} | ${p.referenceLifecycle} / ${p.fleetsimLifecycle} | ${p.referenceRetune} / ${p.fleetsimRetune} | ${p.referenceRecommended} / ${p.fleetsimRecommended} | ${replayCell} |`,
      );
    }
  }
  const perReq = results.filter((r) => r.perRequest !== null);
  if (perReq.length > 0) {
    lines.push(
      "",
      "### Request by request",
      "",
      "Matched by `uuid`; |relative difference| of each request's TTFT and E2E: median, p90, max, and the share within 2 %; the last two columns: the shares within 2 % with fleetsim under the reference's conventions.",
      "",
      "| configuration | requests | TTFT median | TTFT p90 | TTFT max | TTFT within 2 % | E2E median | E2E p90 | E2E max | E2E within 2 % | TTFT within 2 %, conventions | E2E within 2 %, conventions |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    );
    const p = (v: number) => `${(v * 100).toFixed(2)} %`;
    for (const r of perReq) {
      const q = r.perRequest!;
      const c = r.conventionPerRequest;
      const conv = c === null ? "— | —" : `${p(c.ttft.withinShare)} | ${p(c.e2e.withinShare)}`;
      lines.push(
        `| ${r.id} | ${q.matched} | ${p(q.ttft.medianAbs)} | ${p(q.ttft.p90Abs)} | ${p(q.ttft.maxAbs)} | ${p(q.ttft.withinShare)} | ${p(q.e2e.medianAbs)} | ${p(q.e2e.p90Abs)} | ${p(q.e2e.maxAbs)} | ${p(q.e2e.withinShare)} | ${conv} |`,
      );
    }
  }
  const kv = results.filter((r) => r.kvBlocks !== null);
  if (kv.length > 0) {
    lines.push(
      "",
      "### KV capacity",
      "",
      "Blocks per worker: the reference's capacity estimate (`--detail memory`, engine stack) and fleetsim's `run.topology.<role>.kv_blocks`.",
      "",
      "| configuration | role | reference | fleetsim | difference |",
      "|---|---|---:|---:|---:|",
    );
    let same = 0;
    let all = 0;
    for (const r of kv)
      for (const [role, [a, b]] of Object.entries(r.kvBlocks!)) {
        all++;
        if (a !== null && a === b) same++;
        lines.push(
          `| ${r.id} | ${role} | ${num(a)} | ${num(b)} | ${a !== null && b !== null ? pct((b - a) / a) : "—"} |`,
        );
      }
    lines.push("", `${same} of ${all} roles have the same number of blocks.`);
  }
  const bad = results.filter((r) => r.reference.code !== 0 || r.fleetsim.code !== 0);
  if (bad.length > 0) {
    lines.push(
      "",
      "### Exit codes and errors",
      "",
      "| configuration | exit ref / fs | reference says | fleetsim says |",
      "|---|---|---|---|",
    );
    const cell = (s: string | null) => (s === null ? "—" : s.replace(/\|/g, "\\|").slice(0, 220));
    for (const r of bad)
      lines.push(
        `| ${r.id} | ${r.reference.code} / ${r.fleetsim.code} | ${cell(r.reference.error)} | ${cell(r.fleetsim.error)} |`,
      );
  }
  if (estimates !== null) {
    lines.push(
      "",
      "### Forward-pass estimates",
      "",
      "One uncorrected pass: `fleetsim estimate` against the reference's op-level estimator (`RustForwardPassPerfModel`, scripts/reference/estimate.py), vLLM tables. Prefill: batch 1 of N new tokens, over a cached prefix of P tokens where the prefix column says so; decode: a batch at N tokens of context each. The last column: a prefill past the context-attention tables' 16,384 tokens priced with the reference's quadratic extrapolation (`fleetsim estimate --context-attention-extrapolation quadratic`; Known differences 3), against the reference.",
      "",
      "| model | GPU | TP | phase | batch | tokens | prefix | reference ms | fleetsim ms | difference | with the reference's extrapolation |",
      "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    );
    const against = (v: number | null, ref: number | null): number | null =>
      v !== null && ref !== null ? (v - ref) / ref : null;
    for (const e of estimates) {
      const d = against(e.fleetsim, e.reference);
      const q = e.fleetsimQuadratic === null ? "—" : pct(against(e.fleetsimQuadratic, e.reference));
      lines.push(
        `| ${e.model} | ${e.system} | ${e.tp}${e.moe_ep === undefined ? "" : ` (EP ${e.moe_ep})`} | ${e.phase} | ${e.batch} | ${e.tokens} | ${e.prefix ?? "—"} | ${num(e.reference)} | ${num(e.fleetsim)} | ${e.error !== null ? e.error.slice(0, 80) : pct(d)} | ${q} |`,
      );
    }
    const ok = estimates.filter((e) => e.reference !== null && e.fleetsim !== null);
    const close = ok.filter((e) => Math.abs(e.fleetsim! - e.reference!) <= 0.02 * e.reference!);
    lines.push("", `${close.length} of ${ok.length} estimates within 2 %.`);
  }
  lines.push("", "### Every metric, per configuration", "");
  for (const r of ran) {
    const off = r.metrics.filter((m) => !m.ok).length;
    lines.push(
      `<details><summary>${r.id} — ${r.about} (${off === 0 ? "all within 2 %" : `${off} of ${r.metrics.length} metrics outside 2 %`})</summary>`,
      "",
      ...keyLine("top-level keys", r.topKeys),
      ...keyLine("summary keys", r.summaryKeys),
      ...keyLine("coverage keys", r.coverageKeys),
      ...keyLine("requests.jsonl keys", r.requestKeys),
      "",
      "| metric | reference | fleetsim | difference | under the reference's conventions |",
      "|---|---:|---:|---:|---:|",
      ...r.metrics.map((m) => {
        const c = r.conventionMetrics.find((x) => x.key === m.key);
        const mark = (row: MetricRow): string => (row.ok ? pct(row.diff) : `**${pct(row.diff)}**`);
        return `| \`${m.key}\` | ${num(m.reference)} | ${num(m.fleetsim)} | ${mark(m)} | ${c === undefined ? "—" : mark(c)} |`;
      }),
      "",
      "</details>",
      "",
    );
  }
  lines.push(
    "### The reference environment (`pip freeze`)",
    "",
    "<details><summary>scripts/reference/constraints.txt as installed</summary>",
    "",
    "```",
    freeze.trim(),
    "```",
    "",
    "</details>",
  );
  return lines.join("\n");
}

function gitHead(): string {
  try {
    return runSync("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"]).trim();
  } catch {
    return "unknown";
  }
}

const START = "<!-- conformance:generated:start -->";
const END = "<!-- conformance:generated:end -->";

/** Replaces the generated part of docs/conformance.md, keeping the hand-written text around it. */
function writeDocument(generated: string): void {
  const current = existsSync(DOC)
    ? readFileSync(DOC, "utf8")
    : `# Conformance with the reference\n\n${START}\n${END}\n`;
  const a = current.indexOf(START);
  const b = current.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${DOC}: the markers ${START} … ${END} are missing`);
  writeFileSync(DOC, `${current.slice(0, a + START.length)}\n${generated}\n${current.slice(b)}`);
}

async function pool<T, R>(items: readonly T[], jobs: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(jobs, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i]!);
      }
    }),
  );
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(join(VENV, "bin", "aisimulate"))) {
    console.error(
      "conformance: no reference environment (.reference/venv): run `npm run reference:setup` first",
    );
    process.exit(2);
  }
  if (!existsSync(FLEETSIM)) {
    console.error("conformance: dist/ is not built: `npm run build` first (npm run conformance builds it)");
    process.exit(2);
  }
  const versions = referenceVersions();
  const freeze = runSync(join(VENV, "bin", "pip"), ["freeze", "--exclude-editable"]);
  mkdirSync(WORK, { recursive: true });
  const cases = CASES.filter((c) => args.only === null || args.only.test(c.id));
  console.log(
    `conformance: ${cases.length} configurations, aisimulate ${versions["aisimulate"]}, ai-dynamo ${versions["ai-dynamo"]}`,
  );
  const runs = await pool(cases, args.jobs, runCase);
  const results = runs.map((r) => r.result);
  const estimates = args.estimates ? await runEstimates() : null;
  writeFileSync(join(WORK, "results.json"), `${JSON.stringify({ versions, results, estimates }, null, 1)}\n`);
  if (args.only === null) writeDocument(renderDocument(results, estimates, versions, freeze));
  else console.log("(--only: docs/conformance.md left as it is)");
  if (args.goldens) {
    mkdirSync(REFERENCE_GOLDEN_DIR, { recursive: true });
    for (const { golden } of runs) {
      if (golden === null) continue;
      writeFileSync(
        join(REFERENCE_GOLDEN_DIR, `${golden.case}.json`),
        `${JSON.stringify({ ...golden, reference: versions }, null, 1)}\n`,
      );
      console.log(`golden: test/golden/reference/${golden.case}.json`);
    }
    mkdirSync(PLANNER_GOLDEN_DIR, { recursive: true });
    for (const { replay } of runs) {
      if (replay === null || !PLANNER_REPLAY_CASES.includes(replay.case)) continue;
      writeFileSync(
        join(PLANNER_GOLDEN_DIR, `${replay.case}.json`),
        `${JSON.stringify({ ...replay, reference: versions })}\n`,
      );
      console.log(`golden: test/golden/reference-planner/replay/${replay.case}.json`);
    }
  }
  // The written files as the project's formatter keeps them (npm run lint checks them).
  execFileSync(
    join(ROOT, "node_modules", ".bin", "biome"),
    ["format", "--write", DOC, REFERENCE_GOLDEN_DIR, PLANNER_GOLDEN_DIR],
    {
      cwd: ROOT,
      stdio: "ignore",
    },
  );
  const agree = results.filter(caseAgrees).length;
  console.log(
    `conformance: ${agree} of ${results.length} configurations agree (docs/conformance.md; raw: .reference/conformance/results.json)`,
  );
}

await main();
