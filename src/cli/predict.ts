import { join } from "node:path";
import { type loadConfig, loadConfigWithNotes } from "../config/load.js";
import type { Stack } from "../config/runSpec.js";
import type { DetailSection } from "../output/detailSections.js";
import { runPrediction } from "../pipeline/run.js";
import { stableLine, stableStringify } from "../report/json.js";
import {
  checkOutputDir,
  OutputCancelled,
  OutputDirLock,
  type OutputFile,
  writeOutputs,
} from "../report/outputDir.js";
import { type HostResources, probeHost } from "../resources/budget.js";
import type { ResourceHooks } from "../resources/runtime.js";
import { StopSignals } from "../resources/stopSignals.js";
import { RunSupervisor } from "../resources/supervisor.js";
import { type Replay, ReplayAborted } from "../sim/replay.js";
import { type ExecutorSpec, parseExecutor } from "../sweep/executor.js";
import { ExitCode, releasingOnStop } from "./exitCodes.js";
import { type ProgressBar, type ProgressMode, type ProgressSettings, startProgress } from "./progress.js";
import { startupProbeExits, startupProbeLine } from "./startupProbe.js";
import type { Streams } from "./streams.js";
import { configWarnings } from "./validate.js";

export interface PredictOptions {
  readonly config: string;
  readonly set: readonly string[];
  readonly outputDir: string;
  readonly overwrite: boolean;
  readonly capturePerRequest: boolean;
  /** `--html`: also write report.html (docs/report.md). */
  readonly html?: boolean;
  /** `--detail SECTIONS` (docs/output.md "Details"); absent or empty: none. */
  readonly detail?: readonly DetailSection[];
  readonly format: "table" | "json";
  readonly stack: Stack;
  /** `--progress` (default `auto`: a bar on a TTY stderr, not with `--format json`). */
  readonly progress?: ProgressMode;
  /** Test injection points of the progress bar (fake terminal, delay). */
  readonly progressSettings?: ProgressSettings;
  /** Test injection points of the resource supervision (docs/resources.md). */
  readonly resources?: ResourceHooks;
  /**
   * The command owns its process (the `fleetsim` executable): it may pin the process to
   * `cpu_limit` CPUs. In-process callers (tests, embedding programs) leave this unset.
   */
  readonly ownsProcess?: boolean;
  /**
   * `--executor` (docs/sweep.md "Executors"): where `planner.retune`'s window sweeps run; local
   * worker processes unless given.
   */
  readonly executor?: string;
  /** The host `cpu_limit: auto` is resolved against in the config warnings (tests); default: this machine. */
  readonly host?: Pick<HostResources, "cpuCount">;
}

/**
 * `fleetsim predict`: validate the config and the output directory before any work, replay under
 * the resource supervisor (resources/supervisor.ts), then write prediction.json (and
 * requests.jsonl) atomically and print the summary. Errors propagate to the caller, which maps
 * them to exit codes.
 */
export async function predictCommand(opts: PredictOptions, io: Streams): Promise<void> {
  const startedMs = performance.now();
  const executor = opts.executor === undefined ? undefined : parseExecutor(opts.executor);
  const { spec, notes } = loadConfigWithNotes({
    configPath: opts.config,
    sets: [...opts.set],
    stack: opts.stack,
  });
  for (const note of notes) io.err(`fleetsim: note: ${note}\n`);
  checkOutputDir(opts.outputDir, opts.overwrite);
  // The settings that run but defeat their purpose, as `validate` reports them (before the run).
  for (const w of configWarnings(spec, opts.host ?? probeHost())) io.err(`fleetsim: warning: ${w}\n`);
  if (executor !== undefined) await checkExecutor(executor, spec, io);
  // The HTML report's modules load only with --html (start-up, docs/performance.md).
  if (opts.html) (await import("./report.js")).checkHtmlReportReady();
  // One run per output directory: a second one fails now (exit 2) instead of mixing files.
  const lock = OutputDirLock.acquire(opts.outputDir);
  // SIGINT / SIGTERM in any phase: the first stops the run (the replay at its next yield point,
  // a write before its commit, rolled back); a second exits at once. Either way nothing of this
  // run is left behind (exit 130 / 143); exit listeners remove the lock and any staging folder.
  let progress = null as ProgressBar | null;
  const signals = new StopSignals((signal) => {
    progress?.stop();
    process.exit(signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted);
  }).install();
  const stoppedBy = (err: unknown): boolean => err instanceof ReplayAborted || err instanceof OutputCancelled;
  await releasingOnStop(signals, lock, stoppedBy, async () => {
    // Re-checked under the lock: a run that held it may have filled the directory meanwhile.
    checkOutputDir(opts.outputDir, opts.overwrite);
    await predictLocked(opts, executor, io, spec, startedMs, signals, (p) => {
      progress = p;
    });
  });
}

/**
 * `--executor` before any work: only retune sweeps, so without `planner.retune` it changes nothing
 * (a warning says so); a Redis URL that does not answer is the user's (exit 2), not a failure of
 * every window's sweep later in the run.
 */
async function checkExecutor(
  executor: ExecutorSpec,
  spec: ReturnType<typeof loadConfig>,
  io: Streams,
): Promise<void> {
  if (spec.planner?.retune === undefined || spec.planner.retune === null) {
    io.err(
      "fleetsim: warning: --executor runs planner.retune's window sweeps; this config has no planner.retune, so it changes nothing\n",
    );
    return;
  }
  if (executor.kind === "redis") {
    const { connectRedis } = await import("../sweep/redisExecutor.js");
    (await connectRedis(executor.url)).disconnect();
  }
}

