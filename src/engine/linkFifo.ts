/** A transfer link that moves one job at a time, first come first served: when it is next free, ms. */
export interface FifoLink {
  freeAtMs: number;
}

/**
 * Moves `bytes` requested at `nowMs` over a worker's own link (`ownGBps`, decimal GB/s) and, for
 * shared storage, a shared link too (`shared` null otherwise): the job starts when both are free,
 * holds each for the slower link's time, and lands `latencyMs` after that. Advances the links;
 * returns when the last byte lands. The host and disk KV tiers price every load, read and write so.
 */
export function transferOverLinks(
  nowMs: number,
  bytes: number,
  latencyMs: number,
  own: FifoLink,
  ownGBps: number,
  shared: FifoLink | null,
  sharedGBps: number | null,
): number {
  let start = Math.max(nowMs, own.freeAtMs);
  let busy = (bytes / (ownGBps * 1e9)) * 1000;
  if (shared !== null && sharedGBps !== null) {
    start = Math.max(start, shared.freeAtMs);
    busy = Math.max(busy, (bytes / (sharedGBps * 1e9)) * 1000);
    shared.freeAtMs = start + busy;
  }
  own.freeAtMs = start + busy;
  return start + latencyMs + busy;
}
