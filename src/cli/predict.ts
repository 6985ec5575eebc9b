import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import type { Stack } from "../config/runSpec.js";
import { HOST_TIME_KEYS } from "../metrics/summary.js";
import { stableLine, stableStringify } from "../report/json.js";
import { checkOutputDir, type OutputFile, writeOutputs } from "../report/outputDir.js";
import { renderSummaryTable } from "../report/table.js";
import { runPrediction } from "../run.js";
import type { Replay } from "../sim/replay.js";
import { ExitCode } from "./exitCodes.js";

export interface PredictOptions {
  readonly config: string;
  readonly set: readonly string[];
  readonly outputDir: string;
  readonly overwrite: boolean;
  readonly capturePerRequest: boolean;
  readonly format: "table" | "json";
  readonly stack: Stack;
}

/** Where the command's text goes (injectable for tests). */
export interface Streams {
  out(text: string): void;
  err(text: string): void;
}

/**
 * `fleetsim predict`: validate the config and the output directory before any work, replay,
 * then write prediction.json (and requests.jsonl) atomically and print the summary.
 * Errors propagate to the caller, which maps them to exit codes.
 */
export async function predictCommand(opts: PredictOptions, io: Streams): Promise<void> {
  const spec = loadConfig({ configPath: opts.config, sets: [...opts.set], stack: opts.stack });
  checkOutputDir(opts.outputDir, opts.overwrite);

  // Ctrl-C: the first one stops the replay at its next yield point (nothing is written); a
  // second one exits at once. Results are only written after a complete run, so either way
  // nothing partial is left behind.
  let replay: Replay | null = null;
  let interrupted = false;
  const onSigint = (): void => {
    if (interrupted) process.exit(ExitCode.Interrupted);
    interrupted = true;
    replay?.abort();
  };
  process.on("SIGINT", onSigint);
  let outcome: Awaited<ReturnType<typeof runPrediction>>;
  try {
    outcome = await runPrediction(
      spec,
      { capturePerRequest: opts.capturePerRequest },
      {
        onStart: (r) => {
          replay = r;
          if (interrupted) r.abort();
        },
      },
    );
  } finally {
    process.off("SIGINT", onSigint);
  }

  const { prediction } = outcome;
  const files: OutputFile[] = [{ name: "prediction.json", chunks: [stableStringify(prediction), "\n"] }];
  if (opts.capturePerRequest) {
    files.push({ name: "requests.jsonl", chunks: jsonlChunks(prediction.per_request ?? []) });
  }
  writeOutputs(opts.outputDir, files, opts.overwrite);

  const saved = `Saved full report to: ${join(opts.outputDir, "prediction.json")}`;
  if (opts.format === "json") {
    io.out(`${stableLine(prediction.summary)}\n`);
    io.err(`${saved}\n`);
  } else {
    io.out(`${renderSummaryTable(prediction.summary)}\n${saved}\n`);
  }
}

function* jsonlChunks(records: readonly unknown[]): Generator<string> {
  for (const r of records) yield `${stableLine(r)}\n`;
}

/** Keys to ignore when comparing two runs for determinism. */
export const NON_DETERMINISTIC_SUMMARY_KEYS: readonly string[] = HOST_TIME_KEYS;
