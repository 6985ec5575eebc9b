import type { PoolTopology, ScalingAction, ScalingPolicy, TickSnapshot } from "../../src/sim/scaling.js";

/**
 * A scaling policy (the replay's Planner hook) that returns scripted decode targets by tick time,
 * every `intervalMs`, and records what each tick saw: the snapshots in order, and the decode
 * pool's topology by tick time.
 */
export class ScriptedPolicy implements ScalingPolicy {
  readonly seen: TickSnapshot[] = [];
  readonly topology = new Map<number, PoolTopology>();
  constructor(
    private readonly intervalMs: number,
    private readonly targets: Record<number, number>,
  ) {}
  initialTickMs(): number {
    return this.intervalMs;
  }
  onTick(s: TickSnapshot): ScalingAction {
    this.seen.push(s);
    this.topology.set(s.nowMs, s.decodeTopology);
    return {
      targetPrefill: null,
      targetDecode: this.targets[s.nowMs] ?? null,
      nextTickMs: s.nowMs + this.intervalMs,
    };
  }
}
