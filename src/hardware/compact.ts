import type { KvDtype, WeightDtype } from "./dtypes.js";
import type { GpuSpec } from "./gpu.js";
import { Grid } from "./grid.js";
import type { OpPerfTables } from "./perfTables.js";
import { type GridData, MOE_RULES, type MoeTable, moeDistributionOf, type OpTableData } from "./tableData.js";
import { buildGrids, buildOpPerfTables, moeGrid } from "./tables.js";

/**
 * The compact op tables committed in the project (`calibration/<gpu>.json`): the parquet grids
 * restricted to what a dense/MoE LLM needs (BF16/FP8/FP8-block GEMM and MoE of the default
 * routing distribution, full-attention rows of head dims 64 and 128), holes filled and SOL-clamped
 * as the parquet backend does, every cell kept. Values are stored as ln(latency / 1 µs) quantised
 * to steps of 0.2 % (error ≤ 0.1 %), as residuals of a planar predictor along two axes, zig-zag
 * varints in base64url — about 1.5 characters per cell. Queried through the same
 * `InterpolatedTables` as the parquet backend.
 */

export interface CompactPolicy {
  /** Attention head dims kept. */
  readonly attentionHeadDims: readonly number[];
}

export const COMPACT_POLICY: CompactPolicy = {
  attentionHeadDims: [64, 128],
};

/** Quantisation step of ln(latency in µs). */
export const LOG_STEP = 0.004;

/** Filled grid values at every knot, as `GridData`. */
function filled(grid: Grid): GridData {
  return { axes: grid.knots.map((k) => Array.from(k)), latencyMs: Array.from(grid.values) };
}

/** The compact subset of full table data (see `COMPACT_POLICY`), grids filled and clamped. */
export function compactTableData(full: OpTableData, spec: GpuSpec, policy = COMPACT_POLICY): OpTableData {
  const grids = buildGrids(full, spec);
  const keepAttn = (g: { headDim: number }): boolean => policy.attentionHeadDims.includes(g.headDim);
  return {
    gpu: full.gpu,
    perfDataVersion: full.perfDataVersion,
    ...(full.backend === undefined ? {} : { backend: full.backend }),
    ...(full.filledFromVllm === undefined ? {} : { filledFromVllm: full.filledFromVllm }),
    gemm: full.gemm.map((g, i) => ({ dtype: g.dtype, grid: filled(grids.gemm[i]) })),
    contextAttention: full.contextAttention.flatMap((g, i) =>
      keepAttn(g) ? [{ ...g, grid: filled(grids.contextAttention[i]) }] : [],
    ),
    generationAttention: full.generationAttention.flatMap((g, i) =>
      keepAttn(g) ? [{ ...g, grid: filled(grids.generationAttention[i]) }] : [],
    ),
    allReduceSource: full.allReduceSource,
    allReduce: full.allReduce.map((t, i) => ({ numGpus: t.numGpus, grid: filled(grids.allReduce[i]) })),
    moeDistribution: full.moeDistribution,
    moe: toUnionTokens(
      full.moe.map((t, i) => ({ ...t, grid: filled(grids.moe[i]) })),
      () => buildOpPerfTables(full, spec),
    ),
    ...(full.moeBalanced === undefined
      ? {}
      : {
          moeBalanced: toUnionTokens(
            full.moeBalanced.map((t) => ({ ...t, grid: filled(moeGrid(t)) })),
            () => buildOpPerfTables(moeDistributionOf(full, true, full.gpu), spec),
          ),
        }),
  };
}

/**
 * The compact form stores all MoE shapes on one token axis (the union of their measured counts,
 * `encodeMoe`). A shape measured only up to fewer tokens than the union's largest count (a few shapes
 * of the B200, H100 and L40S vLLM tables, more in TensorRT-LLM's) gets its counts above that from the tables' own rule for
 * them, AIC's utilisation rule (`InterpolatedTables.moe`), so the compact and the parquet tables
 * agree there too rather than the token line's extrapolation standing in for it.
 */
