/**
 * The fuzzer's second half (issue 44): input at the edges of the CLI rather than in a config.
 * - **Traces** that are not text or not lines: a line past the 16 MiB cap, NUL bytes, zero
 *   padding, random binary, gzip cut short or with a flipped byte (`predict`).
 * - **prediction.json files** broken in type or shape: a summary key set to a wrong-typed or
 *   negative value, a section removed or of the wrong kind, a byte-order mark, text cut short
 *   (`report`, `compare`).
 * - **Sweep directories** damaged after planning: `results` a file, `manifest.json` a folder or
 *   cut short, a result cut short or overwritten, the base config gone (`sweep run`, `sweep merge`).
 * Each case must end in exit 0 or 2 with no stack trace, in a few seconds, name the file or
 * directory it is about when it fails, and leave nothing of the failed command's output.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { runCli } from "../../src/cli/main.js";
import { MAX_LINE_CHARS } from "../../src/traffic/jsonlReader.js";
import { sweepProject } from "../helpers/sweepProject.js";
import { BASE_CONFIGS, BASE_TRACE, CASE_LIMIT_MS, type FuzzOutcome } from "./cliFuzz.js";

export type TraceShape =
  | { readonly kind: "longLine"; readonly line: number; readonly extra: number }
  | { readonly kind: "nul"; readonly offset: number; readonly count: number }
  | { readonly kind: "zeroPad"; readonly bytes: number }
  | { readonly kind: "binary"; readonly bytes: readonly number[] }
  | { readonly kind: "gzipCut"; readonly at: number }
  | { readonly kind: "gzipFlip"; readonly at: number; readonly bit: number };

export type PredictionMutation =
  | { readonly kind: "summaryValue"; readonly key: number; readonly value: unknown }
  | { readonly kind: "dropSection"; readonly section: number }
  | { readonly kind: "sectionValue"; readonly section: number; readonly value: unknown }
  | { readonly kind: "bom" }
  | { readonly kind: "cut"; readonly at: number };

export type SweepDamage =
  | { readonly kind: "resultsFile" }
  | { readonly kind: "manifestFolder" }
  | { readonly kind: "manifestCut"; readonly at: number }
  | { readonly kind: "resultCut"; readonly point: number; readonly at: number }
  | { readonly kind: "resultBytes"; readonly point: number; readonly bytes: readonly number[] }
  | { readonly kind: "baseGone" };

export type EdgeCase =
  | { readonly kind: "trace"; readonly shape: TraceShape }
  | {
      readonly kind: "prediction";
      readonly mutations: readonly PredictionMutation[];
      readonly command: "report" | "compare";
    }
  | { readonly kind: "sweep"; readonly damage: SweepDamage; readonly command: "run" | "merge" };

/** Values a prediction's field may be set to: wrong types, extremes, nesting. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom("12", "", null, -1e308, -1, 1e308, true, [], {}, [1, 2], { mean: 1 }, "NaN"),
  fc.jsonValue({ maxDepth: 2 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const traceShape: fc.Arbitrary<TraceShape> = fc.oneof(
  // Weighted low: each writes and reads 16 MiB.
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("longLine" as const),
      line: fc.nat(3),
      extra: fc.integer({ min: 1, max: 4096 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("nul" as const),
      offset: fc.nat(400),
      count: fc.integer({ min: 1, max: 8 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("zeroPad" as const),
      bytes: fc.integer({ min: 1, max: 3 << 20 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("binary" as const),
      bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 256 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("gzipCut" as const), at: fc.nat(300) }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("gzipFlip" as const), at: fc.nat(300), bit: fc.nat(7) }),
  },
);

const predictionMutation: fc.Arbitrary<PredictionMutation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("summaryValue" as const), key: fc.nat(), value: oddValue }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("dropSection" as const), section: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("sectionValue" as const), section: fc.nat(), value: oddValue }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("bom" as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }) },
);

const sweepDamage: fc.Arbitrary<SweepDamage> = fc.oneof(
  fc.record({ kind: fc.constant("resultsFile" as const) }),
  fc.record({ kind: fc.constant("manifestFolder" as const) }),
  fc.record({ kind: fc.constant("manifestCut" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("resultCut" as const), point: fc.nat(1), at: fc.nat() }),
  fc.record({
    kind: fc.constant("resultBytes" as const),
    point: fc.nat(1),
    bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }),
  }),
  fc.record({ kind: fc.constant("baseGone" as const) }),
);

export const edgeCase: fc.Arbitrary<EdgeCase> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("trace" as const), shape: traceShape }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("prediction" as const),
      mutations: fc.array(predictionMutation, { minLength: 1, maxLength: 3 }),
      command: fc.constantFrom("report" as const, "compare" as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("sweep" as const),
      damage: sweepDamage,
      command: fc.constantFrom("run" as const, "merge" as const),
    }),
  },
);

/** The trace-based base config's trace, as bytes, shaped by `shape`. */
export function shapedTrace(shape: TraceShape): Buffer {
  const text = `${BASE_TRACE.map((r) => JSON.stringify(r)).join("\n")}\n`;
  const plain = Buffer.from(text);
  switch (shape.kind) {
    case "longLine": {
      const lines = text.split("\n");
      lines.splice(shape.line % lines.length, 0, " ".repeat(MAX_LINE_CHARS + shape.extra));
      return Buffer.from(lines.join("\n"));
    }
    case "nul": {
      const at = shape.offset % (plain.length + 1);
      return Buffer.concat([plain.subarray(0, at), Buffer.alloc(shape.count), plain.subarray(at)]);
    }
    case "zeroPad":
      return Buffer.concat([plain, Buffer.alloc(shape.bytes)]);
    case "binary":
      return Buffer.concat([plain, Buffer.from(shape.bytes)]);
    case "gzipCut": {
      const gz = gzipSync(plain);
      return gz.subarray(0, shape.at % (gz.length + 1));
    }
    case "gzipFlip": {
      const gz = Buffer.from(gzipSync(plain));
      gz[shape.at % gz.length] ^= 1 << shape.bit;
      return gz;
    }
  }
}

