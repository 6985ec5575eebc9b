/**
 * Process supervision of one run (docs/resources.md): the host budget and preflight plan (refusal,
 * exit 3), CPU pinning, the process-tree memory monitor (resource_limited, exit 3), the start-up
 * watchdog and the shutdown bound (exit 124), and resource-runtime.json. The command that owns the
 * run (cli/predict.ts) drives it through a few calls:
 *
 *     const sup = await RunSupervisor.start(spec, options);   // refuses before any work
 *     const result = await sup.startUp(() => run(...));       // watchdog + monitor
 *       // inside: sup.attach(replay), sup.replayStarted(), sup.replayEnded()
 *     await sup.stopMonitor();                                // resource_limited?
 *     await sup.checkShutdown();                              // shutdown_timeout?
 *     outputs.push(sup.runtimeFile("completed"));
 */
import { join } from "node:path";
import { DEFAULT_EXECUTION, type RunSpec } from "../config/runSpec.js";
import { stableStringify } from "../report/json.js";
import { type OutputFile, writeOutputs } from "../report/outputDir.js";
import { ReplayAborted } from "../sim/replay.js";
import { UserError } from "../util/userError.js";
import { probeHost, type ResourceBudget, readMemAvailable, resolveBudget } from "./budget.js";
import { type CpuPinning, IN_PROCESS_PINNING, pinCurrentProcess } from "./cpuAffinity.js";
import { ResourceLimited, ResourceRefusal, SupervisorTimeout } from "./errors.js";
import { type MonitorReport, processPeakRssBytes, ResourceMonitor } from "./monitor.js";
import { PhaseClock } from "./phases.js";
import { measureWorkload, planResources, resourcePlanDocument } from "./preflight.js";
import { type ResourceHooks, resourceRuntimeDocument, type Termination } from "./runtime.js";

export interface SupervisorOptions {
  /** Where resource-plan.json / resource-runtime.json go (the run's output directory). */
  readonly outputDir: string;
  readonly overwrite: boolean;
  readonly capturePerRequest: boolean;
  /**
   * The run owns its process (the `fleetsim` executable): it may pin the process to `cpu_limit`
   * CPUs, and the process's kernel peak RSS counts. In-process callers leave this unset.
   */
  readonly ownsProcess?: boolean;
  /** Test injection points (docs/resources.md). */
  readonly hooks?: ResourceHooks;
  /** When the run began (`performance.now()`): start-up is timed from there. */
  readonly startedMs: number;
  /**
   * The run forks no worker process (no retune sweeps): pinning waits for the replay's start
   * (`pinForReplay`), off the path to the first simulated event (docs/performance.md "Start-up").
   */
  readonly pinAtReplayStart?: boolean;
  /** Receives a warning line (without prefix): `cpu_limit` could not be enforced. */
  warn(line: string): void;
}

/** Something the supervisor can stop at its next yield point (the replay). */
export interface Abortable {
  abort(): void;
}

export class RunSupervisor {
  private target: Abortable | null = null;
  private readonly monitor: ResourceMonitor;
  private monitorReport: MonitorReport | null = null;

  private constructor(
    private readonly opts: SupervisorOptions,
    private readonly budget: ResourceBudget,
    private readonly phases: PhaseClock,
    private pinning: CpuPinning | null,
    estimatedBytes: number,
  ) {
    const hooks = opts.hooks;
    // The process tree's RSS is sampled every 50 ms; above the budget the worker processes are
    // killed and the replay stops at its next yield point (resource_limited, exit 3).
    this.monitor = new ResourceMonitor({
      budgetBytes: hooks?.runtimeBudgetBytes ?? budget.memoryBytes,
      intervalMs: hooks?.sampleIntervalMs,
      reserveBytes: budget.reserveBytes,
      availableMemory: hooks?.availableMemory ?? readMemAvailable,
      onExceeded: () => this.target?.abort(),
      // The executable is the run: its kernel peak RSS also counts (peaks between samples).
      selfPeakBytes: opts.ownsProcess ? processPeakRssBytes : undefined,
      estimatedBytes,
    }).start();
  }

  /**
   * Resolves the budget, plans the run and refuses it (resource-plan.json, ResourceRefusal) when
   * it does not fit; then pins the process and starts the memory monitor.
   */
  static async start(spec: RunSpec, opts: SupervisorOptions): Promise<RunSupervisor> {
    // Host budget and preflight plan (docs/resources.md): refuse before any work, exit 3.
    const settings = (spec.execution ?? DEFAULT_EXECUTION).resources;
    const budget = resolveBudget(settings, opts.hooks?.host ?? probeHost());
    // The plan counts what the run will hold: a pass over the trace sizes it (docs/resources.md §2).
    const plan = planResources(spec, budget, await measureWorkload(spec), {
      capturePerRequest: opts.capturePerRequest,
    });
    // Start-up and shutdown are bounded by their timeouts (docs/resources.md §3, exit 124).
    const phases = new PhaseClock(settings, opts.startedMs);
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
    // cpu_limit (docs/resources.md §1a): pin this process before any sweep worker is forked; a
    // run that forks none pins when its replay starts.
    const supervisor = new RunSupervisor(opts, budget, phases, null, plan.estimatedBytes);
    if (!(opts.ownsProcess && opts.pinAtReplayStart)) supervisor.pinForReplay();
    return supervisor;
  }

