/**
 * One request's state inside an engine (mocker.md §1.2, §1.3). Created when the request is
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
  readonly blocks: number[] = [];
  /** Chained hashes of full blocks past the prompt (blocks holding generated tokens). */
  readonly outputHashes: number[] = [];
  /** Serial of the engine's latest started pass when the request was queued (async scheduling). */
  queuedAfterPass = 0;
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
  ) {
    this.req = req;
    this.promptLength = promptLength;
    this.maxOutput = maxOutput;
    this.promptHashes = promptHashes;
    this.promptHashOffset = promptHashOffset;
    this.promptFullBlocks = promptFullBlocks;
  }

  get length(): number {
    return this.promptLength + this.generated;
  }
}
