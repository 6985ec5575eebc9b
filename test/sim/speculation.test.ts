/**
 * `engine.speculation` end to end (docs/speculation.md): what a speculating fleet's prediction
 * says against the same fleet without it — tokens, latency, throughput, the accept length the
 * Planner observes — and that the run is a pure function of its config and seed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acceptLengthOf } from "../../src/autoscale/plannerAdapter.js";
import { expectedAcceptLength } from "../../src/engine/speculation.js";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { emptyTrafficWindow } from "../../src/sim/scaling.js";
import { predictPlanner } from "../helpers/plannerRun.js";
import { tempDir } from "../helpers/specs.js";

interface Doc {
  summary: Record<string, number>;
  planner: {
    metadata: { bootstrap: { status: string; fpm_sha256?: string } };
    ticks: { input: { traffic: { accept_length: number | null } | null } }[];
  } | null;
}

function config(
  over: { output?: number; requests?: number; timing?: string; extra?: string; disaggregated?: boolean } = {},
): string {
  const role = `      kv_cache: {capacity: {type: fixed, blocks: 4000}}
      timing: ${over.timing ?? "{type: default}"}
`;
  const workers = over.disaggregated
    ? `    prefill:\n${role}    decode:\n${role}`
    : `    aggregated:\n${role}`;
  return `traffic:
  source: {type: synthetic, input_tokens: 256, output_tokens: ${over.output ?? 128}}
  load: {type: concurrency, concurrency: 16}
  stop: {requests: ${over.requests ?? 96}}
engine:
  mode: ${over.disaggregated ? "disaggregated" : "aggregated"}
  model: Qwen/Qwen3-8B
  hardware: h200_sxm
  workers:
${workers}${over.extra ?? ""}`;
}

const SPEC = (rates: string, kind = "ngram", seed = 42) =>
  `engine.speculation={kind: ${kind}, num_speculative_tokens: 3, acceptance_rates: ${rates}, seed: ${seed}}`;

/** Runs predict on `yaml` (through the Planner helper, which checks exit 0 and a quiet stderr). */
async function predict(
  yaml: string,
  sets: readonly string[] = [],
  expectedErr = "",
): Promise<{ doc: Doc; text: string }> {
  const path = join(tempDir(), "config.yaml");
  writeFileSync(path, yaml);
  const { doc } = await predictPlanner(path, sets, expectedErr);
  return { doc: doc as unknown as Doc, text: JSON.stringify(doc) };
}

/** The summary without the keys that depend on host speed or on speculation's own counters. */
function comparable(s: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(s)) {
    if ((HOST_TIME_KEYS as readonly string[]).includes(k) || k.startsWith("spec_decode_")) continue;
    out[k] = v;
  }
  return out;
}

describe("the accept length a traffic window reports (`ai-dynamo/dynamo@fdf4b3d:lib/mocker/src/replay/offline/planner_hook.rs` avg_accept_length)", () => {
  const w = (acceptForwards: number, acceptTokens: number, shapeCount = 3) => ({
    ...emptyTrafficWindow(),
    durationS: 1,
    shapeCount,
    acceptForwards,
    acceptTokens,
  });

  it("speculating: tokens per drafting forward, none for a window without one", () => {
    expect(acceptLengthOf(w(4, 10), true)).toBe(2.5);
    expect(acceptLengthOf(w(0, 0), true)).toBeNull();
  });

  it("not speculating: 1 for a window with completions, none otherwise (unchanged)", () => {
    expect(acceptLengthOf(w(0, 0), false)).toBe(1);
    expect(acceptLengthOf(w(0, 0, 0), false)).toBeNull();
  });
});

