/**
 * The settings of one engine (one attention-DP rank's scheduler core) as the cluster builds them
 * from a role's spec: the limits and cache settings every backend reads, and SGLang's own.
 */
import type { WorkerRole } from "../util/workerRole.js";
import type { CapacityPolicy } from "./capacityPolicy.js";
import type { DiskKvTier, DiskLink } from "./diskKvTier.js";
import type { HostKvTier, WorkerLink } from "./hostKvTier.js";
import type { SpeculationSpec } from "./speculation.js";

/** Scheduler limits and cache settings of one vLLM-like worker. */
export interface EngineConfig {
  /**
   * What the worker does in the deployment: `aggregated` serves whole requests; `prefill` computes
   * the prompt and the first (hidden) token, then holds the KV for the hand-off and charges no
   * decode time; `decode` receives the prompt's KV into reserved blocks and generates the output.
   */
  readonly role: WorkerRole;
  readonly maxBatchedTokens: number;
  readonly maxSequences: number;
  readonly blockSize: number;
  readonly numGpuBlocks: number;
  readonly prefixCaching: boolean;
  /** Prompts with length ≥ this are rejected; generation stops at it. `null` = no limit. */
  readonly maxModelLen: number | null;
  /**
   * vLLM `--async-scheduling`: the next pass is scheduled while the current one runs, so a request
   * that arrives during a pass is first admitted in the pass after the next one (when the worker
   * runs passes back to back and has running requests). Default false.
   */
  readonly asyncScheduling?: boolean;
  /**
   * `timing.first_token: prefill` (vLLM core only): a request whose prefill completes in a pass is
   * not priced in that pass's decode half, as the reference prices it; its first token still comes
   * at the pass end. Default false: it is priced as one more decode row (docs/timing.md "First
   * token").
   */
  readonly firstTokenAtPrefill?: boolean;
  /**
   * vLLM `enable_chunked_prefill` (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`): false = a waiting request whose prompt to
   * compute exceeds the pass's remaining token budget stops admission (it waits for a pass with
   * room), and one longer than `maxBatchedTokens` can never run: rejected. Absent = true.
   */
  readonly chunkedPrefill?: boolean;
  /** The host-memory KV tier behind this cache (docs/offload.md); absent or null: none. */
  readonly hostOffload?: EngineHostOffload | null;
  /**
   * `engine.speculation` (docs/speculation.md): decoding sequences verify up to K draft tokens per
   * pass and emit 1 + the accepted ones. Absent or null = off. A prefill worker never speculates.
   */
  readonly speculation?: SpeculationSpec | null;
  /**
   * TRT-LLM's capacity scheduler (engine/capacityPolicy.ts); absent = vLLM's admission, which
   * `max_utilization` shares.
   */
  readonly capacityPolicy?: CapacityPolicy;
}

/** How an engine reaches its host KV tier. */
export interface EngineHostOffload {
  readonly tier: HostKvTier;
  /** KV bytes of one block on one GPU (its own host link moves them). */
  readonly bytesPerBlock: number;
  /** This GPU's host↔device link. */
  readonly link: WorkerLink;
  /** The disk (G3) tier behind the host tier (docs/offload.md "Disk tier"), or null. */
  readonly disk: DiskKvTier | null;
  /** This engine's own link to the disk tier (reads) and its id there (who wrote what). */
  readonly diskLink: DiskLink;
  readonly diskReader: number;
  /** Asks the replay to call `completeLoad(req)` at `atMs`, when the blocks have landed. */
  scheduleLoadEnd(req: number, atMs: number): void;
}

/** The SGLang scheduler's settings (`ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`; `engine.workers.<role>.sglang`). */
export interface SglangSpec {
  readonly schedulePolicy: "fifo" | "lpm";
  readonly maxPrefillTokens: number;
  readonly chunkedPrefillSize: number;
  readonly clipMaxNewTokens: number;
  readonly scheduleConservativeness: number;
  /**
   * init new_token_ratio = this × schedule_conservativeness: 0.7, or 0.3 under attention DP
   * (`ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`). Absent: 0.7.
   */
  readonly newTokenRatioFactor?: number;
  /**
   * SGLang's `--enable-mixed-chunk` (a fleetsim extension; the reference mocker keeps it off,
   * `ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`): a pass that forms a prefill batch also decodes every running request
   * in the same forward pass, and the prefill budgets leave one token per running request for it.
   * Absent: off.
   */
  readonly enableMixedChunk?: boolean;
}

export interface SglangEngineConfig extends EngineConfig {
  readonly sglang: SglangSpec;
}
