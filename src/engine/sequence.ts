import type { PromptHashCompleter } from "../traffic/requestSource.js";

/**
 * One request's state inside an engine (`ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`, `ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`). Created when the request is
 * dispatched to a worker, dropped when it reaches a terminal state. All fields are set in the
 * constructor so every instance shares one hidden class.
 */
export class Sequence {
  /** Row of the request in the workload. */
  readonly req: number;
  readonly promptLength: number;
  /**
   * Output tokens to generate (requested length, capped by max_model_len; a TRT-LLM no-evict
   * engine clamps it to its cache when the request is queued).
   */
  maxOutput: number;
  /** The array holding the prompt's full-block hashes (the table's, or a trace stream's chunk). */
  readonly promptHashes: Float64Array;
  /** Offset of the prompt's full-block hashes in `promptHashes`. */
  readonly promptHashOffset: number;
  /** Number of full prompt blocks that have a precomputed hash. */
  readonly promptFullBlocks: number;
  /**
   * How many of those hashes `promptHashes` holds: all of them, or only those before
   * `ownerOnlyFrom` when the source hashes lazily (traffic/mooncake/stream.ts "Lazy hashes"),
   * the rest written by `completePromptHashes` when a use needs them.
   */
  promptHashedBlocks: number;
  /** Writes the hashes a lazy source left out (null: the source hashed every block). */
  readonly hashCompleter: PromptHashCompleter | null;
  /**
   * Blocks from this position on (prompt and output) hold content no other request has, so only
   * this request's own lookups could find them: the engine keeps them registered without index
   * entries (engine/kvBlockPool.ts "Owner-only runs"). +∞ when the workload source does not know
   * (a source whose later turns hold an earlier turn's output blocks, mooncake-delta, must not
   * say), and once the request left an engine without completing (its blocks were indexed).
   */
  ownerOnlyFrom: number;
  generated = 0;
  /** Tokens whose KV is computed (includes the cached prefix reused at admission). */
  numComputed = 0;
  /** Sequence length when last admitted: positions below it count as prefill work. */
  prefillTarget = 0;
  admissions = 0;
  /** Prompt tokens found resident on the decode worker when its blocks were reserved. */
  residentTokens = 0;
  /** Host offload: blocks of its prefix being loaded from the host tier (0 when none). */
  loadedBlocks = 0;
  /** Physical KV blocks in sequence order. */
  readonly blocks = new BlockList();
  /** Chained hashes of full blocks past the prompt (blocks holding generated tokens). */
  readonly outputHashes: number[] = [];
  /** Serial of the engine's latest started pass when the request was queued (async scheduling). */
  queuedAfterPass = 0;
  /** Serial of the pass that completed its latest prefill (prompt or recompute); 0 = none yet. */
  prefillDonePass = 0;
  /** Draft tokens this sequence verifies in the pass being formed (speculative decoding; 0 = none). */
  drafts = 0;
  /** SGLang: the deepest radix node of its cached prefix that it locks (-1 = none), that prefix's pages, and its private pages. */
  kvNode = -1;
  kvTreePages = 0;
  kvPrivatePages = 0;

  constructor(
    req: number,
    promptLength: number,
    maxOutput: number,
    promptHashes: Float64Array,
    promptHashOffset: number,
    promptFullBlocks: number,
    ownerOnlyFrom = Number.POSITIVE_INFINITY,
    promptHashedBlocks = promptFullBlocks,
    hashCompleter: PromptHashCompleter | null = null,
  ) {
    this.req = req;
    this.promptLength = promptLength;
    this.maxOutput = maxOutput;
    this.promptHashes = promptHashes;
    this.promptHashOffset = promptHashOffset;
    this.promptFullBlocks = promptFullBlocks;
    this.ownerOnlyFrom = ownerOnlyFrom;
    if (promptHashedBlocks < promptFullBlocks && hashCompleter === null) {
      throw new Error(`internal: request ${req} has unhashed prompt blocks and nothing to hash them`);
    }
    this.promptHashedBlocks = promptHashedBlocks;
    this.hashCompleter = hashCompleter;
  }

