import type { WorkerRole } from "../util/workerRole.js";
import { KvRouter } from "./kvRouter.js";
import { type KvRouterInit, type KvRouterOptions, resolveKvRouterOptions } from "./kvRouterOptions.js";
import { RoundRobinRouter } from "./roundRobin.js";
import type { KvRouterSpec } from "./routerSpec.js";

/**
 * Where the requests of one worker pool go. A *slot* is one attention-DP rank of one worker
 * (`worker × ranksPerWorker + rank`); a worker without attention DP has one slot. This is what
 * every policy needs; a policy that tracks what it sent where (the KV router) exposes its
 * hooks as the `kvRouting` capability, which callers read once (not per event).
 */
export interface Placement {
  /** Slot for a request whose full prompt blocks are `hashes[offset .. offset+count)`. */
  choose(hashes: Float64Array, offset: number, count: number, isl: number, now: number): number;
  /** Prompt blocks the chosen slot already held, per the policy's index (0 when it keeps none). */
  readonly lastOverlapBlocks: number;
  /** A worker joins routing (its slots become candidates). */
  addWorker(worker: number): void;
  /** A worker leaves routing (draining or removed); its in-flight requests still report lifecycle calls. */
  removeWorker(worker: number): void;
  /** The request and KV tracking of a load-aware policy; null for one without (round robin). */
  readonly kvRouting: KvRouting | null;
}

/** The hooks of a policy that tracks requests and KV per slot (the KV router, docs/routing.md). */
export interface KvRouting {
  onDispatched(
    slot: number,
    req: number,
    hashes: Float64Array,
    offset: number,
    count: number,
    isl: number,
    now: number,
    predictedPrefillMs: number,
  ): void;
  onPrefillCompleted(slot: number, req: number, now: number): void;
  onFreed(slot: number, req: number, now: number): void;
  /** Feeds the policy's prefix index from a slot's KV events. */
  onBlockStored(slot: number, hash: number): void;
  onBlockRemoved(slot: number, hash: number): void;
  /** Whether `onDispatched` needs a predicted prefill duration (router `prefill_load_model: aic`). */
  readonly wantsPrefillPrediction: boolean;
  /** Whether the policy listens to KV events (engines skip wiring them otherwise). */
  readonly wantsKvEvents: boolean;
  /** Changes the cost parameters from now on (retune's PATCH /router_policy, docs/retune.md §9). */
  setCostParameters(p: RouterCostParameters): void;
}

/** The retunable KV-router cost parameters (config names). */
export interface RouterCostParameters {
  readonly overlapScoreCredit: number;
  readonly prefillLoadScale: number;
  readonly temperature: number;
}

/**
 * Round robin over workers in id order (position kept across topology changes), and within a
 * worker over its attention-DP ranks (`ai-dynamo/aisimulate@a2532ce:crates/core/src/replay/core/round_robin.rs`: per-worker DP rank round-robin).
 */
export class RoundRobinPlacement implements Placement {
  private readonly workers = new RoundRobinRouter();
  private readonly rankCursor: number[] = [];
  readonly lastOverlapBlocks = 0;
  readonly kvRouting = null;

  constructor(private readonly ranksPerWorker: number) {}

  addWorker(worker: number): void {
    while (this.rankCursor.length <= worker) this.rankCursor.push(0);
    this.workers.addWorker(worker);
  }

  removeWorker(worker: number): void {
    this.workers.removeWorker(worker);
  }

  choose(): number {
    const w = this.workers.pick();
    if (w < 0) throw new Error("internal: no worker is ready to take a request");
    const r = this.rankCursor[w];
    this.rankCursor[w] = r + 1 === this.ranksPerWorker ? 0 : r + 1;
    return w * this.ranksPerWorker + r;
  }
}

/** Router seed of the canonical replay (`ai-dynamo/aisimulate@791ea8e:python/aisimulate/src/aisimulate/compiler.py`: worker-selection seed 0xD1A05EED). */
export const KV_ROUTER_SEED = 0xd1a05eed;

