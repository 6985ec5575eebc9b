import type { Hash } from "node:crypto";

/**
 * A SHA-256 hasher. `node:crypto` is loaded on the first call, not with the module that hashes:
 * with it come 15 internal modules of Node's that predict's path to its first event never uses
 * (the Planner's digests, the grid cache and Redis job ids hash later, or never;
 * docs/performance.md "Start-up").
 */
export function sha256(): Hash {
  return process.getBuiltinModule("node:crypto").createHash("sha256");
}
