/**
 * Process-tree RSS monitor (docs/resources.md §3): samples the resident memory of this process
 * plus the descendants it owns every `intervalMs` (50 ms) and reports the first sample above the
 * budget. Linux: descendants are found by walking /proc/<pid>/task/<tid>/children down from this
 * process (a few small files per process of the tree; where the kernel lacks them, through the
 * ppid field of every /proc/<pid>/stat, several times the cost) and measured by VmRSS of
 * /proc/<pid>/status. Elsewhere (no /proc) only `process.memoryUsage.rss()` of this process is
 * counted.
 *
 * "Owned" descendants are those that did not exist when the monitor started: a process that was
 * already a child (say, a test runner's helper) is neither counted nor killed.
 *
 * The scan of /proc (every process's stat) runs only when this process has a child: that is
 * read first from /proc/self/task/<tid>/children (one small file per thread), so a run without
 * worker processes samples only its own RSS. Where those files cannot be read, a monitor that
 * last saw no descendant rescans at most every `IDLE_SCAN_INTERVAL_MS`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { getHeapStatistics } from "node:v8";
import { readAllowedCpus } from "./cpuAffinity.js";

export const DEFAULT_SAMPLE_INTERVAL_MS = 50;

/** Without /proc/self/task/<tid>/children: the rescan interval while no descendant was seen. */
export const IDLE_SCAN_INTERVAL_MS = 1000;

/**
 * Whether this process has a child process, from /proc/self/task/<tid>/children (each thread's
 * children); null where the main thread's file cannot be read (no /proc, or a kernel without it).
 */
export function hasChildProcesses(): boolean | null {
  const children = childrenOf(process.pid);
  return children === null ? null : children.length > 0;
}

/**
 * The children of process `pid`, from each of its threads' /proc/<pid>/task/<tid>/children; null
 * where the main thread's file cannot be read (no /proc, a kernel without it, or `pid` is gone).
 */
function childrenOf(pid: number): number[] | null {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const main = String(pid);
  const out: number[] = [];
  for (const tid of tasks) {
    let children: string;
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8");
    } catch {
      if (tid === main) return null;
      continue; // a thread that exited meanwhile
    }
    for (const word of children.split(" ")) if (word.trim() !== "") out.push(Number(word));
  }
  return out;
}

/** This process's kernel high-water mark of resident memory, bytes (getrusage `maxrss` is in KiB). */
export function processPeakRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/** Parent pid of every process visible in /proc, or null where /proc cannot be read. */
function readParents(): Map<number, number> | null {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return null;
  }
  const parents = new Map<number, number>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may hold spaces or parentheses.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(name), Number(rest[1]));
    } catch {
      // the process exited meanwhile
    }
  }
  return parents;
}

/** All descendants of `root` (children, grandchildren, …), or null without /proc. */
export function descendantPids(root: number = process.pid): number[] | null {
  // Sampled every 50 ms for as long as sweep workers live: walk the tree's own children files
  // rather than read every process's stat.
  const direct = childrenOf(root);
  if (direct === null) return descendantsByScan(root);
  const out: number[] = [];
  const stack = direct;
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(childrenOf(pid) ?? [])); // null: it exited meanwhile
  }
  return out;
}

/** `descendantPids` from the ppid of every process in /proc, or null without /proc. */
function descendantsByScan(root: number): number[] | null {
  const parents = readParents();
  if (parents === null) return null;
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) {
    const list = children.get(ppid);
    if (list === undefined) children.set(ppid, [pid]);
    else list.push(pid);
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** VmRSS of one process in bytes (0 if it is gone or has no RSS line, as zombies do). */
export function pidRssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s*kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0;
  }
}

export interface TreeRss {
  readonly totalBytes: number;
  readonly selfBytes: number;
  /** Owned descendants measured in this sample. */
  readonly pids: readonly number[];
}

/** RSS of this process plus its descendants, excluding the pids in `exclude`. */
export function processTreeRss(exclude: ReadonlySet<number> = new Set()): TreeRss {
  const selfBytes = process.memoryUsage.rss();
  const pids = (descendantPids() ?? []).filter((p) => !exclude.has(p));
  let total = selfBytes;
  for (const pid of pids) total += pidRssBytes(pid);
  return { totalBytes: total, selfBytes, pids };
}

