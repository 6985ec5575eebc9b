/** `traffic.load.warmup_sessions`: accepted on a closed loop only, a positive integer, recorded in `run.traffic`. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { predict } from "../../src/api/replay.js";
import { renderHtmlReport } from "../../src/report/html/index.js";
import { cli } from "../helpers/cli.js";
import { issueAt, loadError, loadYaml, RUNNABLE_ENGINE, writeFiles } from "../helpers/configHelpers.js";
import { syntheticTraffic } from "../helpers/configYaml.js";

const SYNTHETIC =
  syntheticTraffic("{type: concurrency, concurrency: 4, warmup_sessions: 8}", "{requests: 24}", [64, 8]) +
  RUNNABLE_ENGINE;

describe("traffic.load.warmup_sessions", () => {
  it("resolves onto the closed loop's load", () => {
    expect(loadYaml(SYNTHETIC).load).toEqual({ type: "concurrency", concurrency: 4, warmupSessions: 8 });
    const plain = loadYaml(SYNTHETIC.replace(", warmup_sessions: 8", "")).load;
    expect(plain).toEqual({ type: "concurrency", concurrency: 4 });
  });

  it("is refused on an open-loop load, and must be a positive integer", () => {
    const open = loadError(
      SYNTHETIC.replace("{type: concurrency, concurrency: 4,", "{type: poisson, requests_per_second: 2,"),
    );
    expect(issueAt(open, "traffic.load").message).toBe(
      "traffic.load.type='poisson' does not accept ['warmup_sessions']",
    );
    for (const bad of ["0", "-1", "1.5"]) {
      const err = loadError(SYNTHETIC, { sets: [`traffic.load.warmup_sessions=${bad}`] });
      expect(issueAt(err, "traffic.load.warmup_sessions").message).toMatch(
        /greater than or equal to 1|integer/,
      );
    }
  });

  it("is recorded in run.traffic and delays the measured requests' start", async () => {
    const config = {
      traffic: {
        source: { type: "synthetic", input_tokens: 64, output_tokens: 8 },
        load: { type: "concurrency", concurrency: 4, warmup_sessions: 8 },
        stop: { requests: 24 },
      },
      engine: (parse(RUNNABLE_ENGINE) as { engine: unknown }).engine,
    };
    const report = await predict(config, { capturePerRequest: true });
    expect(report.run.traffic.warmup_sessions).toBe(8);
    expect(report.run.traffic.concurrency).toBe(4);
    const html = renderHtmlReport(report.toDict() as Parameters<typeof renderHtmlReport>[0]);
    expect(/<span>Load<\/span><b>([^<]*)<\/b>/.exec(html)?.[1]).toBe(
      "concurrency 4 after 8 warm-up sessions",
    );
    const recs = report.perRequest ?? [];
    expect(recs).toHaveLength(24);
    const byRow = [...recs].sort((a, b) => a.uuid.localeCompare(b.uuid));
    const warmEnd = Math.max(...byRow.slice(0, 8).map((r) => r.arrival_time_ms + (r.e2e_latency_ms ?? 0)));
    const measured = byRow.slice(8).map((r) => r.arrival_time_ms);
    expect(Math.min(...measured)).toBeCloseTo(warmEnd, 9);
    // The first four measured requests start together at the barrier, the fifth when a slot frees.
    for (const t of measured.slice(0, 4)) expect(t).toBe(measured[0]);
    expect(measured[4]).toBeGreaterThan(measured[0]);
  });

  it("`fleetsim validate` names the warm-up phase", async () => {
    const dir = writeFiles({ "prediction.yaml": SYNTHETIC });
    const r = await cli("validate", "-c", join(dir, "prediction.yaml"));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("closed loop at concurrency 4, after a warm-up of 8 sessions");
  });
});
