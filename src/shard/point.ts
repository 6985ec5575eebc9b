/**
 * A sweep point as a predict config: the base config's document with the point's overrides
 * applied in order, exactly as `predict -c BASE --set …` applies its flags (config/overrides.ts),
 * then validated and resolved by predict's own config path. Used by the plan (against the user's
 * files) and by `sweep run` (against the sweep directory's copy), so both see one document.
 */
import { ConfigError, type ConfigIssue } from "../config/errors.js";
import { type ConfigDocument, resolveConfigDocument } from "../config/load.js";
import type { Mapping } from "../config/mapping.js";
import { applyOverride, type Override } from "../config/overrides.js";
import type { RunSpec, Stack } from "../config/runSpec.js";
import type { YamlSource } from "../config/yamlSource.js";
import type { SweepSet } from "./sweepFile.js";

/** One override of a point, with the text error messages name it by. */
export interface PointOverride extends SweepSet {
  readonly origin: string;
}

/** The point's document (a fresh object) and the ConfigDocument that places its issues. */
export function pointDocument(
  configPath: string,
  source: YamlSource,
  sets: readonly PointOverride[],
): ConfigDocument {
  const data = structuredClone(source.data) as Mapping;
  const overrides: Override[] = [];
  const issues: ConfigIssue[] = [];
  for (const s of sets) {
    const o: Override = { flag: s.origin, path: s.path.split("."), value: structuredClone(s.value) };
    const issue = applyOverride(data, o);
    if (issue === undefined) overrides.push(o);
    else issues.push(issue);
  }
  if (issues.length > 0) throw new ConfigError(configPath, issues, "invalid override");
  return { configPath, source, data, overrides };
}

/** Resolves a point's document; a ConfigError says which point it is. */
export function resolvePoint(doc: ConfigDocument, stack: Stack, label: string, workDir: string): RunSpec {
  try {
    return resolveConfigDocument(doc, doc.data, { stack, workDir });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.configPath, err.issues, `${err.summary} in ${label}`);
  }
}

/** `PATH=VALUE` as a `--set` would read, the value as compact JSON (valid YAML). */
export function describeSet(s: SweepSet): string {
  return `${s.path}=${JSON.stringify(s.value)}`;
}