export interface MonitorOptions {
  readonly budgetBytes: number;
  readonly intervalMs?: number;
  /** Called once, on the first sample above the budget (after the owned descendants were killed). */
  readonly onExceeded?: (rssBytes: number) => void;
  /** Replaces the tree measurement (tests). */
  readonly sample?: () => number;
  /**
   * Host available memory that must remain (the reserve), checked with `availableMemory` at every
   * sample; omitted = not checked.
   */
  readonly reserveBytes?: number;
  /** Reads the host's available memory in bytes; null where it cannot be read (then not checked). */
  readonly availableMemory?: () => number | null;
  /**
   * This process's own peak RSS as the kernel keeps it (getrusage maxrss), folded into the reported
   * peak when the monitor stops: it catches peaks between samples (a trace being parsed, the report
   * being serialized). Only for a process that is the run (the executable): in-process callers'
   * high-water mark predates the run. Omitted = samples only.
   */
  readonly selfPeakBytes?: () => number;
  /** The preflight's estimate, reported beside the peak (resource-runtime.json). */
  readonly estimatedBytes?: number;
  /**
   * This process's JavaScript heap: bytes in use and V8's limit (`--max-old-space-size`). A run
   * whose heap nears the limit is stopped cleanly (exit 3) before V8 aborts the process (exit
   * 134), whatever the memory budget says. Default: `v8.getHeapStatistics()` when the tree is
   * measured for real (no `sample`); null = not checked.
   */
  readonly heapUsage?: (() => HeapUsage | null) | null;
}

export interface HeapUsage {
  readonly usedBytes: number;
  readonly limitBytes: number;
}

/** Share of V8's heap limit at which a run is stopped (V8 itself aborts near 100 %). */
export const HEAP_LIMIT_FRACTION = 0.85;

function v8HeapUsage(): HeapUsage {
  const h = getHeapStatistics();
  return { usedBytes: h.used_heap_size, limitBytes: h.heap_size_limit };
}

/**
 * Why a run was stopped: the tree's RSS above the budget, the host's available memory below the
 * reserve, or this process's JavaScript heap near V8's limit.
 */
export type ExceededReason = "memory_budget" | "host_reserve" | "heap_limit";

export interface MonitorReport {
  readonly budgetBytes: number;
  /** The highest sampled tree RSS, or the process's own kernel peak when `selfPeakBytes` is given and higher. */
  readonly peakObservedRssBytes: number;
  /** The highest sampled tree RSS. */
  readonly peakSampledRssBytes: number;
  /** The process's own kernel peak RSS, or null when not measured. */
  readonly peakProcessRssBytes: number | null;
  /** The preflight's estimate, or null. */
  readonly estimatedBytes: number | null;
  readonly samples: number;
  readonly intervalMs: number;
  /** RSS of the first sample above the budget; null when the budget held. */
  readonly exceededAtBytes: number | null;
  readonly exceededReason: ExceededReason | null;
  readonly reserveBytes: number | null;
  /** Lowest host available memory sampled, or null when it was not read. */
  readonly minAvailableMemoryBytes: number | null;
  readonly killedPids: readonly number[];
  /** The heap in use and its limit at the stop, when the heap limit stopped the run; else null. */
  readonly heapAtStop: HeapUsage | null;
  /**
   * Union of the CPUs the owned descendants (sweep workers) were allowed to run on, read when each
   * was first seen; null when no descendant was seen or its affinity could not be read.
   */
  readonly descendantCpus: readonly number[] | null;
}

export class ResourceMonitor {
  private readonly budgetBytes: number;
  private readonly intervalMs: number;
  private readonly baseline: ReadonlySet<number>;
  private timer: NodeJS.Timeout | null = null;
  private peak = 0;
  private count = 0;
  private exceededAt: number | null = null;
  private exceededReason: ExceededReason | null = null;
  private minAvailable: number | null = null;
  private heapAtStop: HeapUsage | null = null;
  private readonly heapUsage: (() => HeapUsage | null) | null;
  private readonly killed: number[] = [];
  private lastPids: readonly number[] = [];
  private lastScanMs = Number.NEGATIVE_INFINITY;
  private readonly seenPids = new Set<number>();
  private readonly descendantCpus = new Set<number>();