describe("engine.speculation end to end", () => {
  it("acceptance rates 0: with fixed timing the run is the run without speculation; op-level only adds the verify cost", async () => {
    const fixed = config({ timing: "{type: fixed, prefill_ms: 10, decode_ms: 3}" });
    const off = await predict(fixed);
    const zero = await predict(fixed, [SPEC("0")]);
    expect(comparable(zero.doc.summary)).toEqual(comparable(off.doc.summary));
    expect(off.doc.summary["spec_decode_num_drafts"]).toBeUndefined();
    expect(zero.doc.summary["spec_decode_mean_acceptance_length"]).toBe(1);
    expect(zero.doc.summary["spec_decode_num_accepted_tokens"]).toBe(0);
    expect(zero.doc.summary["spec_decode_num_draft_tokens"]).toBeGreaterThan(0);

    const opOff = (await predict(config())).doc.summary;
    const opZero = (await predict(config(), [SPEC("0")])).doc.summary;
    expect(opZero["total_output_tokens"]).toBe(opOff["total_output_tokens"]);
    expect(opZero["completed_requests"]).toBe(opOff["completed_requests"]);
    // Every decode pass verifies 4 positions per sequence for one token: slower, never faster.
    expect(opZero["mean_tpot_ms"]).toBeGreaterThan(opOff["mean_tpot_ms"] * 1.05);
    expect(opZero["output_throughput_tok_s"]).toBeLessThan(opOff["output_throughput_tok_s"]);
  });

  it("higher acceptance: lower TPOT and ITL, higher output throughput, same tokens", async () => {
    const runs = [];
    for (const r of ["0.2", "0.5", "0.9"]) runs.push((await predict(config(), [SPEC(r)])).doc.summary);
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i]["total_output_tokens"]).toBe(runs[0]["total_output_tokens"]);
      expect(runs[i]["mean_tpot_ms"]).toBeLessThan(runs[i - 1]["mean_tpot_ms"]);
      expect(runs[i]["mean_itl_ms"]).toBeLessThan(runs[i - 1]["mean_itl_ms"]);
      expect(runs[i]["output_throughput_tok_s"]).toBeGreaterThan(runs[i - 1]["output_throughput_tok_s"]);
      expect(runs[i]["spec_decode_mean_acceptance_length"]).toBeGreaterThan(
        runs[i - 1]["spec_decode_mean_acceptance_length"],
      );
    }
    // A burst's tokens share their pass's end: zero gaps in the pooled ITL (as the reference's).
    expect(runs[2]["min_itl_ms"]).toBe(0);
    // At 0.9 acceptance, speculation beats no speculation.
    const off = (await predict(config())).doc.summary;
    expect(runs[2]["output_throughput_tok_s"]).toBeGreaterThan(off["output_throughput_tok_s"] * 1.5);
    expect(runs[2]["mean_tpot_ms"]).toBeLessThan(off["mean_tpot_ms"]);
  });

  it("on a long run the mean accepted tokens per step is the profile's 1 + r1 + r1·r2 + r1·r2·r3", async () => {
    const rates = [0.8, 0.6, 0.4];
    const s = (await predict(config({ output: 1024, requests: 48 }), [SPEC("[0.8, 0.6, 0.4]")])).doc.summary;
    const expected = expectedAcceptLength(rates);
    expect(Math.abs(s["spec_decode_mean_acceptance_length"] - expected)).toBeLessThan(0.02);
    // Accepted drafts over draft tokens: (expected − 1) / 3 for full drafts.
    expect(Math.abs(s["spec_decode_draft_acceptance_rate"] - (expected - 1) / 3)).toBeLessThan(0.01);
    expect(s["spec_decode_num_accepted_tokens"] + s["spec_decode_num_drafts"]).toBeLessThanOrEqual(
      s["total_output_tokens"],
    );
  });

  it("is deterministic: the same seed gives the same bytes, another seed other bursts", async () => {
    // The whole document but the host-time keys.
    const strip = (text: string) => {
      const doc = JSON.parse(text) as Doc;
      for (const k of HOST_TIME_KEYS) delete doc.summary[k];
      return JSON.stringify(doc);
    };
    const a = await predict(config(), [SPEC("[0.7, 0.5, 0.3]")]);
    const b = await predict(config(), [SPEC("[0.7, 0.5, 0.3]")]);
    expect(strip(b.text)).toBe(strip(a.text));
    expect(b.doc.summary["spec_decode_num_accepted_tokens"]).toBe(
      a.doc.summary["spec_decode_num_accepted_tokens"],
    );
    const c = await predict(config(), [SPEC("[0.7, 0.5, 0.3]", "ngram", 7)]);
    expect(c.doc.summary["spec_decode_num_accepted_tokens"]).not.toBe(
      a.doc.summary["spec_decode_num_accepted_tokens"],
    );
  });

  it("mtp drafts cost GPU time that ngram drafts do not", async () => {
    const ngram = (await predict(config(), [SPEC("0.6")])).doc.summary;
    const mtp = (await predict(config(), [SPEC("0.6", "mtp")])).doc.summary;
    expect(mtp["spec_decode_num_accepted_tokens"]).toBe(ngram["spec_decode_num_accepted_tokens"]);
    expect(mtp["mean_tpot_ms"]).toBeGreaterThan(ngram["mean_tpot_ms"]);
  });

  it("disaggregated: decode workers speculate, the prefill worker's one token rides its prefill", async () => {
    const pd = config({ disaggregated: true, requests: 32 });
    const off = (await predict(pd)).doc.summary;
    const on = (await predict(pd, [SPEC("0.8")])).doc.summary;
    expect(on["completed_requests"]).toBe(32);
    expect(on["prefill_worker_seconds"]).toBeGreaterThan(0);
    expect(on["total_output_tokens"]).toBe(off["total_output_tokens"]);
    expect(on["spec_decode_mean_acceptance_length"]).toBeGreaterThan(2);
    expect(on["mean_tpot_ms"]).toBeLessThan(off["mean_tpot_ms"]);
  });

  it("the Planner observes the real accept length and bootstraps on verify passes", async () => {
    const planner = config({
      requests: 200,
      extra:
        "planner: {policy: enabled, target: sla, throughput_adjustment_interval_seconds: 1}\nevaluation: {sla: {ttft_ms: 1500, itl_ms: 50}}\n",
    });
    const on = (await predict(planner, [SPEC("[0.8, 0.6, 0.4]")])).doc;
    const off = (await predict(planner)).doc;
    const seen = on
      .planner!.ticks.map((t) => t.input.traffic?.accept_length ?? null)
      .filter((a) => a !== null);
    expect(seen.length).toBeGreaterThan(0);
    for (const a of seen) {
      expect(a).toBeGreaterThan(1.5);
      expect(a).toBeLessThanOrEqual(4);
    }
    const offSeen = off
      .planner!.ticks.map((t) => t.input.traffic?.accept_length ?? null)
      .filter((a) => a !== null);
    expect(new Set(offSeen)).toEqual(new Set([1]));
    expect(on.planner!.metadata.bootstrap.status).toBe("installed");
    expect(on.planner!.metadata.bootstrap.fpm_sha256).not.toBe(off.planner!.metadata.bootstrap.fpm_sha256);
  });
});

