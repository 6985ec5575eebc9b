import type { RunSpec } from "../config/runSpec.js";
import { Signal, VllmEngine } from "../engine/vllmEngine.js";
import { Collector, Terminal } from "../metrics/collector.js";
import { RoundRobinRouter } from "../router/roundRobin.js";
import type { TimingModel } from "../timing/timingModel.js";
import type { RequestTable } from "../traffic/requests.js";
import { ArrivalPlan } from "./arrivals.js";
import { EventHeap, eventOrder, Phase } from "./eventHeap.js";

export interface ReplayOptions {
  readonly capturePerRequest: boolean;
}

/** What a finished replay hands to reporting. */
export interface ReplayResult {
  readonly collector: Collector;
  readonly table: RequestTable;
  /** Virtual time of the last processed event, ms. */
  readonly endTimeMs: number;
  /** ∫ provisioned workers dt over the run, in worker-seconds, per role. */
  readonly prefillWorkerSeconds: number;
  readonly decodeWorkerSeconds: number;
  readonly prefillGpusPerWorker: number;
  readonly decodeGpusPerWorker: number;
  /** Host time spent in the event loop, ms (`wall_time_ms`). */
  readonly wallTimeMs: number;
  readonly preemptions: number;
  readonly passes: number;
}

/** Whether some request's full context (prompt + output − 1 computed tokens) exceeds the KV cache. */
function contextMayOutgrowCache(table: RequestTable, role: RunSpec["engine"]["aggregated"]): boolean {
  let longest = 0;
  for (let r = 0; r < table.count; r++) {
    const ctx = table.inputLength[r] + table.outputLength[r] - 1;
    if (ctx > longest) longest = ctx;
  }
  if (role.maxModelLen !== null && longest > role.maxModelLen) longest = role.maxModelLen;
  return Math.ceil(longest / role.blockSize) > role.numGpuBlocks;
}

/** Thrown out of `run` when `abort()` was called (Ctrl-C). */
export class ReplayAborted extends Error {
  constructor() {
    super("replay aborted");
  }
}

/**
 * The discrete-event replay of an aggregated pool (aisimulate.md §5.2, mocker.md §4.2).
 *
 * At each timestamp, in this fixed order: pass completions (tokens, terminals; a terminal may make
 * the next session turn ready), arrivals (routed round-robin into a worker's waiting queue), then
 * every idle worker with work starts a pass, in worker-id order. Passes execute eagerly at their
 * start; their signals are delivered at their end. Ties at one timestamp break by phase and a
 * stable id (worker id, session index), never by insertion order.
 */
export class Replay {
  private readonly heap = new EventHeap(4096);
  /** One engine per attention-DP rank: worker w's ranks are `engines[w·D .. w·D + D)`. */
  private readonly engines: VllmEngine[] = [];
  private readonly ranksPerWorker: number;
  private readonly workerCount: number;
  private readonly busy: Uint8Array;
  private readonly dirty: Uint8Array;
  private readonly router = new RoundRobinRouter();
  private readonly plan: ArrivalPlan;
  readonly collector: Collector;
  private readonly maxTimeMs: number | null;
  private now = 0;
  private workerSeconds = 0;
  private passes = 0;
  private aborted = false;
  private readonly scheduleArrival: (row: number, time: number) => void;

  constructor(
    private readonly spec: RunSpec,
    private readonly table: RequestTable,
    timing: TimingModel,
    opts: ReplayOptions,
  ) {
    const role = spec.engine.aggregated;
    if (table.engineBlockSize !== role.blockSize) {
      throw new Error(
        `internal: request hashes use block size ${table.engineBlockSize}, engine ${role.blockSize}`,
      );
    }
    this.maxTimeMs = spec.stop.maxVirtualTimeMs;
    this.collector = new Collector(table.count, {
      // Only completed requests may contribute token gaps. Gaps can stream straight into the
      // sketches unless some admitted request may end without completing: cut off by the
      // virtual-time cap, or rejected after its context outgrew the whole KV cache.
      holdGapsUntilTerminal: this.maxTimeMs !== null || contextMayOutgrowCache(table, role),
      captureHistory: opts.capturePerRequest,
    });
    this.workerCount = role.replicas;
    this.ranksPerWorker = role.attentionData;
    for (let w = 0; w < role.replicas; w++) {
      for (let r = 0; r < role.attentionData; r++) {
        this.engines.push(
          new VllmEngine(
            {
              maxBatchedTokens: role.maxBatchedTokens,
              maxSequences: role.maxSequences,
              blockSize: role.blockSize,
              numGpuBlocks: role.numGpuBlocks,
              prefixCaching: role.prefixCaching,
              maxModelLen: role.maxModelLen,
            },
            timing,
            table.blockHashes,
            this.collector,
          ),
        );
      }
      this.router.addWorker(w);
    }
    this.busy = new Uint8Array(role.replicas);
    this.dirty = new Uint8Array(role.replicas);
    this.plan = new ArrivalPlan(table, spec.load);
    this.scheduleArrival = (row, time) => {
      this.heap.push(time, eventOrder(Phase.Arrival, table.session[row]), row);
    };
    this.plan.seed(this.scheduleArrival);
  }

  /** Requests a stop at the next yield point (Ctrl-C). */
  abort(): void {
    this.aborted = true;
  }

