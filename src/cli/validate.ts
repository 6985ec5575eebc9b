/**
 * `fleetsim validate -c FILE [--set …]`: everything `predict` checks before its replay — YAML,
 * schema, cross-field rules, `--set`s, model and GPU resolution, trace files, the op tables of
 * the timing model — then a one-paragraph summary of what would run. Errors propagate exactly
 * as `predict` raises them, so the CLI prints them the same way (exit 2).
 */
import { loadConfigWithNotes } from "../config/load.js";
import type { LoadSpec, RunSpec, SourceSpec, Stack } from "../config/runSpec.js";
import { DEFAULT_EXECUTION, engineRoles } from "../config/runSpec.js";
import { createRoleTimings } from "../pipeline/timings.js";
import { stableLine } from "../report/json.js";
import { type HostResources, probeHost } from "../resources/budget.js";
import type { LengthSpec } from "../traffic/lengthDistribution.js";
import type { Streams } from "./streams.js";

export interface ValidateOptions {
  readonly config: string;
  readonly set: readonly string[];
  readonly stack: Stack;
  readonly format: "text" | "json";
  /** The host `cpu_limit: auto` is resolved against (tests); default: this machine. */
  readonly host?: Pick<HostResources, "cpuCount">;
}

/** What a valid config would run, as the JSON form prints it. */
export interface RunOverview {
  readonly mode: "aggregated" | "disaggregated";
  readonly model: string;
  readonly hardware: string;
  /** Initial workers per role. */
  readonly workers: Readonly<Record<string, number>>;
  readonly gpus: number;
  readonly router: string;
  readonly planner: boolean;
  readonly retune: boolean;
  readonly traffic: { readonly source: string; readonly load: string; readonly stop: string };
  readonly sla: { readonly ttft_ms?: number; readonly itl_ms?: number; readonly e2e_ms?: number } | null;
}

export async function validateCommand(opts: ValidateOptions, io: Streams): Promise<void> {
  const { spec, notes } = loadConfigWithNotes({
    configPath: opts.config,
    sets: [...opts.set],
    stack: opts.stack,
  });
  for (const note of notes) io.err(`fleetsim: note: ${note}\n`);
  // The op tables (or an `engine.perf_database` tree) are read by predict before its replay too.
  await createRoleTimings(spec.engine);
  const overview = describeRun(spec);
  const warnings = configWarnings(spec, opts.host ?? probeHost());
  if (opts.format === "json") {
    io.out(`${stableLine({ config: opts.config, ok: true, run: overview, warnings })}\n`);
    return;
  }
  io.out(`${opts.config}: ok\n${wrap(overviewText(overview, spec), 100)}\n`);
  for (const w of warnings) io.err(`fleetsim: warning: ${w}\n`);
}

/**
 * Settings that run but defeat their purpose (the config is valid; exit 0):
 *  - a Planner budget (`max_num_gpus`) at or below the GPUs the starting replicas use: the Planner
 *    holds every scale-up it proposes (seed 000: "Set max_num_gpus above the starting GPU count");
 *  - retune's `max_parallel` above `cpu_limit`: the sweep workers share fewer CPUs than there are
 *    workers (seed 000 "Size the Run": `cpu_limit` at least `max_parallel` + 1).
 */
