import { SglangEngine } from "../../src/engine/sglangEngine.js";
import { VllmEngine } from "../../src/engine/vllmEngine.js";
import {
  type AdmissionObserver,
  type EngineConfig,
  makeSequence,
  type SglangEngineConfig,
  Signal,
  type WorkerEngine,
} from "../../src/engine/workerEngine.js";
import { FixedTiming } from "../../src/timing/fixed.js";
import type { TimingModel } from "../../src/timing/timingModel.js";
import { SGLANG_DEFAULTS_SPEC } from "./specs.js";

export interface Admission {
  req: number;
  at: number;
  reused: number;
}

export interface PassRecord {
  start: number;
  duration: number;
  signals: [number, keyof typeof Signal][];
}

const KIND_NAMES = Object.fromEntries(Object.entries(Signal).map(([k, v]) => [v, k])) as Record<
  number,
  keyof typeof Signal
>;

/**
 * Drives one engine by hand. Prompts are given as their full-block hash lists, so tests control
 * exactly which blocks are shared.
 */
export class EngineHarness<E extends WorkerEngine = VllmEngine> {
  readonly engine: E;
  readonly admissions: Admission[] = [];
  readonly passes: PassRecord[] = [];
  private readonly hashes: number[] = [];
  private readonly offsets: number[] = [];
  private readonly fullBlocks: number[] = [];
  private readonly promptHashes: Float64Array;
  now = 0;

  constructor(
    readonly config: EngineConfig,
    /** Prompt block hashes per request row (only full blocks). */
    prompts: number[][],
    timing: TimingModel = new FixedTiming(10, 2),
    make: (config: EngineConfig, timing: TimingModel, observer: AdmissionObserver) => E = (c, t, o) =>
      new VllmEngine(c, t, o) as unknown as E,
  ) {
    for (const p of prompts) {
      this.offsets.push(this.hashes.length);
      this.fullBlocks.push(p.length);
      this.hashes.push(...p);
    }
    this.promptHashes = Float64Array.from(this.hashes);
    this.engine = make(config, timing, {
      onAdmit: (req, at, reused) => this.admissions.push({ req, at, reused }),
    });
  }

  submit(req: number, promptLength: number, outputTokens: number): void {
    const full = Math.min(this.fullBlocks[req], Math.floor(promptLength / this.config.blockSize));
    this.engine.enqueue(
      makeSequence(
        req,
        promptLength,
        outputTokens,
        this.promptHashes,
        this.offsets[req],
        full,
        this.config.maxModelLen,
      ),
    );
  }

  /** Runs one pass at the current time and advances the clock to its end. */
  pass(): PassRecord {
    const start = this.now;
    const duration = this.engine.startPass(start);
    const signals: [number, keyof typeof Signal][] = Array.from(
      this.engine.signalReq.subarray(0, this.engine.signalCount),
      (r, i) => [r, KIND_NAMES[this.engine.signalKind[i]]],
    );
    this.now = start + duration;
    const rec = { start, duration, signals };
    this.passes.push(rec);
    return rec;
  }

  /** Hash of full prompt block `k` of request `req`. */
  hashOf(req: number, k: number): number {
    return this.hashes[this.offsets[req] + k];
  }

  /** Runs passes until the engine is idle; returns how many ran. */
  drain(maxPasses = 10_000): number {
    let n = 0;
    while (this.engine.hasWork()) {
      if (++n > maxPasses) throw new Error("engine did not drain");
      this.pass();
    }
    return n;
  }
}

export function engineConfig(over: Partial<EngineConfig> = {}): EngineConfig {
  return {
    role: "aggregated",
    maxBatchedTokens: 8192,
    maxSequences: 256,
    blockSize: 4,
    numGpuBlocks: 32,
    prefixCaching: true,
    maxModelLen: null,
    ...over,
  };
}

/** A harness over an SGLang engine (`sglang` settings over the reference's defaults). */
export function sglangHarness(
  over: Partial<SglangEngineConfig> = {},
  prompts: number[][] = [],
  timing: TimingModel = new FixedTiming(10, 2),
): EngineHarness<SglangEngine> {
  const config: SglangEngineConfig = {
    ...engineConfig(),
    sglang: SGLANG_DEFAULTS_SPEC,
    ...over,
  };
  return new EngineHarness(config, prompts, timing, (_c, t, o) => new SglangEngine(config, t, o));
}
