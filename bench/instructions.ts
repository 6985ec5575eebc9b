/**
 * Instructions a whole `fleetsim predict` process executes, counted by Valgrind's cachegrind (no
 * cache simulation): every thread, the optimizing compiler's included. On this project's shared,
 * noisy machines a process's CPU time moves by ±15 % from run to run; its instruction count moves
 * by 1–4 % (when the compiler's work lands relative to the replay varies), so a change of a few
 * percent shows in a few rounds (docs/performance.md "Method"). Instructions are not time: a change
 * that saves cache misses (a smaller table, one record instead of three) saves little or nothing
 * here; measure those with CPU time (`npm run bench`) or `bench/kvPool.ts`.
 *
 *   node --import tsx bench/instructions.ts --config FILE [--set PATH=VALUE]… [--stack dynamo]
 *     [--bin dist/cli/bin.js] [--against OTHER/dist/cli/bin.js] [--rounds 2] [--startup]
 *
 * `--startup` counts exec → first simulated event only (`FLEETSIM_STARTUP_PROBE=exit`: the process
 * ends at the probe), the issue's start-up row (`examples/aggregated.yaml`); the run that fills
 * the code cache still runs to the end, so the cache holds what a whole run compiles.
 *
 * `--against` runs the same config with another build each round, the two processes side by side
 * (one per core; an instruction count does not depend on the other process), and prints the
 * ratio. Each build first runs the config once natively to fill its V8 code cache, as a user's
 * earlier runs would (cli/codeCache.ts). A run under Valgrind takes about 40× its native time:
 * about a minute and a half for the seed configs, a minute for the synthetic row.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CACHE_ENV } from "../src/cli/codeCache.js";
import { STARTUP_PROBE_ENV } from "../src/cli/startupProbe.js";
import { predictArgs } from "./predictArgs.js";

const ROOT = resolve(import.meta.dirname, "..");

const { values } = parseArgs({
  options: {
    config: { type: "string" },
    set: { type: "string", multiple: true, default: [] },
    stack: { type: "string", default: "dynamo" },
    bin: { type: "string", default: join(ROOT, "dist", "cli", "bin.js") },
    against: { type: "string" },
    rounds: { type: "string", default: "2" },
    startup: { type: "boolean", default: false },
  },
});

function fail(message: string): never {
  console.error(`bench/instructions: ${message}`);
  process.exit(2);
}

if (values.config === undefined) fail("--config FILE is required (e.g. examples/seed-aggregated.yaml)");
const config = resolve(values.config);
if (!existsSync(config)) fail(`config not found: ${config}`);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) fail("--rounds must be a positive integer");
if (spawnSync("valgrind", ["--version"]).status !== 0) {
  fail("valgrind is not installed (Debian: apt-get install valgrind)");
}
const builds = [values.bin, ...(values.against === undefined ? [] : [values.against])].map((b) => resolve(b));
for (const b of builds) if (!existsSync(b)) fail(`no fleetsim executable at ${b}: build it first`);

const dir = mkdtempSync(join(tmpdir(), "fleetsim-instructions-"));

/** The predict arguments of `bin`, for a run writing into `out`. */
function argsOf(bin: string, out: string): string[] {
  // A run under Valgrind is ~40× slower: past the default start-up and shutdown bounds.
  return predictArgs(bin, config, out, [...SLOW_RUN_SETS, ...values.set], values.stack);
}

const SLOW_RUN_SETS = [
  "execution.resources.initialization_timeout_seconds=3600",
  "execution.resources.shutdown_timeout_seconds=3600",
];

/** Each build's environment: a code cache folder of its own. */
const envOf = (i: number): NodeJS.ProcessEnv => ({ ...process.env, [CACHE_ENV]: join(dir, `v8cache-${i}`) });

/** A counted run's environment: with `--startup`, the process ends at the first simulated event. */
const countedEnvOf = (i: number): NodeJS.ProcessEnv =>
  values.startup ? { ...envOf(i), [STARTUP_PROBE_ENV]: "exit" } : envOf(i);

/** Runs build `i` under cachegrind; resolves to its instruction count. */
function countInstructions(i: number, round: number): Promise<number> {
  const log = join(dir, `valgrind-${i}-${round}.log`);
  const args = [
    "--tool=cachegrind",
    "--cache-sim=no",
    // V8 writes the code it compiles into memory it then runs.
    "--smc-check=all-non-file",
    `--cachegrind-out-file=${join(dir, `cachegrind-${i}-${round}.out`)}`,
    `--log-file=${log}`,
    process.execPath,
    ...argsOf(builds[i], join(dir, `out-${i}`)),
  ];
  return new Promise((done, reject) => {
    const child = spawn("valgrind", args, {
      cwd: ROOT,
      env: countedEnvOf(i),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) {
        reject(new Error(`${builds[i]}: exit ${code}: ${stderr.split("\n").slice(0, 4).join(" | ")}`));
        return;
      }
      const m = /I\s+refs:\s+([\d,]+)/.exec(readFileSync(log, "utf8"));
      if (m === null) reject(new Error(`${builds[i]}: no instruction count in ${log}`));
      else done(Number(m[1].replaceAll(",", "")));
    });
  });
}

// Fill each build's code cache with one native run.
builds.forEach((bin, i) => {
  const r = spawnSync(process.execPath, argsOf(bin, join(dir, `out-${i}`)), {
    cwd: ROOT,
    env: envOf(i),
    encoding: "utf8",
  });
  if (r.status !== 0) fail(`${bin}: exit ${r.status}: ${r.stderr.split("\n").slice(0, 4).join(" | ")}`);
});

const counts: number[][] = builds.map(() => []);
for (let round = 0; round < rounds; round++) {
  const got = await Promise.all(builds.map((_, i) => countInstructions(i, round)));
  for (let i = 0; i < got.length; i++) counts[i].push(got[i]);
  console.log(`round ${round + 1}: ${got.map((n) => `${(n / 1e9).toFixed(3)} G`).join("  ")}`);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
builds.forEach((b, i) => {
  console.log(
    `${i === 0 ? "this build" : "against"} (${b}): instructions min ${(Math.min(...counts[i]) / 1e9).toFixed(3)} G, median ${(median(counts[i]) / 1e9).toFixed(3)} G over ${rounds} round(s)`,
  );
});
if (builds.length === 2) {
  console.log(
    `ratio this / against: min ${(Math.min(...counts[0]) / Math.min(...counts[1])).toFixed(3)}, median ${(median(counts[0]) / median(counts[1])).toFixed(3)}`,
  );
}
console.log(`logs and cachegrind files: ${dir} (${readdirSync(dir).length} files)`);
