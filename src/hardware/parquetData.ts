import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { BACKEND_LABEL, type TableBackend } from "./backendTables.js";
import type { KvDtype, WeightDtype } from "./dtypes.js";
import { HardwareError } from "./errors.js";
import {
  type AllReduceTable,
  type AttentionGroup,
  BALANCED_MOE_DISTRIBUTION,
  DEFAULT_MOE_DISTRIBUTION,
  type GridData,
  KV_DTYPES,
  type MoeTable,
  type OpTableData,
  WEIGHT_DTYPES,
} from "./tableData.js";

/** One parquet row, integers as numbers. */
export type Row = Readonly<Record<string, string | number | boolean | null>>;

/** Rows of one GPU's perf tables (an AIConfigurator `systems/data/<gpu>` tree). */
export interface PerfRows {
  readonly gpu: string;
  /** The serving backend the rows were measured on (absent: vLLM). */
  readonly backend?: TableBackend;
  readonly version: string;
  readonly device: string;
  readonly gemm: readonly Row[];
  readonly contextAttention: readonly Row[];
  readonly generationAttention: readonly Row[];
  /** `custom_allreduce_perf.parquet`, or empty when the GPU has none. */
  readonly customAllReduce: readonly Row[];
  /** `<gpu>/nccl_perf.parquet`, the fallback for all-reduce; empty when absent. */
  readonly nccl: readonly Row[];
  readonly moe: readonly Row[];
}

/**
 * The version directory under `<dir>/<gpu>/<backend>/` (vLLM unless named): `version` if given,
 * else the only one present.
 */
export function resolveVersion(
  dir: string,
  gpu: string,
  version?: string,
  backend: TableBackend = "vllm",
): string {
  const base = join(dir, gpu, backend);
  const label = BACKEND_LABEL[backend];
  if (!existsSync(base)) {
    const known = existsSync(dir) ? readdirSync(dir).filter((d) => existsSync(join(dir, d, backend))) : [];
    throw new HardwareError(
      `no ${label} perf data for GPU '${gpu}' under ${dir} (GPUs with data: ${known.join(", ") || "none"})`,
    );
  }
  const versions = readdirSync(base)
    .filter((v) => !v.startsWith(".") && statSync(join(base, v)).isDirectory())
    .sort();
  if (version !== undefined) {
    if (!versions.includes(version)) {
      throw new HardwareError(
        `no ${label} ${version} perf data for '${gpu}' (available: ${versions.join(", ")})`,
      );
    }
    return version;
  }
  if (versions.length !== 1) {
    throw new HardwareError(
      `'${gpu}' has ${versions.length} ${label} perf-data versions under ${base} (${versions.join(", ")}); name one`,
    );
  }
  return versions[0];
}

/** Every row of one parquet file, bigints as numbers (also for scripts/compare-block-fp8-kernels.ts). */
export async function readRows(file: string): Promise<Row[]> {
  const raw = await parquetReadObjects({ file: await asyncBufferFromFile(file), compressors });
  return raw.map((r) => {
    const out: Record<string, string | number | boolean | null> = {};
    for (const [key, v] of Object.entries(r as Record<string, unknown>)) {
      out[key] =
        typeof v === "bigint"
          ? Number(v)
          : typeof v === "number" || typeof v === "string" || typeof v === "boolean"
            ? v
            : null;
    }
    return out;
  });
}

async function readOptional(file: string): Promise<Row[]> {
  return existsSync(file) ? readRows(file) : [];
}

async function readRequired(file: string): Promise<Row[]> {
  if (!existsSync(file)) throw new HardwareError(`missing perf table ${file}`);
  return readRows(file);
}

/** Reads the parquet tables of `<dir>/<gpu>/<backend>/<version>/` (+ `<dir>/<gpu>/nccl_perf.parquet`). */
export async function readPerfRows(
  dir: string,
  gpu: string,
  version?: string,
  backend: TableBackend = "vllm",
): Promise<PerfRows> {
  const v = resolveVersion(dir, gpu, version, backend);
  const d = join(dir, gpu, backend, v);
  const [gemm, contextAttention, generationAttention, customAllReduce, nccl, moe] = await Promise.all([
    readRequired(join(d, "gemm_perf.parquet")),
    readRequired(join(d, "context_attention_perf.parquet")),
    readRequired(join(d, "generation_attention_perf.parquet")),
    readOptional(join(d, "custom_allreduce_perf.parquet")),
    readOptional(join(dir, gpu, "nccl_perf.parquet")),
    readOptional(join(d, "moe_perf.parquet")),
  ]);
  const device = typeof gemm[0]?.["device"] === "string" ? (gemm[0]["device"] as string) : gpu;
  return {
    gpu,
    backend,
    version: v,
    device,
    gemm,
    contextAttention,
    generationAttention,
    customAllReduce,
    nccl,
    moe,
  };
}

