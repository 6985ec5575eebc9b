/**
 * `engine` (aisimulate.md §2.2). fleetsim simulates vLLM, SGLang and TRT-LLM workers
 * (docs/backends.md; the rules that need the backend: `backends.ts`), aggregated or disaggregated
 * into prefill and decode roles (roles: `config/schema/role.ts`). Every other reference knob is still
 * recognised so that it fails with "not supported by fleetsim yet" rather than as an unknown key.
 *
 * The two modes accept different keys (§2.9: aggregated rejects prefill/decode workers and
 * `kv_transfer`; disaggregated rejects `aggregated`), so each mode is its own strict schema and
 * `mode` picks one before anything else is validated: a config is judged by the rules of the
 * mode it asks for, and a wrong mode is one error rather than one per misplaced key.
 */
import * as z from "zod";
import { BACKENDS, checkBackendRules, withBackendDefaults } from "../backends.js";
import { checkWideEpSlots, WideEpNumSlots } from "../engineControls.js";
import { isMapping } from "../mapping.js";
import { orList, PATH, positiveOr, posNum, rejectKey, unsupportedKey } from "./primitives.js";
import { AggregatedRole, disaggregatedRole, HardwareId, type RoleConfig } from "./role.js";
import { checkNextn, Nextn, NextnAccepted, Speculation } from "./speculation.js";

export type { RoleConfig };

const MODES = ["aggregated", "disaggregated"] as const;
/** Reference modes fleetsim does not simulate yet. */
const REFERENCE_ONLY_MODES: ReadonlySet<unknown> = new Set(["afd"]);
const DEFAULT_MODE = "aggregated";

/** Engine-level reference knobs fleetsim does not model yet (perf-database and AIC estimator controls). */
const UNSUPPORTED_ENGINE_KNOBS = [
  "forward_model",
  "systems_path",
  "estimation_mode",
  "fallback_policy",
  "database_mode",
  "enable_shared_layer",
  "gemm_quant_mode",
  "moe_quant_mode",
  "fmha_quant_mode",
  "kvcache_quant_mode",
  "comm_quant_mode",
  "attention_backend",
  "moe_backend",
  "moe_kernel_source",
] as const;

const unsupportedEngineKnobs = Object.fromEntries(
  UNSUPPORTED_ENGINE_KNOBS.map((k) => [k, unsupportedKey()]),
) as Record<(typeof UNSUPPORTED_ENGINE_KNOBS)[number], ReturnType<typeof unsupportedKey>>;

/** Fields both modes share: the roles share model, backend and context length (§2.2). */
const COMMON = {
  model: z.string().min(1),
  hardware: HardwareId,
  /** Scheduler semantics of every worker (docs/backends.md); all are priced from the vLLM op tables. */
  backend: z.enum(BACKENDS).default("vllm"),
  backend_version: z.string().min(1).optional(),
  context_length: positiveOr("integer", "max").default("max"),
  /** fleetsim extension: an AIConfigurator-format perf-data tree (`<dir>/<gpu>/vllm/<version>/*.parquet`). */
  perf_database: z.string().min(1).optional(),
  /**
   * The reference's `enable_eplb`: expert-parallel load balancing, priced on the MoE tables
   * measured with balanced expert load (docs/models.md "Expert load balance").
   */
  enable_eplb: z.boolean().default(false),
  /**
   * The reference's `wideep_num_slots`: expert slots per MoE layer, the redundant ones holding
   * copies of hot experts for EPLB (docs/models.md "Redundant expert slots").
   */
  wideep_num_slots: WideEpNumSlots,
  /** Speculative decoding of every worker (docs/speculation.md); absent or null = off. */
  speculation: Speculation.nullable().optional(),
  /**
   * The reference's `nextn` / `nextn_accepted` (AIConfigurator's MTP depth and mean accepted
   * drafts per step): MTP speculation with that depth and mean (docs/speculation.md "`engine.nextn`").
   */
  nextn: Nextn,
  nextn_accepted: NextnAccepted,
  /**
   * The reference's `enable_chunked_prefill` (mocker.md §1.1, default true): off, a prompt is
   * prefilled in one pass or waits (docs/timing.md "Chunked prefill off").
   */
  enable_chunked_prefill: z.boolean().default(true),
  ...unsupportedEngineKnobs,
};

