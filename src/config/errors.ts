import { UserError } from "../util/userError.js";

/**
 * The one error type of config loading. Everything that stops a config from becoming a RunSpec
 * (unreadable file, YAML syntax, schema, cross-field rules, `--set` mistakes, unresolvable
 * `context_length: max`) is reported as a ConfigError, so the CLI can print it and exit 2.
 */

export interface ConfigIssue {
  /** Dotted config path (`engine.workers.aggregated.foo`); empty when the issue is about the whole file. */
  readonly path: string;
  readonly message: string;
  /** 1-based position in the config file of the offending key or value. */
  readonly line?: number;
  readonly column?: number;
  /** Where the value came from when it was not the file, e.g. `--set traffic.load.type=poisson`. */
  readonly source?: string;
  /** A correction to offer, e.g. `did you mean 'router'?`; printed after the origin. */
  readonly hint?: string;
}

export function validationSummary(count: number): string {
  return `${count} validation error${count === 1 ? "" : "s"}`;
}

export class ConfigError extends UserError {
  /** The config file as the user named it. */
  readonly configPath: string;
  /** First line after the file name, e.g. `2 validation errors` or `invalid YAML`. */
  readonly summary: string;
  readonly issues: readonly ConfigIssue[];

  constructor(
    configPath: string,
    issues: readonly ConfigIssue[],
    summary = validationSummary(issues.length),
  ) {
    super("");
    this.name = "ConfigError";
    this.configPath = configPath;
    this.summary = summary;
    this.issues = issues;
    // `message` mirrors format() so an uncaught ConfigError is still readable.
    this.message = this.format();
  }

  /**
   * Pydantic-like text: `<file>: <summary>`, then per issue the dotted path on its own line and
   * the indented message with its origin, e.g.
   * `prediction.yaml: 1 validation error\nengine.workers.aggregated.foo\n  Extra inputs are not permitted (line 12, column 7)`.
   * A hint follows the origin (`… (line 3, column 1); did you mean 'router'?`), so the message
   * and its position read the same with or without one.
   */
  format(): string {
    const lines = [`${this.configPath}: ${this.summary}`];
    for (const issue of this.issues.slice(0, MAX_SHOWN_ISSUES)) {
      if (issue.path !== "") lines.push(clipText(issue.path));
      const hint = issue.hint === undefined ? "" : `; ${issue.hint}`;
      lines.push(`  ${clipText(issue.message)}${originSuffix(issue)}${hint}`);
    }
    const total = Number.parseInt(this.summary, 10);
    const hidden =
      (Number.isFinite(total) ? total : this.issues.length) - Math.min(this.issues.length, MAX_SHOWN_ISSUES);
    if (hidden > 0) lines.push(`… and ${hidden} more`);
    return lines.join("\n");
  }
}

/** Issues printed in full; the rest are counted (a hostile config can have tens of thousands). */
export const MAX_SHOWN_ISSUES = 20;

/** Values are echoed in messages: cut a long one so an error stays readable. */
export function clipText(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

function originSuffix(issue: ConfigIssue): string {
  if (issue.source !== undefined) return ` (from ${issue.source})`;
  if (issue.line !== undefined && issue.column !== undefined) {
    return ` (line ${issue.line}, column ${issue.column})`;
  }
  return "";
}