function toUnionTokens(tables: MoeTable[], parquet: () => OpPerfTables): MoeTable[] {
  const union = [...new Set(tables.flatMap((t) => t.grid.axes[0]))].sort((a, b) => a - b);
  const top = union.at(-1) ?? 0;
  let reference: OpPerfTables | null = null;
  return tables.map((t) => {
    const own = t.grid.axes[0];
    if ((own.at(-1) ?? 0) >= top) return t;
    reference ??= parquet();
    const r = reference;
    const beyond = union.filter((x) => x > (own.at(-1) ?? 0));
    const latency = (x: number): number => r.moe(t, x);
    return {
      ...t,
      grid: { axes: [[...own, ...beyond]], latencyMs: [...t.grid.latencyMs, ...beyond.map(latency)] },
    };
  });
}

// ---------------------------------------------------------------------------------------------
// JSON form

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Digit of each character code of `B64` (-1 for any other code below 128). */
const B64_VALUE = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < B64.length; i++) t[B64.charCodeAt(i)] = i;
  return t;
})();

interface CompactGrid {
  /** Knots per axis, comma-separated. */
  readonly axes: readonly string[];
  /**
   * Row-major cells (last axis fastest): q = round(ln(µs) / LOG_STEP), each stored as the
   * residual from the planar prediction q[i−a] + q[i−b] − q[i−a−b] over the grid's two
   * predictor axes a, b (the one available neighbour at an edge, 0 at the origin), zig-zag
   * encoded, base64url varint (5 payload bits per character, bit 5 = more follows).
   */
  readonly q: string;
}

/** Predictor axes: GEMM [m, k]; attention [batch, seq]; lines (all-reduce, MoE) their last axis. */
function predictorAxes(dims: number, kind: "gemm" | "attention" | "line"): [number, number] {
  if (kind === "line") return [dims - 1, dims - 1];
  return kind === "gemm" ? [0, 2] : [1, 2];
}

function strides(sizes: readonly number[]): number[] {
  return sizes.map((_, d) => sizes.slice(d + 1).reduce((a, b) => a * b, 1));
}

/** Planar prediction of cell c from already-decoded cells (see `CompactGrid.q`). */
function predict(
  q: ArrayLike<number>,
  c: number,
  sizes: readonly number[],
  st: readonly number[],
  a: number,
  b: number,
): number {
  const ia = Math.floor(c / st[a]) % sizes[a];
  const ib = Math.floor(c / st[b]) % sizes[b];
  if (a !== b && ia > 0 && ib > 0) return q[c - st[a]] + q[c - st[b]] - q[c - st[a] - st[b]];
  if (ia > 0) return q[c - st[a]];
  if (a !== b && ib > 0) return q[c - st[b]];
  // First cell of a line: the first cell of the previous line (or 0 at the origin).
  const line = st[a] * sizes[a];
  return c >= line ? q[c - line] : c > 0 ? q[c - 1] : 0;
}

function encodeGrid(g: GridData, kind: "gemm" | "attention" | "line"): CompactGrid {
  const sizes = g.axes.map((a) => a.length);
  const st = strides(sizes);
  const axes = predictorAxes(sizes.length, kind);
  const q = g.latencyMs.map((v) => {
    if (v === null || !(v > 0)) throw new Error("compact: grid has a hole or a non-positive cell");
    return Math.round(Math.log(v * 1000) / LOG_STEP);
  });
  let out = "";
  for (let c = 0; c < q.length; c++) {
    const d = q[c] - predict(q, c, sizes, st, axes[0], axes[1]);
    let z = d >= 0 ? 2 * d : -2 * d - 1;
    while (z >= 32) {
      out += B64[32 + (z % 32)];
      z = Math.floor(z / 32);
    }
    out += B64[z];
  }
  return { axes: g.axes.map((a) => a.join(",")), q: out };
}

function decodeGrid(g: CompactGrid, kind: "gemm" | "attention" | "line", step: number): GridData {
  const axes = g.axes.map((a) => a.split(",").map(Number));
  const sizes = axes.map((a) => a.length);
  const st = strides(sizes);
  const pa = predictorAxes(sizes.length, kind);
  const total = sizes.reduce((a, b) => a * b, 1);
  const q = new Float64Array(total);
  const text = g.q;
  const end = text.length;
  let pos = 0;
  for (let c = 0; c < total; c++) {
    let z = 0;
    let mul = 1;
    for (;;) {
      // Past the end, or a character outside B64: corrupt.
      const code = pos < end ? text.charCodeAt(pos++) : 128;
      const v = code < 128 ? B64_VALUE[code] : -1;
      if (v < 0) throw new Error("compact: truncated or corrupt cell string");
      z += (v % 32) * mul;
      if (v < 32) break;
      mul *= 32;
    }
    q[c] = (z % 2 === 0 ? z / 2 : -(z + 1) / 2) + predict(q, c, sizes, st, pa[0], pa[1]);
  }
  if (pos !== g.q.length) throw new Error("compact: cell string longer than the grid");
  return { axes, latencyMs: Array.from(q, (x) => Math.exp(x * step) / 1000) };
}

