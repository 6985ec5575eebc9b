import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type CliDeps, runCli } from "../../src/cli/main.js";
import { predictArgv } from "./process.js";
import { tempDir } from "./specs.js";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Commands that take `--stack` (default `engine`, as `aisimulate predict`; docs/cli.md). */
const STACK_COMMANDS: ReadonlySet<string> = new Set(["predict", "validate"]);

/**
 * Runs the CLI in-process with captured stdout/stderr. `predict` and `validate` run with
 * `--stack dynamo` unless the arguments name a stack: the suite's configs use `router` and
 * `planner`, which only the Dynamo stack provides. Tests of the default stack call `cliAsIs`
 * (test/cli/stack.test.ts).
 */
export async function cli(...argv: string[]): Promise<CliRun> {
  const args =
    STACK_COMMANDS.has(argv[0]) && !argv.some((a) => a === "--stack" || a.startsWith("--stack="))
      ? [argv[0], "--stack", "dynamo", ...argv.slice(1)]
      : argv;
  return cliAsIs(args);
}

/** Runs the CLI in-process on `argv` as given (no stack added), stdout and stderr captured. */
export async function cliAsIs(argv: readonly string[], deps?: CliDeps): Promise<CliRun> {
  let out = "";
  let err = "";
  const code = await runCli(
    argv,
    {
      out: (s) => {
        out += s;
      },
      err: (s) => {
        err += s;
      },
    },
    deps,
  );
  return { code, out, err };
}

/** `--set S` for each of `sets`. */
export function setFlags(...sets: readonly string[]): string[] {
  return sets.flatMap((s) => ["--set", s]);
}

/** `fleetsim predict -c CONFIG --output-dir OUT MORE…` in-process, as `cli` runs it. */
export function cliPredict(config: string, out: string, ...more: string[]): Promise<CliRun> {
  return cli(...predictArgv(config, out, ...more));
}

/**
 * `fleetsim predict -c examples/aggregated.yaml` (the bundled example) with `--set` overrides
 * (`"key=value"` each) and any further arguments, into a fresh directory; `doc` is the written
 * prediction.json, or null when the run failed.
 */
export async function predictExample(
  sets: readonly string[],
  ...more: string[]
): Promise<CliRun & { outDir: string; doc: PredictionDoc }> {
  const outDir = tempDir();
  const r = await cli(
    "predict",
    "-c",
    "examples/aggregated.yaml",
    ...setFlags(...sets),
    ...more,
    "--output-dir",
    outDir,
  );
  const file = join(outDir, "prediction.json");
  return {
    ...r,
    outDir,
    doc: r.code === 0 ? (JSON.parse(readFileSync(file, "utf8")) as PredictionDoc) : null,
  };
}

/** prediction.json as tests read it: untyped JSON (null when the run failed). */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary keys of the written file
export type PredictionDoc = any;
