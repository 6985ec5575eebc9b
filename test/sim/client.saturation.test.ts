import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CLIENT, type RunSpec } from "../../src/config/runSpec.js";
import { judgeSaturation, MIN_BUCKETS } from "../../src/metrics/saturation.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { renderFleetBlock } from "../../src/report/fleetBlock.js";
import { buildPrediction } from "../../src/report/prediction.js";
import { Replay } from "../../src/sim/replay.js";
import { cli, setFlags } from "../helpers/cli.js";
import { configFile, engineYaml, fixedTiming, syntheticTraffic } from "../helpers/configYaml.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

describe("judgeSaturation", () => {
  it("a flat backlog is not saturated, a growing one is, a short run is not judged", () => {
    const n = 40;
    const arrivals = new Array(n).fill(50);
    // Keeps up: serves what arrives, one bucket late.
    const keepsUp = arrivals.map((_, k) => (k === 0 ? 0 : 50));
    const light = judgeSaturation(1000, arrivals, keepsUp);
    expect(light).toMatchObject({ judged: true, saturated: false, windowMs: 10_000 });
    expect(light.backlogAtLastArrival).toBe(50);
    // Serves 40 of 50 a bucket: +10 a bucket, +100 over the 10-bucket window (> 5% of 500 and > 10).
    const short = judgeSaturation(1000, arrivals, new Array(n).fill(40));
    expect(short.saturated).toBe(true);
    expect(short.growth).toBeCloseTo(100, 9);
    expect(short.backlogAtLastArrival).toBe(400);
    // Too few buckets with arrivals to tell.
    const tiny = judgeSaturation(
      1000,
      arrivals.slice(0, MIN_BUCKETS - 1),
      new Array(MIN_BUCKETS - 1).fill(0),
    );
    expect(tiny).toMatchObject({ judged: false, saturated: false, windowMs: 0, growth: 0 });
  });

  it("noise in a light run does not fire it; growth under 10 requests never does", () => {
    const arrivals = [3, 0, 5, 1, 0, 4, 2, 6, 0, 1, 3, 2, 5, 0, 1, 2];
    const served = [0, 3, 0, 5, 1, 0, 4, 2, 6, 0, 1, 3, 2, 5, 0, 1];
    expect(judgeSaturation(1000, arrivals, served).saturated).toBe(false);
    const slow = arrivals.map(() => 1);
    expect(
      judgeSaturation(
        1000,
        slow,
        slow.map(() => 0),
      ).saturated,
    ).toBe(false); // +4 over the window
  });
});

describe("judgeSaturation with client timeouts", () => {
  it("a queue that timeouts hold flat is saturated when the clients abandon more than 5 % of the stretch's arrivals", () => {
    const n = 16;
    const arrivals = new Array(n).fill(40);
    // Served at the arrival rate (admitted, then abandoned in service): the backlog stays flat.
    const served = new Array(n).fill(40);
    const flat = judgeSaturation(1000, arrivals, served);
    expect(flat.saturated).toBe(false);
    // The clients gave up on 30 of every 40 arrivals: 120 of 160 in the judged stretch.
    const abandoned = new Array(n).fill(30);
    const shed = judgeSaturation(1000, arrivals, served, abandoned);
    expect(shed.growth).toBeCloseTo(0, 9);
    expect(shed.abandoned).toBe(120);
    expect(shed.saturated).toBe(true);
    // A few timeouts (5 % of 160 = 8, and at least 10) are not saturation.
    expect(judgeSaturation(1000, arrivals, served, new Array(n).fill(2)).saturated).toBe(false);
  });
});

async function summaryOf(spec: RunSpec) {
  const table = await loadWorkload(spec);
  const result = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
    checkInvariants: true,
  }).runSync();
  return buildPrediction(spec, result, false);
}

