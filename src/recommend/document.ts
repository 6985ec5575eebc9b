/**
 * A recommendation input → what to search: the concrete template (the document with every domain
 * taken out), the knob slots (a dimension and the document path it fills), the deployment modes to
 * study, and how each worker role's parallelism is searched. Misplaced or malformed domains are
 * path issues, so they are reported at their line like any config error (exit 2).
 */
import type { PathIssue, PathSegment } from "../config/issues.js";
import { getOwn, isMapping, type Mapping, setOwn } from "../config/mapping.js";
import { describeValue } from "../config/schema/primitives.js";
import type { WorkerRole } from "../util/workerRole.js";
import {
  GLOBAL_KNOBS,
  isDomain,
  PARALLELISM_KNOBS,
  PARALLELISM_RULE,
  parseDomain,
  ROLE_KNOBS,
  ROLES,
} from "./knobs.js";
import type { CategoricalDimension, Dimension } from "./space.js";

export type Mode = "aggregated" | "disaggregated";

export const MODE_ROLES: Readonly<Record<Mode, readonly WorkerRole[]>> = {
  aggregated: ["aggregated"],
  disaggregated: ["prefill", "decode"],
};

/** A dimension and the document path its value is written to. */
export interface KnobSlot {
  readonly path: readonly string[];
  readonly dimension: Dimension;
  /** The role whose studies search it; null: every study. */
  readonly role: WorkerRole | null;
  /** A default domain of an omitted knob (dropped where it does not apply, e.g. a round-robin router). */
  readonly defaulted: boolean;
}

/** How one role's `parallelism` is searched. */
export type RoleParallelism =
  /** `preset: default` (or nothing written): generated worker shapes on the GPU ladder. */
  | { readonly kind: "default" }
  /** A list of complete mappings: one categorical choice each. */
  | { readonly kind: "preset"; readonly dimension: CategoricalDimension }
  /** `preset: false` / `{}`, or knobs written without a preset: each knob pinned or its own domain. */
  | { readonly kind: "knobs" };

export interface SearchInput {
  /** The document without domains (role mappings present for every studied role). */
  readonly template: Mapping;
  readonly slots: readonly KnobSlot[];
  readonly modes: readonly Mode[];
  readonly parallelism: Readonly<Partial<Record<WorkerRole, RoleParallelism>>>;
}

const MODES: readonly Mode[] = ["aggregated", "disaggregated"];

/**
 * Splits `doc` (the predict part of a recommendation input, with `engine.hardware: auto` already
 * replaced) into a template and its search slots. Issues are pushed to `issues`.
 */
export function extractSearch(doc: Mapping, issues: PathIssue[]): SearchInput {
  const template = structuredClone(doc);
  const slots: KnobSlot[] = [];
  const engine = mappingAt(template, ["engine"]);
  const modes = engine === null ? [...MODES] : studiedModes(engine, issues);

  for (const [dotted, rule] of Object.entries(GLOBAL_KNOBS)) {
    if (dotted === "engine.mode") continue;
    const path = dotted.split(".");
    const parent = mappingAt(template, path.slice(0, -1));
    const key = path[path.length - 1];
    const raw = parent === null ? undefined : getOwn(parent, key);
    if (parent === null || !isDomain(raw)) continue;
    const dim = parseDomain(raw as Mapping, rule, dotted, path, issues);
    delete parent[key];
    if (dim !== undefined) slots.push({ path, dimension: dim, role: null, defaulted: false });
  }

  const parallelism: Partial<Record<WorkerRole, RoleParallelism>> = {};
  const roles = ROLES.filter((r) => modes.some((m) => MODE_ROLES[m].includes(r)));
  if (engine !== null) {
    let workers = getOwn(engine, "workers");
    if (workers === undefined || workers === null) {
      workers = {};
      setOwn(engine, "workers", workers);
    }
    if (isMapping(workers)) {
      for (const role of roles) {
        let roleDoc = getOwn(workers, role);
        if (roleDoc === undefined || roleDoc === null) {
          roleDoc = {};
          setOwn(workers, role, roleDoc);
        }
        if (!isMapping(roleDoc)) continue; // the schema reports it
        const base = ["engine", "workers", role];
        parallelism[role] = roleParallelism(roleDoc, role, base, slots, issues);
        roleKnobs(roleDoc, role, base, slots, issues);
      }
    }
  }
  misplacedDomains(template, [], issues);
  return { template, slots, modes, parallelism };
}

