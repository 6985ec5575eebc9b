/**
 * The progress line during retune sweeps: while a window's sweep runs (the virtual clock stands
 * still), it shows the window and its candidates, `retune window 1/3: 2 candidates`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { expectedRetuneWindows, renderProgressLine } from "../../src/cli/progress.js";
import { loadYaml, RUNNABLE_ENGINE, tempDir } from "../helpers/configHelpers.js";
import { dynamoTrace } from "../helpers/dynamoTraces.js";
import { retuneYaml } from "../helpers/retuneProject.js";

const RETUNE_YAML = retuneYaml(
  RUNNABLE_ENGINE.replace("kv_cache:", "parallelism: {replicas: 3}\n      kv_cache:"),
  `interval_seconds: 30
  grace_seconds: 5
  max_parallel: 1
  router: {overlap_score_credit: {choices: [0.0, 0.5, 1.0]}, prefill_load_scale: 1.0, temperature: 0.0}`,
  "evaluation:\n  sla: {ttft_ms: 1500, itl_ms: 50}\n",
);

describe("renderProgressLine with retune", () => {
  const extent = { requests: 1_834, simulatedMs: 110_000, estimated: true };

  /** The 140-column progress line at `simulatedMs` with `done` requests and the retune state given. */
  const lineAt = (
    simulatedMs: number,
    done: number,
    retune: { sweep: { windowIndex: number; candidates: number } | null; windows: number },
  ): string => renderProgressLine({ simulatedMs, wallMs: 2_000, done, extent, retune }, 140);

  it("a sweep in flight: its window of the expected ones and its candidates", () => {
    const line = lineAt(35_000, 500, { sweep: { windowIndex: 0, candidates: 6 }, windows: 3 });
    expect(line).toContain("retune window 1/3: 6 candidates");
    expect(line).toContain("500/1,834 req");
  });

  it("between sweeps nothing is added; a window past the estimate raises the count", () => {
    const between = lineAt(50_000, 800, { sweep: null, windows: 3 });
    expect(between).not.toContain("retune");
    const late = lineAt(125_000, 1_800, { sweep: { windowIndex: 3, candidates: 1 }, windows: 3 });
    expect(late).toContain("retune window 4/4: 1 candidate ");
  });

  it("expectedRetuneWindows: windows whose launch tick (end + grace) comes by the last arrival", () => {
    const spec = loadYaml(RETUNE_YAML, { files: { "trace.jsonl": dynamoTrace(110, 60) } });
    // launches at 35, 65, 95 s; the next one (125 s) is past the last arrival (≈110 s)
    expect(expectedRetuneWindows(spec, { requests: 1, simulatedMs: 110_000, estimated: true })).toBe(3);
    expect(expectedRetuneWindows(spec, { requests: 1, simulatedMs: 34_000, estimated: true })).toBe(0);
    expect(expectedRetuneWindows(spec, { requests: 1, simulatedMs: null, estimated: true })).toBe(0);
    const noRetune = loadYaml(
      `traffic:\n  source: {type: synthetic}\n  load: {type: concurrency, concurrency: 2}\n  stop: {requests: 5}\n${RUNNABLE_ENGINE}`,
    );
    expect(expectedRetuneWindows(noRetune, { requests: 5, simulatedMs: 1_000, estimated: true })).toBe(0);
  });
});

describe("fleetsim predict with retune on a terminal", () => {
  it("the bar shows each sweep's window and candidates while it runs", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "trace.jsonl"), dynamoTrace(110, 60));
    const config = join(dir, "prediction.yaml");
    writeFileSync(config, RETUNE_YAML);
    const out = join(dir, "out");
    const tty: string[] = [];
    const code = await runCli(
      ["predict", "--stack", "dynamo", "-c", config, "--output-dir", out],
      { out: () => {}, err: () => {} },
      {
        progress: {
          terminal: { isTTY: true, columns: 160, write: (text: string) => tty.push(text) },
          delayMs: 0,
          intervalMs: 5,
        },
      },
    );
    expect(code).toBe(0);
    const events = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")).planner.retune_events as {
      window_index: number;
      num_candidates: number;
    }[];
    expect(events).toHaveLength(3);
    const seen = new Map<number, string>();
    for (const line of tty) {
      const m = /retune window (\d+)\/(\d+): (\d+) candidates?/.exec(line);
      if (m !== null) seen.set(Number(m[1]), `${m[2]}:${m[3]}`);
    }
    // Every sweep takes a process start-up at least: each is on screen while it runs.
    expect([...seen.keys()].sort()).toEqual([1, 2, 3]);
    for (const e of events) expect(seen.get(e.window_index + 1)).toBe(`3:${e.num_candidates}`);
    expect(tty.at(-1)).toBe("\r\x1b[K");
  }, 120_000);
});
