/**
 * `fleetsim recommend` without the CLI (docs/recommend.md): read the recommendation input and its
 * `--set` overrides, check it (exit 2 for anything the user must fix, before any replay), build one
 * study per deployment mode, let the optimizer suggest batches, evaluate them in sweep worker
 * processes, and build the result files. Writing them and printing are the caller's.
 */

import { createHash } from "node:crypto";
import { dirname } from "node:path";
import type * as z from "zod";
import { ConfigError } from "../config/errors.js";
import type { PathIssue } from "../config/issues.js";
import { fromZodIssues, zodMessage } from "../config/issues.js";
import {
  type ConfigDocument,
  configIssues,
  readConfigDocument,
  resolveConfigDocument,
} from "../config/load.js";
import { getOwn, type Mapping } from "../config/mapping.js";
import { resolveExecution } from "../config/resolve/index.js";
import type { ResourceSettings, SlaSpec, Stack } from "../config/runSpec.js";
import { validateConfig } from "../config/schema/index.js";
import {
  Optimization,
  type OptimizationConfig,
  Optimizer,
  type OptimizerConfig,
  SLA_TARGETS,
} from "../config/schema/recommend.js";
import { stableLine } from "../report/json.js";
import { probeHost, resolveBudget } from "../resources/budget.js";
import type { ExecutorSpec } from "../sweep/executor.js";
import { packageVersion } from "../util/packageRoot.js";
import { extractSearch, mappingAt, type SearchInput } from "./document.js";
import { Evaluator, RecommendAborted } from "./evaluate.js";
import { CandidateBuilder, type Study } from "./materialize.js";
import { createOptimizer } from "./optimizer.js";
import { buildResult, type RecommendationResult } from "./result.js";
import type { ScoreSettings } from "./score.js";
import type { Assignment } from "./space.js";

const VERSION = packageVersion();

export interface RecommendOptions {
  readonly configPath: string;
  readonly sets: readonly string[];
  readonly stack: Stack;
  readonly outputDir: string;
  /** Aborting it kills the running replays; the run then throws `RecommendAborted`. */
  readonly signal?: AbortSignal;
  /** Progress lines (one per batch). */
  readonly log?: (line: string) => void;
  /** Host probe for the CPU and memory budget (tests pin it). */
  readonly host?: ReturnType<typeof probeHost>;
  /** `--executor`: where candidates replay (default: worker processes here). */
  readonly executor?: ExecutorSpec;
}

export interface RecommendOutcome extends RecommendationResult {
  /** 0: something was selected; 1: nothing, and no candidate was resource-limited; 3: some were. */
  readonly exitCode: 0 | 1 | 3;
}

export { RecommendAborted };

/** A checked recommendation input, ready to search. */
export interface RecommendPlan {
  readonly doc: ConfigDocument;
  readonly optimization: OptimizationConfig;
  readonly optimizer: OptimizerConfig;
  readonly search: SearchInput;
  readonly builder: CandidateBuilder;
  readonly score: ScoreSettings;
  readonly resources: ResourceSettings;
  /** The input after `--set`, as validated (run provenance). */
  readonly input: Mapping;
}

/** Reads and checks the input; every problem the user must fix is a ConfigError (exit 2). */
export function planRecommendation(
  opts: Pick<RecommendOptions, "configPath" | "sets" | "stack">,
): RecommendPlan {
  const doc = readConfigDocument(opts.configPath, opts.sets);
  const input = structuredClone(doc.data);
  const data = structuredClone(doc.data);
  const issues: PathIssue[] = [];
  const optimization = section(Optimization, data, "optimization", issues);
  const optimizer = section(Optimizer, data, "optimizer", issues);
  if (issues.length > 0 || optimization === undefined || optimizer === undefined)
    throw configIssues(doc, issues);

  const sla = slaOf(data);
  const target = optimization.target;
  const fail = (path: string[], message: string): never => {
    throw configIssues(doc, [{ path, message, at: "value" }]);
  };
  if (SLA_TARGETS.has(target) && sla === null) {
    fail(
      ["optimization", "target"],
      `optimization.target='${target}' needs at least one evaluation.sla bound`,
    );
  }
  if (optimization.strict_sla && sla === null) {
    fail(["optimization", "strict_sla"], "optimization.strict_sla needs at least one evaluation.sla bound");
  }
  const engine = mappingAt(data, ["engine"]);
  if (engine !== null && engine["hardware"] === "auto") {
    if (optimization.hardware === null) {
      fail(
        ["engine", "hardware"],
        "engine.hardware='auto' needs optimization.hardware to name the GPU system",
      );
    }
    engine["hardware"] = optimization.hardware;
  }

  const planner = mappingAt(data, ["planner"]);
  if (planner !== null && planner["retune"] !== undefined && planner["retune"] !== null) {
    fail(
      ["planner", "retune"],
      "planner.retune cannot be part of a recommendation (each candidate is one replay); remove it",
    );
  }
  const search = extractSearch(data, issues);
  if (issues.length > 0) throw configIssues(doc, issues);
  if (target === "min_gpus") checkMinGpus(doc, search, optimization);

  const builder = new CandidateBuilder(doc, search, {
    stack: opts.stack,
    budget: {
      min: optimization.constraints.min_candidate_gpus,
      max: optimization.constraints.max_candidate_gpus,
    },
  });
  const resources = checkTemplate(doc, builder, opts.stack);
  return {
    doc,
    optimization,
    optimizer,
    search,
    builder,
    score: {
      target,
      strictSla: optimization.strict_sla,
      sla,
      minGoodputRps: optimization.constraints.min_goodput_rps,
    },
    resources,
    input,
  };
}

