/**
 * Studies and candidates: one study per deployment mode (the reference runs separate optimizer
 * studies for aggregated and disaggregated deployments), each with its own dimensions; an
 * assignment of a study becomes a concrete predict document (`concrete`), which the predict config
 * path validates and resolves into a RunSpec (`resolve`). A candidate the config rejects is not a
 * user error but a candidate outcome, classified by where the rejection points.
 */
import { ConfigError } from "../config/errors.js";
import type { ConfigDocument } from "../config/load.js";
import { resolveConfigDocument } from "../config/load.js";
import { getOwn, isMapping, type Mapping, setOwn } from "../config/mapping.js";
import type { RunSpec, Stack, WorkerRoleSpec } from "../config/runSpec.js";
import type { ModelArchitecture } from "../model/architecture.js";
import { ModelError, resolveModel } from "../model/index.js";
import type { CANDIDATE_STATUSES, REASON_CATEGORIES } from "../output/recommendation.js";
import type { WorkerRole } from "../util/workerRole.js";
import { MODE_ROLES, type Mode, mappingAt, type SearchInput } from "./document.js";
import type { PARALLELISM_KNOBS } from "./knobs.js";
import {
  assignReplicas,
  budgetDimensions,
  ladderShapes,
  roleDimensions,
  shapeMapping,
  snapShape,
  type WorkerShape,
} from "./parallelism.js";
import type { Assignment, Dimension } from "./space.js";

export interface Study {
  readonly mode: Mode;
  readonly dimensions: readonly Dimension[];
  /** Legal worker shapes of each default-preset role. */
  readonly shapes: Readonly<Partial<Record<WorkerRole, readonly WorkerShape[]>>>;
}

/** The candidate GPU budget (`optimization.constraints`). */
export interface GpuBudget {
  readonly min: number | null;
  readonly max: number;
}

export type CandidateStatus = (typeof CANDIDATE_STATUSES)[number];
export type ReasonCategory = (typeof REASON_CATEGORIES)[number];

/** Why a candidate was not run or did not count. */
export interface Rejection {
  readonly status: Exclude<CandidateStatus, "feasible">;
  readonly category: ReasonCategory;
  readonly reason: string;
}

export type Resolved =
  | { readonly ok: true; readonly spec: RunSpec; readonly usedGpus: number }
  | ({ readonly ok: false; readonly usedGpus: number | null } & Rejection);

export interface BuilderOptions {
  readonly stack: Stack;
  readonly budget: GpuBudget;
}

export class CandidateBuilder {
  readonly studies: readonly Study[];
  private readonly arch: ModelArchitecture | null;

  constructor(
    private readonly doc: ConfigDocument,
    private readonly input: SearchInput,
    private readonly opts: BuilderOptions,
  ) {
    this.arch = modelOf(input.template);
    this.studies = input.modes.map((mode) => this.study(mode));
  }

  /** The concrete predict document of `a` in `study`. */
  concrete(study: Study, a: Assignment): Mapping {
    const doc = structuredClone(this.input.template);
    const engine = mappingAt(doc, ["engine"], true) as Mapping;
    setOwn(engine, "mode", study.mode);
    const roles = MODE_ROLES[study.mode];
    const workers = mappingAt(engine, ["workers"], true);
    if (workers !== null) {
      for (const role of ["aggregated", "prefill", "decode"] as const) {
        if (!roles.includes(role)) delete workers[role];
      }
    }
    if (study.mode === "aggregated") delete engine["kv_transfer"];
    for (const slot of this.input.slots) {
      if (slot.role !== null && !roles.includes(slot.role)) continue;
      const parent = mappingAt(doc, slot.path.slice(0, -1), true);
      if (parent !== null) setOwn(parent, slot.path[slot.path.length - 1], a[slot.dimension.name]);
    }
    if (workers === null) return doc;
    const defaults: { role: WorkerRole; shape: WorkerShape }[] = [];
    let fixedGpus = 0;
    for (const role of roles) {
      const roleDoc = mappingAt(workers, [role], true);
      if (roleDoc === null) continue;
      const p = this.input.parallelism[role];
      const shapes = study.shapes[role];
      if (p?.kind === "default" && shapes !== undefined) {
        defaults.push({ role, shape: snapShape(role, shapes, a) });
      } else if (p?.kind === "preset") {
        setOwn(roleDoc, "parallelism", structuredClone(a[p.dimension.name]));
        fixedGpus += workerCount(getOwn(roleDoc, "parallelism"));
      } else {
        fixedGpus += workerCount(getOwn(roleDoc, "parallelism"));
      }
    }
    if (defaults.length > 0) {
      const left = Math.max(0, this.opts.budget.max - fixedGpus);
      const min = Math.max(0, (this.opts.budget.min ?? 0) - fixedGpus);
      const replicas = assignReplicas(
        defaults.map((d) => ({ role: d.role, gpus: d.shape.gpus })),
        left,
        min,
        a,
      );
      for (const d of defaults) {
        const roleDoc = mappingAt(workers, [d.role], true) as Mapping;
        setOwn(roleDoc, "parallelism", shapeMapping(d.shape, replicas.get(d.role) ?? 1));
      }
    }
    return doc;
  }

