import type { KvDtype, WeightDtype } from "./dtypes.js";
import { HardwareError } from "./errors.js";
import type { GpuSpec } from "./gpu.js";
import { Grid, type GridRules } from "./grid.js";
import { storedGrid } from "./gridCache.js";
import type { AttentionHeads, OpPerfTables } from "./perfTables.js";
import { gemmSolMs, generationAttentionSolMs, type MoeShape, moeSolMs } from "./sol.js";
import {
  ALLREDUCE_RULES,
  type AttentionGroup,
  CONTEXT_RULES,
  type ContextExtrapolation,
  contextRules,
  GEMM_RULES,
  GENERATION_RULES,
  type GridData,
  MOE_RULES,
  type MoeTable,
  type OpTableData,
} from "./tableData.js";

function dtypeIndex(d: WeightDtype): number {
  return d === "bfloat16" ? 0 : d === "fp8" ? 1 : d === "fp8_block" ? 2 : -1;
}

/** Numeric key of an attention head configuration (kvHeads 0 = MHA); -1 when out of range. */
function attnKey(kvDtype: KvDtype, headDim: number, kvHeads: number): number {
  const kv = kvDtype === "bfloat16" ? 0 : kvDtype === "fp8" ? 1 : -1;
  if (kv < 0 || !(headDim >= 0 && headDim < 1024) || !(kvHeads >= 0 && kvHeads < 1024)) return -1;
  return kv * 1048576 + headDim * 1024 + kvHeads;
}

/** How an unmeasured head configuration is answered from a measured one. */
interface AttnRoute {
  readonly grid: Grid;
  /** Query heads on the measured grid = heads × headRatio (keeps heads/kv-heads). */
  readonly headRatio: number;
  /** Latency multiplier: (kv heads / measured kv heads) × (head dim / measured head dim). */
  readonly scale: number;
}

interface MoeEntry {
  readonly table: MoeTable;
  readonly grid: Grid;
  readonly maxTokens: number;
  readonly maxLatency: number;
}

interface MoeRoute {
  readonly shape: MoeShape;
  readonly entry: MoeEntry;
  readonly exact: boolean;
}

type AttnKind = "context" | "generation";

function sameMoeShape(a: MoeShape, b: MoeShape): boolean {
  return (
    a.dtype === b.dtype &&
    a.hiddenSize === b.hiddenSize &&
    a.interSize === b.interSize &&
    a.topK === b.topK &&
    a.numExperts === b.numExperts &&
    a.moeTp === b.moeTp &&
    a.moeEp === b.moeEp
  );
}

function describeGroups(groups: readonly AttentionGroup[]): string {
  return groups
    .map((g) => `${g.kvDtype}/hd${g.headDim}/kv${g.kvHeads === 0 ? "=heads" : g.kvHeads}`)
    .join(", ");
}

/** The interpolation grids of `OpTableData`, index-aligned with its arrays. */
export interface Grids {
  readonly gemm: readonly Grid[];
  readonly contextAttention: readonly Grid[];
  readonly generationAttention: readonly Grid[];
  readonly allReduce: readonly Grid[];
  readonly moe: readonly Grid[];
}

/** Measured GEMM cells raised to ≥ SOL (AIC `GEMM._correct_sol`), holes filled. */
function gemmGrid(spec: GpuSpec, dtype: WeightDtype, grid: GridData): Grid {
  const [ms, ns, ks] = grid.axes;
  const cells = grid.latencyMs.slice();
  let c = 0;
  for (const m of ms) {
    for (const n of ns) {
      for (const k of ks) {
        const v = cells[c];
        if (v !== null) cells[c] = Math.max(v, gemmSolMs(spec, dtype, m, n, k));
        c++;
      }
    }
  }
  return new Grid(grid.axes, cells, GEMM_RULES);
}

