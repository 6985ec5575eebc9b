import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import { DEFAULT_EXECUTION, type Stack } from "../config/runSpec.js";
import { runPrediction } from "../pipeline/run.js";
import { renderFleetBlock } from "../report/fleetBlock.js";
import { stableLine, stableStringify } from "../report/json.js";
import {
  checkOutputDir,
  OutputCancelled,
  OutputDirLock,
  type OutputFile,
  writeOutputs,
} from "../report/outputDir.js";
import { renderSummaryTable } from "../report/table.js";
import { probeHost, type ResourceBudget, readMemAvailable, resolveBudget } from "../resources/budget.js";
import { type CpuPinning, IN_PROCESS_PINNING, pinCurrentProcess } from "../resources/cpuAffinity.js";
import { ResourceLimited, ResourceRefusal, SupervisorTimeout } from "../resources/errors.js";
import { type MonitorReport, processPeakRssBytes, ResourceMonitor } from "../resources/monitor.js";
import { PhaseClock } from "../resources/phases.js";
import { measureWorkload, planResources, resourcePlanDocument } from "../resources/preflight.js";
import { type ResourceHooks, resourceRuntimeDocument, type Termination } from "../resources/runtime.js";
import { type Replay, ReplayAborted } from "../sim/replay.js";
import { ExitCode, Interrupted, type StopSignal } from "./exitCodes.js";
import { type ProgressBar, type ProgressMode, type ProgressSettings, startProgress } from "./progress.js";
import { checkHtmlReportReady, htmlReportFile, REPORT_FILE } from "./report.js";
import type { Streams } from "./streams.js";
import { isUserError } from "./userErrors.js";

export interface PredictOptions {
  readonly config: string;
  readonly set: readonly string[];
  readonly outputDir: string;
  readonly overwrite: boolean;
  readonly capturePerRequest: boolean;
  /** `--html`: also write report.html (docs/report.md). */
  readonly html?: boolean;
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
}

/**
 * `fleetsim predict`: validate the config and the output directory before any work, replay,
 * then write prediction.json (and requests.jsonl) atomically and print the summary.
 * Errors propagate to the caller, which maps them to exit codes.
 */
export async function predictCommand(opts: PredictOptions, io: Streams): Promise<void> {
  const startedMs = performance.now();
  const spec = loadConfig({ configPath: opts.config, sets: [...opts.set], stack: opts.stack });
  checkOutputDir(opts.outputDir, opts.overwrite);
  if (opts.html) checkHtmlReportReady();
  // One run per output directory: a second one fails now (exit 2) instead of mixing files.
  const lock = OutputDirLock.acquire(opts.outputDir);
  // SIGINT / SIGTERM in any phase: the first stops the run (the replay at its next yield point,
  // a write before its commit, rolled back); a second exits at once. Either way nothing of this
  // run is left behind (exit 130 / 143); exit listeners remove the lock and any staging folder.
  let stopSignal: StopSignal | null = null;
  let onStop: () => void = () => {};
  let progress = null as ProgressBar | null;
  const signalHandler = (signal: StopSignal) => (): void => {
    if (stopSignal !== null) {
      progress?.stop();
      process.exit(signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted);
    }
    stopSignal = signal;
    onStop();
  };
  const onSigint = signalHandler("SIGINT");
  const onSigterm = signalHandler("SIGTERM");
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  try {
    // Re-checked under the lock: a run that held it may have filled the directory meanwhile.
    checkOutputDir(opts.outputDir, opts.overwrite);
    await predictLocked(opts, io, spec, startedMs, {
      stopped: () => stopSignal,
      onStop: (f) => {
        onStop = f;
      },
      setProgress: (p) => {
        progress = p;
      },
    });
  } catch (err) {
    if (stopSignal !== null && (err instanceof ReplayAborted || err instanceof OutputCancelled)) {
      throw new Interrupted(stopSignal);
    }
    throw err;
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    lock.release();
  }
}

/** How the locked part of `predict` sees the command's signal handling. */
interface StopControl {
  stopped(): StopSignal | null;
  onStop(f: () => void): void;
  setProgress(p: ProgressBar | null): void;
}