async function predictLocked(
  opts: PredictOptions,
  executor: ExecutorSpec | undefined,
  io: Streams,
  spec: ReturnType<typeof loadConfig>,
  startedMs: number,
  signals: StopSignals,
  setProgress: (p: ProgressBar | null) => void,
): Promise<void> {
  const cancelled = (): boolean => signals.stopped !== null;
  // Preflight (exit 3 before any work), pinning, memory monitor, watchdog: docs/resources.md.
  const supervisor = await RunSupervisor.start(spec, {
    outputDir: opts.outputDir,
    overwrite: opts.overwrite,
    capturePerRequest: opts.capturePerRequest,
    ownsProcess: opts.ownsProcess,
    // Retune's window sweeps fork worker processes, which must inherit the pinning.
    pinAtReplayStart: spec.planner?.retune == null,
    hooks: opts.resources,
    startedMs,
    warn: (line) => io.err(`fleetsim: warning: ${line}\n`),
  });

  // A signal stops the replay at its next yield point (predictCommand handles the rest).
  let replay: Replay | null = null;
  signals.onStop(() => replay?.abort());
  // Assigned in onStart; erased before anything else is printed (table, errors, a second Ctrl-C).
  let progress = null as ProgressBar | null;
  // The run's messages (the reference logs them at INFO / WARNING) go to stderr, each on its own
  // line: a progress bar being drawn is erased first and redrawn below it on its next tick.
  const message =
    (level: "info" | "warning") =>
    (line: string): void =>
      io.err(`${progress === null ? "" : ERASE_LINE}fleetsim: ${level}: ${line}\n`);
  let outcome: Awaited<ReturnType<typeof runPrediction>>;
  try {
    outcome = await supervisor.startUp(() =>
      runPrediction(
        spec,
        {
          capturePerRequest: opts.capturePerRequest,
          executor,
        },
        {
          onStart: (r, workload, retune) => {
            replay = r;
            supervisor.attach(r);
            if (supervisor.replayStarted() || cancelled() || supervisor.exceeded) r.abort();
            else {
              const mode = opts.progress ?? "auto";
              progress = startProgress(
                mode,
                opts.format,
                opts.progressSettings ?? {},
                spec,
                r,
                workload,
                retune,
              );
              setProgress(progress);
              // FLEETSIM_STARTUP_PROBE: exec → first simulated event (docs/performance.md).
              const probe = startupProbeLine();
              if (probe !== null) {
                io.err(probe);
                // A start-up measurement ends here (the line went out: stderr writes synchronously).
                if (startupProbeExits()) process.exit(0);
              }
              // cpu_limit, off the path to the first event (a run without retune forks nothing).
              supervisor.pinForReplay();
            }
          },
          onReplayEnd: () => {
            progress?.stop();
            supervisor.replayEnded();
          },
          log: message("info"),
          warn: message("warning"),
        },
      ),
    );
  } finally {
    progress?.stop();
    setProgress(null);
  }
  const prediction =
    opts.detail === undefined || opts.detail.length === 0
      ? outcome.prediction
      : (await import("../report/details.js")).withDetails(outcome.prediction, spec, opts.detail);
  for (const [section, why] of Object.entries(prediction.details?.skipped ?? {})) {
    io.err(`fleetsim: note: --detail ${section}: ${why}; listed under details.skipped\n`);
  }
  const outputs: OutputFile[] = [{ name: "prediction.json", chunks: [stableStringify(prediction), "\n"] }];
  // The monitor's last sample is taken with prediction.json serialized: its peak includes it.
  await supervisor.stopMonitor();
  if (opts.capturePerRequest) {
    outputs.push({ name: "requests.jsonl", chunks: jsonlChunks(prediction.per_request ?? []) });
  }
  // requests.jsonl is serialized while it is written, outside the measured shutdown.
  await supervisor.checkShutdown();
  outputs.push(supervisor.runtimeFile("completed"));
  const htmlReport = opts.html ? await import("./report.js") : null;
  if (htmlReport !== null) outputs.push(htmlReport.htmlReportFile(prediction, spec.sla));
  // A signal up to the commit rolls the write back; the commit itself is a few renames.
  await writeOutputs(opts.outputDir, outputs, opts.overwrite, { cancelled });

  let saved = `Saved full report to: ${join(opts.outputDir, "prediction.json")}`;
  if (htmlReport !== null) saved += `\nSaved HTML report to: ${join(opts.outputDir, htmlReport.REPORT_FILE)}`;
  if (opts.format === "json") {
    io.out(`${stableLine(prediction.summary)}\n`);
    io.err(`${saved}\n`);
  } else {
    // The AIPerf table as the reference prints it, then fleetsim's fleet block (docs/metrics.md).
    // cli-table3 and the fleet block's reader load only to print them (start-up, docs/performance.md).
    const { renderSummaryTable } = await import("../report/table.js");
    const { renderFleetBlock } = await import("../report/fleetBlock.js");
    io.out(`${renderSummaryTable(prediction.summary)}\n\n${renderFleetBlock(prediction)}\n${saved}\n`);
  }
}

/** Carriage return + erase line: what the progress bar draws over. */
const ERASE_LINE = "\r\x1b[K";

function* jsonlChunks(records: readonly unknown[]): Generator<string> {
  for (const r of records) yield `${stableLine(r)}\n`;
}