/**
 * Decode-attention grid: measured cells raised to ≥ SOL, holes filled, and every cell raised to
 * ≥ SOL again (AIC `GenerationAttention.load_data` clamps before and after extrapolating).
 */
function generationGrid(spec: GpuSpec, g: AttentionGroup): Grid {
  const [hs, bs, kvs] = g.grid.axes;
  const sol = (c: number): number => {
    const h = hs[Math.floor(c / (bs.length * kvs.length))];
    const b = bs[Math.floor(c / kvs.length) % bs.length];
    const kv = kvs[c % kvs.length];
    return generationAttentionSolMs(spec, b, kv, h, g.kvHeads === 0 ? h : g.kvHeads, g.headDim, g.kvDtype);
  };
  const cells = g.grid.latencyMs.map((v, c) => (v === null ? null : Math.max(v, sol(c))));
  const grid = new Grid(g.grid.axes, cells, GENERATION_RULES);
  for (let c = 0; c < grid.values.length; c++) grid.values[c] = Math.max(grid.values[c], sol(c));
  return grid;
}

const contextGrid = (g: AttentionGroup, rules: GridRules = CONTEXT_RULES): Grid =>
  new Grid(g.grid.axes, g.grid.latencyMs, rules);
const allReduceGrid = (grid: GridData): Grid => new Grid(grid.axes, grid.latencyMs, ALLREDUCE_RULES);
export const moeGrid = (t: MoeTable): Grid => new Grid(t.grid.axes, t.grid.latencyMs, MOE_RULES);

/** Builds (SOL-clamps, hole-fills) every grid of `data`. */
export function buildGrids(data: OpTableData, spec: GpuSpec): Grids {
  return {
    gemm: data.gemm.map((g) => gemmGrid(spec, g.dtype, g.grid)),
    contextAttention: data.contextAttention.map((g) => contextGrid(g)),
    generationAttention: data.generationAttention.map((g) => generationGrid(spec, g)),
    allReduce: data.allReduce.map((t) => allReduceGrid(t.grid)),
    moe: data.moe.map(moeGrid),
  };
}

/**
 * A grid built (SOL-clamped, hole-filled) on its first query, as `buildGrids` builds it: a run
 * pays only for the tables its model uses (one GEMM dtype, a few attention groups), and compact
 * cells are decoded only then (start-up, docs/performance.md).
 */
class LazyGrid {
  private grid: Grid | null = null;

  constructor(private readonly build: () => Grid) {}

  get(): Grid {
    this.grid ??= this.build();
    return this.grid;
  }
}

/**
 * `OpPerfTables` over `OpTableData`: the one query implementation both backends share.
 * Construction clamps measured GEMM and decode-attention cells to ≥ SOL (AIC `_correct_sol`) and
 * fills holes; queries are typed-array interpolations (`Grid`). See docs/perf-tables.md.
 */
export class InterpolatedTables implements OpPerfTables {
  readonly gpu: string;
  private readonly gemmGrids: (LazyGrid | undefined)[] = [undefined, undefined, undefined];
  private readonly ctx = new Map<number, LazyGrid>();
  private readonly gen = new Map<number, LazyGrid>();
  private readonly ctxRoutes = new Map<number, AttnRoute>();
  private readonly genRoutes = new Map<number, AttnRoute>();
  private readonly ar = new Map<number, LazyGrid>();
  /** Built on the first MoE query (dense models never build them). */
  private moeEntriesBuilt: MoeEntry[] | null = null;
  private readonly moeRoutes = new Map<string, MoeRoute>();
  private lastMoe: MoeRoute | undefined;

