/**
 * Hashes of full KV blocks that hold generated tokens. Generated tokens are unique to their
 * request, so such a block can only ever be hit by the same request (re-admission after
 * preemption), never by another one. The hash chains from the previous block exactly like a
 * prompt block (`ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`), so it is stable across preemptions.
 *
 * `req` is the request's row in the workload. The engine names its output blocks with it, and a
 * `mooncake-delta` session (traffic/mooncake/delta.ts) names the previous turn's output the same
 * way inside the next turn's prompt, so that prompt can hit the blocks the previous turn
 * generated — which is why the function lives below both.
 */
import { chainHash } from "./blockHash.js";

const OUTPUT_SALT = 0x6f757470; // "outp"

export function outputBlockHash(parentHash: number, req: number, blockIndex: number): number {
  // A local hash no prompt block can have: it mixes the request and block index with a salt.
  const local = (Math.imul(req + 1, 0x9e3779b1) ^ Math.imul(blockIndex + 1, 0x85ebca77) ^ OUTPUT_SALT) >>> 0;
  return chainHash(parentHash, local);
}
