/**
 * Zod issues → fleetsim's path-addressed issues, with pydantic-like wording so messages read like
 * the reference's (`Extra inputs are not permitted`, `Field required`, `Input should be ...`).
 */
import type * as z from "zod";
// The class itself from zod's core module: reading it as `z.core.$ZodObject` would keep all of
// `z.core` (every locale) in the bundled CLI (scripts/build-cli.mjs).
import { $ZodObject } from "zod/v4/core";
import { AT_KEY, describeValue, orList } from "./schema/primitives.js";
import { closestMatch, didYouMean } from "./suggest.js";

export type PathSegment = string | number;

/** An issue before it is given a source position (see `sourceMap.ts`). */
export interface PathIssue {
  readonly path: readonly PathSegment[];
  readonly message: string;
  /** Whether the offending thing is the key itself (unknown/unsupported key) or its value. */
  readonly at: "key" | "value";
  /** A correction to offer, e.g. `did you mean 'router'?` (misspelled key or enum value). */
  readonly hint?: string;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  object: "mapping",
  array: "list",
  string: "string",
  number: "number",
  int: "integer",
  boolean: "boolean",
};

/** Per-parse Zod error map; schema-level `error` options (e.g. in `int()`) take precedence. */
export function zodMessage(iss: z.core.$ZodRawIssue): string | undefined {
  switch (iss.code) {
    case "unrecognized_keys":
      rememberAcceptedKeys(iss);
      return "Extra inputs are not permitted";
    case "invalid_type": {
      if (iss.input === undefined) return "Field required";
      if (iss.expected === "number" && typeof iss.input === "number") {
        return `Input should be a finite number, got ${describeValue(iss.input)}`;
      }
      const word = TYPE_WORDS[iss.expected] ?? iss.expected;
      return `Input should be a valid ${word}, got ${describeValue(iss.input)}`;
    }
    case "too_small":
      if (iss.origin === "array") return `List should have at least ${iss.minimum} item(s)`;
      if (iss.origin === "string") return "String should not be empty";
      return `Input should be greater than ${iss.inclusive ? "or equal to " : ""}${iss.minimum}`;
    case "too_big":
      return `Input should be less than ${iss.inclusive ? "or equal to " : ""}${iss.maximum}`;
    case "invalid_value":
      return `Input should be ${orList(iss.values)}`;
    default:
      return undefined;
  }
}

/**
 * The options of a config parse: messages from `zodMessage`, and no compiled fast path. zod
 * compiles a parser (`new Function`) for each object schema the first time it parses one; a
 * config is parsed once a process, where compiling costs more than it saves (7 % of predict's
 * instructions up to its first event; docs/performance.md "Start-up").
 */
export const CONFIG_PARSE = { error: zodMessage, jitless: true } as const;

/** Replace the `{path}` / `{path-N}` placeholders of `config/schema/primitives.ts` with dotted paths. */
export function expandPlaceholders(message: string, path: readonly PathSegment[]): string {
  return message.replace(/\{path(?:-(\d+))?\}/g, (_m, drop: string | undefined) =>
    dotted(path.slice(0, path.length - (drop === undefined ? 0 : Number(drop)))),
  );
}

export function dotted(path: readonly PathSegment[]): string {
  return path.map(String).join(".");
}

/**
 * The keys each strict object accepts, for the did-you-mean of its unknown keys. Zod's final
 * issue drops the schema that raised it, but keeps the raw issue's `keys` array itself, so that
 * array is the link from the error map (which sees the schema) to `fromZodIssues`. Weak: an
 * entry lives exactly as long as its parse result.
 */
const acceptedKeysOf = new WeakMap<readonly string[], readonly string[]>();

function rememberAcceptedKeys(iss: z.core.$ZodRawIssue<z.core.$ZodIssueUnrecognizedKeys>): void {
  if (iss.inst instanceof $ZodObject) acceptedKeysOf.set(iss.keys, Object.keys(iss.inst._zod.def.shape));
}

/**
 * One PathIssue per unknown key (Zod reports all unknown keys of an object as one issue).
 * Misspelled keys and enum values get a did-you-mean hint; enum hints need the offending value,
 * i.e. a parse with `reportInput: true`.
 */
export function fromZodIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PathSegment[] = [],
): PathIssue[] {
  const out: PathIssue[] = [];
  for (const iss of issues) {
    const base = [...prefix, ...iss.path.map(toSegment)];
    if (iss.code === "unrecognized_keys") {
      const accepted = acceptedKeysOf.get(iss.keys) ?? [];
      for (const key of iss.keys) {
        out.push(withHint({ path: [...base, key], message: iss.message, at: "key" }, key, accepted));
      }
      continue;
    }
    const at = iss.code === "custom" && iss.params?.at === AT_KEY.at ? "key" : "value";
    const issue: PathIssue = { path: base, message: expandPlaceholders(iss.message, base), at };
    out.push(iss.code === "invalid_value" ? withHint(issue, iss.input, stringsOf(iss.values)) : issue);
  }
  return out;
}

function withHint(issue: PathIssue, input: unknown, candidates: readonly string[]): PathIssue {
  if (typeof input !== "string") return issue;
  const suggestion = closestMatch(input, candidates);
  return suggestion === undefined ? issue : { ...issue, hint: didYouMean(suggestion) };
}

function stringsOf(values: readonly unknown[]): string[] {
  return values.filter((v): v is string => typeof v === "string");
}

function toSegment(key: PropertyKey): PathSegment {
  return typeof key === "number" ? key : String(key);
}
