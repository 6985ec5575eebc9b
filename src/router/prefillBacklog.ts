/**
 * Active prefill tokens of one worker, as the Dynamo KV router tracks them
 * (ai-dynamo/dynamo `lib/kv-router/src/sequences/prefill_tracker.rs`, `PrefillLoadTracker`):
 *
 * - each admitted request adds its uncached prompt tokens and, under `prefill_load_model: aic`,
 *   an expected prefill duration (NaN when it has none: model `none`, or no prediction);
 * - requests stay in admission (FIFO) order; the oldest one is the "anchor", anchored at the time
 *   it became the oldest (its admission, or the removal of the previous anchor);
 * - when every tracked request has a duration, the anchor's rate `tokens / duration` times the
 *   time since it was anchored is subtracted from the WHOLE backlog (floor, clipped at 0): work
 *   past the anchor's own tokens spills over into later prefills, because the engine moves on to
 *   them while the router has not yet heard that the anchor finished;
 * - otherwise only the anchor decays, to `ceil(tokens × clamp(1 − elapsed/duration, 0, 1))`, and
 *   an anchor without a duration does not decay at all (so model `none` never decays).
 *
 * A zero duration completes the anchor at once. Times are in milliseconds of virtual time.
 */
export class PrefillBacklog {
  private readonly requests: number[] = [];
  private readonly tokens: number[] = [];
  private readonly durationsMs: number[] = [];
  private totalTokens = 0;
  private unmodeled = 0;
  private anchoredAtMs = 0;

  /** Requests still counted as prefilling. */
  get size(): number {
    return this.requests.length;
  }

  /** Σ tokens of the tracked requests, before any decay. */
  get fullTokens(): number {
    return this.totalTokens;
  }

  has(request: number): boolean {
    return this.requests.includes(request);
  }

  /** Starts tracking `request` (tokens > 0) at `nowMs`; `expectedMs` NaN = no predicted duration. */
  add(request: number, tokens: number, expectedMs: number, nowMs: number): void {
    if (this.requests.length === 0) this.anchoredAtMs = nowMs;
    this.requests.push(request);
    this.tokens.push(tokens);
    this.durationsMs.push(expectedMs);
    this.totalTokens += tokens;
    if (Number.isNaN(expectedMs)) this.unmodeled++;
  }

  /** Stops tracking `request`; returns false when it was not tracked (idempotent, as the reference). */
  remove(request: number, nowMs: number): boolean {
    const i = this.requests.indexOf(request);
    if (i < 0) return false;
    this.totalTokens -= this.tokens[i];
    if (Number.isNaN(this.durationsMs[i])) this.unmodeled--;
    this.requests.splice(i, 1);
    this.tokens.splice(i, 1);
    this.durationsMs.splice(i, 1);
    // The next oldest request becomes the anchor now: its decay clock starts at this removal.
    if (i === 0) this.anchoredAtMs = nowMs;
    return true;
  }

  /** Active prefill tokens at `nowMs` after decay (see the class comment). */
  activeTokens(nowMs: number): number {
    if (this.requests.length === 0) return 0;
    const anchorTokens = this.tokens[0];
    const anchorMs = this.durationsMs[0];
    const elapsedMs = Math.max(0, nowMs - this.anchoredAtMs);
    if (this.unmodeled === 0) {
      const done = anchorMs === 0 ? anchorTokens : Math.floor((anchorTokens * elapsedMs) / anchorMs);
      return Math.max(0, this.totalTokens - done);
    }
    let anchorLeft = anchorTokens;
    if (anchorMs === 0) anchorLeft = 0;
    else if (!Number.isNaN(anchorMs)) {
      const fractionLeft = Math.min(1, Math.max(0, 1 - elapsedMs / anchorMs));
      anchorLeft = Math.ceil(anchorTokens * fractionLeft);
    }
    return this.totalTokens - anchorTokens + anchorLeft;
  }
}