const GOLDEN_PREDICTION = join(import.meta.dirname, "..", "golden", "kv-router.prediction.json");

/** The golden prediction's text with `mutations` applied in order. */
export function mutatedPrediction(mutations: readonly PredictionMutation[]): string {
  let doc = JSON.parse(readFileSync(GOLDEN_PREDICTION, "utf8")) as Record<string, unknown>;
  let text: string | null = null;
  let bom = false;
  for (const m of mutations) {
    if (m.kind === "bom") {
      bom = true;
      continue;
    }
    if (m.kind === "cut") {
      const whole: string = text ?? JSON.stringify(doc);
      text = whole.slice(0, m.at % (whole.length + 1));
      continue;
    }
    if (text !== null) continue; // cut short already: nothing left to edit as a document
    const sections = Object.keys(doc);
    if (m.kind === "summaryValue") {
      const summary = doc["summary"];
      if (typeof summary !== "object" || summary === null || Array.isArray(summary)) continue;
      const keys = Object.keys(summary);
      if (keys.length > 0) (summary as Record<string, unknown>)[keys[m.key % keys.length]] = m.value;
    } else if (m.kind === "dropSection") {
      const { [sections[m.section % sections.length]]: _, ...rest } = doc;
      doc = rest;
    } else if (sections.length > 0) {
      doc[sections[m.section % sections.length]] = m.value;
    }
  }
  return (bom ? "\uFEFF" : "") + (text ?? JSON.stringify(doc));
}

let plannedSweep: string | null = null;

/** A planned sweep directory of two points whose results are there (made once per process). */
async function sweepTemplate(): Promise<string> {
  if (plannedSweep !== null) return plannedSweep;
  const project = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1, 2]");
  const dir = join(project.dir, "plan");
  const quiet = { out: () => {}, err: () => {} };
  if ((await runCli(["sweep", "plan", "-c", project.sweepFile, "-o", dir], quiet)) !== 0) {
    throw new Error("edge fuzz: the template sweep did not plan");
  }
  if ((await runCli(["sweep", "run", dir, "--executor", "inline"], quiet)) !== 0) {
    throw new Error("edge fuzz: the template sweep did not run");
  }
  plannedSweep = project.dir;
  return plannedSweep;
}

