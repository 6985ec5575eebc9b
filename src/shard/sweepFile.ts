/**
 * The sweep file of `fleetsim sweep plan -c sweep.yaml` (docs/sweep.md "The sweep file"): a base
 * predict config, `set` overrides applied to every point and `vary` axes whose Cartesian product
 * are the points, each value applied as a `--set` would be. Axis values are a YAML list or one of
 * recommend's domains (`{choices: [...]}`, a stepped `{range: {min, max, step}}`). Every mistake is
 * a ConfigError at its line in the sweep file (exit 2).
 */
import { dirname, resolve } from "node:path";
import * as z from "zod";
import { ConfigError, type ConfigIssue } from "../config/errors.js";
import { CONFIG_PARSE, dotted, type PathIssue, type PathSegment } from "../config/issues.js";
import { isMapping, type Mapping } from "../config/mapping.js";
import { parseOverride } from "../config/overrides.js";
import type { Stack } from "../config/runSpec.js";
import { describeValue } from "../config/schema/primitives.js";
import { Optimization, type OptimizationConfig } from "../config/schema/recommend.js";
import { readYamlSource, type YamlSource } from "../config/yamlSource.js";
import {
  GLOBAL_KNOBS,
  isDomain,
  type KnobRule,
  PARALLELISM_KNOBS,
  PARALLELISM_RULE,
  parseDomain,
  ROLE_KNOBS,
} from "../recommend/knobs.js";
import { finiteCount, snapNumeric } from "../recommend/space.js";

/** One override of every point: the dotted path and the value, as `--set PATH=VALUE` gives them. */
export interface SweepSet {
  readonly path: string;
  readonly value: unknown;
}

/** One axis of the grid: a dotted path and the values it takes, in file order. */
export interface SweepAxis {
  readonly path: string;
  readonly values: readonly unknown[];
  /** Where the axis is written (error messages name it). */
  readonly line: number | null;
}

/** How the points reach their trace files (docs/sweep.md "Inputs"). */
export type InputsMode = "copy" | "reference";

export interface SweepFile {
  /** The sweep file as the user named it. */
  readonly path: string;
  /** The base predict config, resolved against the sweep file's folder. */
  readonly basePath: string;
  readonly stack: Stack | null;
  readonly set: readonly SweepSet[];
  readonly axes: readonly SweepAxis[];
  readonly inputs: InputsMode | null;
  /** recommend's `optimization` section: how `sweep merge` ranks the points (default target: throughput). */
  readonly optimization: OptimizationConfig;
}

/** Most points one plan may have: beyond it a typo in a range is likelier than a real sweep. */
export const MAX_POINTS = 100_000;

const TOP_KEYS = ["base", "stack", "set", "vary", "inputs", "optimization"] as const;

export function readSweepFile(path: string): SweepFile {
  const source = readYamlSource(path);
  const data = source.data as Mapping;
  const issues: PathIssue[] = [];
  const at = (p: PathSegment[], message: string, where: "key" | "value" = "value"): void => {
    issues.push({ path: p, message, at: where });
  };
  for (const key of Object.keys(data)) {
    if (!(TOP_KEYS as readonly string[]).includes(key)) {
      at([key], `Extra inputs are not permitted (a sweep file has ${TOP_KEYS.join(", ")})`, "key");
    }
  }
  const base = data["base"];
  if (typeof base !== "string" || base === "") {
    at(["base"], `Input should be the path of a predict config, got ${describeValue(base)}`);
  }
  const stack = data["stack"];
  if (stack !== undefined && stack !== "engine" && stack !== "dynamo") {
    at(["stack"], `Input should be 'engine' or 'dynamo', got ${describeValue(stack)}`);
  }
  const inputs = data["inputs"];
  if (inputs !== undefined && inputs !== "copy" && inputs !== "reference") {
    at(["inputs"], `Input should be 'copy' or 'reference', got ${describeValue(inputs)}`);
  }
  const set = readSets(data["set"], issues);
  const axes = readAxes(data["vary"], source, issues);
  const parsed = Optimization.safeParse(data["optimization"] ?? {}, { ...CONFIG_PARSE, reportInput: true });
  if (!parsed.success) {
    for (const iss of parsed.error.issues) {
      at(["optimization", ...iss.path.map((p) => (typeof p === "number" ? p : String(p)))], iss.message);
    }
  }
  if (issues.length === 0) {
    const points = axes.reduce((n, a) => n * a.values.length, 1);
    if (points > MAX_POINTS)
      at(["vary"], `the axes make ${points} points; a plan may have at most ${MAX_POINTS}`);
  }
  if (issues.length > 0 || !parsed.success) throw sweepFileError(path, source, issues);
  return {
    path,
    basePath: resolve(dirname(path), base as string),
    stack: (stack as Stack | undefined) ?? null,
    set,
    axes,
    inputs: (inputs as InputsMode | undefined) ?? null,
    optimization: parsed.data,
  };
}

/** `set`: a list whose items are one-key mappings `{PATH: VALUE}` or `PATH=VALUE` strings. */
function readSets(raw: unknown, issues: PathIssue[]): SweepSet[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    issues.push({ path: ["set"], message: `Input should be a list, got ${describeValue(raw)}`, at: "value" });
    return [];
  }
  const out: SweepSet[] = [];
  raw.forEach((item, i) => {
    if (typeof item === "string") {
      const parsed = parseOverride(item);
      if (!parsed.ok) {
        issues.push({ path: ["set", i], message: parsed.issue.message, at: "value" });
        return;
      }
      const bad = jsonProblem(parsed.override.value);
      if (bad !== null) issues.push({ path: ["set", i], message: bad, at: "value" });
      else out.push({ path: parsed.override.path.join("."), value: parsed.override.value });
      return;
    }
    if (!isMapping(item) || Object.keys(item).length !== 1) {
      issues.push({
        path: ["set", i],
        message: `Input should be a one-key mapping {PATH: VALUE} or a PATH=VALUE string, got ${describeValue(item)}`,
        at: "value",
      });
      return;
    }
    const [path, value] = Object.entries(item)[0];
    const problem = pathProblem(path);
    const bad = jsonProblem(value);
    if (problem !== null) issues.push({ path: ["set", i, path], message: problem, at: "key" });
    else if (bad !== null) issues.push({ path: ["set", i, path], message: bad, at: "value" });
    else out.push({ path, value });
  });
  return out;
}

