/**
 * The two topologies behind one `Cluster` (src/cluster/): `createCluster` picks the one the
 * engine mode names, and each answers the shared calls the loop makes the way its shape needs —
 * the pools the Planner's targets scale, the prefill cap of the front pool's output, and the
 * hand-off events only a disaggregated cluster takes.
 */
import { describe, expect, it } from "vitest";
import { AggregatedCluster } from "../../src/cluster/aggregated.js";
import type { ClusterContext } from "../../src/cluster/cluster.js";
import { createCluster } from "../../src/cluster/create.js";
import { DisaggregatedCluster } from "../../src/cluster/disaggregated.js";
import type { ClusterHost } from "../../src/cluster/host.js";
import type { RunSpec } from "../../src/config/runSpec.js";
import type { RunWindow } from "../../src/engine/workerEngine.js";
import { Collector } from "../../src/metrics/collector.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { TableSource } from "../../src/traffic/tableSource.js";
import { disaggSpec, role, traceSpec, writeTrace } from "../helpers/specs.js";

/** Records what the cluster asks of the loop. */
class RecordingHost implements ClusterHost {
  readonly calls: string[] = [];
  /** Pass by pass: every pass end is a call here. */
  readonly runsEnabled = false;
  readonly runsIndependent = true;
  runWindow(): RunWindow {
    return { limitMs: Number.NEGATIVE_INFINITY, capMs: 0, deadlineMs: 0, responseMs: 0 };
  }
  onRunTokens(rows: Int32Array, count: number, endsMs: Float64Array, passes: number): void {
    for (let j = 0; j < passes; j++)
      for (let i = 0; i < count; i++) this.calls.push(`token ${rows[i]} @${endsMs[j]}`);
  }
  noteRunEnd(t: number): void {
    this.calls.push(`run end @${t}`);
  }
  schedulePassEnd(atMs: number, payload: number): void {
    this.calls.push(`pass ${payload} @${atMs}`);
  }
  scheduleWorkerReady(atMs: number, payload: number): void {
    this.calls.push(`ready ${payload} @${atMs}`);
  }
  scheduleTransferEnd(atMs: number, row: number): void {
    this.calls.push(`transfer ${row} @${atMs}`);
  }
  scheduleHostLoadEnd(atMs: number, row: number): void {
    this.calls.push(`host load ${row} @${atMs}`);
  }
  onToken(row: number, t: number): void {
    this.calls.push(`token ${row} @${t}`);
  }
  onTokenRange(rows: Int32Array, from: number, to: number, t: number): void {
    for (let i = from; i < to; i++) this.onToken(rows[i], t);
  }
  onLastToken(row: number, t: number): void {
    this.calls.push(`last ${row} @${t}`);
  }
  onEnded(row: number, t: number, status: number): void {
    this.calls.push(`end ${row} ${status} @${t}`);
  }
}

const ROWS = [{ timestamp: 0, input_length: 8, output_length: 3, hash_ids: [1, 2] }];

async function build(spec: RunSpec, disaggregated: boolean) {
  const [table, timings] = await Promise.all([loadWorkload(spec), createRoleTimings(spec.engine)]);
  const host = new RecordingHost();
  const source = new TableSource(table);
  const collector = new Collector(source.window, {
    holdGapsUntilTerminal: false,
    captureHistory: false,
    disaggregated,
  });
  const ctx: ClusterContext = { source, collector, host, recordLifecycle: true };
  return { cluster: createCluster(ctx, spec.engine, timings, spec.router), host, ctx, timings };
}

describe("cluster topologies", () => {
  it("aggregated: one pool the decode target scales; a prefill target and hand-off events are not its own", async () => {
    const { cluster, host } = await build(traceSpec(writeTrace(ROWS)), false);
    expect(cluster).toBeInstanceOf(AggregatedCluster);
    expect(cluster.prefillPool).toBeNull();
    expect(cluster.decodePool).toBe(cluster.front);
    cluster.applyTargets(5, 2, 0);
    expect(cluster.front.nonDraining).toBe(2);
    expect(() => cluster.completeTransfer(0, 0)).toThrow(/aggregated/);
    // The whole output is the front pool's: one pass per token, ended by the last one.
    cluster.route(0, 0);
    cluster.drive(0);
    for (let i = 0; i < 10; i++) {
      const pass = host.calls.at(-1)?.match(/^pass 0 @(.+)$/);
      if (!pass) break;
      cluster.completePass(0, Number(pass[1]));
      cluster.drive(Number(pass[1]));
    }
    expect(host.calls.filter((c) => !c.startsWith("pass"))).toEqual([
      "token 0 @12",
      "token 0 @14",
      "last 0 @16",
    ]);
  });

  it("disaggregated: the prefill pool computes one token, then the decode side gets the request through a transfer", async () => {
    const { cluster, host } = await build(disaggSpec(writeTrace(ROWS)), true);
    expect(cluster).toBeInstanceOf(DisaggregatedCluster);
    expect(cluster.prefillPool).toBe(cluster.front);
    expect(cluster.decodePool).toBe(cluster.pools[1]);
    cluster.route(0, 0);
    cluster.drive(0);
    cluster.completePass(0, 10);
    // Prefill done (its one token stays hidden): the decode KV was reserved and the transfer
    // scheduled; nothing reached the client yet.
    expect(host.calls).toEqual(["pass 0 @10", expect.stringMatching(/^transfer 0 @/)]);
    expect(cluster.reservedBySlot(cluster.pools[1])[0].map((s) => s.req)).toEqual([0]);
    cluster.applyTargets(2, 3, 20);
    expect([cluster.front.nonDraining, cluster.pools[1].nonDraining]).toEqual([2, 3]);
  });

  it("a disaggregated cluster needs the collector's hand-off columns", async () => {
    const spec = disaggSpec(writeTrace(ROWS));
    const { ctx, timings } = await build(traceSpec(writeTrace(ROWS)), false);
    if (timings.mode !== "aggregated" || spec.engine.mode !== "disaggregated") throw new Error("unreachable");
    const side = { role: role(), timing: timings.aggregated };
    const transfer = spec.engine.kvTransfer;
    expect(() => new DisaggregatedCluster(ctx, side, side, spec.router, transfer)).toThrow(
      /hand-off columns/,
    );
  });
});