function int(r: Row, key: string, fallback?: number): number {
  const v = r[key];
  if (typeof v === "number") return v;
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
  }
  throw new HardwareError(`perf row without numeric '${key}': ${JSON.stringify(r)}`);
}

function str(r: Row, key: string): string {
  const v = r[key];
  return typeof v === "string" ? v : "";
}

/**
 * Collects points keyed by their coordinates; the first row for a coordinate wins (duplicates
 * are ignored), as in AIConfigurator's loaders.
 */
class PointSet {
  private readonly pts = new Map<string, number>();
  private readonly axes: Set<number>[];
  constructor(dims: number) {
    this.axes = Array.from({ length: dims }, () => new Set<number>());
  }
  add(coords: readonly number[], latency: number): void {
    if (!(latency > 0) || !Number.isFinite(latency)) return;
    const key = coords.join(",");
    if (this.pts.has(key)) return;
    this.pts.set(key, latency);
    coords.forEach((c, i) => {
      this.axes[i].add(c);
    });
  }
  get size(): number {
    return this.pts.size;
  }
  grid(): GridData {
    const axes = this.axes.map((s) => [...s].sort((a, b) => a - b));
    const cells: (number | null)[] = [];
    const idx = new Array<number>(axes.length).fill(0);
    const total = axes.reduce((n, a) => n * a.length, 1);
    for (let c = 0; c < total; c++) {
      let rem = c;
      for (let d = axes.length - 1; d >= 0; d--) {
        idx[d] = rem % axes[d].length;
        rem = Math.floor(rem / axes[d].length);
      }
      cells.push(this.pts.get(idx.map((i, d) => axes[d][i]).join(",")) ?? null);
    }
    return { axes, latencyMs: cells };
  }
}

function isWeightDtype(s: string): s is WeightDtype {
  return (WEIGHT_DTYPES as readonly string[]).includes(s);
}

function isKvDtype(s: string): s is KvDtype {
  return (KV_DTYPES as readonly string[]).includes(s);
}

/** Full-attention, beam-1, BF16-FMHA rows (the only ones the simulator asks for). */
function attentionRow(r: Row): boolean {
  return (
    int(r, "window_size", 0) === 0 &&
    int(r, "beam_width", 1) === 1 &&
    (str(r, "attn_dtype") === "" || str(r, "attn_dtype") === "bfloat16")
  );
}

function attentionGroups(
  rows: readonly Row[],
  coords: (r: Row, heads: number) => [number, number, number],
): AttentionGroup[] {
  const sets = new Map<string, { kvDtype: KvDtype; headDim: number; kvHeads: number; set: PointSet }>();
  for (const r of rows) {
    if (!attentionRow(r)) continue;
    const kvDtype = str(r, "kv_cache_dtype");
    if (!isKvDtype(kvDtype)) continue;
    const heads = int(r, "num_heads");
    const kv = int(r, "num_key_value_heads");
    const kvHeads = kv === heads ? 0 : kv;
    const headDim = int(r, "head_dim");
    const key = `${kvDtype}|${headDim}|${kvHeads}`;
    let g = sets.get(key);
    if (!g) {
      g = { kvDtype, headDim, kvHeads, set: new PointSet(3) };
      sets.set(key, g);
    }
    g.set.add(coords(r, heads), int(r, "latency"));
  }
  return [...sets.values()]
    .sort((a, b) => a.kvDtype.localeCompare(b.kvDtype) || a.headDim - b.headDim || a.kvHeads - b.kvHeads)
    .map((g) => ({ kvDtype: g.kvDtype, headDim: g.headDim, kvHeads: g.kvHeads, grid: g.set.grid() }));
}

function allReduceTables(rows: PerfRows): { source: string; tables: AllReduceTable[] } {
  // AIC keeps only the CUDA-graph rows of a custom all-reduce (`load_custom_allreduce_data`):
  // vLLM's and SGLang's tables have graph and eager rows, TensorRT-LLM's one kernel.
  const backend = rows.backend ?? "vllm";
  let source = backend === "trtllm" ? "custom_allreduce:trtllm" : `custom_allreduce:${backend}_graph`;
  let picked = rows.customAllReduce.filter(
    (r) => !str(r, "backend").endsWith("_eager") && !str(r, "kernel_source").endsWith("_eager"),
  );
  if (picked.length === 0) {
    // No custom all-reduce (PCIe GPUs such as L40S, where vLLM falls back to NCCL): NCCL all_reduce.
    source = "nccl:all_reduce";
    picked = rows.nccl.filter((r) => str(r, "op_name") === "all_reduce" && str(r, "nccl_dtype") === "half");
  }
  if (picked.length === 0) return { source: "none", tables: [] };
  const by = new Map<number, PointSet>();
  for (const r of picked) {
    const g = int(r, "num_gpus");
    let s = by.get(g);
    if (!s) {
      s = new PointSet(1);
      by.set(g, s);
    }
    s.add([int(r, "message_size")], int(r, "latency"));
  }
  return {
    source,
    tables: [...by.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([numGpus, s]) => ({ numGpus, grid: s.grid() })),
  };
}

