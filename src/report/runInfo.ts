/**
 * The `run` block of prediction.json (a fleetsim extension, docs/metrics.md "What was
 * simulated"): the deployment, router, Planner and traffic a prediction describes, so a
 * prediction.json read on its own (or its HTML report) says what produced it. Built from the
 * resolved run spec and the workload's counts only: a deterministic function of config and trace,
 * with no host-time value and no absolute path. The block's contract is src/output/run.ts.
 */
import { basename } from "node:path";
import { engineRoles, type RunSpec, type WorkerRoleSpec } from "../config/runSpec.js";
import { hardwareData } from "../hardware/catalog.js";
import type { RunInfo, RunPlanner, RunRole, RunRouter, RunTraffic } from "../output/run.js";
import { tableBackendOf } from "../timing/opTableSource.js";
import type { WorkloadInfo } from "../traffic/requestSource.js";

export type { RunInfo, RunPlanner, RunRole, RunRouter, RunTraffic };

export function buildRunInfo(spec: RunSpec, table: Pick<WorkloadInfo, "count" | "sessionCount">): RunInfo {
  const engine = spec.engine;
  const roles = engineRoles(engine);
  const topology: RunInfo["topology"] = {};
  for (const [name, role] of roles) topology[name] = runRole(role, engine.hardware);
  return {
    stack: spec.stack,
    mode: engine.mode,
    model: engine.model,
    hardware: engine.hardware,
    backend: engine.backend,
    topology,
    starting_gpus: roles.reduce((sum, [, r]) => sum + r.replicas * r.gpusPerWorker, 0),
    router: runRouter(spec),
    planner: runPlanner(spec),
    traffic: runTraffic(spec, table),
    sla: runSla(spec),
    ...runClient(spec),
    ...runSpeculation(roles[roles.length - 1][1]),
  };
}

/** The decode (or aggregated) role's speculation: every role carries the engine's one block. */
function runSpeculation(role: WorkerRoleSpec): Pick<RunInfo, "speculation"> {
  const s = role.speculation ?? null;
  if (s === null) return {};
  return {
    speculation: {
      kind: s.kind,
      num_speculative_tokens: s.numSpeculativeTokens,
      acceptance_rates: [...s.acceptanceRates],
      seed: s.seed,
    },
  };
}

function runClient(spec: RunSpec): Pick<RunInfo, "client"> {
  const c = spec.client;
  if (
    c === undefined ||
    (c.requestMs === 0 && c.responseMs === 0 && c.timeoutMs === null && c.profile === undefined)
  )
    return {};
  return {
    client: {
      request_ms: c.requestMs,
      response_ms: c.responseMs,
      timeout_seconds: c.timeoutMs === null ? null : c.timeoutMs / 1000,
      ...(c.profile === undefined ? {} : { profile: c.profile }),
    },
  };
}

function runRole(role: WorkerRoleSpec, engineHardware: string): RunRole {
  return {
    replicas: role.replicas,
    tensor: role.tensor,
    pipeline: role.pipeline,
    attention_data: role.attentionData,
    moe_tensor: role.moeTensor,
    moe_expert: role.moeExpert,
    gpus_per_worker: role.gpusPerWorker,
    hardware: role.hardware ?? engineHardware,
    hardware_data: role.timing.type === "default" ? runHardwareData(role.hardware ?? engineHardware) : null,
    timing: role.timing.type,
    max_batched_tokens: role.maxBatchedTokens,
    max_sequences: role.maxSequences,
    block_size: role.blockSize,
    kv_blocks: role.numGpuBlocks,
    prefix_caching: role.prefixCaching,
    startup_seconds: role.startupSeconds,
    // A backend without its own op tables for this GPU is priced from vLLM's (docs/backends.md "Timing").
    ...(role.backend !== undefined &&
    role.backend !== "vllm" &&
    role.timing.type === "default" &&
    tableBackendOf(role.timing, role.backend) === "vllm"
      ? { timing_backend: "vllm" as const }
      : {}),
  };
}

function runHardwareData(gpu: string): RunRole["hardware_data"] {
  const d = hardwareData(gpu);
  return { tier: d.tier, base: d.base, basis: d.basis };
}

function runRouter(spec: RunSpec): RunRouter {
  const r = spec.router;
  if (r.policy === "round_robin") return { policy: "round_robin" };
  return {
    policy: "kv_router",
    overlap_score_credit: r.overlapScoreCredit,
    prefill_load_scale: r.prefillLoadScale,
    temperature: r.temperature,
    prefill_load_model: r.prefillLoadModel,
  };
}

function runPlanner(spec: RunSpec): RunPlanner | null {
  const p = spec.planner;
  if (p === null) return null;
  const retune = p.retune ?? null;
  return {
    target: p.optimizationTarget,
    max_num_gpus: p.maxGpuBudget < 0 ? null : p.maxGpuBudget,
    min_num_gpus: p.minGpuBudget < 0 ? null : p.minGpuBudget,
    enable_load_scaling: p.enableLoadScaling,
    enable_throughput_scaling: p.enableThroughputScaling,
    advisory: p.advisory,
    retune:
      retune === null
        ? null
        : {
            objective: retune.objective,
            interval_seconds: retune.intervalS,
            max_parallel: retune.maxParallel,
          },
  };
}

function runTraffic(spec: RunSpec, table: Pick<WorkloadInfo, "count" | "sessionCount">): RunTraffic {
  const src = spec.source;
  const load = spec.load;
  const synthetic = src.type !== "trace";
  const out: RunTraffic = {
    source:
      src.type === "trace"
        ? src.format
        : src.type === "synthetic" && (src.sharedPrefix ?? null) !== null
          ? "synthetic-shared-prefix"
          : src.type,
    trace: synthetic ? null : basename(src.path),
    files: synthetic ? 0 : src.format === "dynamo" ? src.paths.length : 1,
    requests: table.count,
    sessions: table.sessionCount,
    load: load.type,
    max_virtual_time_seconds: spec.stop.maxVirtualTimeMs === null ? null : spec.stop.maxVirtualTimeMs / 1000,
  };
  if (src.type === "synthetic") {
    out.input_tokens = src.inputTokens;
    out.output_tokens = src.outputTokens;
  } else if (src.type === "synthetic-session") {
    out.input_tokens = src.newInputTokensPerTurn;
    out.output_tokens = src.outputTokensPerTurn;
    out.turns = src.turns;
  }
  if (load.type === "trace_timestamps") out.speedup = load.speedup;
  else if (load.type === "concurrency") {
    out.concurrency = load.concurrency;
    if (load.warmupSessions !== undefined) out.warmup_sessions = load.warmupSessions;
  } else {
    if (src.type === "synthetic-session") out.sessions_per_second = load.requestsPerSecond;
    else out.requests_per_second = load.requestsPerSecond;
    if (load.stages) out.stages = load.stages.length;
    if (load.type === "poisson") out.seed = load.seed;
  }
  return out;
}

function runSla(spec: RunSpec): RunInfo["sla"] {
  const sla = spec.sla;
  if (sla === null) return null;
  return {
    ...(sla.ttftMs === null ? {} : { ttft_ms: sla.ttftMs }),
    ...(sla.itlMs === null ? {} : { itl_ms: sla.itlMs }),
    ...(sla.e2eMs === null ? {} : { e2e_ms: sla.e2eMs }),
  };
}
