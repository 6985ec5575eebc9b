/**
 * The replay's event kinds (src/sim/events.ts) survive their encoding: every kind, at the edge ids
 * it can carry, decodes to itself and its id, and the order keys keep the same-timestamp phase
 * order whatever the ids.
 */
import { describe, expect, it } from "vitest";
import { POOL_ID_SPAN, poolOfWorkerKey, workerKey, workerOfWorkerKey } from "../../src/cluster/host.js";
import { Phase } from "../../src/sim/eventHeap.js";
import { EventQueue } from "../../src/sim/eventQueue.js";
import { decodeKind, decodePayload, EventKind, encodeOrder, encodePayload } from "../../src/sim/events.js";

/** Rows are Int32 payloads; sessions are order ids below 2^40 (sim/eventHeap.ts). */
const MAX_ROW = 2 ** 31 - 1;
const MAX_SESSION = 2 ** 40 - 1;
const WORKER_KEYS = [
  workerKey(0, 0),
  workerKey(0, POOL_ID_SPAN - 1),
  workerKey(1, 0),
  workerKey(1, POOL_ID_SPAN - 1),
];
const ROWS = [0, 1, 12_345, MAX_ROW];

/** Each kind with the (order id, payload id) pairs it is encoded with. */
const CASES: readonly { kind: EventKind; ids: readonly (readonly [number, number])[] }[] = [
  { kind: EventKind.PassEnd, ids: WORKER_KEYS.map((k) => [k, k] as const) },
  { kind: EventKind.WorkerReady, ids: WORKER_KEYS.map((k) => [k, k] as const) },
  { kind: EventKind.TransferEnd, ids: ROWS.map((r) => [r, r] as const) },
  { kind: EventKind.HostLoadEnd, ids: ROWS.map((r) => [r, r] as const) },
  { kind: EventKind.ClientSend, ids: ROWS.flatMap((r) => [[0, r] as const, [MAX_SESSION, r] as const]) },
  { kind: EventKind.RouterReach, ids: ROWS.flatMap((r) => [[0, r] as const, [MAX_SESSION, r] as const]) },
  { kind: EventKind.ScalingTick, ids: [[0, 0]] },
];

describe("sim/events", () => {
  it("names every kind once", () => {
    expect(CASES.map((c) => c.kind).sort()).toEqual(Object.values(EventKind).sort());
  });

  it("a kind's value is its phase × 2 (+ 1 when its payload is negated)", () => {
    expect(EventKind.PassEnd >> 1).toBe(Phase.PassCompletion);
    expect(EventKind.WorkerReady >> 1).toBe(Phase.WorkerReady);
    expect(EventKind.TransferEnd >> 1).toBe(Phase.TransferComplete);
    expect(EventKind.HostLoadEnd >> 1).toBe(Phase.TransferComplete);
    expect(EventKind.ClientSend >> 1).toBe(Phase.Arrival);
    expect(EventKind.RouterReach >> 1).toBe(Phase.Arrival);
    expect(EventKind.ScalingTick >> 1).toBe(Phase.Scaling);
  });

  it.each(CASES)("kind $kind round-trips at its edge ids", ({ kind, ids }) => {
    for (const [orderId, id] of ids) {
      const order = encodeOrder(kind, orderId);
      const payload = encodePayload(kind, id);
      // The heap stores payloads as Int32.
      expect(payload).toBe(payload | 0);
      expect(decodeKind(order, payload)).toBe(kind);
      expect(decodePayload(kind, payload)).toBe(id);
    }
  });

  it("orders phases before ids: pass end < worker ready < transfer < arrival < scaling tick", () => {
    expect(encodeOrder(EventKind.PassEnd, workerKey(1, POOL_ID_SPAN - 1))).toBeLessThan(
      encodeOrder(EventKind.WorkerReady, 0),
    );
    expect(encodeOrder(EventKind.WorkerReady, workerKey(1, POOL_ID_SPAN - 1))).toBeLessThan(
      encodeOrder(EventKind.TransferEnd, 0),
    );
    expect(encodeOrder(EventKind.HostLoadEnd, 7)).toBe(encodeOrder(EventKind.TransferEnd, 7));
    expect(encodeOrder(EventKind.TransferEnd, MAX_ROW)).toBeLessThan(encodeOrder(EventKind.ClientSend, 0));
    expect(encodeOrder(EventKind.RouterReach, 7)).toBe(encodeOrder(EventKind.ClientSend, 7));
    expect(encodeOrder(EventKind.ClientSend, MAX_SESSION)).toBeLessThan(
      encodeOrder(EventKind.ScalingTick, 0),
    );
  });

  it("worker keys split into pool and worker", () => {
    for (const pool of [0, 1]) {
      for (const worker of [0, 1, POOL_ID_SPAN - 1]) {
        const key = workerKey(pool, worker);
        expect(poolOfWorkerKey(key)).toBe(pool);
        expect(workerOfWorkerKey(key)).toBe(worker);
      }
    }
  });

  it("the queue files pass ends by pool and the rest in one heap, decodable by kind", () => {
    const q = new EventQueue(2);
    q.pushPassEnd(5, workerKey(1, 3));
    q.pushPassEnd(5, workerKey(0, 2));
    q.pushHostLoadEnd(4, 9);
    q.pushRouterReach(6, 11, 2);
    q.pushScalingTick(3);
    expect(q.size).toBe(5);
    expect(q.nextTime()).toBe(3);
    expect(q.passHeaps.map((h) => decodePayload(EventKind.PassEnd, h.peekPayload()))).toEqual([
      workerKey(0, 2),
      workerKey(1, 3),
    ]);
    const seen: [EventKind, number][] = [];
    while (q.heap.size > 0) {
      const kind = decodeKind(q.heap.peekOrder(), q.heap.peekPayload());
      seen.push([kind, decodePayload(kind, q.heap.peekPayload())]);
      q.heap.pop();
    }
    expect(seen).toEqual([
      [EventKind.ScalingTick, 0],
      [EventKind.HostLoadEnd, 9],
      [EventKind.RouterReach, 11],
    ]);
  });
});
