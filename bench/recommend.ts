/**
 * `node --import tsx bench/recommend.ts` (after `npm run build`): the two numbers of issue 17's
 * closing note, measured on `fleetsim recommend` processes run from dist/ on two CPUs
 * (`taskset -c 0,1` where available, `execution.resources.cpu_limit: 2`, `optimizer.parallelism: 2`):
 *
 * 1. Search comparison, per bundled example and seed: the best score random search finds in
 *    `--trials` trials, and the trial at which each algorithm first reaches that score (a
 *    higher-or-equal one; "-" if never). Trials are counted as the optimizer consumed them (a
 *    candidate's `provenance.trial`; cache hits consume trials too).
 * 2. Wall time of one 32-trial recommend of examples/recommend/recommendation.yaml per algorithm.
 *
 * Usage: node --import tsx bench/recommend.ts [--seeds 3] [--trials 32] [--only search|wall]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "3" },
    trials: { type: "string", default: "32" },
    only: { type: "string" },
  },
});
const seeds = Number(values.seeds);
const trials = Number(values.trials);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "dist", "cli", "bin.js");
if (!existsSync(BIN)) throw new Error("bench/recommend.ts runs dist/: npm run build first");
const TASKSET = spawnSync("taskset", ["-c", "0,1", "true"]).status === 0;

/** The bundled examples as recommendation inputs. */
const EXAMPLES: { name: string; config: string; sets: string[] }[] = [
  { name: "recommend/recommendation.yaml", config: "examples/recommend/recommendation.yaml", sets: [] },
  {
    // The bundled synthetic-sessions example, searched over the default parallelism preset and
    // both scheduler knobs' default ranges, for goodput per GPU within 8 GPUs.
    name: "synthetic-sessions.yaml (searched)",
    config: "examples/synthetic-sessions.yaml",
    sets: [
      "engine.workers.aggregated.parallelism={preset: default}",
      "traffic.load.sessions_per_second=6",
      "optimization={target: goodput_per_gpu, constraints: {max_candidate_gpus: 8}}",
      "execution={resources: {cpu_limit: 2}}",
    ],
  },
];

interface Run {
  readonly wallS: number;
  readonly best: number;
  /** (trial, score) of every feasible candidate. */
  readonly points: { trial: number; score: number }[];
  readonly cacheHits: number;
  readonly exit: number;
}

function recommend(config: string, sets: readonly string[], algorithm: string, seed: number): Run {
  const out = mkdtempSync(join(tmpdir(), "fleetsim-bench-recommend-"));
  const args = [
    BIN,
    "recommend",
    "-c",
    join(ROOT, config),
    "--output-dir",
    out,
    ...sets.flatMap((s) => ["--set", s]),
    "--set",
    `optimizer={algorithm: ${algorithm}, max_trials: ${trials}, parallelism: 2, candidate_timeout_seconds: 600, seed: ${seed}}`,
  ];
  const t0 = performance.now();
  const r = TASKSET
    ? spawnSync("taskset", ["-c", "0,1", process.execPath, ...args], { encoding: "utf8" })
    : spawnSync(process.execPath, args, { encoding: "utf8" });
  const wallS = (performance.now() - t0) / 1000;
  if (r.status !== 0 && r.status !== 1) throw new Error(`recommend failed (${r.status}): ${r.stderr}`);
  const doc = JSON.parse(readFileSync(join(out, "recommendation.json"), "utf8")) as {
    counts: { cache_hits: number };
    candidates: { status: string; score: number | null; provenance: { trial: number } }[];
  };
  rmSync(out, { recursive: true, force: true });
  const points = doc.candidates
    .filter((c) => c.status === "feasible" && c.score !== null)
    .map((c) => ({ trial: c.provenance.trial, score: c.score as number }));
  const best = points.reduce((m, p) => Math.max(m, p.score), Number.NEGATIVE_INFINITY);
  return { wallS, best, points, cacheHits: doc.counts.cache_hits, exit: r.status ?? -1 };
}

/** First trial reaching `target` (within a relative 1e-9), or null. */
function trialsTo(run: Run, target: number): number | null {
  const tol = Math.abs(target) * 1e-9;
  const hits = run.points.filter((p) => p.score >= target - tol).map((p) => p.trial);
  return hits.length === 0 ? null : Math.min(...hits);
}

const fmt = (x: number | null): string => (x === null ? "-" : String(x));

console.log(
  `fleetsim recommend bench: ${trials} trials, parallelism 2, ${TASKSET ? "taskset -c 0,1" : "no taskset"}`,
);
if (values.only !== "wall") {
  console.log("\nSearch comparison (trial at which each first reaches random search's best score)");
  console.log("example | seed | random best | random trials | bayesian best | bayesian trials");
  for (const ex of EXAMPLES) {
    const ratios: [number, number][] = [];
    for (let seed = 0; seed < seeds; seed++) {
      const random = recommend(ex.config, ex.sets, "random", 42 + seed);
      const tpe = recommend(ex.config, ex.sets, "bayesian", 42 + seed);
      const r = trialsTo(random, random.best);
      const b = trialsTo(tpe, random.best);
      ratios.push([r ?? trials, b ?? trials + 1]);
      console.log(
        `${ex.name} | ${42 + seed} | ${random.best.toPrecision(6)} | ${fmt(r)} | ${tpe.best.toPrecision(6)} | ${fmt(b)}`,
      );
    }
    const mean = (k: 0 | 1) => ratios.reduce((s, x) => s + x[k], 0) / ratios.length;
    console.log(
      `${ex.name} | mean | | ${mean(0).toFixed(1)} | | ${mean(1).toFixed(1)} (never reached counts ${trials + 1})`,
    );
  }
}
if (values.only !== "search") {
  console.log("\nWall time of one 32-trial recommend of examples/recommend/recommendation.yaml on 2 CPUs");
  for (const algorithm of ["bayesian", "random"]) {
    const run = recommend("examples/recommend/recommendation.yaml", [], algorithm, 42);
    console.log(
      `${algorithm}: ${run.wallS.toFixed(1)} s wall, ${run.points.length} feasible candidates, ${run.cacheHits} cache hits`,
    );
  }
}
