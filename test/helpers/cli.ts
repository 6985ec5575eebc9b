import { runCli } from "../../src/cli/main.js";

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
 * `planner`, which only the Dynamo stack provides. Tests of the default stack call `runCli`
 * directly (test/cli/stack.test.ts).
 */
export async function cli(...argv: string[]): Promise<CliRun> {
  const args =
    STACK_COMMANDS.has(argv[0]) && !argv.some((a) => a === "--stack" || a.startsWith("--stack="))
      ? [argv[0], "--stack", "dynamo", ...argv.slice(1)]
      : argv;
  let out = "";
  let err = "";
  const code = await runCli(args, {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
  });
  return { code, out, err };
}
