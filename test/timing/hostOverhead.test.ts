/**
 * Host overhead of a pass (timing/hostOverhead.ts, docs/timing.md "Host overhead"): per pass +
 * per sequence, on by default without async scheduling, hidden with it, and settable per role.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import {
  ASYNC_HOST_OVERHEAD,
  resolveHostOverhead,
  SYNC_HOST_OVERHEAD,
} from "../../src/timing/hostOverhead.js";
import { createTimingModel } from "../../src/timing/index.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";
import { aggregatedRole, issueAt, loadError, loadYaml } from "../helpers/configHelpers.js";
import { engineYaml } from "../helpers/configYaml.js";
import { passOf } from "../helpers/passShape.js";

const ENGINE = (timing: string, scheduler = "") =>
  `${engineYaml({
    model: "Qwen/Qwen3-8B",
    contextLength: null,
    kvCache: "{capacity: {type: fixed, blocks: 1000}}",
    timing,
  })}${scheduler}`;

const PAR = { tensor: 1, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };

describe("host overhead", () => {
  it("adds per_pass_ms + per_sequence_ms × sequences to every non-empty pass", () => {
    const model = resolveModel("Qwen/Qwen3-8B");
    const tables = loadCompactTables("h200_sxm");
    const bare = new OpLevelTiming(model, gpuSpec("h200_sxm"), tables, PAR);
    const host = new OpLevelTiming(model, gpuSpec("h200_sxm"), tables, PAR, {
      perPassMs: 0.5,
      perSequenceMs: 0.05,
    });
    expect(host.decodeMs(64, 64 * 500, 500, 1e6) - bare.decodeMs(64, 64 * 500, 500, 1e6)).toBeCloseTo(
      0.5 + 64 * 0.05,
      9,
    );
    expect(host.prefillMs(2, 1000, 0) - bare.prefillMs(2, 1000, 0)).toBeCloseTo(0.5 + 2 * 0.05, 9);
    // A mixed pass counts both halves' sequences once.
    expect(
      host.passMs(passOf(2, 1000, 0, 30, 30 * 500, 500, 1e6)) -
        bare.passMs(passOf(2, 1000, 0, 30, 30 * 500, 500, 1e6)),
    ).toBeCloseTo(0.5 + 32 * 0.05, 9);
    expect(host.passMs(passOf(0, 0, 0, 0, 0, 0, 1e6))).toBe(0);
  });

  it("defaults: fitted per-sequence cost without async scheduling, none with it; explicit fields win", () => {
    expect(SYNC_HOST_OVERHEAD.perSequenceMs).toBeGreaterThan(0);
    expect(ASYNC_HOST_OVERHEAD).toEqual({ perPassMs: 0, perSequenceMs: 0 });
    const none = { perPassMs: null, perSequenceMs: null };
    expect(resolveHostOverhead(none, false)).toEqual(SYNC_HOST_OVERHEAD);
    expect(resolveHostOverhead(none, true)).toEqual(ASYNC_HOST_OVERHEAD);
    expect(resolveHostOverhead({ perPassMs: 1, perSequenceMs: null }, true)).toEqual({
      perPassMs: 1,
      perSequenceMs: 0,
    });
  });

  it("YAML: timing.host_overhead reaches the role's timing model; async scheduling (vLLM ≥ 0.14's default) hides the default", async () => {
    const decode = async (yaml: string) => {
      const role = aggregatedRole(loadYaml(yaml, { stack: "engine" }));
      const t = await createTimingModel(role.timing, role);
      return t.decodeMs(100, 100 * 500, 500, 1e6);
    };
    const sync = await decode(ENGINE("{type: default}", "      scheduler: {async_scheduling: false}\n"));
    const async = await decode(ENGINE("{type: default}", "      scheduler: {async_scheduling: true}\n"));
    // Without the key, the vLLM version's default: async since 0.14.0, sync before.
    const byDefault = await decode(ENGINE("{type: default}"));
    const old = await decode(
      ENGINE("{type: default}").replace("  hardware:", "  backend_version: 0.12.0\n  hardware:"),
    );
    expect(byDefault).toBeCloseTo(async, 9);
    expect(old).toBeCloseTo(sync, 9);
    const zero = await decode(ENGINE("{type: default, host_overhead: {per_pass_ms: 0, per_sequence_ms: 0}}"));
    const set = await decode(
      ENGINE("{type: default, host_overhead: {per_pass_ms: 2, per_sequence_ms: 0.01}}"),
    );
    expect(async).toBeCloseTo(zero, 9);
    expect(sync - zero).toBeCloseTo(100 * SYNC_HOST_OVERHEAD.perSequenceMs, 9);
    expect(set - zero).toBeCloseTo(2 + 100 * 0.01, 9);
  });

  it("rejects negative values and host_overhead on closed-form timing, at the config path", () => {
    const neg = loadError(ENGINE("{type: default, host_overhead: {per_sequence_ms: -1}}"), {
      stack: "engine",
    });
    expect(issueAt(neg, "engine.workers.aggregated.timing.host_overhead.per_sequence_ms").message).toMatch(
      /0/,
    );
    const poly = loadError(ENGINE("{type: polynomial, host_overhead: {per_pass_ms: 1}}"), {
      stack: "engine",
    });
    expect(poly.format()).toMatch(/does not accept \['host_overhead'\]/);
  });
});