export interface CompactJson {
  readonly format: 1;
  readonly gpu: string;
  /** `OpTableData.backend`: absent for the vLLM tables. */
  readonly backend?: "sglang" | "trtllm";
  /** `OpTableData.filledFromVllm`. */
  readonly filledFromVllm?: readonly string[];
  readonly perfDataVersion: string;
  readonly note: string;
  /** Quantisation step of ln(µs) (`LOG_STEP`). */
  readonly logStep: number;
  readonly gemm: readonly ({ readonly dtype: WeightDtype } & CompactGrid)[];
  readonly contextAttention: readonly ({
    readonly kvDtype: KvDtype;
    readonly headDim: number;
    readonly kvHeads: number;
  } & CompactGrid)[];
  readonly generationAttention: readonly ({
    readonly kvDtype: KvDtype;
    readonly headDim: number;
    readonly kvHeads: number;
  } & CompactGrid)[];
  readonly allReduceSource: string;
  readonly allReduce: readonly ({ readonly numGpus: number } & CompactGrid)[];
  readonly moeDistribution: string;
  /**
   * All MoE shapes as one grid [shape, tokens] (tokens = the union of measured counts, a shape's
   * unmeasured counts filled along tokens); `shapes` lists them in row order as
   * `dtype hidden inter topK experts moeTp moeEp`, `;`-separated.
   */
  readonly moe: { readonly shapes: string } & CompactGrid;
  /** The `balanced` MoE rows in the same form (absent in files derived before EPLB support). */
  readonly moeBalanced?: { readonly shapes: string } & CompactGrid;
}

function encodeMoe(tables: readonly MoeTable[]): { shapes: string } & CompactGrid {
  const tokens = [...new Set(tables.flatMap((t) => t.grid.axes[0]))].sort((a, b) => a - b);
  const cells: (number | null)[] = [];
  for (const t of tables) {
    const line = new Grid([t.grid.axes[0]], t.grid.latencyMs, MOE_RULES);
    for (const x of tokens) cells.push(line.at1(x));
  }
  const shapes = tables
    .map((t) => [t.dtype, t.hiddenSize, t.interSize, t.topK, t.numExperts, t.moeTp, t.moeEp].join(" "))
    .join(";");
  return { shapes, ...encodeGrid({ axes: [tables.map((_, i) => i), tokens], latencyMs: cells }, "line") };
}

function decodeMoe(j: { shapes: string } & CompactGrid, step: number): MoeTable[] {
  if (j.shapes === "") return [];
  // One grid holds every shape: decoded once, on the first read of any shape's cells.
  let grid: GridData | null = null;
  const all = (): GridData => {
    grid ??= decodeGrid(j, "line", step);
    return grid;
  };
  const tokens = parseAxes(j)[1];
  return j.shapes.split(";").map((s, row) => {
    const [dtype, ...nums] = s.split(" ");
    const [hiddenSize, interSize, topK, numExperts, moeTp, moeEp] = nums.map(Number);
    return {
      dtype: dtype as WeightDtype,
      hiddenSize,
      interSize,
      topK,
      numExperts,
      moeTp,
      moeEp,
      grid: lazyGridData(
        [tokens],
        () => all().latencyMs.slice(row * tokens.length, (row + 1) * tokens.length) as number[],
      ),
    };
  });
}

/** The `note` of the vLLM tables `scripts/calibrate.ts` writes. */
export const CALIBRATION_NOTE =
  "Derived by scripts/calibrate.ts from AIConfigurator-format vLLM perf tables; format in docs/perf-tables.md.";