  /**
   * Makes every prompt block's hash available: an engine calls it before any use past
   * `ownerOnlyFrom` (registering the prompt block by block, a host tier, KV events, a radix
   * cache). Idempotent.
   */
  completePromptHashes(): void {
    if (!(this.promptHashedBlocks < this.promptFullBlocks)) return;
    this.hashCompleter!.completePromptHashes(this.req, this.promptHashes, this.promptHashOffset);
    this.promptHashedBlocks = this.promptFullBlocks;
  }

  get length(): number {
    return this.promptLength + this.generated;
  }
}

/** Output tokens a request gets: the requested count, cut where the context reaches max_model_len. */
export function cappedOutputTokens(
  promptLength: number,
  requested: number,
  maxModelLen: number | null,
): number {
  if (maxModelLen !== null && promptLength < maxModelLen && promptLength + requested > maxModelLen) {
    return maxModelLen - promptLength;
  }
  return requested;
}

/** Builds the engine-side state of a request (capping output at max_model_len). */
export function makeSequence(
  req: number,
  promptLength: number,
  requestedOutput: number,
  promptHashes: Float64Array,
  promptHashOffset: number,
  promptFullBlocks: number,
  maxModelLen: number | null,
  ownerOnlyFrom = Number.POSITIVE_INFINITY,
  promptHashedBlocks = promptFullBlocks,
  hashCompleter: PromptHashCompleter | null = null,
): Sequence {
  const maxOutput = cappedOutputTokens(promptLength, requestedOutput, maxModelLen);
  return new Sequence(
    req,
    promptLength,
    maxOutput,
    promptHashes,
    promptHashOffset,
    promptFullBlocks,
    ownerOnlyFrom,
    promptHashedBlocks,
    hashCompleter,
  );
}

const NO_BLOCKS = new Int32Array(0);

/**
 * A sequence's physical KV blocks in order, in an `Int32Array` its engine hands out from a pool
 * (`BlockArrays`) sized for what the request needs to complete and takes back when the request
 * lets its blocks go: a JS array regrown block by block as the request decoded was the replay's
 * largest source of garbage (docs/performance.md).
 */
export class BlockList {
  ids: Int32Array = NO_BLOCKS;
  /** Blocks held: `ids[0 .. length)`. Setting it lower drops the last ones. */
  length = 0;

  push(block: number): void {
    if (this.length === this.ids.length) {
      // Not reserved by an engine (tests, a few speculative drafts more): grow by doubling.
      const ids = new Int32Array(Math.max(16, 2 * this.length));
      ids.set(this.ids);
      this.ids = ids;
    }
    this.ids[this.length++] = block;
  }
}

/** Free block arrays by size class (a power of two), so that requests reuse them. */
export class BlockArrays {
  /**
   * Free arrays of 2^c blocks at index c (one list per class a 32-bit length can have). Each list
   * starts as one that has held an array: an empty `[]` holds small integers until its first push,
   * and that push's change of element kind came late in a run (a class first freed after the
   * replay's release path was optimized), deoptimizing it (docs/performance.md "Deoptimizations").
   */
  private readonly free: Int32Array[][] = Array.from({ length: 32 }, () => {
    const list = [NO_BLOCKS];
    list.pop();
    return list;
  });

  /** Gives `list` room for at least `blocks` blocks, keeping what it holds. */
  reserve(list: BlockList, blocks: number): void {
    if (list.ids.length >= blocks) return;
    // ⌈log2 blocks⌉ from the bit length of blocks − 1 (blocks ≥ 1 here: the list holds fewer).
    const cls = Math.max(4, 32 - Math.clz32(blocks - 1));
    const ids = this.free[cls].pop() ?? new Int32Array(2 ** cls);
    // Copied element by element: a `subarray` view per reserve was garbage on every admission.
    const held = list.ids;
    for (let i = 0; i < list.length; i++) ids[i] = held[i];
    this.recycle(list.ids);
    list.ids = ids;
  }

  /** Takes back the array of a list that holds no block any more. */
  release(list: BlockList): void {
    this.recycle(list.ids);
    list.ids = NO_BLOCKS;
  }

  private recycle(ids: Int32Array): void {
    if (ids.length === 0) return;
    // Lengths are powers of two: the class is the index of the one set bit.
    const free = this.free[31 - Math.clz32(ids.length)];
    if (free.length < MAX_FREE_PER_CLASS) free.push(ids);
  }
}

/** Arrays kept per size class: more would only hold memory a burst of requests once needed. */
const MAX_FREE_PER_CLASS = 1024;
