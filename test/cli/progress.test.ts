import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.js";
import {
  ProgressBar,
  type ProgressTerminal,
  progressWanted,
  type RunExtent,
  renderProgressLine,
  runExtent,
} from "../../src/cli/progress.js";
import type { RequestTable } from "../../src/traffic/requests.js";
import { tableInfo } from "../../src/traffic/tableSource.js";
import { loadYaml, RUNNABLE_ENGINE, tempDir } from "../helpers/configHelpers.js";
import { configFile, syntheticTraffic } from "../helpers/configYaml.js";

const CLEAR_LINE = "\r\x1b[K";

describe("renderProgressLine", () => {
  const extent: RunExtent = { requests: 12_031, simulatedMs: 3_536_000, estimated: true };

  it("shows the bar, percent, simulated time against an estimated total, requests and speed", () => {
    const line = renderProgressLine({ simulatedMs: 1_768_000, wallMs: 2_000, done: 6_100, extent }, 100);
    expect(line).toContain(" 50%");
    expect(line).toContain("sim 0:29:28 / ≈0:58:56");
    expect(line).toContain("6,100/12,031 req");
    expect(line).toContain("884× real time");
    expect(line.startsWith("▕")).toBe(true);
    expect(line.length).toBeLessThanOrEqual(100);
  });

  it("an exact total (the virtual-time cap) has no ≈; short times are in seconds", () => {
    const capped: RunExtent = { requests: 10, simulatedMs: 30_000, estimated: false };
    const line = renderProgressLine({ simulatedMs: 7_500, wallMs: 500, done: 2, extent: capped }, 100);
    expect(line).toContain("sim 7.5 s / 30.0 s");
    expect(line).toContain(" 25%");
    expect(line).toContain("15× real time");
  });

  it("without a known total (closed loop) the fraction is requests done", () => {
    const closed: RunExtent = { requests: 200, simulatedMs: null, estimated: true };
    const line = renderProgressLine({ simulatedMs: 5_000, wallMs: 1_000, done: 50, extent: closed }, 100);
    expect(line).toContain(" 25%");
    expect(line).toContain("sim 5.0 s  50/200 req");
  });

  it("never shows 100% past an estimated end while requests still drain", () => {
    const line = renderProgressLine({ simulatedMs: 4_000_000, wallMs: 1_000, done: 12_000, extent }, 100);
    expect(line).toContain(" 99%");
  });

  it("an overloaded run draining past the last arrival is as far along as its requests done", () => {
    // Twice the last arrival's time, a quarter of the requests done: 25%, not 99%.
    const line = renderProgressLine({ simulatedMs: 7_072_000, wallMs: 1_000, done: 3_008, extent }, 100);
    expect(line).toContain(" 25%");
    // Before the last arrival, time leads unless the requests done lag behind it.
    const early = renderProgressLine({ simulatedMs: 353_600, wallMs: 1_000, done: 3_008, extent }, 100);
    expect(early).toContain(" 10%");
  });

  it("a capped run is as far along as the cap or its requests done, whichever is nearer its end", () => {
    const capped: RunExtent = { requests: 100, simulatedMs: 60_000, estimated: false };
    expect(renderProgressLine({ simulatedMs: 15_000, wallMs: 1, done: 10, extent: capped }, 100)).toContain(
      " 25%",
    );
    expect(renderProgressLine({ simulatedMs: 15_000, wallMs: 1, done: 80, extent: capped }, 100)).toContain(
      " 80%",
    );
  });

  it("drops the bar on a narrow terminal and never exceeds the width", () => {
    const line = renderProgressLine({ simulatedMs: 1_000, wallMs: 1_000, done: 1, extent }, 40);
    expect(line.length).toBeLessThanOrEqual(40);
    expect(line).not.toContain("▕");
  });
});