/** The MoE rows of `wanted` (else of the default distribution, else the first one by name). */
function moeTables(
  rows: readonly Row[],
  wanted = DEFAULT_MOE_DISTRIBUTION,
): { distribution: string; tables: MoeTable[] } {
  const dists = new Set(rows.map((r) => str(r, "distribution")));
  const distribution = dists.has(wanted)
    ? wanted
    : dists.has(DEFAULT_MOE_DISTRIBUTION)
      ? DEFAULT_MOE_DISTRIBUTION
      : ([...dists].sort()[0] ?? "");
  const sets = new Map<string, { t: Omit<MoeTable, "grid">; set: PointSet }>();
  for (const r of rows) {
    const dtype = str(r, "moe_dtype");
    if (!isWeightDtype(dtype) || str(r, "distribution") !== distribution) continue;
    // TensorRT-LLM's tables also time non-gated experts (`moe_torch_flow_nongated`, one up
    // projection instead of gate + up); every catalog MoE model has gated (SwiGLU) experts.
    if (str(r, "kernel_source").endsWith("_nongated")) continue;
    const t = {
      dtype,
      hiddenSize: int(r, "hidden_size"),
      interSize: int(r, "inter_size"),
      topK: int(r, "topk"),
      numExperts: int(r, "num_experts"),
      moeTp: int(r, "moe_tp_size"),
      moeEp: int(r, "moe_ep_size"),
    };
    const key = Object.values(t).join("|");
    let e = sets.get(key);
    if (!e) {
      e = { t, set: new PointSet(1) };
      sets.set(key, e);
    }
    e.set.add([int(r, "num_tokens")], int(r, "latency"));
  }
  const tables = [...sets.values()].map((e) => ({ ...e.t, grid: e.set.grid() }));
  tables.sort(
    (a, b) =>
      a.dtype.localeCompare(b.dtype) ||
      a.hiddenSize - b.hiddenSize ||
      a.interSize - b.interSize ||
      a.topK - b.topK ||
      a.numExperts - b.numExperts ||
      a.moeTp - b.moeTp ||
      a.moeEp - b.moeEp,
  );
  return { distribution, tables };
}

/**
 * Every row the simulator can use, as `OpTableData`: GEMM for BF16/FP8/FP8-block; full-attention
 * (`window_size` 0) context and generation attention for BF16/FP8 KV; the CUDA-graph custom
 * all-reduce (NCCL all_reduce when absent); MoE rows of the default distribution, and of the
 * `balanced` one where measured (EPLB). Each shape
 * has one `kernel_source` in these tables (the kernel vLLM picked when it was collected), so no
 * kernel choice is made here; a duplicated coordinate keeps its first row, as AIC's loaders do.
 */
export function toTableData(rows: PerfRows): OpTableData {
  const gemm: { dtype: WeightDtype; grid: GridData }[] = [];
  for (const dtype of WEIGHT_DTYPES) {
    const set = new PointSet(3);
    for (const r of rows.gemm) {
      if (str(r, "gemm_dtype") !== dtype) continue;
      const m = int(r, "m");
      const n = int(r, "n");
      const k = int(r, "k");
      // A degenerate shape (AIC's TensorRT-LLM H100 table has m = 0 rows) prices nothing.
      if (m > 0 && n > 0 && k > 0) set.add([m, n, k], int(r, "latency"));
    }
    if (set.size > 0) gemm.push({ dtype, grid: set.grid() });
  }
  const contextAttention = attentionGroups(rows.contextAttention, (r, heads) => [
    heads,
    int(r, "batch_size"),
    int(r, "isl"),
  ]);
  // AIC keys generation rows by s = isl + step and queries s = (cached tokens) + 1, so the cached
  // KV length of a row is isl + step − 1 (= step for the isl = 1 rows of these tables).
  const generationAttention = attentionGroups(rows.generationAttention, (r, heads) => [
    heads,
    int(r, "batch_size"),
    int(r, "isl", 1) + int(r, "step") - 1,
  ]);
  const ar = allReduceTables(rows);
  const moe = moeTables(rows.moe);
  const balanced = moeTables(rows.moe, BALANCED_MOE_DISTRIBUTION);
  return {
    gpu: rows.gpu,
    ...(rows.backend === undefined || rows.backend === "vllm" ? {} : { backend: rows.backend }),
    perfDataVersion: rows.version,
    gemm,
    contextAttention,
    generationAttention,
    allReduceSource: ar.source,
    allReduce: ar.tables,
    moeDistribution: moe.distribution,
    moe: moe.tables,
    ...(balanced.distribution === BALANCED_MOE_DISTRIBUTION ? { moeBalanced: balanced.tables } : {}),
  };
}