/** Runs the search of a checked plan. */
export async function runRecommendation(
  opts: RecommendOptions,
  plan = planRecommendation(opts),
): Promise<RecommendOutcome> {
  const { builder, optimizer, score } = plan;
  const budget = resolveBudget(plan.resources, opts.host ?? probeHost());
  const executionParallelism = Math.max(1, Math.min(optimizer.parallelism, budget.cpuLimit));
  const signal = opts.signal ?? new AbortController().signal;
  const evaluator = new Evaluator({
    builder,
    score,
    executionParallelism,
    candidateTimeoutMs: optimizer.candidate_timeout_seconds * 1000,
    budget,
    signal,
    executor: opts.executor,
  });
  const studies = builder.studies;
  const trials = splitTrials(optimizer.max_trials, studies.length);
  let trial = 0;
  try {
    for (const [i, study] of studies.entries()) {
      const opt = createOptimizer(optimizer.algorithm, {
        dimensions: study.dimensions,
        seed: optimizer.seed + i,
        keyOf: (a: Assignment) => evaluator.keyOf(study, a),
        trials: trials[i],
      });
      for (let done = 0; done < trials[i]; ) {
        const n = Math.min(optimizer.parallelism, trials[i] - done);
        const batch = opt.ask(n, []);
        const outcomes = await evaluator.evaluate(study, batch, trial + 1);
        if (signal.aborted) throw new RecommendAborted();
        for (const [j, a] of batch.entries()) opt.tell(a, outcomes[j]);
        done += n;
        trial += n;
        opts.log?.(progressLine(study, trial, optimizer.max_trials, evaluator));
      }
    }
  } finally {
    await evaluator.close();
  }
  const fingerprint = createHash("sha256").update(stableLine(plan.input)).digest("hex");
  const result = buildResult({
    records: evaluator.records,
    cacheHits: evaluator.counts.cacheHits,
    score,
    configDir: dirname(plan.doc.configPath),
    outputDir: opts.outputDir,
    provenance: {
      search_strategy: "optimizer_guided",
      implementation: "fleetsim",
      implementation_version: VERSION,
      run_id: `run-${fingerprint.slice(0, 12)}`,
      input_fingerprint: `sha256:${fingerprint}`,
      config: plan.input,
      optimizer: {
        algorithm: optimizer.algorithm,
        max_trials: optimizer.max_trials,
        parallelism: optimizer.parallelism,
        candidate_timeout_seconds: optimizer.candidate_timeout_seconds,
        seed: optimizer.seed,
      },
      studies: studies.map((s, i) => ({
        mode: s.mode,
        trials: trials[i],
        dimensions: s.dimensions.map((d) => d.name),
      })),
    },
  });
  const selected = result.document.views.top_n.length + result.document.views.pareto_front.length;
  const limited = result.document.counts.resource_limited;
  return { ...result, exitCode: limited > 0 ? 3 : selected === 0 ? 1 : 0 };
}

/** `max_trials` split over the studies, the first ones taking the remainder. */
export function splitTrials(total: number, studies: number): number[] {
  return Array.from(
    { length: studies },
    (_, i) => Math.floor(total / studies) + (i < total % studies ? 1 : 0),
  );
}

function progressLine(study: Study, trial: number, total: number, evaluator: Evaluator): string {
  const feasible = evaluator.records.filter((r) => r.status === "feasible");
  const best = feasible.reduce(
    (m, r) => Math.max(m, r.score ?? Number.NEGATIVE_INFINITY),
    Number.NEGATIVE_INFINITY,
  );
  const bestText = feasible.length === 0 ? "none feasible yet" : `best score ${Number(best.toPrecision(6))}`;
  return `trial ${trial}/${total} (${study.mode}): ${evaluator.records.length} candidates, ${evaluator.counts.cacheHits} cache hits, ${bestText}`;
}