  constructor(private readonly opts: MonitorOptions) {
    this.budgetBytes = opts.budgetBytes;
    this.intervalMs = opts.intervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS;
    this.baseline = new Set(
      opts.sample === undefined && hasChildProcesses() !== false ? (descendantPids() ?? []) : [],
    );
    this.heapUsage =
      opts.heapUsage !== undefined ? opts.heapUsage : opts.sample === undefined ? v8HeapUsage : null;
  }

  /** Takes a first sample and starts the timer (unref'd: it never keeps the process alive). */
  start(): this {
    this.sampleNow();
    this.timer = setInterval(() => this.sampleNow(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  get exceeded(): boolean {
    return this.exceededAt !== null;
  }

  /** Takes one sample; returns the RSS measured. */
  sampleNow(): number {
    let rss: number;
    if (this.opts.sample !== undefined) {
      rss = this.opts.sample();
    } else {
      if (this.scanDue()) {
        const tree = processTreeRss(this.baseline);
        this.lastScanMs = performance.now();
        rss = tree.totalBytes;
        this.lastPids = tree.pids;
        this.noteAffinity(tree.pids);
      } else {
        // No child process: the tree is this process alone.
        rss = process.memoryUsage.rss();
        this.lastPids = [];
      }
    }
    return this.record(rss);
  }

  /**
   * Whether this sample scans /proc for descendants: only when this process has a child, or,
   * where that cannot be read, when one was seen last time or the idle rescan interval elapsed.
   */
  private scanDue(): boolean {
    const children = hasChildProcesses();
    if (children !== null) return children;
    return this.lastPids.length > 0 || performance.now() - this.lastScanMs >= IDLE_SCAN_INTERVAL_MS;
  }

  /** Folds one sample into the peak and checks the limits; returns it. */
  private record(rss: number): number {
    this.count += 1;
    if (rss > this.peak) this.peak = rss;
    const available = this.opts.reserveBytes === undefined ? null : (this.opts.availableMemory?.() ?? null);
    if (available !== null && (this.minAvailable === null || available < this.minAvailable)) {
      this.minAvailable = available;
    }
    if (this.exceededAt === null) {
      const heap = this.heapUsage?.() ?? null;
      const reason: ExceededReason | null =
        rss > this.budgetBytes
          ? "memory_budget"
          : available !== null && available < (this.opts.reserveBytes ?? 0)
            ? "host_reserve"
            : heap !== null && heap.usedBytes > HEAP_LIMIT_FRACTION * heap.limitBytes
              ? "heap_limit"
              : null;
      if (reason === "heap_limit") this.heapAtStop = heap;
      if (reason !== null) {
        this.exceededAt = rss;
        this.exceededReason = reason;
        this.killOwned();
        this.opts.onExceeded?.(rss);
      }
    }
    return rss;
  }

  /** Records the CPU affinity of descendants seen for the first time (evidence of the pinning). */
  private noteAffinity(pids: readonly number[]): void {
    for (const pid of pids) {
      if (this.seenPids.has(pid)) continue;
      this.seenPids.add(pid);
      for (const cpu of readAllowedCpus(pid) ?? []) this.descendantCpus.add(cpu);
    }
  }

  /** SIGKILLs every owned descendant (the run's worker processes). */
  killOwned(): void {
    const pids = this.opts.sample === undefined ? this.lastPids : [];
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        this.killed.push(pid);
      } catch {
        // already gone
      }
    }
  }

  /** Stops sampling after one last sample (a second call only reports); returns what was seen. */
  stop(): MonitorReport {
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
      this.sampleNow();
    }
    const own = this.opts.selfPeakBytes?.() ?? null;
    return {
      budgetBytes: this.budgetBytes,
      peakObservedRssBytes: own === null ? this.peak : Math.max(this.peak, own),
      peakSampledRssBytes: this.peak,
      peakProcessRssBytes: own,
      estimatedBytes: this.opts.estimatedBytes ?? null,
      samples: this.count,
      intervalMs: this.intervalMs,
      exceededAtBytes: this.exceededAt,
      exceededReason: this.exceededReason,
      reserveBytes: this.opts.reserveBytes ?? null,
      minAvailableMemoryBytes: this.minAvailable,
      killedPids: [...this.killed],
      heapAtStop: this.heapAtStop,
      descendantCpus: this.descendantCpus.size === 0 ? null : [...this.descendantCpus].sort((a, b) => a - b),
    };
  }
}
