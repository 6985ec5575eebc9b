/**
 * `scheduler.async_scheduling`'s default (src/config/asyncScheduling.ts, docs/timing.md "Async
 * scheduling"): vLLM's own default, asynchronous since 0.14.0; before that release, and on SGLang
 * and TensorRT-LLM, synchronous. A role's explicit setting always wins.
 */
import { describe, expect, it } from "vitest";
import { defaultAsyncScheduling, releaseOf } from "../../src/config/asyncScheduling.js";
import { aggregatedRole, loadYaml } from "../helpers/configHelpers.js";

const yaml = (engineLines: string, scheduler = "") => `engine:
  model: Qwen/Qwen3-8B
  hardware: h200_sxm
${engineLines}  workers:
    aggregated:
      kv_cache: {capacity: {type: fixed, blocks: 1000}}
${scheduler}`;
const asyncOf = (text: string) => aggregatedRole(loadYaml(text, { stack: "engine" })).asyncScheduling;

describe("async scheduling's default", () => {
  it("reads a release from the usual spellings", () => {
    expect(releaseOf("0.14.1")).toEqual([0, 14, 1]);
    expect(releaseOf("v0.11.0")).toEqual([0, 11, 0]);
    expect(releaseOf("0.10.1rc2")).toEqual([0, 10, 1]);
    expect(releaseOf("0.9")).toEqual([0, 9, 0]);
    expect(releaseOf("current")).toBeNull();
  });

  it("is on for vLLM from 0.14.0 (and without a version), off before it and on other backends", () => {
    expect(defaultAsyncScheduling("vllm", undefined)).toBe(true);
    expect(defaultAsyncScheduling("vllm", "current")).toBe(true);
    expect(defaultAsyncScheduling("vllm", "0.14.0")).toBe(true);
    expect(defaultAsyncScheduling("vllm", "1.0.0")).toBe(true);
    expect(defaultAsyncScheduling("vllm", "0.13.9")).toBe(false);
    expect(defaultAsyncScheduling("vllm", "v0.11.1")).toBe(false);
    expect(defaultAsyncScheduling("sglang", undefined)).toBe(false);
    expect(defaultAsyncScheduling("trtllm", "1.0.0")).toBe(false);
  });

  it("reaches a role from engine.backend_version, and a role's own setting wins", () => {
    expect(asyncOf(yaml(""))).toBe(true);
    expect(asyncOf(yaml("  backend_version: 0.12.0\n"))).toBe(false);
    expect(asyncOf(yaml("  backend_version: 0.15.1\n"))).toBe(true);
    expect(asyncOf(yaml("  backend: sglang\n"))).toBe(false);
    expect(asyncOf(yaml("", "      scheduler: {async_scheduling: false}\n"))).toBe(false);
    expect(asyncOf(yaml("  backend_version: 0.12.0\n", "      scheduler: {async_scheduling: true}\n"))).toBe(
      true,
    );
  });
});
