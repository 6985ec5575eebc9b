/**
 * The load loop's idle-pool step and its per-role engine-metadata flags, as the reference's Planner
 * has them (`dynamo/planner/core/load_scaling.py` in ai-dynamo 1.6.0.dev20261023: `_idle_sla_target`,
 * `_diag_load_metadata_available`): under the SLA target a pool whose every engine is idle steps
 * down by one without asking the perf model, and `metadataAvailable` names the roles whose decision
 * ran past the gates.
 */
import { describe, expect, it } from "vitest";
import { advanceLoad, idleSlaTarget, type LoadInputs } from "../../src/planner/loadScaling/index.js";
import type { ForwardPassMetrics, PlannerSettings } from "../../src/planner/types.js";
import {
  engineCaps,
  fittedAggModel,
  fittedDecodeModel,
  forwardPass,
  plannerSettings,
  workerCounts,
} from "../helpers/planner.js";

function settings(over: Partial<PlannerSettings> = {}): PlannerSettings {
  return plannerSettings({
    optimizationTarget: "sla",
    loadMinObservations: 3,
    maxNumFpmSamples: 50,
    ...over,
  });
}

/** `n` engines with nothing scheduled or queued (a heartbeat). */
function idle(n: number): ForwardPassMetrics[] {
  return Array.from({ length: n }, (_, i) => forwardPass(i));
}

/** `n` engines each decoding `requests` sequences over `kv` cached tokens. */
function decoding(n: number, requests = 4, kv = 4000): ForwardPassMetrics[] {
  return Array.from({ length: n }, (_, i) =>
    forwardPass(i, { wallTimeS: 0.01, numDecodeRequests: requests, sumDecodeKvTokens: kv }),
  );
}

function agg(fpms: ForwardPassMetrics[], over: Partial<LoadInputs> = {}) {
  const n = fpms.length;
  return advanceLoad({
    settings: settings({ mode: "agg" }),
    mode: "agg",
    workers: workerCounts(0, n),
    fpmPrefill: null,
    fpmDecode: fpms,
    caps: { prefill: null, decode: engineCaps() },
    perf: { prefill: null, decode: fittedAggModel() },
    kvHitRate: null,
    acceptLength: 1,
    lowerBound: null,
    ...over,
  });
}

describe("idleSlaTarget", () => {
  it("steps an idle pool down by one, to at least 1 and the minimum endpoint", () => {
    expect(idleSlaTarget(settings(), idle(4), 4, 1)).toBe(3);
    expect(idleSlaTarget(settings(), idle(1), 1, 1)).toBe(1);
    expect(idleSlaTarget(settings(), idle(3), 3, 3)).toBe(3);
  });

  it("is null when any engine has work, when there is no FPM, or off the SLA target", () => {
    const busy = [...idle(2), ...decoding(1)];
    expect(idleSlaTarget(settings(), busy, 3, 1)).toBeNull();
    expect(idleSlaTarget(settings(), [], 3, 1)).toBeNull();
    expect(idleSlaTarget(settings({ optimizationTarget: "throughput" }), idle(3), 3, 1)).toBeNull();
    // A queued prompt is work too.
    expect(idleSlaTarget(settings(), [forwardPass(0, { sumQueuedPrefillTokens: 1 })], 2, 1)).toBeNull();
  });
});

describe("aggregated pool", () => {
  it("idle: scales down by one with no estimate and no metadata flag", () => {
    const out = agg(idle(4));
    expect(out.decision).toEqual({ numPrefill: null, numDecode: 3 });
    expect(out.reason).toBe("scale_down");
    expect(out.estimatedTtftMs).toBeNull();
    expect(out.estimatedItlMs).toBeNull();
    expect(out.metadataAvailable).toEqual({});
  });

  it("idle with one worker: holds, reason no_change", () => {
    const out = agg(idle(1));
    expect(out.decision).toBeNull();
    expect(out.reason).toBe("no_change");
  });

  it("busy: the SLA path runs and flags its metadata, before the model's readiness is checked", () => {
    expect(agg(decoding(2)).metadataAvailable).toEqual({ decode: true });
    const unfitted = agg(decoding(2), { perf: { prefill: null, decode: null } });
    expect(unfitted.reason).toBe("insufficient_data");
    expect(unfitted.metadataAvailable).toEqual({ decode: true });
  });

  it("a gate (scaling in progress) stops the tick before any flag", () => {
    const out = agg(decoding(2), { workers: workerCounts(0, 2, { expectedDecode: 3 }) });
    expect(out.reason).toBe("scaling_in_progress");
    expect(out.metadataAvailable).toEqual({});
  });

  it("easy targets flag the KV capacity they read", () => {
    const s = settings({ mode: "agg", optimizationTarget: "throughput" });
    expect(agg(idle(2), { settings: s }).metadataAvailable).toEqual({ decode: true });
    const noKv = agg(idle(2), {
      settings: s,
      caps: { prefill: null, decode: engineCaps({ maxKvTokens: 0 }) },
    });
    expect(noKv.metadataAvailable).toEqual({ decode: false });
  });
});

describe("disaggregated pools", () => {
  function disagg(
    prefill: ForwardPassMetrics[],
    decode: ForwardPassMetrics[],
    over: Partial<PlannerSettings> = {},
  ) {
    return advanceLoad({
      settings: settings(over),
      mode: "disagg",
      workers: workerCounts(prefill.length, decode.length),
      fpmPrefill: prefill,
      fpmDecode: decode,
      caps: { prefill: engineCaps(), decode: engineCaps() },
      perf: { prefill: null, decode: fittedDecodeModel() },
      kvHitRate: null,
      acceptLength: 1,
      lowerBound: null,
    });
  }

  it("an idle decode pool has no flag and no estimate; the busy prefill pool has its flag", () => {
    const busyPrefill = [forwardPass(0, { wallTimeS: 0.1, numPrefillRequests: 1, sumPrefillTokens: 512 })];
    const out = disagg(busyPrefill, idle(1));
    expect(out.metadataAvailable).toEqual({ prefill: true });
    expect(out.estimatedItlMs).toBeNull();
    expect(out.reasonDecode).toBe("no_change");
  });

  it("an idle decode pool of three steps down to two", () => {
    const out = disagg(idle(1), idle(3));
    expect(out.decision).toEqual({ numPrefill: 1, numDecode: 2 });
    expect(out.reasonDecode).toBe("scale_down");
    expect(out.metadataAvailable).toEqual({});
  });

  it("busy pools flag both roles; the load target's prefill needs no engine limit", () => {
    const busyPrefill = [forwardPass(0, { wallTimeS: 0.1, numPrefillRequests: 1, sumPrefillTokens: 512 })];
    expect(disagg(busyPrefill, decoding(1)).metadataAvailable).toEqual({ prefill: true, decode: true });
    const load = disagg(busyPrefill, decoding(1), {
      optimizationTarget: "load",
      prefillScaleUpQueueTokens: 1000,
      prefillScaleDownQueueTokens: 0,
      decodeScaleUpKvRate: 90,
      decodeScaleDownKvRate: 10,
    });
    expect(load.metadataAvailable).toEqual({ prefill: true, decode: true });
  });
});
