/**
 * A YAML-shaped config object → RunSpec, through the same validation and resolution as a config
 * file (`config/load.ts`): only the source differs, so results are those of `fleetsim predict`.
 * Issues carry the dotted config path (an in-memory object has no line numbers), or are
 * re-addressed to the API option that produced the value.
 */
import { homedir } from "node:os";
import { ConfigError, type ConfigIssue } from "../config/errors.js";
import { dotted, type PathIssue } from "../config/issues.js";
import { resolveRunSpec } from "../config/resolve/index.js";
import type { RunSpec, Stack } from "../config/runSpec.js";
import { validateConfig } from "../config/schema/index.js";

export interface LoadObjectOptions {
  /** What the ConfigError names in place of a file (`predict`, `runTraceReplay`). */
  readonly label: string;
  /** Relative paths in the config resolve against it. */
  readonly baseDir: string;
  readonly stack: Stack;
  /** Re-addresses an issue (the API's option names); default: the config path. */
  readonly place?: (issue: PathIssue) => ConfigIssue;
}

export function loadConfigObject(config: unknown, opts: LoadObjectOptions): RunSpec {
  const place =
    opts.place ??
    ((issue: PathIssue): ConfigIssue => ({
      path: dotted(issue.path),
      message: issue.message,
      ...(issue.hint === undefined ? {} : { hint: issue.hint }),
    }));
  // validateConfig reads the object without changing it; zod builds the validated copy.
  const validated = validateConfig(config, opts.stack);
  if (!validated.ok) throw new ConfigError(opts.label, validated.issues.map(place));
  const env = process.env;
  const resolved = resolveRunSpec(validated.config, {
    stack: opts.stack,
    configDir: opts.baseDir,
    workDir: opts.baseDir,
    contextLength: { env, homeDir: env["HOME"] || homedir(), baseDirs: [opts.baseDir] },
  });
  if (!resolved.ok) throw new ConfigError(opts.label, resolved.issues.map(place));
  return resolved.spec;
}