  /**
   * `cacheScope` names the table data for the grid store (hardware/gridCache.ts): grids built from
   * it may be kept between runs of one build. Null (a user's perf_database): always built.
   */
  constructor(
    private readonly data: OpTableData,
    private readonly spec: GpuSpec,
    private readonly cacheScope: string | null = null,
    /** Context attention beyond the longest measured sequence (tableData.ts `contextRules`). */
    contextBeyond: ContextExtrapolation = "sqrt",
  ) {
    this.gpu = data.gpu;
    // The same grids as buildGrids(data, spec), each built on its first query.
    const lazy = (name: string, rules: GridRules, build: () => Grid): LazyGrid =>
      new LazyGrid(() => storedGrid(cacheScope === null ? null : `${cacheScope}|${name}`, rules, build));
    for (const g of data.gemm) {
      this.gemmGrids[dtypeIndex(g.dtype)] = lazy(`gemm|${g.dtype}`, GEMM_RULES, () =>
        gemmGrid(spec, g.dtype, g.grid),
      );
    }
    const ctxRules = contextRules(contextBeyond);
    // The default rule keeps its historical store key; another rule is another grid.
    const ctxName = contextBeyond === "sqrt" ? "context" : `context-${contextBeyond}`;
    for (const g of data.contextAttention) {
      const key = attnKey(g.kvDtype, g.headDim, g.kvHeads);
      this.ctx.set(
        key,
        lazy(`${ctxName}|${key}`, ctxRules, () => contextGrid(g, ctxRules)),
      );
    }
    for (const g of data.generationAttention) {
      const key = attnKey(g.kvDtype, g.headDim, g.kvHeads);
      this.gen.set(
        key,
        lazy(`generation|${key}`, GENERATION_RULES, () => generationGrid(spec, g)),
      );
    }
    for (const t of data.allReduce) {
      this.ar.set(
        t.numGpus,
        lazy(`allreduce|${t.numGpus}`, ALLREDUCE_RULES, () => allReduceGrid(t.grid)),
      );
    }
  }

  private get moeEntries(): readonly MoeEntry[] {
    const scope = this.cacheScope;
    this.moeEntriesBuilt ??= this.data.moe.map((table, i) => {
      const grid = storedGrid(scope === null ? null : `${scope}|moe|${i}`, MOE_RULES, () => moeGrid(table));
      const knots = grid.knots[0];
      return { table, grid, maxTokens: knots[knots.length - 1], maxLatency: grid.values[knots.length - 1] };
    });
    return this.moeEntriesBuilt;
  }

  hasGemm(dtype: WeightDtype): boolean {
    return this.gemmGrids[dtypeIndex(dtype)] !== undefined;
  }

  gemm(dtype: WeightDtype, m: number, n: number, k: number): number {
    if (!(m > 0 && n > 0 && k > 0)) return 0;
    const g = this.gemmGrids[dtypeIndex(dtype)];
    if (g === undefined) {
      const have = this.data.gemm.map((x) => x.dtype).join(", ");
      throw new HardwareError(`no ${dtype} GEMM table for ${this.gpu} (measured: ${have || "none"})`);
    }
    return g.get().at3(m, n, k);
  }

  contextAttention(heads: AttentionHeads, batch: number, newTokens: number, prefix: number): number {
    const { numHeads, numKvHeads } = heads;
    if (!(batch > 0 && newTokens > 0 && numHeads > 0)) return 0;
    const p = Math.max(prefix, 0);
    const full = newTokens + p;
    const kvKey = numKvHeads === numHeads ? 0 : numKvHeads;
    const g = this.ctx.get(attnKey(heads.kvDtype, heads.headDim, kvKey));
    const base =
      g !== undefined ? g.get().at3(numHeads, batch, full) : this.routed("context", heads, batch, full);
    if (p === 0) return base;
    // AIC: the table has no prefix axis; time the full causal attention over prefix + new tokens
    // and keep the share of the (full² − prefix²) score matrix the new tokens compute.
    const r = p / full;
    return base * (1 - r * r);
  }

