/**
 * The default of `scheduler.async_scheduling` (docs/timing.md "Async scheduling") when a role
 * does not set it: what the serving engine itself defaults to. vLLM schedules asynchronously by
 * default since 0.14.0 (January 2026, vllm-project/vllm#27614); an `engine.backend_version` before
 * that, e.g. `0.12.0`, gets the synchronous scheduler and its host time per sequence. Without a
 * version (or with the reference's `current`/`previous`/`next` aliases) fleetsim models the vLLM of
 * today. SGLang and TensorRT-LLM keep the scheduler they had (overlap off).
 */
import type { Backend } from "./backends.js";

/** The first vLLM release whose scheduler is asynchronous by default. */
export const VLLM_ASYNC_DEFAULT_SINCE: readonly [number, number, number] = [0, 14, 0];

/** `[major, minor, patch]` of a version such as `0.14.1`, `v0.11.0` or `0.10.1rc2`; null otherwise. */
export function releaseOf(version: string): [number, number, number] | null {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version.trim());
  if (m === null) return null;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

function before(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

export function defaultAsyncScheduling(backend: Backend, backendVersion: string | undefined): boolean {
  if (backend !== "vllm") return false;
  const release = backendVersion === undefined ? null : releaseOf(backendVersion);
  return release === null || !before(release, VLLM_ASYNC_DEFAULT_SINCE);
}