  /** Runs to the end, yielding to the Node event loop about every 50 ms of host time. */
  async run(): Promise<ReplayResult> {
    const start = performance.now();
    let sliceEnd = start + 50;
    if (this.aborted) throw new ReplayAborted();
    while (this.step(4096)) {
      if (performance.now() >= sliceEnd) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.aborted) throw new ReplayAborted();
        sliceEnd = performance.now() + 50;
      }
    }
    return this.result(performance.now() - start);
  }

  /** Synchronous run (tests, benchmarks). */
  runSync(): ReplayResult {
    const start = performance.now();
    while (this.step(1 << 30)) {
      /* keep going */
    }
    return this.result(performance.now() - start);
  }

  /** Every attention-DP rank's engine (read-only use: invariant checks and diagnostics). */
  get workers(): readonly VllmEngine[] {
    return this.engines;
  }

  /** Virtual time reached so far (progress reporting). */
  get virtualTimeMs(): number {
    return this.now;
  }

  /** Processes up to `maxTimestamps` distinct timestamps; false when the run is over. */
  step(maxTimestamps: number): boolean {
    const heap = this.heap;
    const provisioned = this.workerCount;
    for (let k = 0; k < maxTimestamps; k++) {
      const t = heap.peekTime();
      if (t === Number.POSITIVE_INFINITY) return false;
      // Soft cap: events at the cap are processed, later ones are not (aisimulate.md §2.1).
      if (this.maxTimeMs !== null && t > this.maxTimeMs) return false;
      if (t < this.now) throw new Error(`internal: time went backwards (${t} < ${this.now})`);
      this.workerSeconds += (provisioned * (t - this.now)) / 1000;
      this.now = t;
      do {
        while (heap.peekTime() === t) {
          const order = heap.peekOrder();
          const payload = heap.peekPayload();
          heap.pop();
          if (order < eventOrder(Phase.WorkerReady, 0)) this.completePass(payload, t);
          else this.arrive(payload, t);
        }
        this.driveWorkers(t);
      } while (heap.peekTime() === t);
    }
    return true;
  }

  private arrive(row: number, t: number): void {
    this.collector.onArrival(row, t);
    const w = this.router.pick();
    const rank = this.pickRank(w);
    this.collector.onDispatch(row, t, w, rank);
    const table = this.table;
    const offset = table.blockOffsets[row];
    this.engines[w * this.ranksPerWorker + rank].enqueue(
      VllmEngine.makeSequence(
        row,
        table.inputLength[row],
        table.outputLength[row],
        offset,
        table.blockOffsets[row + 1] - offset,
        this.spec.engine.aggregated.maxModelLen,
      ),
    );
    this.dirty[w] = 1;
  }

  /** The attention-DP rank of worker `w` holding the fewest requests (lowest rank on ties). */
  private pickRank(w: number): number {
    const base = w * this.ranksPerWorker;
    let best = 0;
    let bestLoad = this.engines[base].inFlight;
    for (let r = 1; r < this.ranksPerWorker; r++) {
      const load = this.engines[base + r].inFlight;
      if (load < bestLoad) {
        best = r;
        bestLoad = load;
      }
    }
    return best;
  }

  private completePass(w: number, t: number): void {
    this.busy[w] = 0;
    this.dirty[w] = 1;
    const base = w * this.ranksPerWorker;
    for (let r = 0; r < this.ranksPerWorker; r++) this.deliverSignals(this.engines[base + r], t);
  }

  private deliverSignals(engine: VllmEngine, t: number): void {
    const reqs = engine.signalReq;
    const kinds = engine.signalKind;
    const collector = this.collector;
    for (let i = 0; i < reqs.length; i++) {
      const row = reqs[i];
      const kind = kinds[i];
      if (kind === Signal.Token) {
        collector.onToken(row, t);
        continue;
      }
      if (kind === Signal.TokenAndComplete) {
        collector.onToken(row, t);
        collector.onTerminal(row, t, Terminal.Completed);
      } else if (kind === Signal.Complete) {
        collector.onTerminal(row, t, Terminal.Completed);
      } else {
        collector.onTerminal(row, t, Terminal.Rejected);
      }
      this.plan.onTerminal(row, t, this.scheduleArrival);
    }
    reqs.length = 0;
    kinds.length = 0;
  }

  /**
   * Starts a pass on every idle worker with work, in worker-id order. With attention DP every
   * rank with work forms its own batch at the same time and the worker's pass ends when the
   * slowest rank does (ranks without work wait at the barrier; aisimulate.md §4.3 step 5).
   */
  private driveWorkers(t: number): void {
    const engines = this.engines;
    const D = this.ranksPerWorker;
    for (let w = 0; w < this.workerCount; w++) {
      if (this.dirty[w] === 0 || this.busy[w] === 1) continue;
      this.dirty[w] = 0;
      let progressed = false;
      let duration = 0;
      for (let r = 0; r < D; r++) {
        const engine = engines[w * D + r];
        if (!engine.hasWork()) continue;
        const d = engine.startPass(t);
        if (!engine.lastPassProgressed) continue;
        progressed = true;
        if (d > duration) duration = d;
      }
      // Nothing could run (e.g. the waiting heads do not fit yet): stay idle until new work.
      if (!progressed) continue;
      this.busy[w] = 1;
      this.passes++;
      this.heap.push(t + duration, eventOrder(Phase.PassCompletion, w), w);
    }
  }

  private result(wallTimeMs: number): ReplayResult {
    const role = this.spec.engine.aggregated;
    let preemptions = 0;
    for (const e of this.engines) preemptions += e.preemptions;
    return {
      collector: this.collector,
      table: this.table,
      endTimeMs: this.now,
      prefillWorkerSeconds: 0,
      decodeWorkerSeconds: this.workerSeconds,
      prefillGpusPerWorker: 0,
      decodeGpusPerWorker: role.gpusPerWorker,
      wallTimeMs,
      preemptions,
      passes: this.passes,
    };
  }
}
