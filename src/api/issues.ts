/**
 * Argument errors of the API itself: collected per call and thrown together as one ConfigError
 * whose issue paths name the options (`plannerConfig.live_dashboard_port`), like config errors.
 */
import { ConfigError, type ConfigIssue } from "../config/errors.js";
import { closestMatch, didYouMean } from "../config/suggest.js";

export class OptionIssues {
  private readonly issues: ConfigIssue[] = [];

  /** @param label the ConfigError's "file" (the API function's name). */
  constructor(readonly label: string) {}

  add(path: string, message: string, extra: { hint?: string; source?: string } = {}): void {
    this.issues.push({ path, message, ...extra });
  }

  /** An unknown key, with a did-you-mean over the accepted ones. */
  unknownKey(path: string, key: string, accepted: readonly string[], source?: string): void {
    const suggestion = closestMatch(key, accepted);
    this.add(path, "Extra inputs are not permitted", {
      ...(suggestion === undefined ? {} : { hint: didYouMean(suggestion) }),
      ...(source === undefined ? {} : { source }),
    });
  }

  get count(): number {
    return this.issues.length;
  }

  throwIfAny(): void {
    if (this.issues.length > 0) throw new ConfigError(this.label, this.issues);
  }
}

/** A short rendering of a value for messages. */
export function show(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