/** `count` requests every `gapMs` on one worker with one sequence slot (a request takes 16 ms). */
const traffic = (count: number, gapMs: number) =>
  traceSpec(
    writeTrace(
      Array.from({ length: count }, (_, i) => ({
        timestamp: i * gapMs,
        input_length: 8,
        output_length: 3,
        hash_ids: [i, i + 1],
      })),
    ),
    { role: { maxSequences: 1 } },
  );

describe("saturated in prediction.json", () => {
  it("a light run is judged and not saturated", async () => {
    const p = await summaryOf(traffic(300, 50));
    expect(p.summary.saturated).toBe(0);
    expect(p.summary.saturation_window_ms).toBeGreaterThan(0);
    expect(Math.abs(p.summary.saturation_backlog_growth)).toBeLessThan(2);
    expect(renderFleetBlock(JSON.parse(JSON.stringify(p)))).not.toMatch(/saturated/);
  });

  it("a short healthy run whose requests are long in service is not saturated (in service is not queued)", async () => {
    // 60 requests 20 ms apart, each 400 output tokens (≈ 0.8 s in service): in-flight requests
    // ramp from 0 to ~40 over the run, but the queue stays empty.
    const spec = traceSpec(
      writeTrace(
        Array.from({ length: 60 }, (_, i) => ({
          timestamp: i * 20,
          input_length: 8,
          output_length: 400,
          hash_ids: [1000 + 2 * i, 1001 + 2 * i],
        })),
      ),
      { role: { maxSequences: 256, numGpuBlocks: 100_000 } },
    );
    const p = await summaryOf(spec);
    expect(p.summary.saturation_window_ms).toBeGreaterThan(0); // judged
    expect(p.summary.saturated).toBe(0);
    expect(p.summary.backlog_at_last_arrival).toBe(0);
  });

  it("an overloaded run is saturated, and says by how much", async () => {
    const p = await summaryOf(traffic(300, 8)); // 125 req/s offered, 62.5 served
    expect(p.summary.saturated).toBe(1);
    expect(p.summary.saturation_backlog_growth).toBeGreaterThan(30);
    expect(p.summary.backlog_at_last_arrival).toBeGreaterThan(100);
    expect(renderFleetBlock(JSON.parse(JSON.stringify(p)))).toMatch(/Note: the run is saturated/);
  });

  it("requests dropped by a client timeout stay in the backlog: an overloaded fleet is still flagged", async () => {
    const base = traffic(300, 8);
    const p = await summaryOf({ ...base, client: { ...DEFAULT_CLIENT, timeoutMs: 200 } });
    expect(p.summary.timed_out_requests).toBeGreaterThan(50);
    expect(p.summary.saturated).toBe(1);
  });

  it("predict warns on stderr about a saturated run and timed-out requests", async () => {
    const { dir, config } = configFile(
      `${syntheticTraffic("{type: constant_rate, requests_per_second: 200}", "{requests: 600}")}${engineYaml({
        scheduler: "{max_sequences: 1}",
        blocks: 4096,
        timing: fixedTiming(10, 2),
      })}client: {timeout_seconds: 1}
`,
    );
    const r = await cli("predict", "-c", config, "--output-dir", join(dir, "out"), "--progress", "none");
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/fleetsim: warning: \d+ of 600 requests timed out \(client\.timeout_seconds = 1\)/);
    expect(r.err).toMatch(/fleetsim: warning: the run is saturated: the backlog grew by \d+ requests/);
    expect(r.out).toMatch(
      /Not Completed: [\d,]+ of 600 requests \(.*; [\d,]+ timed out by the client \(client\.timeout_seconds\)/,
    );
    expect(r.out).toMatch(/Note: the run is saturated/);
    const light = await cli(
      "predict",
      "-c",
      config,
      "--output-dir",
      join(dir, "out2"),
      "--progress",
      "none",
      ...setFlags("traffic.load.requests_per_second=5", "traffic.stop.requests=100"),
    );
    expect(light.code).toBe(0);
    expect(light.err).toBe("");
  });
});
