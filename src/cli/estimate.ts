import { resolve } from "node:path";
import Table from "cli-table3";
import { BACKEND_LABEL } from "../hardware/backendTables.js";
import { gpuSpec, hardwareData } from "../hardware/catalog.js";
import { loadCompactTablesWithProvenance } from "../hardware/compactTables.js";
import { loadParquetTablesWithProvenance } from "../hardware/parquetTables.js";
import { resolveModel } from "../model/resolve.js";
import { configuredMoeParallelism } from "../model/weights.js";
import { formatNumber } from "../report/formatNumber.js";
import { stableLine } from "../report/json.js";
import { kernelsOf } from "../timing/kernels.js";
import { OpLevelTiming, type PassEstimate } from "../timing/opLevel.js";
import { UserError } from "../util/userError.js";
import type { Streams } from "./streams.js";

export interface EstimateOptions {
  readonly model: string;
  readonly hardware: string;
  /** The serving backend: its block-FP8 kernel rule, and its own op tables with `opTables: backend`. */
  readonly backend: "vllm" | "sglang" | "trtllm";
  /** `timing.op_tables`: `backend` reads the backend's own op tables where they exist (docs/backends.md "Timing"). */
  readonly opTables?: "vllm" | "backend";
  readonly tensor: number;
  readonly pipeline: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
  readonly prefillTokens?: number;
  readonly prefix: number;
  readonly batch: number;
  readonly context?: number;
  readonly perfDatabase?: string;
  /** `engine.enable_eplb`: MoE on the balanced-load tables. */
  readonly enableEplb?: boolean;
  /**
   * `timing.context_attention_extrapolation`: context attention beyond the tables' longest
   * sequence (absent: √, fleetsim's default; `quadratic`: the reference's rule).
   */
  readonly contextAttentionExtrapolation?: "sqrt" | "quadratic";
  readonly format: "table" | "json";
}

/** A CLI mistake in `estimate` options (exit 2). */
export class EstimateUsageError extends UserError {}

/**
 * `fleetsim estimate`: the op-level latency of one forward pass — a prefill of `batch` requests
 * with `prefill-tokens` new tokens over `prefix` cached ones, and/or a decode step of `batch`
 * requests at `context` tokens — with its per-operation breakdown.
 */
export async function estimateCommand(opts: EstimateOptions, io: Streams): Promise<void> {
  if (opts.prefillTokens === undefined && opts.context === undefined) {
    throw new EstimateUsageError(
      "give --prefill-tokens N (a prefill pass) and/or --context N (a decode pass)",
    );
  }
  const model = resolveModel(opts.model);
  const gpu = gpuSpec(opts.hardware);
  const data = hardwareData(gpu.id);
  const balancedMoe = opts.enableEplb === true && model.moe !== null;
  const wanted = opts.opTables === "backend" ? opts.backend : "vllm";
  const contextBeyond = opts.contextAttentionExtrapolation ?? "sqrt";
  const { tables, provenance } =
    opts.perfDatabase !== undefined
      ? await loadParquetTablesWithProvenance(
          resolve(opts.perfDatabase),
          gpu.id,
          undefined,
          balancedMoe,
          wanted,
          contextBeyond,
        )
      : loadCompactTablesWithProvenance(gpu.id, balancedMoe, wanted, contextBeyond);
  const moe = configuredMoeParallelism(model, {
    tensor: opts.tensor,
    pipeline: opts.pipeline,
    attentionData: 1,
    moeTensor: opts.moeTensor,
    moeExpert: opts.moeExpert,
  });
  const timing = new OpLevelTiming(
    model,
    gpu,
    tables,
    { tensor: opts.tensor, pipeline: opts.pipeline, attentionData: 1, ...moe },
    undefined,
    null,
    // As a run prices it (timing/kernels.ts).
    kernelsOf(opts.backend, provenance.backend, model, gpu.id, opts.tensor, {
      contextBeyond,
      builtInTables: opts.perfDatabase === undefined,
    }),
  );
  const tablesLine = `${BACKEND_LABEL[provenance.backend]} ${provenance.version}`;
  const prefill =
    opts.prefillTokens !== undefined
      ? timing.explainPrefill(opts.batch, opts.prefillTokens, opts.prefix)
      : null;
  const decode = opts.context !== undefined ? timing.explainDecode(opts.batch, opts.context) : null;
  const totalMs = (prefill?.totalMs ?? 0) + (decode?.totalMs ?? 0);

  if (opts.format === "json") {
    io.out(
      `${stableLine({
        model: model.id,
        hardware: gpu.id,
        backend: opts.backend,
        parallelism: {
          tensor: opts.tensor,
          pipeline: opts.pipeline,
          moe_tensor: moe.moeTensor,
          moe_expert: moe.moeExpert,
        },
        batch: opts.batch,
        prefill:
          prefill === null
            ? null
            : { new_tokens: opts.prefillTokens, prefix: opts.prefix, ...asJson(prefill) },
        decode: decode === null ? null : { context: opts.context, ...asJson(decode) },
        total_ms: totalMs,
        perf_data: opts.perfDatabase === undefined ? "compact" : "parquet",
        op_tables: {
          backend: provenance.backend,
          version: provenance.version,
          filled_from_vllm: provenance.filledFromVllm,
        },
        moe_distribution: model.moe === null ? null : balancedMoe ? "balanced" : "power_law",
        hardware_data: { tier: data.tier, base: data.base, basis: data.basis },
      })}\n`,
    );
    return;
  }
  const header = `${model.id} on ${gpu.id} (${BACKEND_LABEL[opts.backend]}, ${model.weightDtype} weights, ${model.kvDtype} KV), tensor ${opts.tensor}, pipeline ${opts.pipeline}`;
  const parts = [header, `Hardware data: ${data.tier} (${data.basis}); op tables: ${tablesLine}`];
  if (model.moe !== null) {
    parts.push(
      `Expert load: ${balancedMoe ? "balanced (EPLB)" : "power-law routing (--enable-eplb for balanced)"}`,
    );
  }
  if (prefill !== null) {
    parts.push(
      `Prefill: ${opts.batch} × ${opts.prefillTokens} new tokens over a ${opts.prefix}-token prefix`,
      breakdownTable(prefill),
    );
  }
  if (decode !== null) {
    parts.push(`Decode: ${opts.batch} sequences at context ${opts.context}`, breakdownTable(decode));
  }
  parts.push(`Pass latency (ms): ${formatNumber(totalMs)}`);
  io.out(`${parts.join("\n")}\n`);
}

function asJson(p: PassEstimate) {
  return {
    total_ms: p.totalMs,
    ops: p.ops.map((o) => ({ name: o.name, repeat: o.repeat, latency_ms: o.latencyMs })),
  };
}

function breakdownTable(p: PassEstimate): string {
  const table = new Table({
    head: ["Operation", "Count", "Latency (ms)", "Share"],
    colAligns: ["left", "right", "right", "right"],
    style: { head: [], border: [], compact: true },
  });
  for (const op of p.ops) {
    table.push([
      op.name,
      String(op.repeat),
      formatNumber(op.latencyMs),
      `${formatNumber((100 * op.latencyMs) / p.totalMs)} %`,
    ]);
  }
  table.push(["total", "", formatNumber(p.totalMs), "100.00 %"]);
  return table.toString();
}
