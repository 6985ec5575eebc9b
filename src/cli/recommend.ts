import { join } from "node:path";
import type { Stack } from "../config/runSpec.js";
import { planRecommendation, RecommendAborted, runRecommendation } from "../recommend/recommend.js";
import { renderRanking } from "../recommend/result.js";
import { checkOutputDir, OutputCancelled, OutputDirLock, writeOutputs } from "../report/outputDir.js";
import { StopSignals } from "../resources/stopSignals.js";
import { parseExecutor } from "../sweep/executor.js";
import { ExitCode, releasingOnStop } from "./exitCodes.js";
import type { Streams } from "./streams.js";

export interface RecommendCommandOptions {
  readonly config: string;
  readonly set: readonly string[];
  readonly outputDir: string;
  readonly overwrite: boolean;
  readonly format: "table" | "json";
  readonly stack: Stack;
  /** `--executor` (docs/sweep.md "Executors"): local worker processes unless given. */
  readonly executor?: string;
}

/**
 * `fleetsim recommend` (docs/recommend.md): check the input and the output directory before any
 * replay (exit 2), search, then write recommendation.json, recommendation.csv and
 * recommendations/NNNN.yaml as one transaction and print the ranking. Returns the exit code: 0
 * with a selection, 1 with none, 3 when candidates were resource-limited.
 */
export async function recommendCommand(opts: RecommendCommandOptions, io: Streams): Promise<number> {
  const executor = opts.executor === undefined ? undefined : parseExecutor(opts.executor);
  const plan = planRecommendation({ configPath: opts.config, sets: opts.set, stack: opts.stack });
  checkOutputDir(opts.outputDir, opts.overwrite);
  const lock = OutputDirLock.acquire(opts.outputDir);
  const abort = new AbortController();
  const signals = new StopSignals((signal) => {
    process.exit(signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted);
  }).install();
  signals.onStop(() => abort.abort());
  const cancelled = (): boolean => signals.stopped !== null;
  const stoppedBy = (err: unknown): boolean =>
    err instanceof RecommendAborted || err instanceof OutputCancelled;
  return releasingOnStop(signals, lock, stoppedBy, async () => {
    checkOutputDir(opts.outputDir, opts.overwrite);
    const outcome = await runRecommendation(
      {
        configPath: opts.config,
        sets: opts.set,
        stack: opts.stack,
        outputDir: opts.outputDir,
        signal: abort.signal,
        executor,
        log: (line) => io.err(`fleetsim: info: ${line}\n`),
      },
      plan,
    );
    await writeOutputs(opts.outputDir, outcome.files, opts.overwrite, { cancelled });
    const saved = `Saved full result to: ${join(opts.outputDir, "recommendation.json")}`;
    if (opts.format === "json") {
      io.out(`${renderRanking(outcome.rows, "json")}\n`);
      io.err(`${saved}\n`);
    } else {
      io.out(`${renderRanking(outcome.rows, "table")}\n${saved}\n`);
    }
    const limited = outcome.document.counts.resource_limited;
    if (limited > 0) {
      io.err(
        `fleetsim: error: ${limited} candidate${limited === 1 ? " was" : "s were"} resource-limited ` +
          "(their replay would not fit the host memory budget; see recommendation.json)\n",
      );
    } else if (outcome.exitCode === 1) {
      io.err("fleetsim: error: no candidate was feasible; see recommendation.json for the reasons\n");
    }
    return outcome.exitCode;
  });
}