export function configWarnings(spec: RunSpec, host: Pick<HostResources, "cpuCount">): string[] {
  const out: string[] = [];
  const planner = spec.planner;
  if (planner !== null && planner.maxGpuBudget >= 0) {
    const starting = describeRun(spec).gpus;
    if (planner.maxGpuBudget <= starting) {
      out.push(
        `planner.max_num_gpus = ${planner.maxGpuBudget} is ${planner.maxGpuBudget === starting ? "equal to" : "below"} ` +
          `the ${starting} GPU${starting === 1 ? "" : "s"} the starting replicas use: the Planner holds every ` +
          "scale-up it proposes; set max_num_gpus above the starting GPU count",
      );
    }
  }
  for (const [name, role] of engineRoles(spec.engine)) {
    if ((role.prefillDecodeInterval ?? 0) > 0 && name !== "aggregated") {
      out.push(
        `engine.workers.${name}.scheduler.prefill_decode_interval = ${role.prefillDecodeInterval} has no effect on a ` +
          `${name} worker: it defers prefill while requests decode, and a ${name} worker never does both`,
      );
    }
    const interval = role.prefillScheduleInterval ?? 1;
    if (interval > 1 && role.attentionData === 1) {
      out.push(
        `engine.workers.${name}.scheduler.prefill_schedule_interval = ${interval} has no effect without attention DP ` +
          `(parallelism.attention_data = 1): as in the reference, only attention-DP workers admit prefills every N-th pass`,
      );
    }
  }
  const retune = planner?.retune ?? null;
  if (retune !== null) {
    const setting = (spec.execution ?? DEFAULT_EXECUTION).resources.cpuLimit;
    const cpuLimit = setting === "auto" ? Math.max(1, host.cpuCount - 1) : setting;
    if (retune.maxParallel > cpuLimit) {
      const how =
        setting === "auto"
          ? ` (auto: ${host.cpuCount} host CPU${host.cpuCount === 1 ? "" : "s"} minus one)`
          : "";
      out.push(
        `planner.retune.max_parallel = ${retune.maxParallel} exceeds execution.resources.cpu_limit = ${cpuLimit}${how}: ` +
          `the ${retune.maxParallel} sweep workers share ${cpuLimit} CPU${cpuLimit === 1 ? "" : "s"}, so sweeps take longer ` +
          `and may reach timeout_seconds; set cpu_limit to at least max_parallel + 1 = ${retune.maxParallel + 1}, ` +
          "or lower max_parallel",
      );
    }
  }
  return out;
}

export function describeRun(spec: RunSpec): RunOverview {
  const engine = spec.engine;
  const roles = engineRoles(spec.engine);
  const sla = spec.sla;
  return {
    mode: engine.mode,
    model: engine.model,
    hardware: engine.hardware,
    workers: Object.fromEntries(roles.map(([name, role]) => [name, role.replicas])),
    gpus: roles.reduce((sum, [, role]) => sum + role.replicas * role.gpusPerWorker, 0),
    router: spec.router.policy,
    planner: spec.planner !== null,
    retune: spec.planner?.retune !== undefined && spec.planner.retune !== null,
    traffic: {
      source: sourceText(spec.source),
      load: loadText(spec.load, spec.source.type === "synthetic-session" ? "sessions/s" : "req/s"),
      stop: stopText(spec),
    },
    sla:
      sla === null
        ? null
        : {
            ...(sla.ttftMs === null ? {} : { ttft_ms: sla.ttftMs }),
            ...(sla.itlMs === null ? {} : { itl_ms: sla.itlMs }),
            ...(sla.e2eMs === null ? {} : { e2e_ms: sla.e2eMs }),
          },
  };
}

function overviewText(o: RunOverview, spec: RunSpec): string {
  const roles = Object.entries(o.workers)
    .map(([role, n]) => `${n} ${role} worker${n === 1 ? "" : "s"}`)
    .join(" + ");
  const planner = spec.planner;
  const plannerText =
    planner === null
      ? "planner off (fixed replicas)"
      : `planner on (target ${planner.optimizationTarget}; load scaling ${planner.enableLoadScaling ? "on" : "off"}, ` +
        `throughput scaling ${planner.enableThroughputScaling ? "on" : "off"}${planner.advisory ? ", advisory" : ""}` +
        `${o.retune ? ", with retune" : ""})`;
  const slaText =
    o.sla === null
      ? "no SLA (no goodput keys)"
      : `SLA ${Object.entries(o.sla)
          .map(([key, ms]) => `${key.replace("_ms", "")} ≤ ${ms} ms`)
          .join(", ")}`;
  return (
    `Would run ${o.mode === "aggregated" ? "an" : "a"} ${o.mode} deployment of ${o.model} on ${o.hardware}: ${roles} (${o.gpus} GPU${o.gpus === 1 ? "" : "s"}), ` +
    `router ${o.router}, ${plannerText}. Traffic: ${o.traffic.source}, ${o.traffic.load}, ${o.traffic.stop}; ${slaText}.` +
    clientText(spec)
  );
}

