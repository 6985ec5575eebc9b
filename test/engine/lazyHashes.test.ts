/**
 * Lazily hashed prompts (traffic/mooncake/stream.ts "Lazy hashes"): a source may hand an engine a
 * sequence whose hashes stop at `ownerOnlyFrom`. The engine must have the rest written
 * (`Sequence.completePromptHashes`) before it registers or looks up any block past there: when a
 * request leaves without completing (a preemption indexes its owner-only blocks), and up front
 * when it indexes every block (KV events) or matches whole prompts (SGLang). A plain run never
 * needs them.
 */
import { describe, expect, it } from "vitest";
import { makeSequence, type Sequence } from "../../src/engine/sequence.js";
import { SglangEngine } from "../../src/engine/sglangEngine.js";
import { VllmEngine } from "../../src/engine/vllmEngine.js";
import type { WorkerEngine } from "../../src/engine/workerEngine.js";
import { FixedTiming } from "../../src/timing/fixed.js";
import type { PromptHashCompleter } from "../../src/traffic/requestSource.js";
import { mixBlockHash } from "../../src/util/blockHashTable.js";
import { engineConfig } from "../helpers/engineHarness.js";
import { SGLANG_DEFAULTS_SPEC } from "../helpers/specs.js";

/** Two-block prompts: request r's hashes are [10r + 1, 10r + 2]; only the first is written up front. */
class LazyPrompts implements PromptHashCompleter {
  readonly hashes: Float64Array;
  readonly completed: number[] = [];

  constructor(readonly count: number) {
    this.hashes = new Float64Array(2 * count);
    for (let r = 0; r < count; r++) this.hashes[2 * r] = 10 * r + 1;
  }

  completePromptHashes(row: number, out: Float64Array, outStart: number): void {
    this.completed.push(row);
    out[outStart] = 10 * row + 1;
    out[outStart + 1] = 10 * row + 2;
  }

  /** Request r: 8 prompt tokens (two blocks of 4), owner-only from block 1, one block hashed. */
  sequence(r: number, output: number): Sequence {
    return makeSequence(r, 8, output, this.hashes, 2 * r, 2, null, 1, 1, this);
  }
}

/** The block indexed under request r's second prompt block's hash, or −1 (its index home is its group's). */
function secondBlock(engine: VllmEngine, r: number): number {
  return engine.pool.lookup(10 * r + 2, (mixBlockHash(10 * r + 1) + 1) | 0);
}

/** A vLLM engine of `numGpuBlocks` blocks. */
function vllm(numGpuBlocks: number): VllmEngine {
  return new VllmEngine(engineConfig({ numGpuBlocks }), new FixedTiming(10, 2), { onAdmit: () => {} });
}

/** Requests 0 and 1, `output` tokens each, queued on a vLLM engine of `numGpuBlocks` blocks. */
function twoQueued(numGpuBlocks: number, output: number): { prompts: LazyPrompts; engine: VllmEngine } {
  const prompts = new LazyPrompts(2);
  const engine = vllm(numGpuBlocks);
  engine.enqueue(prompts.sequence(0, output));
  engine.enqueue(prompts.sequence(1, output));
  return { prompts, engine };
}

function drain(engine: WorkerEngine): void {
  let now = 0;
  for (let n = 0; engine.hasWork(); n++) {
    if (n > 1000) throw new Error("engine did not drain");
    now += engine.startPass(now);
    engine.takeSignals();
  }
}

describe("an engine finishes a lazy prompt's hashes before it uses them", () => {
  it("a plain vLLM run reads none past ownerOnlyFrom", () => {
    const { prompts, engine } = twoQueued(32, 5);
    drain(engine);
    expect(engine.preemptions).toBe(0);
    expect(prompts.completed).toEqual([]);
    // Block 0 is indexed under its hash; block 1 is owner-only (no index entry).
    expect(engine.pool.lookup(1)).toBeGreaterThanOrEqual(0);
    expect(secondBlock(engine, 0)).toBe(-1);
  });

  it("a preempted request has them written before its owner-only blocks are indexed", () => {
    const { prompts, engine } = twoQueued(6, 10);
    let now = 0;
    while (engine.preemptions === 0) {
      now += engine.startPass(now);
      engine.takeSignals();
    }
    // Request 1 (the newest) was preempted: its prompt is whole now, and its second block, which
    // only it holds, is indexed under its true hash (12), where its re-admission will find it.
    expect(prompts.completed).toEqual([1]);
    expect(Array.from(prompts.hashes.subarray(2, 4))).toEqual([11, 12]);
    expect(secondBlock(engine, 1)).toBeGreaterThanOrEqual(0);
    // Nothing under the placeholder an unwritten hash would have been.
    expect(engine.pool.lookup(0, (mixBlockHash(11) + 1) | 0)).toBe(-1);
    drain(engine);
  });

  it("an engine sending KV events indexes every block: the whole prompt is hashed when it is queued", () => {
    const prompts = new LazyPrompts(1);
    const engine = vllm(32);
    const stored: number[] = [];
    engine.pool.setListener({ onBlockStored: (h) => stored.push(h), onBlockRemoved: () => {} });
    engine.enqueue(prompts.sequence(0, 3));
    expect(prompts.completed).toEqual([0]);
    drain(engine);
    expect(stored).toEqual([1, 2]);
  });

  it("SGLang matches whole prompts: hashed when queued", () => {
    const prompts = new LazyPrompts(1);
    const config = { ...engineConfig(), sglang: SGLANG_DEFAULTS_SPEC };
    const engine = new SglangEngine(config, new FixedTiming(10, 2), { onAdmit: () => {} });
    engine.enqueue(prompts.sequence(0, 3));
    expect(prompts.completed).toEqual([0]);
    drain(engine);
  });

  it("a sequence with unhashed blocks and nothing to hash them is refused", () => {
    expect(() => makeSequence(0, 8, 1, new Float64Array(2), 0, 2, null, 1, 1, null)).toThrow(/unhashed/);
  });
});
