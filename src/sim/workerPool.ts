import type { KvTransferSpec, RouterSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { AdmissionObserver, EngineRole } from "../engine/vllmEngine.js";
import { VllmEngine } from "../engine/vllmEngine.js";
import { KvPlacement, type Placement, RoundRobinPlacement } from "../router/placement.js";
import type { TimingModel } from "../timing/timingModel.js";

/**
 * The workers of one role (aggregated, prefill or decode) and the policy that places requests
 * on them. Worker `w`'s attention-DP ranks are the engines (slots) `w·D .. w·D + D − 1`.
 */
export class WorkerPool {
  readonly engines: VllmEngine[] = [];
  readonly workerCount: number;
  readonly ranksPerWorker: number;
  /** A pass is in flight on the worker. */
  readonly busy: Uint8Array;
  /** The worker may have new work: drive it at this timestamp. */
  readonly dirty: Uint8Array;
  readonly placement: Placement;
  /** ∫ provisioned workers dt, worker-seconds. */
  workerSeconds = 0;

  constructor(
    /** 0 for the front pool (aggregated or prefill), 1 for the decode pool: part of event ids. */
    readonly id: number,
    readonly role: EngineRole,
    readonly spec: WorkerRoleSpec,
    readonly timing: TimingModel,
    router: RouterSpec,
    promptHashes: Float64Array,
    observer: AdmissionObserver,
  ) {
    this.workerCount = spec.replicas;
    this.ranksPerWorker = spec.attentionData;
    const slots = spec.replicas * spec.attentionData;
    for (let s = 0; s < slots; s++) {
      this.engines.push(
        new VllmEngine(
          {
            role,
            maxBatchedTokens: spec.maxBatchedTokens,
            maxSequences: spec.maxSequences,
            blockSize: spec.blockSize,
            numGpuBlocks: spec.numGpuBlocks,
            prefixCaching: spec.prefixCaching,
            maxModelLen: spec.maxModelLen,
          },
          timing,
          promptHashes,
          observer,
        ),
      );
    }
    this.busy = new Uint8Array(spec.replicas);
    this.dirty = new Uint8Array(spec.replicas);
    const kvRole = role === "aggregated" ? "aggregated" : role;
    this.placement =
      router.policy === "kv_router"
        ? new KvPlacement(router, kvRole, slots, spec.blockSize)
        : new RoundRobinPlacement(spec.replicas, spec.attentionData);
    if (this.placement.wantsKvEvents) {
      const placement = this.placement;
      this.engines.forEach((engine, slot) => {
        engine.pool.setListener({
          onBlockStored: (hash) => placement.onBlockStored(slot, hash),
          onBlockRemoved: (hash) => placement.onBlockRemoved(slot, hash),
        });
      });
    }
  }

  workerOf(slot: number): number {
    return (slot / this.ranksPerWorker) | 0;
  }

  rankOf(slot: number): number {
    return slot % this.ranksPerWorker;
  }
}

/** Milliseconds to move `tokens` prompt tokens of KV to a decode worker (aisimulate.md §4.6). */
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
