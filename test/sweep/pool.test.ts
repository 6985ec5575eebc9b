/**
 * A sweep pool with the test tasks (test/helpers/sweepTasks/): workers kept between sweeps and let
 * go on close, the sweep's shared value sent once to each worker, timeouts that cost only the
 * workers running the sweep's jobs.
 */
import { describe, expect, it } from "vitest";
import type { EchoInput, EchoOutput } from "../helpers/sweepTasks/echo.js";
import { alive, testPool, okValues as values } from "../helpers/sweepTasks/index.js";
import type { SleepInput, SleepOutput } from "../helpers/sweepTasks/sleep.js";

const echoes = (n: number): EchoInput[] => Array.from({ length: n }, (_, i) => ({ value: i }));
const OPTS = { maxParallel: 2, timeoutMs: 30_000 };

describe("SweepPool", () => {
  it("keeps its workers between sweeps, starts more only when a sweep wants more, and lets all go on close", async () => {
    const pool = testPool("echo");
    const a = await pool.sweep<EchoOutput>(echoes(4), OPTS);
    const b = await pool.sweep<EchoOutput>(echoes(3), OPTS);
    expect(a.processesStarted).toBe(2);
    expect(b.processesStarted).toBe(0);
    expect([...b.pids].sort()).toEqual([...a.pids].sort());
    for (const v of values(b.results)) expect(a.pids).toContain(v.pid);
    expect(values(b.results).map((v) => v.value)).toEqual([0, 1, 2]);
    const c = await pool.sweep<EchoOutput>(echoes(3), { ...OPTS, maxParallel: 3 });
    expect(c.processesStarted).toBe(1);
    expect(c.pids).toHaveLength(3);
    expect(c.pids.filter(alive)).toHaveLength(3);
    expect(pool.size).toBe(3);
    await pool.close();
    expect(pool.size).toBe(0);
    expect(c.pids.filter(alive)).toEqual([]);
  });

  it("sends a sweep's shared value once to each of its workers; a sweep without one passes undefined", async () => {
    const pool = testPool("echo");
    try {
      const first = { window: 0, rows: new Float64Array([0.5, 1.5]), ids: ["a", null] };
      const a = await pool.sweep<EchoOutput>(echoes(6), { ...OPTS, shared: first });
      expect(a.sharedBytes).toBeGreaterThan(0);
      for (const v of values(a.results)) {
        expect(v.shared).toStrictEqual(first);
        // Deserialized once per worker: every job a worker ran saw the same (its first) object.
        expect(v.sharedReceipts).toBe(1);
      }
      const b = await pool.sweep<EchoOutput>(echoes(4), { ...OPTS, shared: { window: 1 } });
      for (const v of values(b.results)) {
        expect(v.shared).toStrictEqual({ window: 1 });
        expect(v.sharedReceipts).toBe(2);
      }
      const c = await pool.sweep<EchoOutput>(echoes(2), OPTS);
      expect(c.sharedBytes).toBe(0);
      for (const v of values(c.results)) expect(v.shared).toBeUndefined();
    } finally {
      await pool.close();
    }
  });

  it("fails every job of a sweep whose shared value is not plain data, starting nothing", async () => {
    const pool = testPool("echo");
    try {
      const out = await pool.sweep<EchoOutput>(echoes(2), { ...OPTS, shared: { m: new Map() } });
      expect(out.results).toEqual([
        { status: "failed", error: "the shared input is not plain data at $.m (an instance of Map)" },
        { status: "failed", error: "the shared input is not plain data at $.m (an instance of Map)" },
      ]);
      expect(out.processesStarted).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it("a timeout kills only the workers running its jobs; the next sweep replaces them", async () => {
    const pool = testPool("sleep");
    try {
      // Two workers started first, so that the quick job's worker is up well before the timeout.
      const warm = await pool.sweep<SleepOutput>([{ ms: 0 }, { ms: 0 }], {
        maxParallel: 2,
        timeoutMs: 30_000,
      });
      expect(warm.processesStarted).toBe(2);
      const jobs: SleepInput[] = [{ ms: 60_000, busy: true }, { ms: 0 }];
      const a = await pool.sweep<SleepOutput>(jobs, { maxParallel: 2, timeoutMs: 3_000 });
      expect(a.processesStarted).toBe(0);
      expect(a.results.map((r) => r.status)).toEqual(["timeout", "ok"]);
      expect(a.timedOut).toBe(true);
      // The runaway's worker is gone; the one that finished waits in the pool.
      expect(a.pids.filter(alive)).toHaveLength(1);
      expect(pool.size).toBe(1);
      const b = await pool.sweep<SleepOutput>([{ ms: 0 }, { ms: 0 }], { maxParallel: 2, timeoutMs: 30_000 });
      expect(b.results.map((r) => r.status)).toEqual(["ok", "ok"]);
      expect(b.processesStarted).toBe(1);
      expect(b.timedOut).toBe(false);
    } finally {
      await pool.close();
    }
    expect(pool.size).toBe(0);
  });

  it("close stops a sweep in flight; a closed pool and a second concurrent sweep are refused", async () => {
    const pool = testPool("sleep");
    const running = pool.sweep<SleepOutput>([{ ms: 60_000 }], { maxParallel: 1, timeoutMs: 60_000 });
    expect(() => pool.sweep([{ ms: 0 }], { maxParallel: 1, timeoutMs: 1_000 })).toThrow(/already running/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const t0 = performance.now();
    await pool.close();
    const out = await running;
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(out.results).toEqual([{ status: "timeout" }]);
    expect(out.pids.filter(alive)).toEqual([]);
    expect(() => pool.sweep([{ ms: 0 }], { maxParallel: 1, timeoutMs: 1_000 })).toThrow(/closed/);
  });
});
