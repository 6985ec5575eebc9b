/**
 * `kv_offload` (fleetsim extension, present only when a role has `kv_cache.host_offload`;
 * docs/offload.md "What it reports"): what the host KV tier of the front pool (aggregated or
 * prefill workers) did over the run, summed over its tiers.
 */
import * as z from "zod";

export const kvOffloadSchema = z.strictObject({
  /** `dp_rank_local` (one tier per attention-DP rank) or `cluster_shared` (one for the pool). */
  scope: z.enum(["dp_rank_local", "cluster_shared"]),
  /** Tiers: one per rank ever created, or 1 when shared. */
  tiers: z.number(),
  /** Host blocks per tier. */
  host_blocks_per_tier: z.number(),
  /** Blocks written to host memory (each block the GPU caches, once per stay in the tier). */
  stored_blocks: z.number(),
  /** Blocks dropped from a full tier (LRU). */
  evicted_blocks: z.number(),
  /** Admissions that loaded part of their prefix from the host tier. */
  loads: z.number(),
  /** Blocks loaded back, and their tokens. */
  loaded_blocks: z.number(),
  loaded_tokens: z.number(),
  /** Σ loaded bytes on one GPU's link (each rank of a TP worker moves its own shard). */
  loaded_bytes_per_gpu: z.number(),
  /** Mean time from admission to the load's last byte, ms (0 without loads). */
  mean_load_ms: z.number(),
  /** Blocks resident in the tiers at the end. */
  resident_blocks: z.number(),
});
export type KvOffloadReport = z.infer<typeof kvOffloadSchema>;
