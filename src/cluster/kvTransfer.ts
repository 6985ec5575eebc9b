import type { KvTransferSpec } from "../config/runSpec.js";

/** Milliseconds to move `tokens` prompt tokens of KV to a decode worker (`ai-dynamo/aisimulate@26191a9:docs/replay/engine/kv-transfer.md`). */
export function transferMs(tokens: number, transfer: KvTransferSpec): number {
  if (transfer.bandwidthGBps === null || transfer.bandwidthGBps <= 0) return 0;
  return ((tokens * transfer.bytesPerToken) / (transfer.bandwidthGBps * 1e9)) * 1000;
}

/**
 * Prompt tokens a hand-off moves: the whole prompt (`full_prompt`), or only the blocks the
 * decode worker does not already hold (`destination_missing`, block-granular as vLLM reserves).
 */
export function transferTokens(
  promptTokens: number,
  residentTokens: number,
  blockSize: number,
  transfer: KvTransferSpec,
): number {
  if (transfer.timingMode === "full_prompt") return promptTokens;
  const missingBlocks = Math.ceil(promptTokens / blockSize) - residentTokens / blockSize;
  return missingBlocks * blockSize;
}
