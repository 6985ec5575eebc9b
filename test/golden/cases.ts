/**
 * The golden `prediction.json` cases (issue 15's safety net): what each case runs, how a run is
 * turned into its golden form, and the key-by-key comparison. Shared by test/output/golden.test.ts
 * (compares) and scripts/update-goldens.ts (writes test/golden/<name>.prediction.json).
 *
 * A golden may only change in a commit that explains why (a bug fixed, a deliberate change of
 * behaviour or of the output contract): a restructure must leave every golden byte-identical.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cli } from "../helpers/cli.js";
import { CONVERSATION_600S } from "../helpers/fixtures.js";
import { tempDir } from "../helpers/specs.js";

const ROOT = join(import.meta.dirname, "..", "..");
export const GOLDEN_DIR = import.meta.dirname;

export interface GoldenCase {
  /** File stem: test/golden/<name>.prediction.json. */
  readonly name: string;
  /** What the case covers. */
  readonly about: string;
  /** Config path, relative to the repository root. */
  readonly config: string;
  readonly stack: "engine" | "dynamo";
  /** `--set` overrides, left to right. */
  readonly sets: readonly string[];
}

/**
 * The seed configs name the full conversation trace in ../shared; the golden runs replay the
 * committed 600 s fixture of it instead, stopped early so a run stays under ~2 s. The trace is
 * named by an absolute path, which prediction.json never records (`run.traffic.trace` is the
 * file name), so the goldens do not depend on where the repository lives.
 */
const CONVERSATION_FIXTURE = `traffic.source.paths=[${CONVERSATION_600S}]`;

export const GOLDEN_CASES: readonly GoldenCase[] = [
  {
    name: "aggregated",
    about: "examples/aggregated.yaml as bundled (default engine stack, round robin, its sample trace)",
    config: "examples/aggregated.yaml",
    stack: "engine",
    sets: [],
  },
  {
    name: "aggregated-speculation",
    about:
      "examples/aggregated.yaml with ngram speculative decoding (K 3, conditional rates 0.8/0.6/0.4; docs/speculation.md)",
    config: "examples/aggregated.yaml",
    stack: "engine",
    sets: [
      "engine.speculation={kind: ngram, num_speculative_tokens: 3, acceptance_rates: [0.8, 0.6, 0.4], seed: 42}",
    ],
  },
  {
    name: "synthetic-sessions",
    about: "examples/synthetic-sessions.yaml as bundled (multi-turn synthetic sessions, Poisson)",
    config: "examples/synthetic-sessions.yaml",
    stack: "engine",
    sets: [],
  },
  {
    name: "disaggregated-kv-transfer",
    about: "1 prefill + 2 decode workers, KV transfer (destination_missing), round robin",
    config: "test/golden/configs/disaggregated.yaml",
    stack: "dynamo",
    sets: [],
  },
  {
    name: "kv-router",
    about: "3 aggregated workers behind the KV router (overlap credit, prefill load)",
    config: "test/golden/configs/kv-router.yaml",
    stack: "dynamo",
    sets: [],
  },
  {
    name: "disaggregated-kv-router",
    about: "2 prefill + 3 decode workers, each pool behind its role's KV router, KV transfer",
    config: "test/golden/configs/disaggregated-kv-router.yaml",
    stack: "dynamo",
    sets: [],
  },
  {
    name: "seed-aggregated-planner",
    about:
      "examples/seed-aggregated.yaml (SLA Planner in the loop, budget 2) on the 600 s conversation fixture, stopped at 300 s (one throughput tick)",
    config: "examples/seed-aggregated.yaml",
    stack: "dynamo",
    sets: [CONVERSATION_FIXTURE, "traffic.stop.max_virtual_time_seconds=300"],
  },
  {
    name: "seed-disaggregated-planner",
    about:
      "examples/seed-disaggregated.yaml with budget 4 (prefill workers start after 15 s, scale up and drain), throughput ticks every 60 s, on the conversation fixture stopped at 150 s",
    config: "examples/seed-disaggregated.yaml",
    stack: "dynamo",
    sets: [
      CONVERSATION_FIXTURE,
      "traffic.stop.max_virtual_time_seconds=150",
      "planner.max_num_gpus=4",
      "planner.throughput_adjustment_interval_seconds=60",
      "engine.workers.prefill.startup_seconds=15",
    ],
  },
  {
    name: "seed-aggregated-advisory",
    about:
      'examples/seed-aggregated.yaml in advisory mode (seed 000 "Replay in advisory mode"), 3 workers on a 4-GPU budget (its ITL estimates, ~120 ms, ask for more workers; with a budget of 3 the Planner holds all along): recommended_scaling_events, no applied change, on the conversation fixture stopped at 300 s',
    config: "examples/seed-aggregated.yaml",
    stack: "dynamo",
    sets: [
      CONVERSATION_FIXTURE,
      "traffic.stop.max_virtual_time_seconds=300",
      "planner.advisory=true",
      "engine.workers.aggregated.parallelism.replicas=3",
      "planner.max_num_gpus=4",
    ],
  },
  {
    name: "retune-router",
    about:
      "seed 000 Scenario 1 in small (retune-only KV-router retune, 3 workers, a 70 s Dynamo trace, 30 s windows): router policies in ticks, retune_events",
    config: "test/golden/configs/retune-router.yaml",
    stack: "dynamo",
    sets: [],
  },
];