  /** Pins the process to `cpu_limit` CPUs, once (an in-process run leaves its host's affinity alone). */
  pinForReplay(): CpuPinning {
    if (this.pinning !== null) return this.pinning;
    const { opts, budget } = this;
    const pinning = opts.ownsProcess ? pinCurrentProcess(budget.cpuLimit) : IN_PROCESS_PINNING;
    if (pinning.status === "unavailable") {
      opts.warn(`execution.resources.cpu_limit = ${budget.cpuLimit} is not enforced: ${pinning.reason}`);
    }
    this.pinning = pinning;
    return pinning;
  }

  /** Whether the memory monitor has stopped the run. */
  get exceeded(): boolean {
    return this.monitor.exceeded;
  }

  /** What the monitor stops when the budget is exceeded. */
  attach(target: Abortable): void {
    this.target = target;
  }

  /** The replay begins; true when start-up took longer than its limit (the replay must stop). */
  replayStarted(): boolean {
    return this.phases.replayStarted();
  }

  /** The replay has finished: the shutdown phase begins. */
  replayEnded(): void {
    this.phases.replayEnded();
  }

  /**
   * Runs `body` (start-up and the replay) under the start-up watchdog (docs/resources.md §3a):
   * start-up is asynchronous, so the timer fires while it is still under way; the command stops
   * at once and the abandoned start-up work ends at the replay's start (`replayStarted` is
   * true there). A replay that already began is not affected. When `body` fails, this records what
   * the failure calls for (resource-runtime.json) and throws the error that decides the exit.
   */
  async startUp<T>(body: () => Promise<T>): Promise<T> {
    let stopWatchdog = (): void => {};
    const phases = this.phases;
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
    try {
      const run = (async () => {
        await this.opts.hooks?.startupStall?.();
        return body();
      })();
      // The losing side of the race must not surface as an unhandled rejection.
      run.catch(() => {});
      return await Promise.race([run, watchdog]);
    } catch (err) {
      const report = this.monitor.stop();
      if (this.monitor.exceeded) await this.resourceLimited(report);
      if (phases.initializationOverran()) await this.timedOut(report, "initialization_timeout");
      // An execution failure still records the budget and the peak; user errors and a stopped
      // replay (Ctrl-C) write nothing.
      if (!(err instanceof ReplayAborted) && !(err instanceof UserError)) {
        try {
          await writeOutputs(
            this.opts.outputDir,
            [this.runtimeFileOf(report, "failed")],
            this.opts.overwrite,
          );
        } catch {
          // the original error matters more
        }
      }
      throw err;
    } finally {
      stopWatchdog();
    }
  }

  /**
   * Stops the memory monitor (take its last sample with the results serialized: its peak
   * includes them); throws ResourceLimited, with resource-runtime.json written, if it fired.
   */
  async stopMonitor(): Promise<void> {
    const report = this.monitor.stop();
    this.monitorReport = report;
    if (this.monitor.exceeded) await this.resourceLimited(report);
  }

  /** Throws SupervisorTimeout, with resource-runtime.json written, when shutdown overran. */
  async checkShutdown(): Promise<void> {
    if (this.phases.shutdownFinished()) await this.timedOut(this.report(), "shutdown_timeout");
  }

  /** resource-runtime.json of the run so far (after `stopMonitor`). */
  runtimeFile(termination: Termination): OutputFile {
    return this.runtimeFileOf(this.report(), termination);
  }

  private report(): MonitorReport {
    if (this.monitorReport === null) throw new Error("internal: the monitor is still running");
    return this.monitorReport;
  }

  private runtimeFileOf(report: MonitorReport, termination: Termination): OutputFile {
    // A run that stopped before its replay started has not pinned yet: its record says what pinning gives.
    const pinning = this.pinForReplay();
    const doc = resourceRuntimeDocument(this.budget, report, termination, this.phases.times(), pinning);
    return { name: "resource-runtime.json", chunks: [stableStringify(doc), "\n"] };
  }

  /** Writes resource-runtime.json (and no prediction) for a run stopped over its budget, then throws. */
  private async resourceLimited(report: MonitorReport): Promise<never> {
    const { outputDir, overwrite } = this.opts;
    await writeOutputs(outputDir, [this.runtimeFileOf(report, "resource_limited")], overwrite);
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
        `see ${join(outputDir, "resource-runtime.json")}`,
    );
  }

  /** Writes resource-runtime.json (and no prediction) for a phase that overran its timeout, then throws. */
  private async timedOut(
    report: MonitorReport,
    termination: "initialization_timeout" | "shutdown_timeout",
  ): Promise<never> {
    const { outputDir, overwrite } = this.opts;
    await writeOutputs(outputDir, [this.runtimeFileOf(report, termination)], overwrite);
    const t = this.phases.times();
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
        `no prediction was written; see ${join(outputDir, "resource-runtime.json")}`,
    );
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** The watchdog's verdict: start-up outlasted initialization_timeout_seconds. */
class StartupExpired extends Error {
  constructor() {
    super("start-up timed out");
  }
}

function formatBytes(n: number): string {
  return `${(n / 1e9).toFixed(3)} GB (${n} bytes)`;
}
