/**
 * The YAML of the configs the CLI tests write: the `engine:` block of a one-role (aggregated)
 * fleet, and a config file in a fresh directory. Each option is one line of the block, written
 * only when given (or when it has a default); values are YAML flow text, as the config would have.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./specs.js";

export interface EngineYaml {
  /** `engine.model`; default `test/model` (the suite's small model, test/fixtures). */
  readonly model?: string;
  /** `engine.hardware`; default `h200_sxm`. */
  readonly hardware?: string;
  /** `engine.context_length`; default 8192, null: no line (the model's maximum). */
  readonly contextLength?: number | string | null;
  /** `parallelism: {replicas: N}`. */
  readonly replicas?: number;
  /** `parallelism:` as flow YAML (instead of `replicas`). */
  readonly parallelism?: string;
  /** `scheduler:` as flow YAML. */
  readonly scheduler?: string;
  /** `kv_cache: {block_size: 64, capacity: {type: fixed, blocks: N}}`. */
  readonly blocks?: number;
  /** `kv_cache:` as flow YAML (instead of `blocks`). */
  readonly kvCache?: string;
  /** `timing:` as flow YAML. */
  readonly timing?: string;
}

/** The `engine:` block (with its final newline) of an aggregated fleet. */
export function engineYaml(e: EngineYaml): string {
  const contextLength = e.contextLength === undefined ? 8192 : e.contextLength;
  const parallelism = e.parallelism ?? (e.replicas === undefined ? undefined : `{replicas: ${e.replicas}}`);
  const kvCache =
    e.kvCache ??
    (e.blocks === undefined ? undefined : `{block_size: 64, capacity: {type: fixed, blocks: ${e.blocks}}}`);
  const lines = [
    "engine:",
    `  model: ${e.model ?? "test/model"}`,
    `  hardware: ${e.hardware ?? "h200_sxm"}`,
    ...(contextLength === null ? [] : [`  context_length: ${contextLength}`]),
    "  workers:",
    "    aggregated:",
    ...(parallelism === undefined ? [] : [`      parallelism: ${parallelism}`]),
    ...(e.scheduler === undefined ? [] : [`      scheduler: ${e.scheduler}`]),
    ...(kvCache === undefined ? [] : [`      kv_cache: ${kvCache}`]),
    ...(e.timing === undefined ? [] : [`      timing: ${e.timing}`]),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * A `traffic:` section of synthetic prompts (`tokens`: input and output tokens, default 64 and 4)
 * at `load`, stopped by `stop` (flow YAML each).
 */
export function syntheticTraffic(
  load: string,
  stop: string,
  tokens: readonly [number, number] = [64, 4],
): string {
  return `traffic:
  source: {type: synthetic, input_tokens: ${tokens[0]}, output_tokens: ${tokens[1]}}
  load: ${load}
  stop: ${stop}
`;
}

/** `{type: fixed, prefill_ms: P, decode_ms: D}`. */
export function fixedTiming(prefillMs: number, decodeMs: number): string {
  return `{type: fixed, prefill_ms: ${prefillMs}, decode_ms: ${decodeMs}}`;
}

export interface ConfigFile {
  readonly dir: string;
  /** The config's path. */
  readonly config: string;
  /** `out` in `dir`, not created: an output directory for the run. */
  readonly out: string;
}

/**
 * Writes `yaml` as `name` (default `prediction.yaml`) into `dir` (default a fresh temp dir) and
 * the `files` (name → text) beside it.
 */
export function configFile(
  yaml: string,
  opts: {
    readonly dir?: string;
    readonly name?: string;
    readonly files?: Readonly<Record<string, string>>;
  } = {},
): ConfigFile {
  const dir = opts.dir ?? tempDir();
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(join(dir, name), text);
  const config = join(dir, opts.name ?? "prediction.yaml");
  writeFileSync(config, yaml);
  return { dir, config, out: join(dir, "out") };
}
