import { eventOrder, Phase } from "./eventHeap.js";

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
  WorkerReady: 1,
  /** A request's KV lands on its decode worker (the prefill side frees it). */
  TransferEnd: 2,
  /** A request's host-tier KV load (docs/offload.md) lands. */
  HostLoadEnd: 3,
  /** The client sends a request (its arrival). */
  ClientSend: 4,
  /** A sent request reaches the router, `client.overhead.request_ms` later (docs/client.md). */
  RouterReach: 5,
  /** The scaling policy ticks. */
  ScalingTick: 6,
} as const;
export type EventKind = (typeof EventKind)[keyof typeof EventKind];

const WORKER_READY_ORDER = eventOrder(Phase.WorkerReady, 0);
const TRANSFER_ORDER = eventOrder(Phase.TransferComplete, 0);
const ARRIVAL_ORDER = eventOrder(Phase.Arrival, 0);
const SCALING_ORDER = eventOrder(Phase.Scaling, 0);

/** The phase each kind sorts in at its timestamp. */
function phaseOf(kind: EventKind): number {
  switch (kind) {
    case EventKind.PassEnd:
      return Phase.PassCompletion;
    case EventKind.WorkerReady:
      return Phase.WorkerReady;
    case EventKind.TransferEnd:
    case EventKind.HostLoadEnd:
      return Phase.TransferComplete;
    case EventKind.ClientSend:
    case EventKind.RouterReach:
      return Phase.Arrival;
    default:
      return Phase.Scaling;
  }
}

/** Whether a kind's payload is the negative −(id + 1) that tells it from the other kind of its order. */
function isNegated(kind: EventKind): boolean {
  return kind === EventKind.HostLoadEnd || kind === EventKind.RouterReach;
}

/** The order key of a `kind` event with stable id `orderId` (worker key, row or session; see EventKind). */
export function encodeOrder(kind: EventKind, orderId: number): number {
  return kind === EventKind.ScalingTick ? SCALING_ORDER : eventOrder(phaseOf(kind), orderId);
}

/** The payload of a `kind` event about `id` (worker key or row; 0 for a scaling tick). */
export function encodePayload(kind: EventKind, id: number): number {
  if (kind === EventKind.ScalingTick) return 0;
  return isNegated(kind) ? -id - 1 : id;
}

/** The kind of a queued event, from its order key and payload. */
export function decodeKind(order: number, payload: number): EventKind {
  if (order < TRANSFER_ORDER) return order < WORKER_READY_ORDER ? EventKind.PassEnd : EventKind.WorkerReady;
  if (order < ARRIVAL_ORDER) return payload < 0 ? EventKind.HostLoadEnd : EventKind.TransferEnd;
  if (order < SCALING_ORDER) return payload < 0 ? EventKind.RouterReach : EventKind.ClientSend;
  return EventKind.ScalingTick;
}

/** What a `kind` event is about: the worker key or row `encodePayload` was given (0 for a tick). */
export function decodePayload(kind: EventKind, payload: number): number {
  return isNegated(kind) ? -payload - 1 : payload;
}
