import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "@commander-js/extra-typings";
import { ConfigError } from "../config/errors.js";
import { OutputDirError } from "../report/outputDir.js";
import { ReplayAborted } from "../sim/replay.js";
import { TraceError } from "../traffic/traceError.js";
import { ExitCode } from "./exitCodes.js";
import { predictCommand, type Streams } from "./predict.js";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Builds the command tree; `run` resolves to the exit code. Separate from process for tests. */
export async function runCli(argv: readonly string[], io: Streams): Promise<number> {
  let exitCode: number = ExitCode.Ok;
  const program = new Command()
    .name("fleetsim")
    .description("Simulate LLM inference fleets offline: trace replay through vLLM-like engines and routers.")
    .version(VERSION, "-V, --version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError("(run with --help for usage)");

  program
    .command("predict")
    .description("Replay a workload through a simulated deployment and write prediction.json")
    .requiredOption("-c, --config <path>", "YAML config (same schema as aisimulate predict)")
    .option(
      "--set <PATH=YAML_VALUE>",
      "override a config value after loading (repeatable)",
      collect,
      [] as string[],
    )
    .option("--output-dir <dir>", "directory for prediction.json and requests.jsonl", "./fleetsim-output")
    .option("--overwrite", "replace fleetsim's own files in a non-empty output directory", false)
    .option("--capture-per-request", "write requests.jsonl and fill per_request in prediction.json", false)
    .addOption(
      new Option("--format <format>", "stdout form").choices(["table", "json"] as const).default("table"),
    )
    .addOption(
      new Option("--stack <stack>", "execution stack")
        .choices(["dynamo", "engine"] as const)
        .default("dynamo"),
    )
    .addHelpText(
      "after",
      `
Examples:
  fleetsim predict -c examples/aggregated.yaml
  fleetsim predict -c prediction.yaml --set engine.workers.aggregated.parallelism.replicas=4 --overwrite
  fleetsim predict -c prediction.yaml --set 'traffic.load={type: constant_rate, requests_per_second: 8}'
  fleetsim predict -c prediction.yaml --format json --capture-per-request --output-dir out/`,
    )
    .action(async (opts) => {
      exitCode = await guarded(io, () =>
        predictCommand(
          {
            config: opts.config,
            set: opts.set,
            outputDir: opts.outputDir,
            overwrite: opts.overwrite,
            capturePerRequest: opts.capturePerRequest,
            format: opts.format,
            stack: opts.stack,
          },
          io,
        ),
      );
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every other commander error is CLI syntax (exit 2).
      return err.exitCode === 0 ? ExitCode.Ok : ExitCode.UserError;
    }
    throw err;
  }
  return exitCode;
}

/** Maps errors to exit codes: user mistakes print one clear message, never a stack trace. */
async function guarded(io: Streams, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return ExitCode.Ok;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`fleetsim: error: ${err.format()}\n`);
      return ExitCode.UserError;
    }
    if (err instanceof TraceError || err instanceof OutputDirError) {
      io.err(`fleetsim: error: ${err.message}\n`);
      return ExitCode.UserError;
    }
    if (err instanceof ReplayAborted) {
      io.err("fleetsim: interrupted; no results were written\n");
      return ExitCode.Interrupted;
    }
    const e = err instanceof Error ? err : new Error(String(err));
    io.err(`fleetsim predict failed: ${e.name}: ${e.message}\n`);
    if (process.env.FLEETSIM_DEBUG) io.err(`${e.stack ?? ""}\n`);
    return ExitCode.Failure;
  }
}
