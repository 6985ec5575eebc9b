/**
 * TRT-LLM's capacity scheduler on the vLLM core (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`, docs/backends.md).
 *
 * `guaranteed_no_evict` (TRT-LLM's default) admits a request only when the KV it needs to run to
 * completion — prompt plus its whole output — fits beside what every running request still needs
 * to reach its own completion; so a running request can always grow and nothing is ever
 * preempted. To make every request admissible at all, its output is clamped when it is queued to
 * what a whole cache could hold beside its prompt.
 *
 * `max_utilization` packs the batch as vLLM does (only the current context must fit) and, when a
 * running request cannot grow, pauses the newest one and recomputes it later: the vLLM core's
 * LIFO preemption.
 */
import type { Sequence } from "./sequence.js";

export type CapacityPolicy = "guaranteed_no_evict" | "max_utilization";

/** KV blocks a sequence occupies at completion: ceil((prompt + max_output) / block_size). */
export function toCompletionBlocks(s: Sequence, blockSize: number): number {
  return Math.ceil((s.promptLength + s.maxOutput) / blockSize);
}

/** Σ over `running` of the blocks each still has to allocate before it completes. */
export function blocksToCompletion(running: readonly Sequence[], blockSize: number): number {
  let sum = 0;
  for (let i = 0; i < running.length; i++) {
    const s = running[i];
    sum += toCompletionBlocks(s, blockSize) - s.blocks.length;
  }
  return sum;
}

/**
 * `guaranteed_no_evict` clamps a request's output when it is queued to what the whole cache holds
 * beside its prompt (`num_gpu_blocks · block_size − prompt`, at least 0: a prompt over the cache
 * is rejected anyway), so that every request can be admitted to completion on an empty worker.
 */
export function clampOutputToCache(
  outputTokens: number,
  promptLength: number,
  numGpuBlocks: number,
  blockSize: number,
): number {
  return Math.min(outputTokens, Math.max(0, numGpuBlocks * blockSize - promptLength));
}
