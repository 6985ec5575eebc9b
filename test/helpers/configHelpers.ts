/** Shared helpers of the config tests: write YAML into a temp dir and load it. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, expect } from "vitest";
import { ConfigError, type ConfigIssue } from "../../src/config/errors.js";
import { loadConfig } from "../../src/config/load.js";
import type { DisaggregatedEngineSpec, RunSpec, Stack, WorkerRoleSpec } from "../../src/config/runSpec.js";
import { engineYaml } from "./configYaml.js";

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-config-"));
  roots.push(dir);
  return dir;
}

/** Write `files` (relative path → content) under a fresh temp dir; returns the dir. */
export function writeFiles(files: Readonly<Record<string, string>>): string {
  const dir = tempDir();
  for (const [rel, content] of Object.entries(files)) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return dir;
}

/** An engine block fleetsim can run (polynomial timing, fixed capacity, a model in the built-in table). */
export const RUNNABLE_ENGINE = engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: null,
  kvCache: "{capacity: {type: fixed, blocks: 1000}}",
  timing: "{type: polynomial}",
});

/** A disaggregated engine block fleetsim can run (the P/D counterpart of RUNNABLE_ENGINE). */
export const RUNNABLE_PD_ENGINE = `engine:
  mode: disaggregated
  model: Qwen/Qwen3-8B
  hardware: h200_sxm
  workers:
    prefill:
      kv_cache: {capacity: {type: fixed, blocks: 1000}}
      timing: {type: polynomial}
    decode:
      kv_cache: {capacity: {type: fixed, blocks: 2000}}
      timing: {type: polynomial}
`;

/** An empty HF cache so tests never depend on the host's ~/.cache/huggingface. */
const isolatedEnv = (): Record<string, string> => ({ HF_HOME: tempDir(), HOME: tempDir() });

export interface LoadArgs {
  readonly sets?: readonly string[];
  readonly stack?: Stack;
  readonly env?: Record<string, string>;
  /** Extra files next to the config (e.g. traces). */
  readonly files?: Readonly<Record<string, string>>;
  /**
   * The working directory (a relative `load_predictor_warmup_trace` resolves against it);
   * default: the config's directory, as when a user runs fleetsim next to the config.
   */
  readonly workDir?: (configDir: string) => string;
}

export function loadYaml(yamlText: string, args: LoadArgs = {}): RunSpec {
  const dir = writeFiles({ "prediction.yaml": yamlText, ...args.files });
  return loadConfig({
    configPath: join(dir, "prediction.yaml"),
    sets: [...(args.sets ?? [])],
    stack: args.stack ?? "dynamo",
    env: args.env ?? isolatedEnv(),
    workDir: args.workDir?.(dir) ?? dir,
  });
}

export function loadError(yamlText: string, args: LoadArgs = {}): ConfigError {
  try {
    loadYaml(yamlText, args);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError, but the config loaded");
}

/** The single issue at `path` (fails if there is not exactly one). */
export function issueAt(err: ConfigError, path: string): ConfigIssue {
  const found = err.issues.filter((i) => i.path === path);
  expect(found, `issues at ${path} in:\n${err.format()}`).toHaveLength(1);
  return found[0];
}

/** Loading `yamlText` fails with `message` at `path`, and the error names a line and column. */
export function expectIssue(yamlText: string, path: string, message: string): void {
  const err = loadError(yamlText);
  expect(issueAt(err, path).message).toBe(message);
  expect(err.format()).toMatch(/line \d+, column \d+/);
}

/**
 * The aggregated role's resolved `timing` of a runnable Qwen3-8B engine whose `timing:` is
 * `{type: default<extra>}` (`extra`: more flow-YAML keys, e.g. `, mixed_passes: additive`).
 */
export function defaultTimingWith(extra: string): WorkerRoleSpec["timing"] {
  const engine = engineYaml({
    model: "Qwen/Qwen3-8B",
    contextLength: null,
    blocks: 1000,
    timing: `{type: default${extra}}`,
  });
  return aggregatedRole(loadYaml(engine)).timing;
}

/** A `timing` key that only default timing takes is refused on polynomial timing, at the timing's path. */
export function expectRefusedOnPolynomialTiming(key: string, value: string): void {
  expectIssue(
    RUNNABLE_ENGINE.replace("timing: {type: polynomial}", `timing: {type: polynomial, ${key}: ${value}}`),
    "engine.workers.aggregated.timing",
    `engine.workers.aggregated.timing.type='polynomial' does not accept ['${key}']`,
  );
}

/**
 * A `timing` key only default timing takes: `on` is read into the timing spec's `field`, the spec
 * has no `field` without the key (`off: null`) or with its default value `off`, and polynomial
 * timing refuses the key.
 */
export function expectDefaultTimingOnlyKey(
  key: string,
  on: string,
  off: string | null,
  field: keyof Extract<WorkerRoleSpec["timing"], { type: "default" }>,
): void {
  const timing = defaultTimingWith(`, ${key}: ${on}`);
  expect(timing.type === "default" ? timing[field] : null).toBe(on);
  const plain = defaultTimingWith(off === null ? "" : `, ${key}: ${off}`);
  expect(plain.type === "default" ? plain[field] : null).toBeUndefined();
  expectRefusedOnPolynomialTiming(key, on);
}

/** The first issue at `path` (fails if there is none). */
export function firstIssueAt(err: ConfigError, path: string): ConfigIssue {
  const issue = err.issues.find((i) => i.path === path);
  expect(issue, `no issue at ${path}: ${err.message}`).toBeDefined();
  return issue!;
}

/** The error `run` rejects with; fails unless it rejects with an instance of `type` (default ConfigError). */
export async function rejectionOf<E extends Error = ConfigError>(
  run: () => Promise<unknown>,
  type: abstract new (...args: never[]) => E = ConfigError as never,
): Promise<E> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  return err as E;
}

/** The aggregated role of a spec that must be in aggregated mode. */
export function aggregatedRole(spec: RunSpec): WorkerRoleSpec {
  if (spec.engine.mode !== "aggregated")
    throw new Error(`expected engine.mode 'aggregated', got '${spec.engine.mode}'`);
  return spec.engine.aggregated;
}

/** The engine of a spec that must be in disaggregated mode. */
export function disaggregatedEngine(spec: RunSpec): DisaggregatedEngineSpec {
  if (spec.engine.mode !== "disaggregated") {
    throw new Error(`expected engine.mode 'disaggregated', got '${spec.engine.mode}'`);
  }
  return spec.engine;
}