  generationAttention(heads: AttentionHeads, batch: number, kvLength: number): number {
    const { numHeads, numKvHeads } = heads;
    if (!(batch > 0 && numHeads > 0)) return 0;
    const kvKey = numKvHeads === numHeads ? 0 : numKvHeads;
    const g = this.gen.get(attnKey(heads.kvDtype, heads.headDim, kvKey));
    // A decode run asks for the same heads and batch with one more cached token each pass.
    if (g !== undefined) return g.get().at3Line(numHeads, batch, kvLength);
    return this.routed("generation", heads, batch, kvLength);
  }

  allReduce(numGpus: number, messageBytes: number): number {
    if (!(numGpus > 1 && messageBytes > 0)) return 0;
    let g = this.ar.get(numGpus);
    let scale = 1;
    const perNode = this.spec.gpusPerNode;
    if (g === undefined && numGpus > perNode && perNode > 1) {
      // AIC beyond one node: the node-sized all-reduce, rescaled by the ring factor and the
      // intra- to inter-node bandwidth ratio.
      g = this.ar.get(perNode);
      scale =
        (((numGpus - 1) / numGpus) * (perNode / (perNode - 1)) * this.spec.intraNodeBandwidth) /
        this.spec.interNodeBandwidth;
    }
    if (g === undefined) {
      const have = [...this.ar.keys()].join(", ");
      throw new HardwareError(
        `no all-reduce table for ${numGpus} GPUs on ${this.gpu} (measured GPU counts: ${have || "none"})`,
      );
    }
    // The tables' message_size counts BF16 elements (AIC passes tokens × hidden).
    return g.get().at1(messageBytes / 2) * scale;
  }

  moe(shape: MoeShape, numTokens: number): number {
    if (!(numTokens > 0)) return 0;
    let r = this.lastMoe;
    if (r === undefined || !sameMoeShape(r.shape, shape)) {
      r = this.moeRoute(shape);
      this.lastMoe = r;
    }
    const lat = this.moeCurve(r.entry, numTokens);
    if (r.exact) return lat;
    const t = r.entry.table;
    const solRef = moeSolMs(this.spec, t, numTokens);
    const solQ = moeSolMs(this.spec, shape, numTokens);
    return (lat * solQ) / solRef;
  }

  /** Latency of a measured MoE shape; above the largest token count AIC's utilisation rule. */
  private moeCurve(e: MoeEntry, tokens: number): number {
    if (tokens <= e.maxTokens) return e.grid.at1(tokens);
    const solMax = moeSolMs(this.spec, e.table, e.maxTokens);
    const solQ = moeSolMs(this.spec, e.table, tokens);
    const util = Math.max(Math.min(1, solMax / e.maxLatency), 1e-8);
    return solQ / util;
  }

  private moeRoute(q: MoeShape): MoeRoute {
    const key = [q.dtype, q.hiddenSize, q.interSize, q.topK, q.numExperts, q.moeTp, q.moeEp].join("|");
    const cached = this.moeRoutes.get(key);
    if (cached !== undefined) return cached;
    const same = this.moeEntries.filter((e) => e.table.dtype === q.dtype);
    if (same.length === 0) {
      const have = [...new Set(this.moeEntries.map((e) => e.table.dtype))].join(", ");
      throw new HardwareError(`no ${q.dtype} MoE table for ${this.gpu} (measured: ${have || "none"})`);
    }
    const l = (a: number, b: number): number => Math.abs(Math.log(a / b));
    let best = same[0];
    let bestD = Number.POSITIVE_INFINITY;
    for (const e of same) {
      const t = e.table;
      // Nearest shape: per-GPU expert GEMM size, routing and experts per rank weigh most.
      const d =
        l(t.hiddenSize, q.hiddenSize) +
        l(t.interSize / t.moeTp, q.interSize / q.moeTp) +
        l(t.topK, q.topK) +
        l(t.numExperts / t.moeEp, q.numExperts / q.moeEp) +
        0.1 * (l(t.moeTp, q.moeTp) + l(t.moeEp, q.moeEp));
      if (d < bestD) {
        bestD = d;
        best = e;
      }
    }
    // A copy: the caller's object is not ours to keep.
    const own: MoeShape = { ...q };
    const route: MoeRoute = { shape: own, entry: best, exact: bestD === 0 };
    this.moeRoutes.set(key, route);
    return route;
  }

