import type { DraftKind } from "../timing/timingSpec.js";

/**
 * Speculative decoding of a worker (`engine.speculation`, docs/speculation.md): each decode pass
 * of a sequence verifies its real token and up to `numSpeculativeTokens` draft tokens and emits
 * 1 + the accepted prefix of the drafts.
 */
export interface SpeculationSpec {
  readonly kind: DraftKind;
  /** Draft tokens proposed per sequence per pass (K, 1..5). */
  readonly numSpeculativeTokens: number;
  /**
   * Conditional acceptance rates, one per draft position: entry i is the probability that draft i
   * is accepted given that every earlier draft was (the reference's form; K entries).
   */
  readonly acceptanceRates: readonly number[];
  /** Seed of the acceptance draws. */
  readonly seed: number;
}

/** Expected tokens per verify pass with every draft proposed: 1 + r1 + r1·r2 + … (the mean accept length). */
export function expectedAcceptLength(rates: readonly number[]): number {
  let expected = 1;
  let reach = 1;
  for (const r of rates) {
    reach *= r;
    expected += reach;
  }
  return expected;
}

const TWO_POW_32 = 4294967296;

/** 32-bit avalanche (the splitmix32 / murmur3 finalizer): 32-bit integer arithmetic only. */
function mix32(x: number): number {
  let z = x | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * The acceptance draws (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`, `aic_nextn`): a pass that verifies `drafts` draft
 * tokens of a sequence emits 1 + the number of leading drafts accepted, draft i accepted with its
 * conditional rate. Each draw is a counter-based hash of (seed, request row, tokens the request
 * had generated, draft position) rather than the next number of a stream: a request's bursts are
 * the same whichever worker, batch, stepper or executor runs it, and nothing depends on the
 * order in which requests are visited (docs/speculation.md, "Known differences").
 */
export class BurstSampler {
  private readonly rates: Float64Array;
  private readonly seedKey: number;

  constructor(spec: SpeculationSpec) {
    this.rates = Float64Array.from(spec.acceptanceRates);
    const lo = spec.seed >>> 0;
    const hi = Math.floor(spec.seed / TWO_POW_32) >>> 0;
    this.seedKey = mix32(lo ^ mix32(hi ^ 0x27d4eb2d));
  }

  /** Tokens a verify pass of `drafts` drafts emits for request `req` after `generated` tokens: 1 … drafts + 1. */
  burst(req: number, generated: number, drafts: number): number {
    const rates = this.rates;
    const n = Math.min(drafts, rates.length);
    // Two rounds: a key per (seed, request), then per position in its output.
    const key = mix32(mix32(this.seedKey ^ req) ^ mix32((generated + 0x9e3779b9) | 0));
    let tokens = 1;
    for (let i = 0; i < n; i++) {
      const u = mix32((key + Math.imul(i + 1, 0x9e3779b9)) | 0) / TWO_POW_32;
      if (!(u < rates[i])) break;
      tokens++;
    }
    return tokens;
  }
}