async function predictLocked(
  opts: PredictOptions,
  io: Streams,
  spec: ReturnType<typeof loadConfig>,
  startedMs: number,
  stop: StopControl,
): Promise<void> {
  const cancelled = (): boolean => stop.stopped() !== null;

  // Host budget and preflight plan (docs/resources.md): refuse before any work, exit 3.
  const settings = (spec.execution ?? DEFAULT_EXECUTION).resources;
  const budget = resolveBudget(settings, opts.resources?.host ?? probeHost());
  // The plan counts what the run will hold: a pass over the trace sizes it (docs/resources.md §2).
  const plan = planResources(spec, budget, await measureWorkload(spec), {
    capturePerRequest: opts.capturePerRequest,
  });
  // Start-up and shutdown are bounded by their timeouts (docs/resources.md §3, exit 124).
  const phases = new PhaseClock(settings, startedMs);
  if (!plan.fits) {
    await writeOutputs(
      opts.outputDir,
      [{ name: "resource-plan.json", chunks: [stableStringify(resourcePlanDocument(plan, budget)), "\n"] }],
      opts.overwrite,
    );
    throw new ResourceRefusal(
      `resource preflight refused the run: the estimated ${formatBytes(plan.estimatedBytes)} exceeds the ` +
        `memory budget of ${formatBytes(budget.memoryBytes)} (execution.resources.memory_limit_gb); ` +
        `see ${join(opts.outputDir, "resource-plan.json")}`,
    );
  }

  // cpu_limit (docs/resources.md §1a): pin this process before any sweep worker is forked.
  const pinning: CpuPinning = opts.ownsProcess ? pinCurrentProcess(budget.cpuLimit) : IN_PROCESS_PINNING;
  if (pinning.status === "unavailable") {
    io.err(
      `fleetsim: warning: execution.resources.cpu_limit = ${budget.cpuLimit} is not enforced: ${pinning.reason}\n`,
    );
  }
  const files = (report: MonitorReport, termination: Termination): OutputFile =>
    runtimeFile(budget, report, termination, phases, pinning);

  // A signal stops the replay at its next yield point (predictCommand handles the rest).
  let replay: Replay | null = null;
  stop.onStop(() => replay?.abort());
  // Assigned in onStart; erased before anything else is printed (table, errors, a second Ctrl-C).
  let progress = null as ProgressBar | null;
  // The process tree's RSS is sampled every 50 ms; above the budget the worker processes are
  // killed and the replay stops at its next yield point (resource_limited, exit 3).
  const monitor = new ResourceMonitor({
    budgetBytes: opts.resources?.runtimeBudgetBytes ?? budget.memoryBytes,
    intervalMs: opts.resources?.sampleIntervalMs,
    reserveBytes: budget.reserveBytes,
    availableMemory: opts.resources?.availableMemory ?? readMemAvailable,
    onExceeded: () => replay?.abort(),
    // The executable is the run: its kernel peak RSS also counts (peaks between samples).
    selfPeakBytes: opts.ownsProcess ? processPeakRssBytes : undefined,
    estimatedBytes: plan.estimatedBytes,
  }).start();
  // Start-up watchdog (docs/resources.md §3a): start-up is asynchronous, so the timer fires while
  // it is still under way; the command stops at once and the abandoned start-up work ends at the
  // replay's start (aborted there). A replay that already began is not affected.
  let stopWatchdog = (): void => {};
  const watchdog = new Promise<never>((_, reject) => {
    let timer: NodeJS.Timeout;
    const arm = (): void => {
      // setTimeout holds at most 2^31 − 1 ms: long limits re-arm until start-up's limit is reached.
      timer = setTimeout(
        () => {
          if (phases.startupRemainingMs() > 0) arm();
          else if (phases.expireStartup()) reject(new StartupExpired());
        },
        Math.min(Math.ceil(phases.startupRemainingMs()), MAX_TIMER_MS),
      );
    };
    arm();
    stopWatchdog = () => clearTimeout(timer);
  });
  // The run's messages (the reference logs them at INFO / WARNING) go to stderr, each on its own
  // line: a progress bar being drawn is erased first and redrawn below it on its next tick.
  const message =
    (level: "info" | "warning") =>
    (line: string): void =>
      io.err(`${progress === null ? "" : ERASE_LINE}fleetsim: ${level}: ${line}\n`);
  let outcome: Awaited<ReturnType<typeof runPrediction>>;
  try {
    const run = (async () => {
      await opts.resources?.startupStall?.();
      return runPrediction(
        spec,
        { capturePerRequest: opts.capturePerRequest },
        {
          onStart: (r, workload, retune) => {
            replay = r;
            if (phases.replayStarted() || cancelled() || monitor.exceeded) r.abort();
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
              stop.setProgress(progress);
            }
          },
          onReplayEnd: () => {
            progress?.stop();
            phases.replayEnded();
          },
          log: message("info"),
          warn: message("warning"),
        },
      );
    })();
    // The losing side of the race must not surface as an unhandled rejection.
    run.catch(() => {});
    outcome = await Promise.race([run, watchdog]);
  } catch (err) {
    const report = monitor.stop();
    if (monitor.exceeded) await resourceLimited(opts, report, budget, phases, pinning);
    if (phases.initializationOverran())
      await supervisorTimeout(opts, report, phases, "initialization_timeout", files);
    // An execution failure still records the budget and the peak; user errors and Ctrl-C write nothing.
    if (!(err instanceof ReplayAborted) && !isUserError(err)) {
      try {
        await writeOutputs(opts.outputDir, [files(report, "failed")], opts.overwrite);
      } catch {
        // the original error matters more
      }
    }
    throw err;
  } finally {
    progress?.stop();
    stop.setProgress(null);
    stopWatchdog();
  }
  const { prediction } = outcome;
  const outputs: OutputFile[] = [{ name: "prediction.json", chunks: [stableStringify(prediction), "\n"] }];
  // The monitor's last sample is taken with prediction.json serialized: its peak includes it.
  const report = monitor.stop();
  if (monitor.exceeded) await resourceLimited(opts, report, budget, phases, pinning);
  if (opts.capturePerRequest) {
    outputs.push({ name: "requests.jsonl", chunks: jsonlChunks(prediction.per_request ?? []) });
  }
  // requests.jsonl is serialized while it is written, outside the measured shutdown.
  if (phases.shutdownFinished()) await supervisorTimeout(opts, report, phases, "shutdown_timeout", files);
  outputs.push(files(report, "completed"));
  if (opts.html) outputs.push(htmlReportFile(prediction, spec.sla));
  // A signal up to the commit rolls the write back; the commit itself is a few renames.
  await writeOutputs(opts.outputDir, outputs, opts.overwrite, { cancelled });

  let saved = `Saved full report to: ${join(opts.outputDir, "prediction.json")}`;
  if (opts.html) saved += `\nSaved HTML report to: ${join(opts.outputDir, REPORT_FILE)}`;
  if (opts.format === "json") {
    io.out(`${stableLine(prediction.summary)}\n`);
    io.err(`${saved}\n`);
  } else {
    // The AIPerf table as the reference prints it, then fleetsim's fleet block (docs/metrics.md).
    io.out(`${renderSummaryTable(prediction.summary)}\n\n${renderFleetBlock(prediction)}\n${saved}\n`);
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Carriage return + erase line: what the progress bar draws over. */
const ERASE_LINE = "\r\x1b[K";

/** The watchdog's verdict: start-up outlasted initialization_timeout_seconds. */
class StartupExpired extends Error {
  constructor() {
    super("start-up timed out");
  }
}

function runtimeFile(
  budget: ResourceBudget,
  report: MonitorReport,
  termination: Termination,
  phases: PhaseClock,
  pinning: CpuPinning,
): OutputFile {
  const doc = resourceRuntimeDocument(budget, report, termination, phases.times(), pinning);
  return { name: "resource-runtime.json", chunks: [stableStringify(doc), "\n"] };
}

/** Writes resource-runtime.json (and no prediction) for a run stopped over its budget, then throws. */
async function resourceLimited(
  opts: PredictOptions,
  report: MonitorReport,
  budget: ResourceBudget,
  phases: PhaseClock,
  pinning: CpuPinning,
): Promise<never> {
  await writeOutputs(
    opts.outputDir,
    [runtimeFile(budget, report, "resource_limited", phases, pinning)],
    opts.overwrite,
  );
  const heap = report.heapAtStop;
  const cause =
    report.exceededReason === "heap_limit" && heap !== null
      ? `the JavaScript heap reached ${formatBytes(heap.usedBytes)} of its ${formatBytes(heap.limitBytes)} limit ` +
        "(V8 would abort the process next); the run is too large for this heap: raise it with " +
        `NODE_OPTIONS=--max-old-space-size=${Math.ceil((2 * heap.limitBytes) / 2 ** 20)} (MB) or shorten the run`
      : report.exceededReason === "host_reserve"
        ? `the host's available memory fell to ${formatBytes(report.minAvailableMemoryBytes ?? 0)}, below the ` +
          `reserve of ${formatBytes(report.reserveBytes ?? 0)} (execution.resources.reserve_memory_gb / reserve_memory_fraction)`
        : `the process tree's RSS reached ${formatBytes(report.peakObservedRssBytes)}, ` +
          `above the memory budget of ${formatBytes(report.budgetBytes)} (execution.resources.memory_limit_gb)`;
  throw new ResourceLimited(
    `run stopped as resource_limited: ${cause}; no prediction was written; ` +
      `see ${join(opts.outputDir, "resource-runtime.json")}`,
  );
}

/** Writes resource-runtime.json (and no prediction) for a phase that overran its timeout, then throws. */
async function supervisorTimeout(
  opts: PredictOptions,
  report: MonitorReport,
  phases: PhaseClock,
  termination: "initialization_timeout" | "shutdown_timeout",
  files: (report: MonitorReport, termination: Termination) => OutputFile,
): Promise<never> {
  await writeOutputs(opts.outputDir, [files(report, termination)], opts.overwrite);
  const t = phases.times();
  const [phase, took, limit, key] =
    termination === "initialization_timeout"
      ? [
          "start-up",
          t.initializationSeconds,
          t.initializationTimeoutSeconds,
          "initialization_timeout_seconds",
        ]
      : ["shutdown", t.shutdownSeconds, t.shutdownTimeoutSeconds, "shutdown_timeout_seconds"];
  throw new SupervisorTimeout(
    `${phase} took ${(took ?? 0).toFixed(3)} s, longer than execution.resources.${key} = ${limit}; ` +
      `no prediction was written; see ${join(opts.outputDir, "resource-runtime.json")}`,
  );
}

function formatBytes(n: number): string {
  return `${(n / 1e9).toFixed(3)} GB (${n} bytes)`;
}

function* jsonlChunks(records: readonly unknown[]): Generator<string> {
  for (const r of records) yield `${stableLine(r)}\n`;
}