/** `engine.mode`: concrete, a domain, or (omitted) the modes whose roles `workers` declares. */
function studiedModes(engine: Mapping, issues: PathIssue[]): Mode[] {
  const raw = getOwn(engine, "mode");
  if (isDomain(raw)) {
    const dim = parseDomain(
      raw as Mapping,
      GLOBAL_KNOBS["engine.mode"],
      "engine.mode",
      ["engine", "mode"],
      issues,
    );
    // The mode picks the study; it is not a dimension of one.
    delete engine["mode"];
    return dim?.kind === "categorical" ? (dim.values as Mode[]) : ["aggregated"];
  }
  if (raw === "aggregated" || raw === "disaggregated") return [raw];
  if (raw !== undefined) return ["aggregated"]; // the schema reports a wrong mode
  const workers = getOwn(engine, "workers");
  if (!isMapping(workers)) return [...MODES];
  const declared = MODES.filter((m) => MODE_ROLES[m].some((r) => getOwn(workers, r) !== undefined));
  return declared.length === 0 ? [...MODES] : declared;
}

function roleParallelism(
  roleDoc: Mapping,
  role: WorkerRole,
  base: readonly string[],
  slots: KnobSlot[],
  issues: PathIssue[],
): RoleParallelism {
  const path = [...base, "parallelism"];
  const raw = getOwn(roleDoc, "parallelism");
  if (raw === undefined || raw === null) {
    delete roleDoc["parallelism"];
    return { kind: "default" };
  }
  if (!isMapping(raw)) {
    issues.push({ path, message: `Input should be a mapping, got ${describeValue(raw)}`, at: "value" });
    return { kind: "default" };
  }
  const others = Object.keys(raw).filter((k) => k !== "preset");
  if (!Object.hasOwn(raw, "preset")) {
    if (others.length === 0) {
      delete roleDoc["parallelism"];
      return { kind: "default" };
    }
    parallelismKnobs(raw, role, path, slots, issues);
    return { kind: "knobs" };
  }
  const preset = raw["preset"];
  const independent = preset === false || (isMapping(preset) && Object.keys(preset).length === 0);
  if (!independent && others.length > 0) {
    issues.push({
      path: [...path, others[0]],
      message:
        "a preset and independent parallelism knobs cannot be combined; set preset: false to search knobs",
      at: "key",
    });
    return { kind: "default" };
  }
  if (preset === "default") {
    delete roleDoc["parallelism"];
    return { kind: "default" };
  }
  if (independent) {
    delete raw["preset"];
    parallelismKnobs(raw, role, path, slots, issues);
    return { kind: "knobs" };
  }
  if (!Array.isArray(preset) || preset.length === 0) {
    issues.push({
      path: [...path, "preset"],
      message: `Input should be 'default', false, {} or a non-empty list of complete parallelism mappings, got ${describeValue(preset)}`,
      at: "value",
    });
    return { kind: "default" };
  }
  const values: Mapping[] = [];
  const seen = new Set<string>();
  preset.forEach((entry, i) => {
    const at = [...path, "preset", i];
    if (!isMapping(entry)) {
      issues.push({
        path: at,
        message: `Input should be a mapping, got ${describeValue(entry)}`,
        at: "value",
      });
      return;
    }
    for (const key of Object.keys(entry)) {
      if (!(PARALLELISM_KNOBS as readonly string[]).includes(key)) {
        issues.push({ path: [...at, key], message: "Extra inputs are not permitted", at: "key" });
        return;
      }
    }
    const mapping: Mapping = {};
    for (const key of PARALLELISM_KNOBS) {
      const v = getOwn(entry, key);
      if (v === undefined) {
        issues.push({
          path: [...at, key],
          message: "Field required: a preset entry names every parallelism knob",
          at: "value",
        });
        return;
      }
      const parsed = PARALLELISM_RULE.value.safeParse(v);
      if (!parsed.success || isDomain(v)) {
        issues.push({
          path: [...at, key],
          message: `Input should be a positive integer, got ${describeValue(v)}`,
          at: "value",
        });
        return;
      }
      mapping[key] = parsed.data;
    }
    const key = JSON.stringify(mapping);
    if (seen.has(key)) {
      issues.push({
        path: at,
        message: "this mapping is repeated: preset entries must be unique",
        at: "value",
      });
      return;
    }
    seen.add(key);
    values.push(mapping);
  });
  delete roleDoc["parallelism"];
  return { kind: "preset", dimension: { kind: "categorical", name: path.join("."), values } };
}

