import { poolOfWorkerKey } from "../cluster/host.js";
import { EventHeap } from "./eventHeap.js";
import { EventKind, encodeOrder, encodePayload } from "./events.js";

/**
 * The replay's queued events (sim/events.ts names their kinds): pass completions in one heap per
 * pool, everything else in one heap. A run of decode passes may look past the pass ends of pools
 * that cannot change its worker's batch (`Replay.runWindow`), hence the split. Pass completions are
 * the first phase of a timestamp and pool 0's come before pool 1's, as one queue would order them.
 */
export class EventQueue {
  /** Every event but pass completions. */
  readonly heap = new EventHeap(4096);
  /** Pass completions, one heap per pool (index: pool id). */
  readonly passHeaps: EventHeap[];

  constructor(pools: number) {
    this.passHeaps = [];
    for (let q = 0; q < pools; q++) this.passHeaps.push(new EventHeap(64));
  }

  pushPassEnd(atMs: number, workerKey: number): void {
    this.passHeaps[poolOfWorkerKey(workerKey)].push(
      atMs,
      encodeOrder(EventKind.PassEnd, workerKey),
      encodePayload(EventKind.PassEnd, workerKey),
    );
  }

  pushWorkerReady(atMs: number, workerKey: number): void {
    this.push(atMs, EventKind.WorkerReady, workerKey, workerKey);
  }

  pushTransferEnd(atMs: number, row: number): void {
    this.push(atMs, EventKind.TransferEnd, row, row);
  }

  pushHostLoadEnd(atMs: number, row: number): void {
    this.push(atMs, EventKind.HostLoadEnd, row, row);
  }

  /** Client sends and their router reaches order by session, so a session's turns keep their order. */
  pushClientSend(atMs: number, row: number, session: number): void {
    this.push(atMs, EventKind.ClientSend, session, row);
  }

  pushRouterReach(atMs: number, row: number, session: number): void {
    this.push(atMs, EventKind.RouterReach, session, row);
  }

  pushScalingTick(atMs: number): void {
    this.push(atMs, EventKind.ScalingTick, 0, 0);
  }

  private push(atMs: number, kind: EventKind, orderId: number, id: number): void {
    this.heap.push(atMs, encodeOrder(kind, orderId), encodePayload(kind, id));
  }

  /** The time of the next queued event (+∞ when none). */
  nextTime(): number {
    let t = this.heap.peekTime();
    const passHeaps = this.passHeaps;
    for (let q = 0; q < passHeaps.length; q++) {
      const p = passHeaps[q].peekTime();
      if (p < t) t = p;
    }
    return t;
  }

  /** Events queued, pass completions included. */
  get size(): number {
    let n = this.heap.size;
    for (const p of this.passHeaps) n += p.size;
    return n;
  }
}
