/**
 * The IPC messages between a sweep and its workers. Channels use Node's `advanced` serialization
 * (structured clone), so NaN, ±Infinity, undefined and typed arrays survive the trip, which JSON
 * would not. Parsing is defensive: a message is `unknown` until its shape has been checked.
 */

/**
 * Parent → worker: run job `index` on `input`. `shared` comes with a worker's first job of a sweep:
 * the sweep's shared value, v8-serialized (null: the sweep has none); later jobs of the same sweep
 * omit it and use the one the worker kept.
 */
export interface JobMessage {
  readonly type: "job";
  readonly index: number;
  readonly input: unknown;
  readonly shared?: SharedPayload;
}

export interface SharedPayload {
  /** The sweep it belongs to (pool-unique). */
  readonly id: number;
  readonly bytes: Uint8Array | null;
}

/** Worker → parent: the job's value, or why it failed. */
export type ResultMessage =
  | { readonly type: "result"; readonly index: number; readonly ok: true; readonly value: unknown }
  | { readonly type: "result"; readonly index: number; readonly ok: false; readonly error: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function isIndex(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

export function parseJobMessage(msg: unknown): JobMessage | null {
  if (!isRecord(msg) || msg["type"] !== "job" || !isIndex(msg["index"])) return null;
  const shared = msg["shared"];
  if (shared === undefined) return { type: "job", index: msg["index"], input: msg["input"] };
  if (!isRecord(shared) || !isIndex(shared["id"])) return null;
  const bytes = shared["bytes"];
  if (bytes !== null && !(bytes instanceof Uint8Array)) return null;
  return { type: "job", index: msg["index"], input: msg["input"], shared: { id: shared["id"], bytes } };
}

export function parseResultMessage(msg: unknown): ResultMessage | null {
  if (!isRecord(msg) || msg["type"] !== "result" || !isIndex(msg["index"])) return null;
  const index = msg["index"];
  if (msg["ok"] === true) return { type: "result", index, ok: true, value: msg["value"] };
  if (msg["ok"] === false && typeof msg["error"] === "string") {
    return { type: "result", index, ok: false, error: msg["error"] };
  }
  return null;
}

/** One line for a thrown value: `Name: message` for errors, the value as text otherwise. */
export function describeError(e: unknown): string {
  if (e instanceof Error) return e.name === "Error" ? e.message : `${e.name}: ${e.message}`;
  return String(e);
}
