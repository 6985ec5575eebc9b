import { type LifecycleOperation, poolName } from "../cluster/lifecycle.js";
import { type WorkerPool, WorkerState } from "../cluster/workerPool.js";
import type { Sequence } from "../engine/sequence.js";
import type { Collector } from "../metrics/collector.js";
import { Terminal } from "../metrics/collector.js";

/**
 * The numbered bookkeeping invariants of a replay (docs/architecture.md "Invariants" lists the
 * same ids and statements; test/sim/invariants.registry.test.ts keeps the two in step and gives
 * each one a test that fails when its check is removed). A violation throws `InvariantViolation`
 * naming the id, so a bookkeeping bug cannot hide behind plausible output. The `always` ones are
 * checked on every run; the others when checking is enabled (every replay in the test suite:
 * `FLEETSIM_CHECK_INVARIANTS=1`, set by vitest.config.ts and inherited by CLI subprocesses and
 * sweep workers).
 */
export const INVARIANTS = {
  "INV-1": {
    statement:
      "Each request reaches one terminal state, and every arrived request one by the end of a run not cut by the time cap.",
    checkedIn: "Replay.terminate (always); InvariantChecker.atEnd",
  },
  "INV-2": {
    statement:
      "KV blocks are conserved: each engine's references are exactly its owners' blocks, owners' blocks cover their computed tokens, and no block is held after the run.",
    checkedIn: "InvariantChecker.auditKv (every ~capacity/64 timestamps, after each tick, at the end)",
  },
  "INV-3": {
    statement: "The virtual clock never goes back.",
    checkedIn: "Replay.step (always)",
  },
  "INV-4": {
    statement:
      "The GPUs of ready and starting workers stay within max(budget, starting GPUs) after every scaling tick.",
    checkedIn: "InvariantChecker.afterTick",
  },
  "INV-5": {
    statement: "A draining worker is removed as soon as it holds nothing.",
    checkedIn: "InvariantChecker.afterTimestamp",
  },
  "INV-6": {
    statement:
      "Each pool's worker-seconds equal the integral of its provisioned count rebuilt from the lifecycle records.",
    checkedIn: "InvariantChecker.atEnd",
  },
  "INV-7": {
    statement: "A completed request got exactly its output tokens, capped by max_model_len.",
    checkedIn: "InvariantChecker.ended (as the replay releases each request); atEnd",
  },
  "INV-8": {
    statement: "A request ends no earlier than it arrived.",
    checkedIn: "InvariantChecker.ended (as the replay releases each request); atEnd",
  },
} as const satisfies Record<string, { readonly statement: string; readonly checkedIn: string }>;

export type InvariantId = keyof typeof INVARIANTS;

export class InvariantViolation extends Error {
  constructor(
    readonly id: InvariantId,
    detail: string,
  ) {
    super(`internal: invariant ${id} violated: ${detail}`);
    this.name = "InvariantViolation";
  }
}

/** Whether replays check their invariants by default (tests set FLEETSIM_CHECK_INVARIANTS=1). */
export function invariantsEnabledByEnv(): boolean {
  const v = process.env.FLEETSIM_CHECK_INVARIANTS;
  return v !== undefined && v !== "" && v !== "0";
}

/** What the checker needs to see of the replay, without reaching into its private state. */
export interface InvariantView {
  readonly pools: readonly WorkerPool[];
  readonly collector: Collector;
  /** Whether a draining worker of `pool` holds nothing at all (the cluster's removal rule). */
  holdsNothing(pool: WorkerPool, w: number): boolean;
  /** Per slot of `pool`: the hand-offs reserved there whose KV is still in flight. */
  reservedBySlot(pool: WorkerPool): readonly (readonly Sequence[])[];
  /** The GPU budget (`max_num_gpus`), or null/negative for none. */
  readonly gpuBudget: number | null;
}

export class InvariantChecker {
  private readonly startingGpus: number;
  private readonly initialReplicas: number[];
  /** Timestamps between two KV audits: keeps the amortized cost to ~64 block visits per timestamp. */
  private readonly auditEvery: number;
  private sinceAudit = 0;

  constructor(private readonly view: InvariantView) {
    this.startingGpus = committedGpus(view.pools);
    this.initialReplicas = view.pools.map((p) => p.provisioned);
    let blocks = 0;
    for (const pool of view.pools) for (const e of pool.engines) blocks += e.pool.capacity;
    this.auditEvery = Math.max(1, Math.floor(blocks / 64));
  }

  /** After every effect of a timestamp. */
  afterTimestamp(t: number): void {
    for (const pool of this.view.pools) {
      if (pool.drainingCount === 0) continue;
      for (let w = 0; w < pool.workerCount; w++) {
        if (pool.state[w] === WorkerState.Draining && this.view.holdsNothing(pool, w)) {
          throw new InvariantViolation(
            "INV-5",
            `${pool.role} worker ${w} is draining but holds nothing at ${t} ms and was not removed`,
          );
        }
      }
    }
    if (++this.sinceAudit >= this.auditEvery) {
      this.sinceAudit = 0;
      this.auditKv(t);
    }
  }