  /**
   * A candidate's `config` in the ledger: its mode, the value of each searched knob and the
   * parallelism each role got (the latent values it was snapped from are in its provenance).
   */
  describe(study: Study, a: Assignment, doc: Mapping): Record<string, unknown> {
    const out: Record<string, unknown> = { "engine.mode": study.mode };
    const roles = MODE_ROLES[study.mode];
    for (const slot of this.input.slots) {
      if (slot.role === null || roles.includes(slot.role)) out[slot.dimension.name] = a[slot.dimension.name];
    }
    for (const role of roles) {
      const p = mappingAt(doc, ["engine", "workers", role, "parallelism"]);
      if (p !== null) out[`engine.workers.${role}.parallelism`] = structuredClone(p);
    }
    return out;
  }

  /** Validates and resolves a concrete document as predict would; a rejection is classified. */
  resolve(doc: Mapping): Resolved {
    let spec: RunSpec;
    try {
      spec = resolveConfigDocument(this.doc, doc, { stack: this.opts.stack });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return { ok: false, usedGpus: docGpus(doc), ...classify(err) };
    }
    const usedGpus = specGpus(spec);
    const { min, max } = this.opts.budget;
    const outside = (side: string, key: string, bound: number): Resolved => ({
      ok: false,
      usedGpus,
      status: "infeasible",
      category: "gpu_budget",
      reason: `uses ${usedGpus} GPUs, ${side} optimization.constraints.${key}=${bound}`,
    });
    if (usedGpus > max) return outside("above", "max_candidate_gpus", max);
    if (min !== null && usedGpus < min) return outside("below", "min_candidate_gpus", min);
    return { ok: true, spec, usedGpus };
  }

  /**
   * Whether a config issue at `path` (dotted) can depend on the candidate: it is under a searched
   * knob, or under what the parallelism decides (a role's parallelism and KV capacity, the
   * KV-transfer size derived from the prefill shape).
   */
  searchDependent(path: string): boolean {
    if (
      this.input.slots.some((s) => {
        const p = s.path.join(".");
        return path === p || path.startsWith(`${p}.`);
      })
    )
      return true;
    return (
      /^engine\.workers\.[a-z]+\.(parallelism|kv_cache\.capacity)(\.|$)/.test(path) ||
      path === "engine.kv_transfer.bytes_per_token"
    );
  }

  /** A study's dimensions: its knob slots, the presets, and the latent parallelism dimensions. */
  private study(mode: Mode): Study {
    const roles = MODE_ROLES[mode];
    const dims: Dimension[] = [];
    for (const slot of this.input.slots) {
      if (slot.role === null || roles.includes(slot.role)) dims.push(slot.dimension);
    }
    const shapes: Partial<Record<WorkerRole, readonly WorkerShape[]>> = {};
    let defaultRoles = 0;
    for (const role of roles) {
      const p = this.input.parallelism[role];
      if (p?.kind === "preset") dims.push(p.dimension);
      if (p?.kind !== "default") continue;
      defaultRoles++;
      shapes[role] = this.legalShapes(mode, role, dims);
      dims.push(...roleDimensions(role, shapes[role]));
    }
    dims.push(...budgetDimensions(defaultRoles));
    return { mode, dimensions: dims, shapes };
  }

