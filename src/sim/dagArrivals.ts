import type { LoadSpec } from "../config/runSpec.js";
import type { RequestDependencies, RequestTable } from "../traffic/requests.js";
import type { Arrivals } from "./arrivals.js";

/**
 * The arrivals of a dependency graph (`agentic_mooncake`, `ai-dynamo/dynamo@9ce5bc5:lib/mocker/src/loadgen/driver.rs`): a row without
 * dependencies arrives at its timestamp ÷ speedup (0 without one); a row with some arrives once
 * the last of them reached a terminal state, plus its delay (`delay + tool_wait_ms`) ÷ speedup —
 * `max(ends of its dependencies) + delay`, the reference's `delay_after_dependencies_ms`. Any
 * terminal state releases dependents, as the reference's driver does. Open loop only (config
 * rule: `trace_timestamps`).
 */
export class DagArrivals implements Arrivals {
  readonly closedLoop = false;
  readonly hasDependentArrivals: boolean;
  private readonly speedup: number;
  /** Dependencies of each row not ended yet. */
  private readonly remaining: Int32Array;
  /** The latest end among each row's ended dependencies. */
  private readonly latestEnd: Float64Array;
  /** Row r is waited for by `dependentRows[dependentOffsets[r] .. dependentOffsets[r + 1])`. */
  private readonly dependentOffsets: Int32Array;
  private readonly dependentRows: Int32Array;

  constructor(
    private readonly table: RequestTable,
    deps: RequestDependencies,
    load: LoadSpec,
  ) {
    if (load.type !== "trace_timestamps") {
      throw new Error(`internal: a dependency graph replays on trace timestamps, not '${load.type}' load`);
    }
    this.speedup = load.speedup;
    const n = table.count;
    const { waitOffsets, waitRows } = deps;
    this.hasDependentArrivals = waitRows.length > 0;
    this.remaining = new Int32Array(n);
    this.latestEnd = new Float64Array(n);
    const counts = new Int32Array(n + 1);
    for (let r = 0; r < n; r++) {
      this.remaining[r] = waitOffsets[r + 1] - waitOffsets[r];
      for (let k = waitOffsets[r]; k < waitOffsets[r + 1]; k++) counts[waitRows[k] + 1]++;
    }
    for (let r = 0; r < n; r++) counts[r + 1] += counts[r];
    this.dependentOffsets = counts.slice();
    this.dependentRows = new Int32Array(waitRows.length);
    // Dependents in row order (a fixed order for the schedule calls of one end).
    for (let r = 0; r < n; r++) {
      for (let k = waitOffsets[r]; k < waitOffsets[r + 1]; k++) this.dependentRows[counts[waitRows[k]]++] = r;
    }
  }

  seed(schedule: (row: number, time: number) => void): void {
    const t = this.table;
    for (let r = 0; r < t.count; r++) {
      if (this.remaining[r] !== 0) continue;
      const ts = t.timestampMs[r];
      schedule(r, (Number.isNaN(ts) ? 0 : ts) / this.speedup);
    }
  }

  onTerminal(row: number, now: number, schedule: (row: number, time: number) => void): void {
    const rows = this.dependentRows;
    for (let k = this.dependentOffsets[row]; k < this.dependentOffsets[row + 1]; k++) {
      const d = rows[k];
      if (now > this.latestEnd[d]) this.latestEnd[d] = now;
      if (--this.remaining[d] === 0) {
        schedule(d, this.latestEnd[d] + this.table.delayAfterPreviousMs[d] / this.speedup);
      }
    }
  }
}
