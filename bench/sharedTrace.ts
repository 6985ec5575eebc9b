/**
 * The FAST'25 conversation trace of the shared data folder, which sits beside the repository (or
 * beside the folder of its worktrees): the benches' default `--trace`.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const TRACE_IN_SHARED = join("shared", "traces", "mooncake-fast25", "conversation_trace.jsonl");

export const DEFAULT_TRACE =
  [resolve(ROOT, "..", TRACE_IN_SHARED), resolve(ROOT, "..", "..", TRACE_IN_SHARED)].find(existsSync) ??
  resolve(ROOT, "..", TRACE_IN_SHARED);