  /**
   * Ladder shapes of `role` whose weights and KV cache fit (the candidate resolves, and one worker
   * holds a whole `max_model_len` request, as vLLM requires to start) within the GPU budget. Probed
   * with one worker of the shape per default role and every other dimension at its first value.
   */
  private legalShapes(mode: Mode, role: WorkerRole, dims: readonly Dimension[]): WorkerShape[] {
    const raw = ladderShapes(role, this.arch, this.opts.budget.max);
    const first: Record<string, unknown> = {};
    for (const d of dims) first[d.name] = d.kind === "categorical" ? d.values[0] : d.min;
    const legal: WorkerShape[] = [];
    for (const shape of raw) {
      const probe: Study = { mode, dimensions: [], shapes: {} };
      const doc = this.concrete(probe, first);
      const workers = mappingAt(doc, ["engine", "workers"]);
      if (workers === null) continue;
      for (const r of MODE_ROLES[mode]) {
        if (this.input.parallelism[r]?.kind !== "default") continue;
        const roleDoc = mappingAt(workers, [r], true);
        if (roleDoc !== null) setOwn(roleDoc, "parallelism", shapeMapping(shape, 1));
      }
      let spec: RunSpec;
      try {
        spec = resolveConfigDocument(this.doc, doc, { stack: this.opts.stack });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        // An issue no candidate can escape (a typo, a missing trace) is the user's to fix now.
        const fatal = err.issues.filter((i) => !this.searchDependent(i.path));
        if (fatal.length > 0) throw new ConfigError(this.doc.configPath, fatal, err.summary);
        continue;
      }
      const r = roleSpec(spec, role);
      if (r !== null && r.maxModelLen !== null && r.numGpuBlocks * r.blockSize < r.maxModelLen) continue;
      legal.push(shape);
    }
    if (legal.length === 0) {
      throw new ConfigError(this.doc.configPath, [
        {
          path: `engine.workers.${role}.parallelism`,
          message:
            `preset: default found no worker shape on the 1, 2, 4, 8, 16 GPU ladder within ` +
            `max_candidate_gpus=${this.opts.budget.max} whose weights and KV cache fit ${mode} ${role} workers; ` +
            "raise optimization.constraints.max_candidate_gpus or list the shapes under preset",
        },
      ]);
    }
    return legal;
  }
}

function modelOf(template: Mapping): ModelArchitecture | null {
  const id = mappingAt(template, ["engine"])?.["model"];
  if (typeof id !== "string") return null;
  try {
    return resolveModel(id);
  } catch (err) {
    if (err instanceof ModelError) return null;
    throw err;
  }
}

function roleSpec(spec: RunSpec, role: WorkerRole): WorkerRoleSpec | null {
  const e = spec.engine;
  if (e.mode === "aggregated") return role === "aggregated" ? e.aggregated : null;
  return role === "prefill" ? e.prefill : role === "decode" ? e.decode : null;
}

/** GPUs of a resolved deployment: workers × GPUs per worker over its roles. */
export function specGpus(spec: RunSpec): number {
  const e = spec.engine;
  const roles = e.mode === "aggregated" ? [e.aggregated] : [e.prefill, e.decode];
  return roles.reduce((s, r) => s + r.replicas * r.gpusPerWorker, 0);
}

/** GPUs of a parallelism mapping as written (replicas × tensor × pipeline × attention_data). */
function workerCount(p: unknown): number {
  if (!isMapping(p)) return 1;
  const n = (k: (typeof PARALLELISM_KNOBS)[number]): number => {
    const v = p[k];
    return typeof v === "number" && Number.isFinite(v) ? v : 1;
  };
  return n("replicas") * n("tensor") * n("pipeline") * n("attention_data");
}

/** GPUs of a concrete document that did not resolve, as far as its parallelism says. */
function docGpus(doc: Mapping): number | null {
  const workers = mappingAt(doc, ["engine", "workers"]);
  if (workers === null) return null;
  let total = 0;
  for (const role of ["aggregated", "prefill", "decode"]) {
    const r = getOwn(workers, role);
    if (isMapping(r)) total += workerCount(getOwn(r, "parallelism"));
  }
  return total;
}

/** A rejected candidate's status and reason category, from where its config issues point. */
function classify(err: ConfigError): Rejection {
  const reason = err.issues.map((i) => (i.path === "" ? i.message : `${i.path}: ${i.message}`)).join("; ");
  const paths = err.issues.map((i) => i.path);
  if (paths.some((p) => p === "engine.backend")) {
    return { status: "unsupported", category: "backend_topology", reason };
  }
  if (paths.some((p) => /\.kv_cache\.capacity/.test(p))) {
    return { status: "infeasible", category: "kv_capacity", reason };
  }
  if (paths.some((p) => /\.parallelism\b/.test(p))) {
    return { status: "infeasible", category: "parallel_projection", reason };
  }
  if (paths.some((p) => p.startsWith("router") || p.startsWith("planner"))) {
    return { status: "infeasible", category: "adapter_constraint", reason };
  }
  return { status: "failed", category: "candidate_materialization", reason };
}