describe("runExtent", () => {
  const table = (timestamps: number[]) => {
    const spec = loadYaml(
      `traffic:\n  source: {type: synthetic}\n  load: {type: constant_rate, requests_per_second: 10}\n  stop: {requests: ${timestamps.length}}\n${RUNNABLE_ENGINE}`,
    );
    return { spec, table: fakeTable(timestamps) };
  };

  it("open loop: the last arrival, marked as an estimate", () => {
    const { spec, table: t } = table([0, 100, 900]);
    expect(runExtent(spec, t)).toEqual({ requests: 3, simulatedMs: 900, estimated: true });
  });

  it("closed loop: no simulated total", () => {
    const spec = loadYaml(`traffic:\n  stop: {requests: 3}\n${RUNNABLE_ENGINE}`);
    expect(runExtent(spec, fakeTable([Number.NaN, Number.NaN, Number.NaN]))).toEqual({
      requests: 3,
      simulatedMs: null,
      estimated: true,
    });
  });
});

/** The workload of a table with these first-turn timestamps (one request per session). */
function fakeTable(timestamps: number[]) {
  const n = timestamps.length;
  const table = {
    count: n,
    timestampMs: Float64Array.from(timestamps),
    inputLength: new Int32Array(n),
    outputLength: new Int32Array(n),
    nextTurnRow: new Int32Array(n).fill(-1),
    sessionCount: n,
    sessionFirstRow: Int32Array.from(timestamps.map((_, i) => i)),
  } as unknown as RequestTable;
  return tableInfo(table);
}

describe("progressWanted", () => {
  const tty: ProgressTerminal = { isTTY: true, write: () => true };
  const pipe: ProgressTerminal = { isTTY: false, write: () => true };
  it("auto: only on a TTY and not with --format json; bar and none force it", () => {
    expect(progressWanted("auto", tty, "table")).toBe(true);
    expect(progressWanted("auto", pipe, "table")).toBe(false);
    expect(progressWanted("auto", tty, "json")).toBe(false);
    expect(progressWanted("bar", pipe, "json")).toBe(true);
    expect(progressWanted("none", tty, "table")).toBe(false);
  });
});

describe("ProgressBar timing", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a terminal that reports 0 columns (unknown width) gets an 80-column line, not a stub", () => {
    vi.useFakeTimers();
    const writes: string[] = [];
    const source = { virtualTimeMs: 500, collector: { terminated: 0 } };
    const bar = new ProgressBar(
      { isTTY: true, columns: 0, write: (s: string) => writes.push(s) },
      { requests: 4, simulatedMs: 1000, estimated: false },
      { delayMs: 0, intervalMs: 100 },
    ).start(source);
    vi.advanceTimersByTime(150);
    bar.stop();
    const line = writes[0].slice(CLEAR_LINE.length);
    expect(line).toContain("0/4 req");
    expect(line.length).toBeGreaterThan(40);
    expect(line.length).toBeLessThanOrEqual(79);
  });

  it("draws nothing before the delay, redraws on its interval, and stop() erases the line", () => {
    vi.useFakeTimers();
    const writes: string[] = [];
    const source = { virtualTimeMs: 0, collector: { terminated: 0 } };
    const bar = new ProgressBar(
      { isTTY: true, columns: 100, write: (s: string) => writes.push(s) },
      { requests: 4, simulatedMs: 1000, estimated: false },
      { delayMs: 1000, intervalMs: 100 },
    ).start(source);
    vi.advanceTimersByTime(900);
    expect(writes).toEqual([]);
    source.virtualTimeMs = 500;
    source.collector.terminated = 2;
    vi.advanceTimersByTime(200);
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.at(-1)).toContain(" 50%");
    expect(writes.at(-1)).toContain("2/4 req");
    const drawn = writes.length;
    vi.advanceTimersByTime(1000);
    expect(writes.length).toBeGreaterThanOrEqual(drawn + 9); // ~10 redraws per second, no more
    expect(writes.length).toBeLessThanOrEqual(drawn + 11);
    bar.stop();
    expect(writes.at(-1)).toBe(CLEAR_LINE);
    const final = writes.length;
    vi.advanceTimersByTime(1000);
    bar.stop();
    expect(writes.length).toBe(final);
  });
});

/**
 * A synthetic run long enough for the replay to yield to the event loop several times (its
 * replay takes ~0.4 s here: ~8 yields of 50 ms), which is when the bar's timer gets to draw.
 */