/** Parses and removes a recommend-only section; issues go to `issues`. */
function section<T>(schema: z.ZodType<T>, data: Mapping, key: string, issues: PathIssue[]): T | undefined {
  const raw = getOwn(data, key);
  delete data[key];
  const parsed = schema.safeParse(raw ?? {}, { error: zodMessage, reportInput: true });
  if (!parsed.success) {
    issues.push(...fromZodIssues(parsed.error.issues, [key]));
    return undefined;
  }
  return parsed.data;
}

function slaOf(data: Mapping): SlaSpec | null {
  const sla = mappingAt(data, ["evaluation", "sla"]);
  if (sla === null) return null;
  const num = (k: string): number | null => (typeof sla[k] === "number" ? (sla[k] as number) : null);
  const out = { ttftMs: num("ttft_ms"), itlMs: num("itl_ms"), e2eMs: num("e2e_ms") };
  return out.ttftMs === null && out.itlMs === null && out.e2eMs === null ? null : out;
}

/**
 * `min_gpus` (the reference's scoring contract): static pools under a fixed load; request-rate
 * traffic needs `min_goodput_rps`, which may not exceed the offered rate.
 */
function checkMinGpus(doc: ConfigDocument, search: SearchInput, o: OptimizationConfig): void {
  const fail = (path: string[], message: string): never => {
    throw configIssues(doc, [{ path, message, at: "value" }]);
  };
  const loadSlot = search.slots.find((s) => s.path[0] === "traffic");
  if (loadSlot !== undefined) {
    fail(
      [...loadSlot.path],
      "optimization.target='min_gpus' sizes a deployment for one load; give the load a concrete value",
    );
  }
  const planner = mappingAt(search.template, ["planner"]);
  if (planner !== null && planner["policy"] === "enabled") {
    fail(
      ["planner", "policy"],
      "optimization.target='min_gpus' sizes static pools; set planner.policy: disabled",
    );
  }
  const load = mappingAt(search.template, ["traffic", "load"]);
  const rps = load === null ? undefined : getOwn(load, "requests_per_second");
  const floor = o.constraints.min_goodput_rps;
  if (typeof rps === "number") {
    if (floor === null) {
      fail(
        ["optimization", "constraints", "min_goodput_rps"],
        "optimization.target='min_gpus' with request-rate traffic needs min_goodput_rps",
      );
    } else if (floor > rps) {
      fail(
        ["optimization", "constraints", "min_goodput_rps"],
        `min_goodput_rps (${floor}) cannot exceed the offered traffic.load.requests_per_second (${rps})`,
      );
    }
  }
}

/**
 * Every study's first candidate must be a valid predict input but for what the search changes:
 * issues elsewhere (a typo, a missing trace, an unknown model) are the user's, reported now. Returns
 * the input's host-resource settings.
 */
function checkTemplate(doc: ConfigDocument, builder: CandidateBuilder, stack: Stack): ResourceSettings {
  const candidateLevel = (path: readonly (string | number)[]): boolean =>
    builder.searchDependent(path.join("."));
  let settings: ResourceSettings | null = null;
  for (const study of builder.studies) {
    const first: Record<string, unknown> = {};
    for (const d of study.dimensions) first[d.name] = d.kind === "categorical" ? d.values[0] : d.min;
    const concrete = builder.concrete(study, first);
    const validated = validateConfig(concrete, stack);
    if (!validated.ok) {
      const fatal = validated.issues.filter((i) => !candidateLevel(i.path));
      if (fatal.length > 0) throw configIssues(doc, fatal);
      continue;
    }
    settings ??= resolveExecution(validated.config).resources;
    try {
      resolveConfigDocument(doc, concrete, { stack });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // Not caused by a searched value, so the same for every candidate (a trace file, the model).
      const fatal = err.issues.filter((i) => !candidateLevel(i.path.split(".")));
      if (fatal.length > 0) throw new ConfigError(doc.configPath, fatal);
    }
  }
  return (
    settings ?? {
      memoryLimitGb: "auto",
      cpuLimit: "auto",
      reserveMemoryGb: 1,
      reserveMemoryFraction: 0,
      availableMemoryFraction: 0.9,
      initializationTimeoutSeconds: 60,
      shutdownTimeoutSeconds: 5,
    }
  );
}