describe("engine.nextn / engine.nextn_accepted end to end (AIConfigurator's MTP controls)", () => {
  const NEXTN = (n: number, accepted: number) => [`engine.nextn=${n}`, `engine.nextn_accepted=${accepted}`];

  it("is MTP speculation with the lowered rates, byte for byte (1, 0.8 ≡ mtp K=1 rate 0.8 seed 42)", async () => {
    const strip = (text: string) => {
      const doc = JSON.parse(text) as Doc;
      for (const k of HOST_TIME_KEYS) delete doc.summary[k];
      return JSON.stringify(doc);
    };
    const nextn = await predict(config(), NEXTN(1, 0.8));
    const spec = await predict(config(), [
      "engine.speculation={kind: mtp, num_speculative_tokens: 1, acceptance_rates: [0.8], seed: 42}",
    ]);
    expect(strip(nextn.text)).toBe(strip(spec.text));
  });

  it("pins the step: accepted 2.4 of 3 gives 3.4 tokens per verify pass; ITL and throughput move with it", async () => {
    const off = (await predict(config())).doc.summary;
    const low = (await predict(config(), NEXTN(3, 0.5))).doc.summary;
    const high = (await predict(config(), NEXTN(3, 2.4))).doc.summary;
    // Rates 1, 1, 0.4: every verify pass of 3 drafts emits 3 or 4 tokens; the pooled mean sits at 3.4
    // (draft-limited passes near a request's end pull it a little down).
    expect(high["spec_decode_mean_acceptance_length"]).toBeGreaterThan(3.2);
    expect(high["spec_decode_mean_acceptance_length"]).toBeLessThanOrEqual(3.4);
    expect(low["spec_decode_mean_acceptance_length"]).toBeLessThan(1.6);
    for (const s of [low, high]) expect(s["total_output_tokens"]).toBe(off["total_output_tokens"]);
    expect(high["mean_tpot_ms"]).toBeLessThan(low["mean_tpot_ms"] / 1.8);
    expect(high["output_throughput_tok_s"]).toBeGreaterThan(off["output_throughput_tok_s"] * 2);
    expect(high["median_itl_ms"]).toBe(0);
    // Three MTP drafts at 0.5 accepted (1.5 tokens a pass) save little: the drafts and the wider
    // verify pass cost nearly what the saved passes did (a pass's fixed costs, such as Qwen3's
    // Q/K norm, are what the accepted tokens share).
    expect(low["mean_tpot_ms"]).toBeGreaterThan(off["mean_tpot_ms"] * 0.9);
  });

  it("TRT-LLM (the vLLM core with GUARANTEED_NO_EVICT) speculates within its completion reservation", async () => {
    const trt = ["engine.backend=trtllm"];
    const warning =
      "fleetsim: warning: engine.backend 'trtllm': its scheduler is simulated, but passes on h200_sxm are priced from the vLLM op tables " +
      "(the default; timing.op_tables: backend prices them from the TensorRT-LLM tables); expect kernel-level differences\n";
    const off = (await predict(config(), trt, warning)).doc.summary;
    const on = (await predict(config(), [...trt, ...NEXTN(2, 1.5)], warning)).doc.summary;
    expect(on["completed_requests"]).toBe(off["completed_requests"]);
    expect(on["total_output_tokens"]).toBe(off["total_output_tokens"]);
    expect(on["spec_decode_mean_acceptance_length"]).toBeGreaterThan(2.3);
    expect(on["mean_tpot_ms"]).toBeLessThan(off["mean_tpot_ms"]);
  });
});

