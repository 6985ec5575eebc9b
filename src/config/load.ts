/**
 * Config file + `--set` overrides → RunSpec. The only entry point other modules need:
 * every failure is a ConfigError whose issues name the dotted path and where the offending
 * value came from (a line/column of the file, or the `--set` flag).
 */
import { homedir } from "node:os";
import { dirname } from "node:path";
import { ConfigError, type ConfigIssue, validationSummary } from "./errors.js";
import { dotted, type PathIssue, type PathSegment } from "./issues.js";
import { isMapping, type Mapping } from "./mapping.js";
import { applyOverride, type Override, parseOverride } from "./overrides.js";
import { resolveRunSpec } from "./resolve/index.js";
import type { RunSpec, Stack } from "./runSpec.js";
import { validateConfig } from "./schema/index.js";
import { readYamlSource, type YamlSource } from "./yamlSource.js";

export interface LoadConfigOptions {
  readonly configPath: string;
  /** `--set PATH=VALUE` flags in command-line order (later ones win). */
  readonly sets: readonly string[];
  readonly stack: Stack;
  /** Environment for the Hugging Face cache lookup of `context_length: max`; defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The working directory (relative `load_predictor_warmup_trace`); defaults to `process.cwd()`. */
  readonly workDir?: string;
}

export function loadConfig(opts: LoadConfigOptions): RunSpec {
  return loadConfigWithNotes(opts).spec;
}

/**
 * `loadConfig`, and what the config left to a default that decides what runs, said as a note by
 * `predict` and `validate`: a config without `traffic` runs the reference's default workload
 * (docs/traffic.md "No traffic section").
 */
export function loadConfigWithNotes(opts: LoadConfigOptions): { spec: RunSpec; notes: string[] } {
  const doc = readConfigDocument(opts.configPath, opts.sets);
  const spec = resolveConfigDocument(doc, doc.data, opts);
  const notes: string[] = [];
  if (!("traffic" in doc.data)) {
    notes.push(
      `${opts.configPath} has no traffic section: the default workload runs, as in aisimulate ` +
        "(100 synthetic requests of 1024 input and 128 output tokens at concurrency 10)",
    );
  }
  return { spec, notes };
}

/** A config file after its `--set` overrides, before validation: what `recommend` searches over. */
export interface ConfigDocument {
  readonly configPath: string;
  readonly source: YamlSource;
  /** The top-level mapping with the overrides applied (a fresh object, the caller may edit it). */
  readonly data: Mapping;
  readonly overrides: readonly Override[];
}

/** Reads the YAML and applies `--set` flags in order; every failure is a ConfigError. */
export function readConfigDocument(configPath: string, sets: readonly string[]): ConfigDocument {
  const source = readYamlSource(configPath);
  if (!isMapping(source.data)) {
    // readYamlSource already rejects non-mapping documents; this narrows the type.
    throw new ConfigError(configPath, [
      { path: "", message: "the top level of the config must be a mapping" },
    ]);
  }
  const data = source.data;

  const overrides: Override[] = [];
  const overrideIssues: ConfigIssue[] = [];
  for (const spec of sets) {
    const parsed = parseOverride(spec);
    if (!parsed.ok) {
      overrideIssues.push(parsed.issue);
      continue;
    }
    const issue = applyOverride(data, parsed.override);
    if (issue === undefined) overrides.push(parsed.override);
    else overrideIssues.push(issue);
  }
  if (overrideIssues.length > 0) {
    throw new ConfigError(
      configPath,
      overrideIssues,
      `invalid --set override${overrideIssues.length > 1 ? "s" : ""}`,
    );
  }
  return { configPath, source, data, overrides };
}

/**
 * Validates `data` (the document of `doc`, or a concrete document derived from it, as a
 * recommendation candidate is) and resolves it to a RunSpec. Issues are placed in `doc`'s file.
 */
export function resolveConfigDocument(
  doc: ConfigDocument,
  data: unknown,
  opts: Omit<LoadConfigOptions, "configPath" | "sets">,
): RunSpec {
  const { configPath } = doc;
  const validated = validateConfig(data, opts.stack);
  if (!validated.ok) throw configIssues(doc, validated.issues);

  const env = opts.env ?? process.env;
  const configDir = dirname(configPath);
  const resolved = resolveRunSpec(validated.config, {
    stack: opts.stack,
    configDir,
    workDir: opts.workDir ?? process.cwd(),
    contextLength: {
      env,
      homeDir: env["HOME"] || homedir(),
      // A relative local model path is tried as the user's shell would see it, then next to the config.
      baseDirs: [process.cwd(), configDir],
    },
  });
  if (!resolved.ok) throw configIssues(doc, resolved.issues);
  return resolved.spec;
}

/** A ConfigError of path issues, each placed in `doc`'s file or at the `--set` that made it. */
export function configIssues(doc: ConfigDocument, issues: readonly PathIssue[]): ConfigError {
  return new ConfigError(
    doc.configPath,
    placeIssues(issues, doc.source, doc.overrides),
    validationSummary(issues.length),
  );
}

/**
 * Attach an origin to each issue. A value set by a `--set` whose path covers the issue wins
 * (it replaced whatever the file had there); otherwise the file position of the exact key or
 * value; otherwise a `--set` below the issue's path (it created what the issue is about);
 * otherwise the nearest enclosing mapping in the file.
 */
function placeIssues(
  issues: readonly PathIssue[],
  source: YamlSource,
  overrides: readonly Override[],
): ConfigIssue[] {
  const latestFirst = [...overrides].reverse();
  // Only the issues that will be shown are placed: locating one walks the document, and a
  // hostile config may have tens of thousands (ConfigError prints the first MAX_SHOWN_ISSUES).
  const placed = issues.slice(0, MAX_PLACED_ISSUES).map((issue): ConfigIssue => {
    const base = {
      path: dotted(issue.path),
      message: issue.message,
      ...(issue.hint === undefined ? {} : { hint: issue.hint }),
    };
    const covering = latestFirst.find((o) => isPrefix(o.path, issue.path));
    if (covering) return { ...base, source: covering.flag };
    const located = source.locate(issue.path, issue.at);
    if (located?.exact) return { ...base, ...located.position };
    const below = latestFirst.find((o) => isPrefix(issue.path, o.path));
    if (below) return { ...base, source: below.flag };
    return located ? { ...base, ...located.position } : base;
  });
  // File order reads best; issues from --set (no position) keep their order after those.
  return placed
    .map((issue, index) => ({ issue, index }))
    .sort((a, b) => positionKey(a.issue) - positionKey(b.issue) || a.index - b.index)
    .map(({ issue }) => issue);
}

const MAX_PLACED_ISSUES = 200;

function positionKey(issue: ConfigIssue): number {
  if (issue.line === undefined || issue.column === undefined) return Number.MAX_SAFE_INTEGER;
  return issue.line * 1e6 + issue.column;
}

function isPrefix(prefix: readonly PathSegment[], path: readonly PathSegment[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => String(segment) === String(path[i]));
}