  /** After a scaling tick applied its targets. */
  afterTick(t: number): void {
    const gpus = committedGpus(this.view.pools);
    const budget = this.view.gpuBudget;
    const limit =
      budget === null || budget < 0 ? Number.POSITIVE_INFINITY : Math.max(budget, this.startingGpus);
    if (gpus > limit) {
      throw new InvariantViolation(
        "INV-4",
        `${gpus} GPUs committed (ready + starting) at ${t} ms, over max(budget ${budget}, starting ${this.startingGpus})`,
      );
    }
    this.auditKv(t);
  }

  /** At the end of the run: `finished` when it ran out of events (not cut by the time cap). */
  atEnd(
    endMs: number,
    finished: boolean,
    lifecycle: readonly LifecycleOperation[],
    expectedOutput: (row: number) => number,
  ): void {
    this.auditKv(endMs);
    const c = this.view.collector;
    // The rows still live; the others were checked as they were released (`ended`).
    for (let r = c.window.freed; r < c.window.read; r++) {
      if (Number.isNaN(c.arrivalOf(r))) continue;
      if (c.statusOf(r) === Terminal.None) {
        if (finished)
          throw new InvariantViolation("INV-1", `request ${r} arrived but never reached a terminal state`);
        continue;
      }
      this.ended(r, expectedOutput(r));
    }
    for (const pool of this.view.pools) {
      if (finished) {
        for (const e of pool.engines) {
          if (e.pool.activeBlocks !== 0) {
            throw new InvariantViolation(
              "INV-2",
              `${pool.role} pool holds ${e.pool.activeBlocks} KV blocks after the run`,
            );
          }
        }
      }
    }
    this.checkWorkerSeconds(endMs, lifecycle);
  }

  /** A terminal request (still in the collector's window) that should have got `expectedOutput` tokens. */
  ended(row: number, expectedOutput: number): void {
    const c = this.view.collector;
    const i = row & c.mask;
    if (c.terminal[i] < c.arrival[i])
      throw new InvariantViolation("INV-8", `request ${row} ended before it arrived`);
    if (c.status[i] === Terminal.Completed && c.tokens[i] !== expectedOutput) {
      throw new InvariantViolation(
        "INV-7",
        `request ${row} completed with ${c.tokens[i]} of ${expectedOutput} output tokens`,
      );
    }
  }

  private auditKv(t: number): void {
    for (const pool of this.view.pools) {
      const engines = pool.engines;
      const reserved = this.view.reservedBySlot(pool);
      for (let slot = 0; slot < engines.length; slot++) {
        // A removed worker's engines stay in the list (stable ids) but can hold nothing new.
        if (!pool.isProvisioned(pool.workerOf(slot))) continue;
        const problem = engines[slot].auditKv(reserved[slot] ?? []);
        if (problem !== null)
          throw new InvariantViolation("INV-2", `${pool.role} slot ${slot} at ${t} ms: ${problem}`);
      }
    }
  }

  /** Worker-seconds of each pool = ∫ provisioned count dt, rebuilt from the lifecycle records alone. */
  private checkWorkerSeconds(endMs: number, lifecycle: readonly LifecycleOperation[]): void {
    const pools = this.view.pools;
    for (let p = 0; p < pools.length; p++) {
      const pool = pools[p];
      const name = poolName(pool);
      let count = this.initialReplicas[p];
      let since = 0;
      let integralMs = 0;
      for (const op of lifecycle) {
        if (op.pool !== name) continue;
        if (op.at_ms < since)
          throw new InvariantViolation("INV-6", `lifecycle records of ${name} go back in time`);
        integralMs += count * (op.at_ms - since);
        since = op.at_ms;
        for (const tr of op.transitions) {
          if (tr.transition === "worker_starting") count++;
          else if (tr.transition === "worker_ready" && op.cause === "scale_up") count++;
          else if (tr.transition === "worker_removed") count--;
        }
        if (count < 0)
          throw new InvariantViolation(
            "INV-6",
            `lifecycle records of ${name} remove more workers than exist`,
          );
      }
      integralMs += count * (endMs - since);
      if (count !== pool.provisioned) {
        throw new InvariantViolation(
          "INV-6",
          `${name}: lifecycle records end at ${count} workers, the pool has ${pool.provisioned}`,
        );
      }
      const fromRecords = integralMs / 1000;
      if (Math.abs(fromRecords - pool.workerSeconds) > 1e-6 * Math.max(1, fromRecords)) {
        throw new InvariantViolation(
          "INV-6",
          `${name}: ${pool.workerSeconds} worker-seconds accrued, lifecycle records give ${fromRecords}`,
        );
      }
    }
  }
}

/** GPUs of ready and starting workers: what the Planner's budget math counts. */
function committedGpus(pools: readonly WorkerPool[]): number {
  let gpus = 0;
  for (const pool of pools) gpus += pool.nonDraining * pool.spec.gpusPerWorker;
  return gpus;
}
