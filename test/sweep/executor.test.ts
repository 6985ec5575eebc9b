/**
 * The executor interface (sweep/executor.ts): the in-process executor runs a task's jobs as a
 * worker process would (same results as the pool, failures per job, `onResult` as results arrive,
 * timeouts for the jobs not started), `onResult` of the process pool, and `--executor` parsing.
 */
import { describe, expect, it } from "vitest";
import { ExecutorError, parseExecutor } from "../../src/sweep/executor.js";
import { InlineExecutor } from "../../src/sweep/inline.js";
import type { SweepResult } from "../../src/sweep/types.js";
import type { EchoInput, EchoOutput } from "../helpers/sweepTasks/echo.js";
import { TEST_TASKS, testPool } from "../helpers/sweepTasks/index.js";

const JOBS: EchoInput[] = [{ value: 1 }, { value: "two" }, { value: 3, throw: "no three" }, { value: [4] }];

describe("InlineExecutor", () => {
  it("gives the pool's results, in job order, in this process, reporting each as it finishes", async () => {
    const inline = new InlineExecutor(TEST_TASKS.echo);
    const heard: [number, SweepResult<unknown>][] = [];
    const outcome = await inline.sweep<EchoOutput>(JOBS, {
      maxParallel: 2,
      timeoutMs: 60_000,
      shared: { table: 7 },
      onResult: (i, r) => heard.push([i, r]),
    });
    const pool = testPool("echo");
    let pooled: SweepResult<EchoOutput>[];
    try {
      pooled = (
        await pool.sweep<EchoOutput>(JOBS, { maxParallel: 2, timeoutMs: 60_000, shared: { table: 7 } })
      ).results;
    } finally {
      await pool.close();
    }
    const strip = (r: SweepResult<EchoOutput>) =>
      r.status === "ok" ? { status: r.status, value: r.value.value, shared: r.value.shared } : r;
    expect(outcome.results.map(strip)).toEqual(pooled.map(strip));
    expect(outcome.results[2]).toEqual({ status: "failed", error: "no three" });
    for (const r of outcome.results) if (r.status === "ok") expect(r.value.pid).toBe(process.pid);
    expect(outcome.processesStarted).toBe(0);
    expect(heard.map(([i]) => i)).toEqual([0, 1, 2, 3]);
    expect(heard[1][1]).toEqual(outcome.results[1]);
  }, 30_000);

  it("clones the input as the IPC channel would, and refuses what is not plain data", async () => {
    const inline = new InlineExecutor(TEST_TASKS.echo);
    const input = { value: { nested: [1, 2] } };
    const { results } = await inline.sweep<EchoOutput>([input, { value: new Date(0) }], {
      maxParallel: 1,
      timeoutMs: 10_000,
    });
    expect(results[0].status === "ok" && results[0].value.value).toEqual({ nested: [1, 2] });
    expect(results[0].status === "ok" && results[0].value.value).not.toBe(input.value);
    expect(results[1]).toEqual({
      status: "failed",
      error: "job input is not plain data at $.value (an instance of Date)",
    });
  });

  it("an aborted signal leaves the jobs not started as timeouts", async () => {
    const inline = new InlineExecutor(TEST_TASKS.echo);
    const abort = new AbortController();
    const outcome = await inline.sweep<EchoOutput>(JOBS, {
      maxParallel: 1,
      timeoutMs: 10_000,
      signal: abort.signal,
      onResult: (i) => {
        if (i === 0) abort.abort();
      },
    });
    expect(outcome.results.map((r) => r.status)).toEqual(["ok", "timeout", "timeout", "timeout"]);
    expect(outcome.timedOut).toBe(true);
    await inline.close();
    await expect(inline.sweep(JOBS, { maxParallel: 1, timeoutMs: 10 })).rejects.toThrow("already closed");
  });
});

describe("SweepPool onResult", () => {
  it("hears every result once, as it arrives, failures included", async () => {
    const pool = testPool("echo");
    const heard = new Map<number, SweepResult<unknown>>();
    try {
      const { results } = await pool.sweep<EchoOutput>([...JOBS, { value: 5, exit: 3 }], {
        maxParallel: 2,
        timeoutMs: 60_000,
        onResult: (i, r) => {
          expect(heard.has(i)).toBe(false);
          heard.set(i, r);
        },
      });
      expect([...heard.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
      for (const [i, r] of heard) expect(r).toEqual(results[i]);
      expect(heard.get(4)?.status).toBe("failed");
    } finally {
      await pool.close();
    }
  }, 30_000);
});

describe("parseExecutor", () => {
  it("reads local, inline and redis URLs; refuses anything else", () => {
    expect(parseExecutor("local")).toEqual({ kind: "local" });
    expect(parseExecutor("inline")).toEqual({ kind: "inline" });
    expect(parseExecutor("redis://queue:6379")).toEqual({ kind: "redis", url: "redis://queue:6379" });
    expect(() => parseExecutor("k8s")).toThrow(ExecutorError);
    expect(() => parseExecutor("redis://")).toThrow(/names no host|not a valid URL/);
  });
});