/** The rules that span engine-level keys and the roles. */
function checkEngineRules(
  engine: Parameters<typeof checkBackendRules>[0] & Parameters<typeof checkNextn>[0],
  ctx: z.RefinementCtx,
): void {
  checkBackendRules(engine, ctx);
  checkNextn(engine, ctx);
  checkWideEpSlots(engine, ctx);
}

const ENCODER = unsupportedKey("analytical encoder (EPD) workers");

const PD_ROLE = `${PATH} requires engine.mode='disaggregated'; engine.mode='aggregated' accepts only workers.aggregated`;

const AggregatedEngine = z
  .strictObject({
    mode: z.literal("aggregated"),
    ...COMMON,
    kv_transfer: rejectKey(`${PATH} is only valid with engine.mode='disaggregated'`),
    workers: z.strictObject({
      aggregated: AggregatedRole,
      prefill: rejectKey(PD_ROLE),
      decode: rejectKey(PD_ROLE),
      encoder: ENCODER,
    }),
  })
  .superRefine(checkEngineRules);

/** KV hand-off from prefill to decode (aisimulate.md §4.6). */
const KvTransfer = z.strictObject({
  bytes_per_token: positiveOr("number", "auto").default("auto"),
  /** Decimal GB/s; null = the hand-off takes no time. */
  bandwidth_gb_per_second: posNum().nullable().default(null),
  timing_mode: z.enum(["destination_missing", "full_prompt"]).default("destination_missing"),
});

// Both roles' block sizes must agree (checked with the backend's defaults in config/backends.ts).
const DisaggregatedWorkers = z.strictObject({
  prefill: disaggregatedRole("prefill"),
  decode: disaggregatedRole("decode"),
  aggregated: rejectKey(
    `${PATH} requires engine.mode='aggregated'; engine.mode='disaggregated' accepts only workers.prefill and workers.decode`,
  ),
  encoder: ENCODER,
});

const DisaggregatedEngine = z
  .strictObject({
    mode: z.literal("disaggregated"),
    ...COMMON,
    kv_transfer: KvTransfer.prefault({}),
    workers: DisaggregatedWorkers,
  })
  .superRefine(checkEngineRules);

/** An omitted `mode` is the default one, filled in so that it can choose the schema. */
function withDefaultMode(value: unknown): unknown {
  if (!isMapping(value) || Object.hasOwn(value, "mode")) return value;
  return { mode: DEFAULT_MODE, ...value };
}

function modeMessage(iss: z.core.$ZodRawIssue): string | undefined {
  // The union's only own issue: `mode` names no schema.
  if (iss.code !== "invalid_union") return undefined;
  const mode = isMapping(iss.input) ? iss.input["mode"] : undefined;
  if (REFERENCE_ONLY_MODES.has(mode)) {
    return `${PATH}='${String(mode)}' is not supported by fleetsim yet (supported: ${orList(MODES)})`;
  }
  return `Input should be ${orList(MODES)}`;
}

export const Engine = z.preprocess(
  withDefaultMode,
  z
    .discriminatedUnion("mode", [AggregatedEngine, DisaggregatedEngine], { error: modeMessage })
    .transform(withBackendDefaults),
);

export type EngineConfig = z.output<typeof Engine>;
export type AggregatedEngineConfig = z.output<typeof AggregatedEngine>;
export type DisaggregatedEngineConfig = z.output<typeof DisaggregatedEngine>;
export type KvTransferConfig = z.output<typeof KvTransfer>;
