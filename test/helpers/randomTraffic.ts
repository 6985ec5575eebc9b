/** Random traffic and scaling shared by the replay property tests (test/sim/). */
import type { ScalingAction, ScalingPolicy, TickSnapshot } from "../../src/sim/scaling.js";
import { Prng } from "../../src/util/prng.js";

export interface RandomRowsOptions {
  readonly requests: number;
  readonly meanGapMs: number;
  readonly maxInput: number;
  readonly maxOutput: number;
  readonly seed: number;
  /** A gap is this many times longer with probability 0.2 (bursts and lulls). */
  readonly lullFactor: number;
  /** Hash ids of a prompt's first three blocks are drawn from 0 .. alphabet − 1 (shared prefixes). */
  readonly alphabet: number;
}

/** Mooncake rows with bursty gaps and prompts sharing prefixes (4 tokens per trace block). */
export function randomRows(o: RandomRowsOptions): Record<string, unknown>[] {
  const rng = new Prng(o.seed);
  let ts = 0;
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < o.requests; i++) {
    ts += Math.floor(rng.nextFloat() * 2 * o.meanGapMs) * (rng.nextFloat() < 0.2 ? o.lullFactor : 1);
    const input = 1 + Math.floor(rng.nextFloat() * o.maxInput);
    const ids: number[] = [];
    for (let k = 0; k < Math.ceil(input / 4); k++)
      ids.push(Math.floor(rng.nextFloat() * o.alphabet) + (k > 2 ? 10 * i : 0));
    rows.push({
      timestamp: ts,
      input_length: input,
      output_length: Math.floor(rng.nextFloat() * (o.maxOutput + 1)),
      hash_ids: ids,
    });
  }
  return rows;
}

/**
 * A scaling policy that asks for random pool sizes (1 .. maxWorkers) every `periodMs`, each target
 * set with probability `chance`: scale-ups, cancelled startups, drains.
 */
export class RandomScaling implements ScalingPolicy {
  private readonly rng: Prng;
  /** What each tick saw: its time and the forward-pass metrics of both pools, as JSON. */
  readonly seen: string[] = [];
  constructor(
    seed: number,
    private readonly periodMs: number,
    private readonly maxWorkers: number,
    private readonly disaggregated: boolean,
    private readonly chance = 0.7,
  ) {
    this.rng = new Prng(seed);
  }
  initialTickMs(): number {
    return this.periodMs;
  }
  onTick(s: TickSnapshot): ScalingAction {
    this.seen.push(JSON.stringify([s.nowMs, s.prefillFpm, s.decodeFpm]));
    const size = () => 1 + Math.floor(this.rng.nextFloat() * this.maxWorkers);
    return {
      targetPrefill: this.disaggregated && this.rng.nextFloat() < this.chance ? size() : null,
      targetDecode: this.rng.nextFloat() < this.chance ? size() : null,
      nextTickMs: s.nowMs + this.periodMs,
    };
  }
}
