/** Reading a prediction.json for the report, with errors that name the file and the position. */
import type * as z from "zod";
import {
  contractBreach,
  missingSections,
  nestFlatLayout,
  predictionFileSchema,
  predictionReadSchema,
  type ReadPrediction,
} from "../../output/read.js";
import { readTextFile } from "../../util/fsRead.js";
import { UserError } from "../../util/userError.js";

/** The file cannot be used: missing, unreadable, not JSON, or not a prediction (exit 2). */
export class PredictionFileError extends UserError {}

/**
 * Reads and parses `path`. The document must be what identifies a prediction (an object with a
 * `summary` object, `predictionFileSchema`) and must not break the output contract where it has a
 * field (`contractBreach`: a wrong type or a negative summary number is an error naming the key);
 * sections it lacks are left out of what it renders, said through `note` (an older fleetsim's or
 * the reference's prediction.json). A byte-order mark is read past, as for configs and traces.
 */
export function readPredictionFile(path: string, note?: (line: string) => void): ReadPrediction {
  const read = readTextFile(path);
  if (typeof read !== "string") {
    if (read.code === "ENOENT") throw new PredictionFileError(`${path}: no such file`);
    if (read.code === "EISDIR")
      throw new PredictionFileError(`${path} is a directory, not a prediction.json`);
    throw new PredictionFileError(`cannot read ${path}: ${read.message}`);
  }
  const text = read.charCodeAt(0) === 0xfeff ? read.slice(1) : read;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    const found = jsonSyntaxError(text) ?? { offset: 0, message: "not valid JSON" };
    const { line, column } = lineColumn(text, found.offset);
    throw new PredictionFileError(
      `${path}: invalid JSON at line ${line}, column ${column}: ${found.message}`,
    );
  }
  const nested = nestFlatLayout(doc);
  if (nested !== null) {
    note?.(
      `${path} is aisimulate's engine-stack layout (its summary keys at the top level): read as its summary`,
    );
    doc = nested;
  }
  const identity = predictionFileSchema.safeParse(doc);
  if (!identity.success) {
    throw new PredictionFileError(
      `${path} is not a fleetsim prediction.json: expected an object with a "summary" object${where(identity.error)}`,
    );
  }
  const breach = contractBreach(doc);
  if (breach !== null)
    throw new PredictionFileError(`${path} breaks the prediction.json contract at ${breach}`);
  const missing = missingSections(doc as Record<string, unknown>);
  if (missing.length > 0) {
    note?.(
      `${path} has no ${missing.join(", ")} (an older fleetsim's or the reference's prediction.json): what they hold is left out`,
    );
  }
  return predictionReadSchema().parse(doc);
}

/** ` (at summary: …)`: the JSON path of the first issue, when it is below the document's root. */
function where(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined || issue.path.length === 0) return "";
  return ` (at ${issue.path.join(".")}: ${issue.message})`;
}

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

class SyntaxFault {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;

/**
 * Where JSON text first goes wrong and why, or null when it is valid. V8's `JSON.parse` messages
 * give no position for some errors, and quote the input; this scanner gives both uniformly.
 */
export function jsonSyntaxError(text: string): { offset: number; message: string } | null {
  let i = 0;
  const fail = (expected: string): never => {
    const found = i >= text.length ? "unexpected end of file" : `unexpected ${JSON.stringify(text[i])}`;
    throw new SyntaxFault(i, `${found}, expected ${expected}`);
  };
  const skipSpace = (): void => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r"))
      i++;
  };
  const string = (): void => {
    i++; // opening quote
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c === 0x5c) {
        i++;
        const e = text[i];
        if (e === "u") {
          HEX4.lastIndex = i + 1;
          if (!HEX4.test(text)) fail("four hex digits after \\u");
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail("an escape character");
      } else if (c < 0x20) fail("no control character inside a string");
      else i++;
    }
    fail('a closing "');
  };
  /** An object's or array's items after its opening bracket, through `close`. */
  const items = (close: "}" | "]", item: () => void): void => {
    i++;
    skipSpace();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      item();
      skipSpace();
      if (text[i] === ",") i++;
      else if (text[i] === close) {
        i++;
        return;
      } else fail(`',' or '${close}'`);
    }
  };
  const member = (): void => {
    skipSpace();
    if (text[i] !== '"') fail("a property name in double quotes");
    string();
    skipSpace();
    if (text[i] !== ":") fail("':'");
    i++;
    value();
  };
  const value = (): void => {
    skipSpace();
    const c = text[i];
    if (c === "{" || c === "[") {
      items(c === "{" ? "}" : "]", c === "{" ? member : value);
      return;
    }
    if (c === '"') {
      string();
      return;
    }
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      return;
    }
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    fail("a value");
  };
  try {
    value();
    skipSpace();
    if (i < text.length) fail("the end of the file after the JSON value");
    return null;
  } catch (err) {
    if (err instanceof SyntaxFault) return { offset: err.offset, message: err.message };
    // Nesting deep enough to exhaust the stack: no position to give.
    return null;
  }
}