export function encodeCompact(d: OpTableData, note = CALIBRATION_NOTE): CompactJson {
  return {
    format: 1,
    gpu: d.gpu,
    ...(d.backend === undefined ? {} : { backend: d.backend }),
    ...(d.filledFromVllm === undefined ? {} : { filledFromVllm: d.filledFromVllm }),
    perfDataVersion: d.perfDataVersion,
    note,
    logStep: LOG_STEP,
    gemm: d.gemm.map((g) => ({ dtype: g.dtype, ...encodeGrid(g.grid, "gemm") })),
    contextAttention: d.contextAttention.map((g) => ({
      kvDtype: g.kvDtype,
      headDim: g.headDim,
      kvHeads: g.kvHeads,
      ...encodeGrid(g.grid, "attention"),
    })),
    generationAttention: d.generationAttention.map((g) => ({
      kvDtype: g.kvDtype,
      headDim: g.headDim,
      kvHeads: g.kvHeads,
      ...encodeGrid(g.grid, "attention"),
    })),
    allReduceSource: d.allReduceSource,
    allReduce: d.allReduce.map((t) => ({ numGpus: t.numGpus, ...encodeGrid(t.grid, "line") })),
    moeDistribution: d.moeDistribution,
    moe: encodeMoe(d.moe),
    ...(d.moeBalanced === undefined ? {} : { moeBalanced: encodeMoe(d.moeBalanced) }),
  };
}

/**
 * `GridData` whose cells are decoded on first read: a run reads only the grids its model queries
 * (the tables build them lazily), so the other grids of the file are never decoded.
 */
function lazyGridData(axes: readonly (readonly number[])[], cells: () => readonly number[]): GridData {
  let decoded: readonly number[] | null = null;
  return {
    axes,
    get latencyMs() {
      decoded ??= cells();
      return decoded;
    },
  };
}

const parseAxes = (g: CompactGrid): number[][] => g.axes.map((a) => a.split(",").map(Number));

/** A compact grid whose cells decode on first read (`lazyGridData`). */
function lazyDecodeGrid(g: CompactGrid, kind: "gemm" | "attention" | "line", step: number): GridData {
  return lazyGridData(parseAxes(g), () => decodeGrid(g, kind, step).latencyMs as number[]);
}

export function decodeCompact(j: CompactJson): OpTableData {
  // The MoE shape lists are parsed on first read: a dense model never reads them (start-up,
  // docs/performance.md "Start-up").
  let moe: MoeTable[] | null = null;
  let moeBalanced: MoeTable[] | null = null;
  const lazyMoe = {
    get moe(): MoeTable[] {
      moe ??= decodeMoe(j.moe, j.logStep);
      return moe;
    },
  };
  const lazyBalanced =
    j.moeBalanced === undefined
      ? {}
      : {
          get moeBalanced(): MoeTable[] {
            moeBalanced ??= decodeMoe(j.moeBalanced!, j.logStep);
            return moeBalanced;
          },
        };
  const data: OpTableData = {
    gpu: j.gpu,
    ...(j.backend === undefined ? {} : { backend: j.backend }),
    ...(j.filledFromVllm === undefined ? {} : { filledFromVllm: j.filledFromVllm }),
    perfDataVersion: j.perfDataVersion,
    gemm: j.gemm.map((g) => ({ dtype: g.dtype, grid: lazyDecodeGrid(g, "gemm", j.logStep) })),
    contextAttention: j.contextAttention.map((g) => ({
      kvDtype: g.kvDtype,
      headDim: g.headDim,
      kvHeads: g.kvHeads,
      grid: lazyDecodeGrid(g, "attention", j.logStep),
    })),
    generationAttention: j.generationAttention.map((g) => ({
      kvDtype: g.kvDtype,
      headDim: g.headDim,
      kvHeads: g.kvHeads,
      grid: lazyDecodeGrid(g, "attention", j.logStep),
    })),
    allReduceSource: j.allReduceSource,
    allReduce: j.allReduce.map((t) => ({ numGpus: t.numGpus, grid: lazyDecodeGrid(t, "line", j.logStep) })),
    moeDistribution: j.moeDistribution,
    moe: [],
  };
  // Getters, not values: defined after the spread-free literal above so that they stay lazy.
  Object.defineProperties(data, {
    ...Object.getOwnPropertyDescriptors(lazyMoe),
    ...Object.getOwnPropertyDescriptors(lazyBalanced),
  });
  return data;
}
