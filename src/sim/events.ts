import { eventOrder, phaseOfOrder } from "./eventHeap.js";

/**
 * The kinds of event the replay's queues carry. An event is stored as two numbers beside its
 * time (util/minHeap.ts keeps typed arrays, so nothing is allocated per event): an order key —
 * the same-timestamp phase, then a stable id (`eventOrder`) — and an integer payload. Two pairs of
 * kinds share a phase and an order, and a negative payload, −(row + 1), tells the second from the
 * first: a host-tier KV load from a KV transfer (a row has one of them at a time), and a request
 * reaching the router from the client sending it.
 *
 * | kind         | phase            | order id   | payload          |
 * |--------------|------------------|------------|------------------|
 * | PassEnd      | PassCompletion   | worker key | worker key       |
 * | WorkerReady  | WorkerReady      | worker key | worker key       |
 * | TransferEnd  | TransferComplete | row        | row              |
 * | HostLoadEnd  | TransferComplete | row        | −(row + 1)       |
 * | ClientSend   | Arrival          | session    | row              |
 * | RouterReach  | Arrival          | session    | −(row + 1)       |
 * | ScalingTick  | Scaling          | 0          | 0                |
 *
 * A worker key is pool × POOL_ID_SPAN + worker (cluster/host.ts `workerKey`).
 */
export const EventKind = {
  /** A worker's pass ends: its tokens, terminals and prefill hand-offs are delivered. */
  PassEnd: 0,
  /** A starting worker becomes ready. */
  WorkerReady: 2,
  /** A request's KV lands on its decode worker (the prefill side frees it). */
  TransferEnd: 4,
  /** A request's host-tier KV load (docs/offload.md) lands. */
  HostLoadEnd: 5,
  /** The client sends a request (its arrival). */
  ClientSend: 6,
  /** A sent request reaches the router, `client.overhead.request_ms` later (docs/client.md). */
  RouterReach: 7,
  /** The scaling policy ticks. */
  ScalingTick: 10,
} as const;
export type EventKind = (typeof EventKind)[keyof typeof EventKind];

// A kind's value is its phase (sim/eventHeap.ts `Phase`) × 2, plus 1 for the kind whose payload is
// negated: encoding and decoding are arithmetic, without a table or a branch per kind (they run
// for every pass end).

/** The order key of a `kind` event with stable id `orderId` (worker key, row or session; 0 for a tick). */
export function encodeOrder(kind: EventKind, orderId: number): number {
  return eventOrder(kind >> 1, orderId);
}

/** The payload of a `kind` event about `id` (worker key or row; 0 for a tick). */
export function encodePayload(kind: EventKind, id: number): number {
  return (kind & 1) === 0 ? id : -id - 1;
}

/** The kind of a queued event, from its order key and payload. */
export function decodeKind(order: number, payload: number): EventKind {
  return (2 * phaseOfOrder(order) + (payload < 0 ? 1 : 0)) as EventKind;
}

/** What a `kind` event is about: the worker key or row `encodePayload` was given (0 for a tick). */
export function decodePayload(kind: EventKind, payload: number): number {
  return (kind & 1) === 0 ? payload : -payload - 1;
}