/** The client's additions (docs/client.md, docs/calibrate.md), when the run has any. */
function clientText(spec: RunSpec): string {
  const c = spec.client;
  if (
    c === undefined ||
    (c.requestMs === 0 && c.responseMs === 0 && c.timeoutMs === null && c.profile === undefined)
  )
    return "";
  const parts = [`+${c.requestMs} ms per request`];
  if (c.responseMs > 0) parts.push(`+${c.responseMs} ms per response`);
  if (c.profile !== undefined) parts.push(`calibration profile ${c.profile}`);
  if (c.timeoutMs !== null) parts.push(`timeout ${c.timeoutMs / 1000} s`);
  return ` Client: ${parts.join(", ")}.`;
}

function sourceText(source: SourceSpec): string {
  if (source.type === "synthetic") {
    const shared = source.sharedPrefix ?? null;
    const lengths = `${lengthText(source.input, source.inputTokens)} input / ${lengthText(source.output, source.outputTokens)} output tokens`;
    if (shared === null) return `synthetic requests of ${lengths}`;
    return (
      `synthetic shared-prefix requests (${shared.groups} groups × ${shared.promptsPerGroup} prompts, ` +
      `${shared.systemPromptTokens}-token system prompt) of ${lengths}`
    );
  }
  if (source.type === "synthetic-session") {
    return (
      `synthetic sessions of ${source.turns} turns, ${lengthText(source.newInput, source.newInputTokensPerTurn)} new input / ` +
      `${lengthText(source.output, source.outputTokensPerTurn)} output tokens per turn`
    );
  }
  if (source.format !== "dynamo") return `${TRACE_NAMES[source.format]} ${source.path}`;
  const shards = source.paths.length;
  return `Dynamo trace ${source.path}${shards > 1 ? ` (+${shards - 1} more file${shards > 2 ? "s" : ""})` : ""}`;
}

const TRACE_NAMES = {
  mooncake: "Mooncake trace",
  "mooncake-delta": "Mooncake delta trace",
  agentic_mooncake: "agentic Mooncake trace",
  weka: "Weka (AgentX) corpus",
  applied_compute_agentic: "Applied Compute agentic trace",
} as const;

/** `128`, or `~128 (lognormal)` for a sampled length. */
function lengthText(spec: LengthSpec | undefined, mean: number): string {
  if (spec === undefined || spec.distribution === "fixed") return String(mean);
  return `~${Math.round(mean * 100) / 100} (${spec.distribution})`;
}

function loadText(load: LoadSpec, unit: string): string {
  switch (load.type) {
    case "concurrency":
      return `closed loop at concurrency ${load.concurrency}${load.warmupSessions === undefined ? "" : `, after a warm-up of ${load.warmupSessions} sessions`}`;
    case "poisson":
      if (load.stages) return `Poisson arrivals in ${load.stages.length} stages (seed ${load.seed})`;
      return `Poisson arrivals at ${load.requestsPerSecond} ${unit} (seed ${load.seed})`;
    case "constant_rate":
      if (load.stages) return `constant-rate arrivals in ${load.stages.length} stages`;
      return `constant rate of ${load.requestsPerSecond} ${unit}`;
    case "trace_timestamps":
      return `replayed on its timestamps${load.speedup === 1 ? "" : ` at ${load.speedup}× speed`}`;
  }
}

function stopText(spec: RunSpec): string {
  const { requests, maxVirtualTimeMs } = spec.stop;
  const sessions = spec.stop.sessions ?? null;
  if (sessions !== null) return `${sessions} sessions (${requests} requests)`;
  if (requests !== null) {
    const staged =
      spec.load.type !== "concurrency" && spec.load.type !== "trace_timestamps" && spec.load.stages;
    return staged ? `the stages' end (about ${requests} requests)` : `${requests} requests`;
  }
  if (maxVirtualTimeMs !== null)
    return `until the trace ends or ${maxVirtualTimeMs / 1000} s of simulated time`;
  return "until the trace ends";
}

/** Greedy word wrap (the paragraph is prose; paths longer than the width stay whole). */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") lines.push(line);
  return lines.join("\n");
}