describe("engine.nextn on SGLang (the SGLang core's MTP bursts)", () => {
  const warning =
    "fleetsim: warning: engine.backend 'sglang': its scheduler is simulated, but passes on h200_sxm are priced from the vLLM op tables " +
    "(the default; timing.op_tables: backend prices them from the SGLang tables); expect kernel-level differences\n";
  /** SGLang at page 1: 4,000 blocks would be 4,000 tokens, so each role gets 64,000. */
  const sglang = (roles: string[]) => [
    "engine.backend=sglang",
    ...roles.map((r) => `engine.workers.${r}.kv_cache.capacity={type: fixed, blocks: 64000}`),
  ];
  const NEXTN = (n: number, accepted: number) => [`engine.nextn=${n}`, `engine.nextn_accepted=${accepted}`];
  const run = async (sets: string[], yaml = config(), roles = ["aggregated"]) =>
    (await predict(yaml, [...sglang(roles), ...sets], warning)).doc.summary;

  it("higher acceptance: lower TPOT and ITL, more tokens per verify pass and per second, same tokens", async () => {
    const off = await run([]);
    const runs = [];
    for (const accepted of [0.5, 1.5, 2.4]) runs.push(await run(NEXTN(3, accepted)));
    for (let i = 0; i < runs.length; i++) {
      expect(runs[i]["total_output_tokens"]).toBe(off["total_output_tokens"]);
      expect(runs[i]["completed_requests"]).toBe(off["completed_requests"]);
      if (i === 0) continue;
      expect(runs[i]["mean_tpot_ms"]).toBeLessThan(runs[i - 1]["mean_tpot_ms"]);
      expect(runs[i]["mean_itl_ms"]).toBeLessThan(runs[i - 1]["mean_itl_ms"]);
      expect(runs[i]["output_throughput_tok_s"]).toBeGreaterThan(runs[i - 1]["output_throughput_tok_s"]);
      expect(runs[i]["spec_decode_mean_acceptance_length"]).toBeGreaterThan(
        runs[i - 1]["spec_decode_mean_acceptance_length"],
      );
    }
    // Rates 1, 1, 0.4: 3 or 4 tokens per verify pass of 3 drafts (fewer drafts near a request's end).
    const high = runs[2];
    expect(high["spec_decode_mean_acceptance_length"]).toBeGreaterThan(3.2);
    expect(high["spec_decode_mean_acceptance_length"]).toBeLessThanOrEqual(3.4);
    expect(high["median_itl_ms"]).toBe(0);
    expect(high["output_throughput_tok_s"]).toBeGreaterThan(off["output_throughput_tok_s"] * 1.8);
    expect(high["mean_tpot_ms"]).toBeLessThan(off["mean_tpot_ms"] / 1.8);
    // Three MTP drafts at 0.5 accepted cost more than they save, as on vLLM.
    expect(runs[0]["mean_tpot_ms"]).toBeGreaterThan(off["mean_tpot_ms"]);
  });

  it("is deterministic: the same config gives the same bytes", async () => {
    const strip = (text: string) => {
      const doc = JSON.parse(text) as Doc;
      for (const k of HOST_TIME_KEYS) delete doc.summary[k];
      return JSON.stringify(doc);
    };
    const sets = [...sglang(["aggregated"]), ...NEXTN(2, 1.3)];
    const a = await predict(config(), sets, warning);
    const b = await predict(config(), sets, warning);
    expect(strip(b.text)).toBe(strip(a.text));
    expect(a.doc.summary["spec_decode_num_accepted_tokens"]).toBeGreaterThan(0);
  });

  it("disaggregated: SGLang decode workers speculate, the prefill worker's token rides its prefill", async () => {
    const pd = config({ disaggregated: true, requests: 32 });
    const roles = ["prefill", "decode"];
    const off = await run([], pd, roles);
    const on = await run(NEXTN(2, 1.6), pd, roles);
    expect(on["completed_requests"]).toBe(32);
    expect(on["total_output_tokens"]).toBe(off["total_output_tokens"]);
    expect(on["prefill_worker_seconds"]).toBeGreaterThan(0);
    expect(on["spec_decode_mean_acceptance_length"]).toBeGreaterThan(2.3);
    expect(on["mean_tpot_ms"]).toBeLessThan(off["mean_tpot_ms"] / 1.5);
  });
});