function parallelismKnobs(
  raw: Mapping,
  role: WorkerRole,
  path: readonly string[],
  slots: KnobSlot[],
  issues: PathIssue[],
): void {
  for (const key of PARALLELISM_KNOBS) {
    const v = getOwn(raw, key);
    if (!isDomain(v)) continue;
    const knobPath = [...path, key];
    const dim = parseDomain(v as Mapping, PARALLELISM_RULE, knobPath.join("."), knobPath, issues);
    delete raw[key];
    if (dim !== undefined) slots.push({ path: knobPath, dimension: dim, role, defaulted: false });
  }
}

function roleKnobs(
  roleDoc: Mapping,
  role: WorkerRole,
  base: readonly string[],
  slots: KnobSlot[],
  issues: PathIssue[],
): void {
  for (const [dotted, rule] of Object.entries(ROLE_KNOBS)) {
    const rel = dotted.split(".");
    const path = [...base, ...rel];
    const parent = mappingAt(roleDoc, rel.slice(0, -1));
    const key = rel[rel.length - 1];
    const raw = parent === null ? undefined : getOwn(parent, key);
    if (isDomain(raw) && parent !== null) {
      const dim = parseDomain(raw as Mapping, rule, path.join("."), path, issues);
      delete parent[key];
      if (dim !== undefined) slots.push({ path, dimension: dim, role, defaulted: false });
      continue;
    }
    if (raw !== undefined) continue;
    const defaults = rule.defaults?.(role);
    if (defaults === undefined) continue;
    // A knob whose parent is not a mapping is the schema's to report.
    if (mappingAt(roleDoc, rel.slice(0, -1), true) === null) continue;
    slots.push({
      path,
      dimension: { kind: "categorical", name: path.join("."), values: defaults },
      role,
      defaulted: true,
    });
  }
}

/** Any domain left in the template sits where a recommendation keeps values concrete. */
function misplacedDomains(value: unknown, path: PathSegment[], issues: PathIssue[]): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) misplacedDomains(v, [...path, i], issues);
    return;
  }
  if (!isMapping(value)) return;
  if (isDomain(value)) {
    const where = path.join(".");
    const message =
      path[0] === "planner"
        ? `${where} is a Planner knob: fleetsim recommend does not search the Planner yet; give it a concrete value`
        : `${where} is fixed during a recommendation and takes no search domain; give it a concrete value`;
    issues.push({ path, message, at: "value" });
    return;
  }
  for (const [k, v] of Object.entries(value)) misplacedDomains(v, [...path, k], issues);
}

/** The mapping at `path` below `root`; with `create`, missing mappings are made. Null if a non-mapping is in the way. */
export function mappingAt(root: Mapping, path: readonly PathSegment[], create = false): Mapping | null {
  let cur: Mapping = root;
  for (const seg of path) {
    const next = getOwn(cur, String(seg));
    if (next === undefined && create) {
      const made: Mapping = {};
      setOwn(cur, String(seg), made);
      cur = made;
    } else if (isMapping(next)) cur = next;
    else return null;
  }
  return cur;
}