function longProject(): { config: string; out: string } {
  const dir = tempDir();
  const { config } = configFile(
    syntheticTraffic("{type: poisson, requests_per_second: 400}", "{requests: 24000}", [256, 128]) +
      RUNNABLE_ENGINE.replace("kv_cache:", "parallelism: {replicas: 4}\n      kv_cache:"),
    { dir },
  );
  return { config, out: join(dir, "out") };
}

/** Runs predict in-process with a fake terminal on stderr; every write in one ordered log. */
async function predictWithTerminal(isTTY: boolean, ...extra: string[]) {
  const p = longProject();
  const log: { to: "out" | "err" | "tty"; text: string }[] = [];
  const code = await runCli(
    ["predict", "-c", p.config, "--output-dir", p.out, ...extra],
    { out: (text) => log.push({ to: "out", text }), err: (text) => log.push({ to: "err", text }) },
    {
      progress: {
        terminal: { isTTY, columns: 120, write: (text: string) => log.push({ to: "tty", text }) },
        delayMs: 0,
        intervalMs: 5,
      },
    },
  );
  return { code, log, tty: log.filter((e) => e.to === "tty").map((e) => e.text) };
}

describe("fleetsim predict progress bar", () => {
  it("on a TTY: drawn during the run, erased before the table is printed", async () => {
    const { code, log, tty } = await predictWithTerminal(true);
    expect(code).toBe(0);
    const bars = tty.filter((t) => t.includes("req"));
    expect(bars.length).toBeGreaterThan(0);
    expect(bars.at(-1)).toMatch(/sim .* \/ ≈.*\/24,000 req .*× real time/);
    const firstOut = log.findIndex((e) => e.to === "out");
    const lastTty = log.map((e) => e.to).lastIndexOf("tty");
    expect(lastTty).toBeLessThan(firstOut);
    expect(log[lastTty].text).toBe(CLEAR_LINE);
    expect(log[firstOut].text).toContain("NVIDIA AIPerf | LLM Metrics");
  });

  it("nothing on a non-TTY stderr", async () => {
    const { code, tty } = await predictWithTerminal(false);
    expect(code).toBe(0);
    expect(tty).toEqual([]);
  });

  it("nothing with --format json, even on a TTY", async () => {
    const { code, tty, log } = await predictWithTerminal(true, "--format", "json");
    expect(code).toBe(0);
    expect(tty).toEqual([]);
    expect(JSON.parse(log.find((e) => e.to === "out")?.text ?? "").completed_requests).toBe(24000);
  });

  it("--progress none turns it off on a TTY; --progress bar forces it off a TTY", async () => {
    expect((await predictWithTerminal(true, "--progress", "none")).tty).toEqual([]);
    const forced = await predictWithTerminal(false, "--progress", "bar");
    expect(forced.tty.some((t) => t.includes("req"))).toBe(true);
    expect(forced.tty.at(-1)).toBe(CLEAR_LINE);
  });

  it("the bar is erased when the run stops early (resource_limited, exit 3) before the error is printed", async () => {
    const p = longProject();
    const log: { to: "err" | "tty"; text: string }[] = [];
    const drawn = () => log.some((e) => e.to === "tty" && e.text.includes("req"));
    const code = await runCli(
      ["predict", "-c", p.config, "--output-dir", p.out],
      { out: () => {}, err: (text) => log.push({ to: "err", text }) },
      {
        progress: {
          terminal: { isTTY: true, write: (text: string) => log.push({ to: "tty", text }) },
          delayMs: 0,
          intervalMs: 5,
        },
        // The host "runs out of memory" once the bar is on screen: the replay stops mid-run.
        resources: { sampleIntervalMs: 5, availableMemory: () => (drawn() ? 0 : 1e15) },
      },
    );
    expect(code).toBe(3);
    expect(drawn()).toBe(true);
    const lastTty = log.map((e) => e.to).lastIndexOf("tty");
    expect(log[lastTty].text).toBe(CLEAR_LINE);
    const error = log.findIndex((e) => e.to === "err" && e.text.includes("resource_limited"));
    expect(error).toBeGreaterThan(lastTty);
  });
});