function damageSweep(dir: string, damage: SweepDamage): void {
  const results = join(dir, "results");
  const manifest = join(dir, "manifest.json");
  const resultFile = (point: number): string => {
    const names = readdirSync(results)
      .filter((n) => n.endsWith(".json"))
      .sort();
    return join(results, names[point % names.length]);
  };
  switch (damage.kind) {
    case "resultsFile":
      rmSync(results, { recursive: true, force: true });
      writeFileSync(results, "x\n");
      return;
    case "manifestFolder":
      rmSync(manifest);
      mkdirSync(manifest);
      return;
    case "manifestCut": {
      const text = readFileSync(manifest);
      writeFileSync(manifest, text.subarray(0, damage.at % (text.length + 1)));
      return;
    }
    case "resultCut": {
      const file = resultFile(damage.point);
      const text = readFileSync(file);
      writeFileSync(file, text.subarray(0, damage.at % (text.length + 1)));
      return;
    }
    case "resultBytes":
      writeFileSync(resultFile(damage.point), Buffer.from(damage.bytes));
      return;
    case "baseGone":
      for (const name of readdirSync(dir)) if (name.endsWith(".yaml")) rmSync(join(dir, name));
      return;
  }
}

/** Runs one edge case in a fresh temp directory (removed afterwards) and checks the contract. */
export async function runEdgeCase(c: EdgeCase): Promise<FuzzOutcome> {
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-edge-"));
  try {
    const { args, outputs } = await prepare(dir, c);
    let err = "";
    const t0 = performance.now();
    const code = await runCli(args, { out: () => {}, err: (s) => (err += s) });
    const ms = performance.now() - t0;
    return { code, err, ms, problem: edgeProblem(code, err, ms, dir, outputs) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The command line of a case, and the outputs a failed command must not leave. */
async function prepare(dir: string, c: EdgeCase): Promise<{ args: string[]; outputs: string[] }> {
  switch (c.kind) {
    case "trace": {
      writeFileSync(join(dir, "config.yaml"), BASE_CONFIGS[1]);
      writeFileSync(join(dir, "trace.jsonl"), shapedTrace(c.shape));
      const out = join(dir, "out");
      const args = ["predict", "-c", join(dir, "config.yaml"), "--stack", "dynamo", "--output-dir", out];
      return { args: [...args, "--progress", "none"], outputs: [out] };
    }
    case "prediction": {
      const bad = join(dir, "prediction.json");
      writeFileSync(bad, mutatedPrediction(c.mutations));
      if (c.command === "report") {
        const out = join(dir, "report.html");
        return { args: ["report", bad, "-o", out], outputs: [out] };
      }
      const good = join(dir, "good.json");
      cpSync(GOLDEN_PREDICTION, good);
      const out = join(dir, "compare.html");
      return { args: ["compare", good, bad, "-o", out], outputs: [out] };
    }
    case "sweep": {
      cpSync(await sweepTemplate(), dir, { recursive: true });
      const plan = join(dir, "plan");
      damageSweep(plan, c.damage);
      if (c.command === "run") return { args: ["sweep", "run", plan, "--executor", "inline"], outputs: [] };
      const out = join(dir, "merged");
      return { args: ["sweep", "merge", plan, "-o", out], outputs: [out] };
    }
  }
}

function edgeProblem(
  code: number,
  err: string,
  ms: number,
  dir: string,
  outputs: readonly string[],
): string | null {
  if (code !== 0 && code !== 2) return `exit ${code}: ${err.slice(0, 500)}`;
  if (/\n\s+at .+\(.+:\d+:\d+\)/.test(err) || err.includes("internal error")) {
    return `stack trace: ${err.slice(0, 500)}`;
  }
  if (ms > CASE_LIMIT_MS) return `took ${Math.round(ms)} ms`;
  if (code === 2) {
    if (!err.includes("fleetsim: error: ")) return `exit 2 without an error line: ${err.slice(0, 300)}`;
    if (!err.includes(dir)) return `exit 2 without the file or directory it is about: ${err.slice(0, 300)}`;
    if (err.length > 20_000) return `message of ${err.length} characters`;
    const left = outputs.filter((o) => existsSync(o));
    if (left.length > 0) return `exit 2 left ${left.join(", ")}`;
  }
  return null;
}
