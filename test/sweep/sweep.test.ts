/**
 * The sweep executor with the test tasks (`echo`, `sleep`, test/helpers/sweepTasks/): result
 * order, per-job failure isolation, the process count, and that no worker outlives a sweep, timed
 * out or not.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sweep } from "../../src/pipeline/sweepTasks.js";
import { firstNonPlain } from "../../src/sweep/plainData.js";
import { workerLaunch } from "../../src/sweep/workerEntry.js";
import type { EchoInput, EchoOutput } from "../helpers/sweepTasks/echo.js";
import { alive, testRunSweep, testSweep, okValues as values } from "../helpers/sweepTasks/index.js";
import type { SleepInput, SleepOutput } from "../helpers/sweepTasks/sleep.js";

describe("runSweep", () => {
  it("returns results in job order whatever order they finish in", async () => {
    // Early jobs take longest, so completion order is roughly the reverse of job order.
    const jobs: SleepInput[] = [300, 200, 100, 0, 50, 0].map((ms) => ({ ms }));
    const out = await testSweep<SleepInput, SleepOutput>(jobs, {
      maxParallel: 3,
      timeoutMs: 30_000,
      task: "sleep",
    });
    const slept = values(out.results).map((v) => v.sleptMs);
    for (let i = 0; i < jobs.length; i++) expect(slept[i]).toBeGreaterThanOrEqual(jobs[i].ms - 1);
  });

  it("echoes structured-clone data, NaN, Infinity, undefined and typed arrays included", async () => {
    const value = { a: [1, Number.NaN, Number.POSITIVE_INFINITY], b: undefined, c: new Float64Array([0.5]) };
    const res = await testRunSweep<EchoInput, EchoOutput>([{ value }], {
      maxParallel: 1,
      timeoutMs: 30_000,
      task: "echo",
    });
    expect(values(res)[0].value).toStrictEqual(value);
  });

  it("starts min(maxParallel, jobs) processes, all gone when it resolves", async () => {
    for (const [maxParallel, n] of [
      [3, 2],
      [2, 5],
      [1, 3],
    ]) {
      const jobs: EchoInput[] = Array.from({ length: n }, (_, i) => ({ value: i }));
      const out = await testSweep<EchoInput, EchoOutput>(jobs, {
        maxParallel,
        timeoutMs: 30_000,
        task: "echo",
      });
      expect(out.processesStarted).toBe(Math.min(maxParallel, n));
      expect(out.pids).toHaveLength(out.processesStarted);
      expect(values(out.results).map((v) => v.value)).toEqual(jobs.map((j) => j.value));
      // Every job ran in one of the sweep's own workers, never in this process.
      for (const v of values(out.results)) expect(out.pids).toContain(v.pid);
      expect(out.pids.filter(alive)).toEqual([]);
      expect(out.timedOut).toBe(false);
    }
  });

  it("starts no process for no jobs", async () => {
    const out = await testSweep([], { maxParallel: 4, timeoutMs: 1_000, task: "echo" });
    expect(out).toMatchObject({ results: [], processesStarted: 0, timedOut: false });
  });

  it("isolates failures: a throwing job and a crashing worker fail alone", async () => {
    const jobs: EchoInput[] = [
      { value: 0 },
      { value: 1, throw: "candidate 1 is invalid" },
      { value: 2 },
      { value: 3, exit: 7 },
      { value: 4 },
      { value: 5 },
    ];
    const out = await testSweep<EchoInput, EchoOutput>(jobs, {
      maxParallel: 1,
      timeoutMs: 30_000,
      task: "echo",
    });
    expect(out.results.map((r) => r.status)).toEqual(["ok", "failed", "ok", "failed", "ok", "ok"]);
    expect(out.results[1]).toEqual({ status: "failed", error: "candidate 1 is invalid" });
    expect(out.results[3]).toMatchObject({ status: "failed", error: expect.stringContaining("code 7") });
    // The crash cost its worker; a replacement ran the rest.
    expect(out.processesStarted).toBe(2);
    expect(out.pids.filter(alive)).toEqual([]);
  });

  it("fails a job whose input is not plain data, without sending it", async () => {
    class Point {
      x = 1;
    }
    const jobs = [{ value: 1 }, { value: new Point() }, { value: () => 1 }];
    const res = await testRunSweep(jobs, { maxParallel: 1, timeoutMs: 30_000, task: "echo" });
    expect(res.map((r) => r.status)).toEqual(["ok", "failed", "failed"]);
    expect(res[1]).toMatchObject({ error: expect.stringContaining("$.value (an instance of Point)") });
    expect(res[2]).toMatchObject({ error: expect.stringContaining("$.value (a function)") });
  });

  it("on timeout kills every worker, runaway ones included, and reports unfinished jobs", async () => {
    const jobs: SleepInput[] = [{ ms: 0 }, { ms: 60_000, busy: true }, { ms: 60_000 }, { ms: 0 }];
    const out = await testSweep<SleepInput, SleepOutput>(jobs, {
      maxParallel: 2,
      timeoutMs: 5_000,
      task: "sleep",
    });
    expect(out.timedOut).toBe(true);
    expect(out.wallMs).toBeLessThan(15_000);
    // Job 0 finishes; one worker then takes job 2 (its next) while the other spins on job 1.
    expect(out.results.map((r) => r.status)).toEqual(["ok", "timeout", "timeout", "timeout"]);
    expect(out.pids.length).toBe(2);
    expect(out.pids.filter(alive)).toEqual([]);
  });

  it("an abort signal (Ctrl-C mid-sweep) kills every worker at once, runaway ones included", async () => {
    const jobs: SleepInput[] = [{ ms: 60_000, busy: true }, { ms: 60_000 }, { ms: 60_000 }];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1_500);
    const t0 = performance.now();
    const out = await testSweep<SleepInput, SleepOutput>(jobs, {
      maxParallel: 2,
      timeoutMs: 60_000,
      task: "sleep",
      signal: controller.signal,
    });
    expect(performance.now() - t0).toBeLessThan(8_000);
    expect(out.results.map((r) => r.status)).toEqual(["timeout", "timeout", "timeout"]);
    expect(out.pids.filter(alive)).toEqual([]);
    // Already aborted: nothing runs.
    const none = await testSweep<SleepInput, SleepOutput>([{ ms: 0 }], {
      maxParallel: 1,
      timeoutMs: 60_000,
      task: "sleep",
      signal: controller.signal,
    });
    expect(none.processesStarted).toBe(0);
    expect(none.results).toEqual([{ status: "timeout" }]);
  });

  it("with a tiny timeout every job times out and no worker survives", async () => {
    const jobs: SleepInput[] = [{ ms: 60_000, busy: true }, { ms: 60_000 }, { ms: 0 }];
    const out = await testSweep<SleepInput, SleepOutput>(jobs, {
      maxParallel: 2,
      timeoutMs: 5,
      task: "sleep",
    });
    expect(out.results).toEqual([{ status: "timeout" }, { status: "timeout" }, { status: "timeout" }]);
    expect(out.processesStarted).toBe(2);
    expect(out.pids.filter(alive)).toEqual([]);
  });

  it("rejects invalid options before starting anything", () => {
    expect(() => sweep([1], { maxParallel: 0, timeoutMs: 1_000, task: "replay" })).toThrow(/maxParallel/);
    expect(() => sweep([1], { maxParallel: 1, timeoutMs: Number.POSITIVE_INFINITY, task: "replay" })).toThrow(
      /timeoutMs/,
    );
    expect(() => sweep([1], { maxParallel: 1, timeoutMs: 1_000, task: "nope" })).toThrow(
      /unknown sweep task 'nope'/,
    );
    expect(() => testSweep([1], { maxParallel: 0, timeoutMs: 1_000, task: "echo" })).toThrow(/maxParallel/);
  });

  it("registers only real tasks in production: the test tasks are unknown to `sweep`", () => {
    expect(() => sweep([1], { maxParallel: 1, timeoutMs: 1_000, task: "echo" })).toThrow(
      "unknown sweep task 'echo' (known: replay, predict)",
    );
  });
});

describe("firstNonPlain", () => {
  it("accepts plain data and names the first violation's path", () => {
    expect(firstNonPlain({ a: [1, "x", null, { b: new Int32Array(2) }], c: Object.create(null) })).toBeNull();
    expect(firstNonPlain({ a: [1, { d: new Date(0) }] })).toBe("$.a[1].d (an instance of Date)");
    expect(firstNonPlain(new Map())).toBe("$ (an instance of Map)");
  });
});

describe("workerLaunch", () => {
  it("runs the TypeScript worker through tsx from the sources, the JavaScript one from dist", () => {
    const src = workerLaunch(
      new URL("../../src/pipeline/sweepTasks.ts", import.meta.url).href,
      "sweepWorker",
    );
    expect(src.modulePath).toBe(fileURLToPath(new URL("../../src/pipeline/sweepWorker.ts", import.meta.url)));
    expect(src.execArgv).toEqual(["--import", expect.stringMatching(/^file:.*\/node_modules\/tsx\//)]);
    const dist = workerLaunch("file:///repo/dist/pipeline/sweepTasks.js", "sweepWorker");
    expect(dist).toEqual({ modulePath: "/repo/dist/pipeline/sweepWorker.js", execArgv: [] });
  });
});