/**
 * What each pool's KV router changes from Dynamo's defaults, as Dynamo's replay builds them
 * (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`, `ai-dynamo/aisimulate@a976b2b:crates/core/src/replay/handoff.rs`): the prefill router tracks no active blocks (prefill
 * workers hold no decode load); the decode router gives no overlap credit, tracks no prefill
 * tokens and assumes no KV reuse (its cost is the decode load alone), and never decays prefill
 * tokens (the AIC prefill-load model applies to the prefill-stage router only).
 */
const ROLE_PRESETS: Readonly<Record<WorkerRole, Readonly<Partial<KvRouterOptions>>>> = {
  aggregated: {},
  prefill: { trackActiveBlocks: false },
  decode: {
    overlapScoreCredit: 0,
    trackPrefillTokens: false,
    assumeKvReuse: false,
    prefillLoadModel: "none",
  },
};

/** The router options of one pool: `init` with the role's preset applied, defaults filled, checked. */
export function kvRouterOptionsForRole(role: WorkerRole, init: KvRouterInit): KvRouterOptions {
  return resolveKvRouterOptions({ ...init, ...ROLE_PRESETS[role] });
}

/** The Dynamo KV router over the slots of a pool, with its role's preset (`kvRouterOptionsForRole`). */
export class KvPlacement implements Placement, KvRouting {
  private readonly router: KvRouter;
  readonly kvRouting: KvRouting = this;
  private readonly preset: Readonly<Partial<KvRouterOptions>>;
  readonly wantsPrefillPrediction: boolean;
  readonly wantsKvEvents: boolean;

  constructor(
    spec: KvRouterSpec,
    role: WorkerRole,
    private readonly ranksPerWorker: number,
    blockSize: number,
  ) {
    this.preset = ROLE_PRESETS[role];
    this.router = new KvRouter(
      kvRouterOptionsForRole(role, {
        blockSize,
        overlapScoreCredit: spec.overlapScoreCredit,
        prefillLoadScale: spec.prefillLoadScale,
        temperature: spec.temperature,
        prefillLoadModel: spec.prefillLoadModel,
        seed: KV_ROUTER_SEED,
      }),
    );
    this.wantsPrefillPrediction = this.router.options.prefillLoadModel === "aic";
    this.wantsKvEvents = role !== "decode";
  }

  /** Patches the router's scoring; a decode-stage router keeps giving no overlap credit. */
  setCostParameters(p: RouterCostParameters): void {
    this.router.setCostParameters({
      overlapScoreCredit: this.preset.overlapScoreCredit ?? p.overlapScoreCredit,
      prefillLoadScale: p.prefillLoadScale,
      temperature: p.temperature,
    });
  }

  addWorker(worker: number): void {
    for (let r = 0; r < this.ranksPerWorker; r++) this.router.addWorker(worker * this.ranksPerWorker + r);
  }

  removeWorker(worker: number): void {
    for (let r = 0; r < this.ranksPerWorker; r++) this.router.removeWorker(worker * this.ranksPerWorker + r);
  }

  get lastOverlapBlocks(): number {
    return this.router.lastOverlapBlocks();
  }

  choose(hashes: Float64Array, offset: number, count: number, isl: number, now: number): number {
    const slot = this.router.select(hashes, offset, count, isl, now);
    if (slot < 0) throw new Error("internal: no worker is ready to take a request");
    return slot;
  }

  /** Hands the dispatch to the router as is (one closure per policy, none per request). */
  readonly onDispatched: KvRouting["onDispatched"] = (
    slot,
    req,
    hashes,
    offset,
    count,
    isl,
    now,
    prefillMs,
  ) => this.router.addRequest(slot, req, hashes, offset, count, isl, now, prefillMs);

  onPrefillCompleted(slot: number, req: number, now: number): void {
    this.router.markPrefillCompleted(slot, req, now);
  }

  onFreed(slot: number, req: number, now: number): void {
    this.router.free(slot, req, now);
  }

  onBlockStored(slot: number, hash: number): void {
    this.router.onBlockStored(slot, hash);
  }

  onBlockRemoved(slot: number, hash: number): void {
    this.router.onBlockRemoved(slot, hash);
  }
}
