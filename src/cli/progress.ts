/**
 * The progress bar of `fleetsim predict` on a terminal's stderr:
 *
 *   ▕███████████▌           ▏  48%  sim 0:28:41 / ≈1:00:00  1,024/2,133 req  612× real time
 *
 * and, while a retune sweep runs (the virtual clock stands still), which window it sweeps:
 *
 *   ▕███▌    ▏  12%  sim 0:10:05 / ≈1:00:00  310/2,133 req  retune window 1/5: 6 candidates  40× real time
 *
 * Hand-written rather than cli-progress: one line, redrawn in place, is all it needs, and a pure
 * `renderProgressLine` is easy to test. The replay runs on the main thread and yields to the event
 * loop about every 50 ms; a timer (at most ~10 redraws/s) reads its virtual clock and the
 * collector's count of ended requests between slices, so the bar costs the hot loop nothing. Nothing is drawn for runs
 * shorter than `delayMs` (no flicker on small runs), and `stop()` erases the line before anything
 * else is printed.
 */
import type { LoadSpec, RunSpec } from "../config/runSpec.js";
import { launchTickS, retuneWindow } from "../planner/retune/windows.js";
import type { WorkloadInfo } from "../traffic/requestSource.js";

/** Where the bar is drawn: process.stderr in production, a fake terminal in tests. */
export interface ProgressTerminal {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

/** `--progress`: `auto` = only on a TTY and not with `--format json`. */
export type ProgressMode = "auto" | "bar" | "none";

/** Injection points (tests); production uses the defaults. */
export interface ProgressSettings {
  /** Default: process.stderr. */
  readonly terminal?: ProgressTerminal;
  /** Wall time before the first draw, ms. Default 1000. */
  readonly delayMs?: number;
  /** Redraw period, ms. Default 100. */
  readonly intervalMs?: number;
}

const DEFAULT_DELAY_MS = 1000;
const DEFAULT_INTERVAL_MS = 100;
/** Carriage return + erase to end of line: the line is redrawn in place, then wiped. */
const CLEAR_LINE = "\r\x1b[K";

export function progressWanted(
  mode: ProgressMode,
  terminal: ProgressTerminal,
  format: "table" | "json",
): boolean {
  if (mode === "none") return false;
  if (mode === "bar") return true;
  return terminal.isTTY === true && format !== "json";
}

/** How far the run will go, as far as it is known before it starts. */
export interface RunExtent {
  readonly requests: number;
  /** Simulated ms the run is expected to reach; null when unknown (closed loop without a cap). */
  readonly simulatedMs: number | null;
  /**
   * True when `simulatedMs` is the last arrival: the run drains past it, so it is over only when
   * every request is done. False for the virtual-time cap: the run ends there at the latest.
   */
  readonly estimated: boolean;
}

/**
 * The total is the last open-loop arrival (later session turns, which arrive after their previous
 * turn completes, only add to it: an estimate either way), or the virtual-time cap when it comes
 * first (the run ends there at the latest, earlier if every request is done).
 */
export function runExtent(spec: RunSpec, table: WorkloadInfo): RunExtent {
  const lastArrival = lastOpenLoopArrivalMs(spec.load, table);
  const cap = spec.stop.maxVirtualTimeMs;
  if (cap !== null && (lastArrival === null || cap < lastArrival)) {
    return { requests: table.count, simulatedMs: cap, estimated: false };
  }
  return { requests: table.count, simulatedMs: lastArrival, estimated: true };
}

function lastOpenLoopArrivalMs(load: LoadSpec, table: WorkloadInfo): number | null {
  if (load.type === "concurrency") return null;
  const speedup = load.type === "trace_timestamps" ? load.speedup : 1;
  const last = table.lastFirstTurnMs;
  return Number.isFinite(last) && last > 0 ? last / speedup : null;
}

/** A retune sweep in flight (the virtual clock stands still meanwhile; docs/retune.md). */
export interface SweepProgress {
  /** 0-based window index. */
  readonly windowIndex: number;
  /** Points of the window's candidate set. */
  readonly candidates: number;
}

/** What the bar reads from a retune controller (RetuneController satisfies it). */
export interface RetuneProgressSource {
  readonly sweepProgress: SweepProgress | null;
}

/** What the bar shows at one instant. */
export interface ProgressState {
  readonly simulatedMs: number;
  readonly wallMs: number;
  readonly done: number;
  readonly extent: RunExtent;
  /** With retune: the sweep in flight (null between sweeps) and the windows the run is expected to sweep. */
  readonly retune?: { readonly sweep: SweepProgress | null; readonly windows: number } | null;
}

/**
 * Retune windows a run is expected to sweep: those whose launch tick (window end + grace, on the
 * tick grid) comes by the last arrival (a run drains a little past it, so one more may follow).
 * 0 without retune.
 */
export function expectedRetuneWindows(spec: RunSpec, extent: RunExtent): number {
  const retune = spec.planner?.retune ?? null;
  if (retune === null || spec.planner === null || extent.simulatedMs === null) return 0;
  const endS = extent.simulatedMs / 1000;
  let k = 0;
  while (launchTickS(retuneWindow(k, retune), spec.planner.scaleIntervalS) <= endS + 1e-9) k++;
  return k;
}

/** One line of at most `width` columns (no newline). Pure. */
export function renderProgressLine(state: ProgressState, width: number): string {
  const { extent, done } = state;
  const total = extent.simulatedMs;
  const doneFraction = done / Math.max(1, extent.requests);
  const timeFraction = total !== null && total > 0 ? state.simulatedMs / total : null;
  // Past the last arrival an overloaded run drains for a long time: it is only as far along as
  // the requests done (the smaller of the two). A capped run ends at the cap or when every
  // request is done, whichever comes first (the larger). Both stay monotone.
  let fraction =
    timeFraction === null
      ? doneFraction
      : extent.estimated
        ? Math.min(timeFraction, doneFraction)
        : Math.max(timeFraction, doneFraction);
  fraction = Math.min(1, Math.max(0, fraction));
  // Never claim 100% while requests are still open.
  if (fraction >= 1 && done < extent.requests) fraction = 0.99;
  const fields = [
    `${Math.floor(fraction * 100)
      .toString()
      .padStart(3)}%`,
    `sim ${formatDuration(state.simulatedMs)}${total === null ? "" : ` / ${extent.estimated ? "≈" : ""}${formatDuration(total)}`}`,
    `${formatCount(done)}/${formatCount(extent.requests)} req`,
  ];
  const sweep = state.retune?.sweep ?? null;
  if (sweep !== null) {
    // The window's number and the expected count (never below the window being swept).
    const windows = Math.max(state.retune?.windows ?? 0, sweep.windowIndex + 1);
    fields.push(
      `retune window ${sweep.windowIndex + 1}/${windows}: ${formatCount(sweep.candidates)} candidate${sweep.candidates === 1 ? "" : "s"}`,
    );
  }
  if (state.wallMs >= 1) fields.push(`${formatSpeed(state.simulatedMs / state.wallMs)} real time`);
  const text = fields.join("  ");
  const barWidth = Math.min(30, width - text.length - 4);
  const line = barWidth >= 10 ? `${bar(fraction, barWidth)}  ${text}` : text;
  return line.length > width ? line.slice(0, Math.max(0, width)) : line;
}

/** Block characters with eighth-cell resolution between two thin edges. */
function bar(fraction: number, width: number): string {
  const eighths = Math.round(fraction * width * 8);
  const full = Math.floor(eighths / 8);
  const partial = eighths % 8;
  const partialChar = partial === 0 ? "" : " ▏▎▍▌▋▊▉"[partial];
  return `▕${"█".repeat(full)}${partialChar}${" ".repeat(width - full - (partial === 0 ? 0 : 1))}▏`;
}

function formatDuration(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.floor(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  return `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}`;
}

function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

function formatSpeed(factor: number): string {
  if (factor >= 100) return `${Math.round(factor).toLocaleString("en-US")}×`;
  return `${factor.toFixed(factor >= 10 ? 0 : 1)}×`;
}

/** What the bar reads from the running replay (Replay satisfies it). */
export interface ProgressSource {
  readonly virtualTimeMs: number;
  readonly collector: { readonly terminated: number };
}

export class ProgressBar {
  private timer: ReturnType<typeof setInterval> | null = null;
  private drawn = false;
  private readonly delayMs: number;
  private readonly intervalMs: number;

  constructor(
    private readonly terminal: ProgressTerminal,
    private readonly extent: RunExtent,
    settings: ProgressSettings = {},
    /** With retune: its controller and the windows expected. */
    private readonly retune: {
      readonly source: RetuneProgressSource;
      readonly windows: number;
    } | null = null,
  ) {
    this.delayMs = settings.delayMs ?? DEFAULT_DELAY_MS;
    this.intervalMs = settings.intervalMs ?? DEFAULT_INTERVAL_MS;
  }

  /** Starts redrawing from `source` (the replay about to run). */
  start(source: ProgressSource): this {
    const startedMs = performance.now();
    this.timer = setInterval(() => {
      const wallMs = performance.now() - startedMs;
      if (wallMs < this.delayMs) return;
      const retune = this.retune;
      this.draw({
        simulatedMs: source.virtualTimeMs,
        wallMs,
        done: source.collector.terminated,
        extent: this.extent,
        retune: retune === null ? null : { sweep: retune.source.sweepProgress, windows: retune.windows },
      });
    }, this.intervalMs);
    // The bar never keeps the process alive.
    this.timer.unref();
    return this;
  }

  /** Stops redrawing and erases the line; safe to call more than once. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.drawn) this.terminal.write(CLEAR_LINE);
    this.drawn = false;
  }

  private draw(state: ProgressState): void {
    // A pseudo-terminal may report 0 columns (unknown): assume the classic 80.
    const columns =
      this.terminal.columns !== undefined && this.terminal.columns > 0 ? this.terminal.columns : 80;
    const width = Math.max(20, columns - 1);
    this.terminal.write(`${CLEAR_LINE}${renderProgressLine(state, width)}`);
    this.drawn = true;
  }
}

/**
 * The bar for one replay, started, or null when none is wanted (`--progress`, TTY, `--format`).
 * Only `predict` on the main thread calls this; sweep workers never draw.
 */
export function startProgress(
  mode: ProgressMode,
  format: "table" | "json",
  settings: ProgressSettings,
  spec: RunSpec,
  replay: ProgressSource,
  workload: WorkloadInfo,
  retune: RetuneProgressSource | null = null,
): ProgressBar | null {
  const terminal = settings.terminal ?? process.stderr;
  if (!progressWanted(mode, terminal, format)) return null;
  // A terminal that cannot erase a line gets no bar unless asked for.
  if (settings.terminal === undefined && mode === "auto" && process.env["TERM"] === "dumb") return null;
  const extent = runExtent(spec, workload);
  const sweeps = retune === null ? null : { source: retune, windows: expectedRetuneWindows(spec, extent) };
  return new ProgressBar(terminal, extent, settings, sweeps).start(replay);
}