  /**
   * An attention head configuration that was not measured: the nearest measured head dim (latency
   * × head-dim ratio), and for GQA the nearest measured KV-head count, queried with the same
   * heads-per-KV-head ratio and scaled by the KV-head ratio (attention work is linear in heads).
   */
  private routed(kind: AttnKind, query: AttentionHeads, batch: number, seq: number): number {
    const routes = kind === "context" ? this.ctxRoutes : this.genRoutes;
    const heads = query.numHeads;
    const kvHeads = query.numKvHeads;
    const k = attnKey(query.kvDtype, query.headDim, heads === kvHeads ? 0 : kvHeads);
    const key = k * 2 + (heads === kvHeads ? 1 : 0);
    let route = k < 0 ? undefined : routes.get(key);
    if (route === undefined) {
      route = this.attnRoute(kind, query);
      if (k >= 0) routes.set(key, route);
    }
    const x = heads * route.headRatio;
    const grid = route.grid;
    return (kind === "generation" ? grid.at3Line(x, batch, seq) : grid.at3(x, batch, seq)) * route.scale;
  }

  private attnRoute(kind: AttnKind, query: AttentionHeads): AttnRoute {
    const grids = kind === "context" ? this.ctx : this.gen;
    const { numHeads: heads, numKvHeads: kvHeads, headDim, kvDtype } = query;
    const groups = kind === "context" ? this.data.contextAttention : this.data.generationAttention;
    const fail = (why: string): HardwareError =>
      new HardwareError(
        `no ${kind}-attention table for ${heads} heads / ${kvHeads} KV heads, head dim ${headDim}, ` +
          `${kvDtype} KV on ${this.gpu}: ${why} (measured: ${describeGroups(groups)})`,
      );
    if (!(kvHeads > 0) || kvHeads > heads) throw fail("KV heads must be in 1…heads");
    const dtypeGroups = groups.filter((g) => g.kvDtype === kvDtype);
    if (dtypeGroups.length === 0) throw fail(`no ${kvDtype} KV-cache rows`);
    const l = (a: number, b: number): number => Math.abs(Math.log(a / b));
    const dims = [...new Set(dtypeGroups.map((g) => g.headDim))].sort((a, b) => b - a);
    const hd = dims.reduce((best, d) => (l(d, headDim) < l(best, headDim) ? d : best), dims[0]);
    const mha = heads === kvHeads;
    const cands = dtypeGroups.filter((g) => g.headDim === hd && (mha ? g.kvHeads === 0 : g.kvHeads > 0));
    if (cands.length === 0) throw fail(mha ? "no MHA rows" : "no GQA rows");
    cands.sort((a, b) => b.kvHeads - a.kvHeads);
    const pick = mha
      ? cands[0]
      : cands.reduce((best, g) => (l(g.kvHeads, kvHeads) < l(best.kvHeads, kvHeads) ? g : best));
    const grid = grids.get(attnKey(pick.kvDtype, pick.headDim, pick.kvHeads))?.get();
    if (grid === undefined) throw fail("internal: grid missing");
    const headRatio = mha ? 1 : pick.kvHeads / kvHeads;
    return { grid, headRatio, scale: headDim / hd / headRatio };
  }
}

/** Builds the shared query implementation over measured table data. */
export function buildOpPerfTables(
  data: OpTableData,
  spec: GpuSpec,
  cacheScope: string | null = null,
  contextBeyond: ContextExtrapolation = "sqrt",
): OpPerfTables {
  return new InterpolatedTables(data, spec, cacheScope, contextBeyond);
}