/**
 * Paths (dotted, as `diffJson` names them) left out of the comparison because they measure the
 * host, not the simulation: they differ between two runs of the same config (docs/metrics.md
 * "Host-time keys"; `HOST_TIME_KEYS` in src/metrics/summary.ts, which test/output/golden.test.ts checks
 * this list against). They are stripped from the goldens; the test checks they are present in
 * every run, as numbers.
 *
 * Nothing else is excluded: the `run` block has no host time and no absolute path
 * (src/report/runInfo.ts), `planner.html_report_path` is null without `--html` (no case passes
 * it), `per_request` is null without `--capture-per-request`, and the FPM `wall_time` in Planner
 * ticks is the simulated pass time. Of the host-time keys that only `planner.retune` writes
 * (docs/metrics.md), `sweep_wall_s` is listed (`[*]` = every element of the array); the
 * `retune-router` case runs no predictor pre-sweep (`predictor_presweep` is null) and a fixed
 * decision latency, so `predictor_presweep.wall_s` and a measured `decision_latency_s` never
 * occur: a case that adds them must add them here.
 */
export const HOST_TIME_PATHS: readonly string[] = [
  "summary.wall_time_ms",
  "summary.processed_tokens_per_s",
  "summary.processed_output_tokens_per_s",
  // The engine stack's top-level copies of the summary (docs/output.md "Layout").
  "wall_time_ms",
  "processed_tokens_per_s",
  "processed_output_tokens_per_s",
  "planner.retune_events[*].sweep_wall_s",
];

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Runs a case through the CLI (in process) and returns its prediction.json, parsed. */
export async function runCase(c: GoldenCase): Promise<{ doc: { [key: string]: Json }; err: string }> {
  const out = join(tempDir("fleetsim-golden-"), "out");
  const args = ["predict", "-c", join(ROOT, c.config), "--stack", c.stack, "--output-dir", out];
  for (const s of c.sets) args.push("--set", s);
  const r = await cli(...args);
  if (r.code !== 0) throw new Error(`golden case ${c.name}: exit ${r.code}\n${r.err}`);
  const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")) as { [key: string]: Json };
  return { doc, err: r.err };
}

/** A copy of `doc` without the host-time paths: the golden form of a prediction. */
export function stripHostTime(doc: { [key: string]: Json }): { [key: string]: Json } {
  const copy = structuredClone(doc);
  for (const path of HOST_TIME_PATHS) {
    const keys = path.split(".");
    const last = keys[keys.length - 1];
    for (const node of nodesAt(copy, keys.slice(0, -1))) delete node[last];
  }
  return copy;
}

/** The objects at a dotted path; a `name[*]` step goes into every element of the array `name`. */
function nodesAt(root: Json, keys: readonly string[]): { [key: string]: Json }[] {
  let nodes: Json[] = [root];
  for (const step of keys) {
    const each = step.endsWith("[*]");
    const k = each ? step.slice(0, -3) : step;
    const next: Json[] = [];
    for (const n of nodes) {
      if (n === null || typeof n !== "object" || Array.isArray(n) || !Object.hasOwn(n, k)) continue;
      const v = n[k];
      if (each) {
        if (Array.isArray(v)) next.push(...v);
      } else next.push(v);
    }
    nodes = next;
  }
  return nodes.filter(
    (n): n is { [key: string]: Json } => n !== null && typeof n === "object" && !Array.isArray(n),
  );
}

/** How a golden file is written: 2-space JSON and a final newline. */
export function serializeGolden(doc: { [key: string]: Json }): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function goldenPath(c: GoldenCase): string {
  return join(GOLDEN_DIR, `${c.name}.prediction.json`);
}

const show = (v: Json | undefined): string => {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

const kind = (v: Json): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/**
 * Every difference between two JSON trees, one line per path: `summary.ttft_ms_p99: 123.4 → 125.0`
 * (golden → actual), `a.b: missing (golden 3)`, `a.c: extra (actual 4)`. Numbers compare exactly;
 * arrays element by element (a length difference is reported, then the common prefix is walked).
 */
export function diffJson(golden: Json, actual: Json, path = ""): string[] {
  const out: string[] = [];
  walk(golden, actual, path, out);
  return out;
}

function walk(g: Json, a: Json, path: string, out: string[]): void {
  const kg = kind(g);
  const ka = kind(a);
  if (kg !== ka) {
    out.push(`${path || "(root)"}: ${show(g)} → ${show(a)} (${kg} → ${ka})`);
    return;
  }
  if (Array.isArray(g)) {
    const arr = a as Json[];
    if (g.length !== arr.length) out.push(`${path}: length ${g.length} → ${arr.length}`);
    const n = Math.min(g.length, arr.length);
    for (let i = 0; i < n; i++) walk(g[i], arr[i], `${path}[${i}]`, out);
    return;
  }
  if (g !== null && typeof g === "object") {
    const obj = a as { [key: string]: Json };
    const at = (k: string) => (path === "" ? k : `${path}.${k}`);
    for (const k of Object.keys(g)) {
      if (!Object.hasOwn(obj, k)) out.push(`${at(k)}: missing (golden ${show(g[k])})`);
      else walk(g[k], obj[k], at(k), out);
    }
    for (const k of Object.keys(obj))
      if (!Object.hasOwn(g, k)) out.push(`${at(k)}: extra (actual ${show(obj[k])})`);
    return;
  }
  if (g !== a) out.push(`${path || "(root)"}: ${show(g)} → ${show(a)}`);
}