/** `vary`: a mapping of dotted paths to a list of values or one of recommend's domains. */
function readAxes(raw: unknown, source: YamlSource, issues: PathIssue[]): SweepAxis[] {
  if (raw === undefined || raw === null) return [];
  if (!isMapping(raw)) {
    issues.push({
      path: ["vary"],
      message: `Input should be a mapping, got ${describeValue(raw)}`,
      at: "value",
    });
    return [];
  }
  const out: SweepAxis[] = [];
  for (const [path, spec] of Object.entries(raw)) {
    const where: PathSegment[] = ["vary", path];
    const problem = pathProblem(path);
    if (problem !== null) {
      issues.push({ path: where, message: problem, at: "key" });
      continue;
    }
    const values = axisValues(path, spec, where, issues);
    if (values === undefined) continue;
    const line = source.locate(where, "key")?.position.line ?? null;
    out.push({ path, values, line });
  }
  return out;
}

function axisValues(
  path: string,
  spec: unknown,
  where: PathSegment[],
  issues: PathIssue[],
): unknown[] | undefined {
  let values: unknown[];
  if (Array.isArray(spec)) {
    values = spec;
  } else if (isDomain(spec)) {
    const dim = parseDomain(spec as Mapping, ruleFor(path), path, where, issues);
    if (dim === undefined) return undefined;
    if (dim.kind === "categorical") values = [...dim.values];
    else {
      const count = dim.log ? null : finiteCount(dim);
      if (count === null) {
        issues.push({
          path: [...where, "range"],
          message: "a sweep enumerates its axes: a range needs a step (and a linear scale)",
          at: "value",
        });
        return undefined;
      }
      values = [];
      for (let k = 0; k < count; k++) {
        values.push(snapNumeric(dim, dim.step === null ? Math.ceil(dim.min) + k : dim.min + k * dim.step));
      }
    }
  } else {
    issues.push({
      path: where,
      message: `Input should be a list of values or a domain ({choices: [...]} or {range: {min, max, step}}), got ${describeValue(spec)}`,
      at: "value",
    });
    return undefined;
  }
  if (values.length === 0) {
    issues.push({ path: where, message: "an axis needs at least one value", at: "value" });
    return undefined;
  }
  const seen = new Map<string, number>();
  for (const [i, v] of values.entries()) {
    const bad = jsonProblem(v);
    if (bad !== null) {
      issues.push({ path: Array.isArray(spec) ? [...where, i] : where, message: bad, at: "value" });
      return undefined;
    }
    const key = JSON.stringify(v);
    if (seen.has(key)) {
      issues.push({
        path: Array.isArray(spec) ? [...where, i] : where,
        message: `${describeValue(v)} is repeated: an axis's values must be unique`,
        at: "value",
      });
      return undefined;
    }
    seen.set(key, i);
  }
  return values;
}

/** recommend's value rule for a searchable knob; any other path takes any value (predict checks it). */
function ruleFor(path: string): KnobRule {
  const known = GLOBAL_KNOBS[path];
  if (known !== undefined) return known;
  const role = /^engine\.workers\.(aggregated|prefill|decode)\.(.+)$/.exec(path);
  if (role !== null) {
    const rel = role[2];
    if (ROLE_KNOBS[rel] !== undefined) return ROLE_KNOBS[rel];
    const knob = /^parallelism\.(.+)$/.exec(rel)?.[1];
    if (knob !== undefined && (PARALLELISM_KNOBS as readonly string[]).includes(knob))
      return PARALLELISM_RULE;
  }
  return { value: z.unknown(), numeric: "number" };
}

/**
 * Why `value` cannot go into the manifest as it is (JSON: finite numbers, no `.inf`/`.nan`), or
 * null. The manifest and the point hashes are JSON; a value JSON cannot hold would change on the
 * way.
 */
export function jsonProblem(value: unknown): string | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : `${value} is not a finite number`;
  if (value === null || typeof value === "string" || typeof value === "boolean") return null;
  if (Array.isArray(value)) {
    for (const v of value) {
      const p = jsonProblem(v);
      if (p !== null) return p;
    }
    return null;
  }
  if (isMapping(value)) {
    for (const v of Object.values(value)) {
      const p = jsonProblem(v);
      if (p !== null) return p;
    }
    return null;
  }
  return `${describeValue(value)} is not a JSON value`;
}

/** Why `path` cannot be a `--set` path, or null (the rules of config/overrides.ts). */
function pathProblem(path: string): string | null {
  const parsed = parseOverride(`${path}=null`);
  return parsed.ok ? null : parsed.issue.message;
}

function sweepFileError(path: string, source: YamlSource, issues: readonly PathIssue[]): ConfigError {
  const placed: ConfigIssue[] = issues.map((issue) => {
    const located = source.locate(issue.path, issue.at);
    return { path: dotted(issue.path), message: issue.message, ...(located?.position ?? {}) };
  });
  return new ConfigError(path, placed);
}
