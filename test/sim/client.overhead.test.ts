/** `client.overhead` (docs/client.md): request_ms delays the fleet's arrival, response_ms every output. */
import { describe, expect, it } from "vitest";
import { DEFAULT_CLIENT, type RunSpec } from "../../src/config/runSpec.js";
import { buildSummary, HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { stableStringify } from "../../src/report/json.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { buildPrediction } from "../../src/report/prediction.js";
import { Replay } from "../../src/sim/replay.js";
import { cliPredict } from "../helpers/cli.js";
import { issueAt, loadError, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { syntheticTraffic } from "../helpers/configYaml.js";
import { disaggSpec, tempDir, traceSpec, writeTrace } from "../helpers/specs.js";

async function run(spec: RunSpec) {
  const table = await loadWorkload(spec);
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: true,
    checkInvariants: true,
  });
  return replay.runSync();
}

/** Requests that queue behind each other on one worker, some sharing a prefix. */
const ROWS = [0, 3, 5, 40, 41, 90].map((t, i) => ({
  timestamp: t,
  input_length: 8 + 4 * (i % 3),
  output_length: 1 + (i % 4),
  hash_ids: i % 2 === 0 ? [1, 2] : [7, 8 + i],
}));

const withClient = (spec: RunSpec, requestMs: number, responseMs: number): RunSpec => ({
  ...spec,
  client: { ...DEFAULT_CLIENT, requestMs, responseMs },
});

describe("client overhead shifts what the client measures by exactly the configured amounts", () => {
  for (const [mode, make] of [
    ["aggregated", (p: string) => traceSpec(p)],
    ["disaggregated", (p: string) => disaggSpec(p)],
  ] as const) {
    it(`${mode}: TTFT and E2E +(request_ms + response_ms), TTST/TPOT/ITL unchanged`, async () => {
      const base = make(writeTrace(ROWS));
      const plain = buildPerRequest(await run(base));
      const shifted = await run(withClient(base, 7, 5));
      const recs = buildPerRequest(shifted);
      expect(recs.length).toBe(ROWS.length);
      for (let i = 0; i < recs.length; i++) {
        const a = plain[i];
        const b = recs[i];
        expect(b.terminal_status).toBe("completed");
        expect(b.arrival_time_ms).toBe(a.arrival_time_ms);
        // The router sees the request 7 ms after the client sent it; the client sees each token 5 ms late.
        expect(b.dispatched_at_ms).toBeCloseTo(a.dispatched_at_ms! + 7, 9);
        expect(b.ttft_ms).toBeCloseTo(a.ttft_ms! + 12, 9);
        expect(b.e2e_latency_ms).toBeCloseTo(a.e2e_latency_ms! + 12, 9);
        expect(b.itl_ms ?? null).toEqual(a.itl_ms ?? null);
        expect(b.ttst_ms ?? null).toEqual(a.ttst_ms ?? null);
      }
      const s0 = buildSummary(await run(base), null);
      const s1 = buildSummary(shifted, null);
      expect(s1.mean_ttft_ms).toBeCloseTo(s0.mean_ttft_ms + 12, 9);
      expect(s1.p99_e2e_latency_ms).toBeCloseTo(s0.p99_e2e_latency_ms + 12, 9);
      expect(s1.mean_tpot_ms).toBeCloseTo(s0.mean_tpot_ms, 9);
      expect(s1.max_itl_ms).toBeCloseTo(s0.max_itl_ms, 9);
      expect(s1.duration_ms).toBeCloseTo(s0.duration_ms + 12, 9);
      expect(s1.completed_requests).toBe(ROWS.length);
    });
  }

  it("zero overhead (the default) gives the reference's numbers, byte for byte", async () => {
    const base = traceSpec(writeTrace(ROWS));
    const doc = async (spec: RunSpec) => {
      const r = await run(spec);
      const p = buildPrediction(spec, r, true);
      const summary: Record<string, unknown> = { ...p.summary };
      for (const k of HOST_TIME_KEYS) delete summary[k];
      return stableStringify({ ...p, summary });
    };
    const a = await doc(base);
    expect(await doc(withClient(base, 0, 0))).toBe(a);
    expect(await doc(withClient(base, 3, 4))).not.toBe(a);
    expect(await doc(withClient(base, 3, 4))).toBe(await doc(withClient(base, 3, 4)));
  });

  it("closed loop: the next request is sent when the client has the last answer", async () => {
    const rows = [0, 0, 0].map((t, i) => ({
      timestamp: t,
      input_length: 8,
      output_length: 2,
      hash_ids: [i],
    }));
    const base = traceSpec(writeTrace(rows), { load: { type: "concurrency", concurrency: 1 } });
    const recs = buildPerRequest(await run(withClient(base, 1, 2)));
    for (let i = 1; i < recs.length; i++) {
      expect(recs[i].arrival_time_ms).toBeCloseTo(recs[i - 1].last_token_ms!, 9);
    }
  });
});

const TRAFFIC = syntheticTraffic("{type: concurrency, concurrency: 2}", "{requests: 4}");

describe("client config", () => {
  it("is optional; defaults add nothing and set no timeout", () => {
    expect(loadYaml(TRAFFIC + RUNNABLE_ENGINE).client).toEqual(DEFAULT_CLIENT);
  });

  it("reads overhead and timeout from YAML and --set", () => {
    const spec = loadYaml(
      TRAFFIC + RUNNABLE_ENGINE + "client: {overhead: {request_ms: 4.5}, timeout_seconds: 30}\n",
      { sets: ["client.overhead.response_ms=2"] },
    );
    expect(spec.client).toEqual({ requestMs: 4.5, responseMs: 2, timeoutMs: 30_000 });
  });

  it("names the config path of a negative value, a zero timeout and an unknown key", () => {
    const neg = loadError(TRAFFIC + RUNNABLE_ENGINE + "client: {overhead: {request_ms: -1}}\n");
    expect(issueAt(neg, "client.overhead.request_ms").message).toMatch(/greater than or equal to 0/);
    const zero = loadError(TRAFFIC + RUNNABLE_ENGINE, { sets: ["client.timeout_seconds=0"] });
    expect(issueAt(zero, "client.timeout_seconds").message).toMatch(/greater than 0/);
    const typo = loadError(TRAFFIC + RUNNABLE_ENGINE + "client: {overhed: {request_ms: 1}}\n");
    expect(issueAt(typo, "client.overhed").hint).toMatch(/did you mean .overhead./);
    const big = loadError(TRAFFIC + RUNNABLE_ENGINE + "client: {overhead: {response_ms: 1e9}}\n");
    expect(issueAt(big, "client.overhead.response_ms").message).toMatch(/at most 60000 ms/);
  });

  it("a bad client value exits 2 with the path", async () => {
    const dir = tempDir();
    const file = `${dir}/prediction.yaml`;
    (await import("node:fs")).writeFileSync(file, TRAFFIC + RUNNABLE_ENGINE);
    const r = await cliPredict(file, `${dir}/out`, "--set", "client.overhead.request_ms=-3");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/client\.overhead\.request_ms/);
  });
});
