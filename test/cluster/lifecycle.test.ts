/**
 * The worker lifecycle of one pool (src/cluster/lifecycle.ts) without a replay around it:
 * scale-up starts workers (ready at once without a startup delay), scale-down cancels starting
 * workers before it drains ready ones, highest id first in both, removes a drained worker that
 * holds nothing at once, and the lifecycle log records only when a scaling policy runs.
 */
import { describe, expect, it } from "vitest";
import { LifecycleLog, scaleDown, scaleUp } from "../../src/cluster/lifecycle.js";
import { WorkerPool, WorkerState } from "../../src/cluster/workerPool.js";
import type { TimingModel } from "../../src/timing/timingModel.js";
import { role } from "../helpers/specs.js";

const TIMING: TimingModel = { prefillMs: () => 1, decodeMs: () => 1, passMs: () => 1 };

function pool(replicas: number, startupSeconds: number): WorkerPool {
  return new WorkerPool(
    0,
    "aggregated",
    role({ replicas, startupSeconds }),
    TIMING,
    { policy: "round_robin" },
    { onAdmit() {} },
  );
}

describe("cluster lifecycle", () => {
  it("scale-up without a startup delay makes workers ready at once and schedules nothing", () => {
    const p = pool(1, 0);
    const starting: number[] = [];
    expect(scaleUp(p, 3, 10, (w) => starting.push(w))).toEqual([
      [1, "worker_ready"],
      [2, "worker_ready"],
    ]);
    expect(starting).toEqual([]);
    expect(p.readyCount).toBe(3);
  });

  it("scale-up with a startup delay leaves workers starting and asks for their ready time", () => {
    const p = pool(1, 2);
    const starting: [number, number][] = [];
    expect(scaleUp(p, 3, 10, (w, at) => starting.push([w, at]))).toEqual([
      [1, "worker_starting"],
      [2, "worker_starting"],
    ]);
    expect(starting).toEqual([
      [1, 2010],
      [2, 2010],
    ]);
    expect([p.readyCount, p.startingCount, p.nonDraining]).toEqual([1, 2, 3]);
  });

  it("scale-down cancels starting workers first, highest id first, then drains the highest-id ready ones", () => {
    const p = pool(3, 5); // workers 0-2 ready (initial replicas)
    scaleUp(p, 5, 0, () => {}); // workers 3, 4 starting
    const busy = new Set([1, 2]);
    const transitions = scaleDown(p, 1, 100, { holdsNothing: (_p, w) => !busy.has(w) });
    expect(transitions).toEqual([
      [4, "worker_removed"],
      [3, "worker_removed"],
      [2, "worker_draining"],
      [1, "worker_draining"],
    ]);
    expect([0, 1, 2, 3, 4].map((w) => p.state[w])).toEqual([
      WorkerState.Ready,
      WorkerState.Draining,
      WorkerState.Draining,
      WorkerState.Removed,
      WorkerState.Removed,
    ]);
  });

  it("a drained worker that holds nothing is removed as it starts draining", () => {
    const p = pool(2, 0);
    expect(scaleDown(p, 1, 100, { holdsNothing: () => true })).toEqual([
      [1, "worker_draining"],
      [1, "worker_removed"],
    ]);
    expect(p.provisioned).toBe(1);
    // ∫ provisioned dt: 2 workers for 100 ms, then 1 worker for 100 ms.
    p.accrue(200);
    expect(p.workerSeconds).toBeCloseTo(0.3, 12);
  });

  it("the lifecycle log records only when enabled, and never an empty operation", () => {
    const p = pool(1, 0);
    const on = new LifecycleLog(true);
    on.record(p, 5, "scale_up", [[1, "worker_ready"]]);
    on.record(p, 6, "scale_down", []);
    expect(on.operations).toEqual([
      {
        at_ms: 5,
        pool: "agg",
        cause: "scale_up",
        transitions: [{ worker_id: 1, transition: "worker_ready", at_ms: 5 }],
      },
    ]);
    const off = new LifecycleLog(false);
    off.record(p, 5, "scale_up", [[1, "worker_ready"]]);
    expect(off.operations).toEqual([]);
  });
});
