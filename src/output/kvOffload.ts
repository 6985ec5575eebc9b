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

/** One direction of the disk tier's I/O (the reference's `G3IoStats`). */
const g3IoSchema = z.strictObject({
  /** Jobs submitted: one per block written (a host-tier eviction), one per load read. */
  submitted_jobs: z.number(),
  /** Jobs whose last byte moved by the end of the run. */
  completed_jobs: z.number(),
  /** Always 0: a job, once submitted, completes (a cancelled request's read still moves). */
  cancelled_jobs: z.number(),
  completed_bytes: z.number(),
  /** Σ (end − submit) over completed jobs, ms: queueing on the links included. */
  transfer_ms: z.number(),
});

/**
 * `g3_offload` (the reference's optional key, present only with `kv_cache.g3_offload`;
 * docs/offload.md "Disk tier"): what the disk tiers behind the front pool's host tiers did.
 */
export const g3OffloadSchema = z.strictObject({
  /** `worker_local` (one disk per host tier) or `cluster_shared` (one for the pool). */
  scope: z.enum(["worker_local", "cluster_shared"]),
  tiers: z.number(),
  g3_blocks_per_tier: z.number(),
  /** Disk blocks probed at admissions past the GPU and host hits; hits; probes of a block still being written. */
  lookup_probes: z.number(),
  lookup_hits: z.number(),
  lookup_pending: z.number(),
  read: g3IoSchema,
  write: g3IoSchema,
  /** Blocks dropped from a full disk tier (LRU). */
  evictions: z.number(),
  /** Readable blocks at the end, and blocks whose write was still moving. */
  resident_blocks: z.number(),
  pending_blocks: z.number(),
  /** Blocks a worker read that another worker had written (cluster-shared storage). */
  cross_worker_read_blocks: z.number(),
});
export type G3OffloadReport = z.infer<typeof g3OffloadSchema>;
