import type { Cluster } from "../cluster/cluster.js";
import type { ClientSpec } from "../config/runSpec.js";
import { type Collector, Terminal } from "../metrics/collector.js";
import { RequestCapture } from "../metrics/requestCapture.js";
import { RequestLog, type RequestLogOptions } from "../metrics/requestLog.js";
import type { RequestSource } from "../traffic/requestSource.js";
import type { RowWindow } from "../util/rowWindow.js";
import type { Arrivals } from "./arrivals.js";
import type { EventQueue } from "./eventQueue.js";
import { InvariantViolation } from "./invariants.js";
import { RowQueue } from "./rowQueue.js";
import type { TickObserver } from "./tickObserver.js";

/** What the request log keeps and where (`ReplayOptions`). */
export interface RequestLogChoices {
  /** `--capture-per-request`: keep what the per-request records need beyond the log. */
  readonly capturePerRequest: boolean;
  /** Where the request log keeps its rows. */
  readonly requestLog?: RequestLogOptions;
}

/** What a request's life cycle is wired to (`Replay`'s constructor builds them). */
export interface RequestLifecycleParts {
  readonly source: RequestSource;
  readonly collector: Collector;
  readonly plan: Arrivals;
  readonly events: EventQueue;
  readonly cluster: Cluster;
  readonly client: ClientSpec;
  /** Traffic windows for the scaling policy; null without one. */
  readonly ticks: TickObserver | null;
}

/**
 * A request from the client's side (docs/client.md): it is sent (its arrival), reaches the router
 * `client.overhead.request_ms` later, has its tokens and end seen `client.overhead.response_ms`
 * after the engine produced them, is abandoned at its deadline (`client.timeout_seconds`), and
 * once terminal makes its dependents ready and is released, in row order, to the request log.
 */
export class RequestLifecycle {
  /** Client sends in the event queue, and arrived requests without a terminal state. */
  queuedArrivals = 0;
  /** Requests that reached the router at the current timestamp, to route once its events are in. */
  private readonly arrivedRows: number[] = [];
  openRequests = 0;
  /** Client send → router (`client.overhead.request_ms`): the fleet sees a request this much later. */
  private readonly requestMs: number;
  /** Engine output → client (`client.overhead.response_ms`): tokens and ends are recorded this much later. */
  readonly responseMs: number;
  /** `client.timeout_seconds` in ms: a request not finished this long after it was sent is abandoned; null = never. */
  readonly timeoutMs: number | null;
  /**
   * Rows in arrival order, for their timeouts: deadlines (arrival + timeout) come in the same
   * order, so the next one is at the head once ended requests are skipped (`nextDeadline`).
   */
  private readonly deadlineRows = new RowQueue();
  private readonly source: RequestSource;
  private readonly rows: RowWindow;
  private readonly collector: Collector;
  /** Released requests' columns, in row order: what the summary is computed from. */
  readonly requests: RequestLog;
  /** What `--capture-per-request` keeps beyond the log; null without it. */
  readonly capture: RequestCapture | null;
  private readonly plan: Arrivals;
  private readonly events: EventQueue;
  private readonly cluster: Cluster;
  private readonly ticks: TickObserver | null;
  /** Checks a request as it is released (invariant INV-7); null in production runs. */
  private readonly checkEnded: ((row: number) => void) | null;
  /** Queues the client send of `row` at `time` (handed to the arrival plan, and to a streamed source). */
  readonly scheduleArrival: (row: number, time: number) => void;

  constructor(
    parts: RequestLifecycleParts,
    log: RequestLogChoices,
    checkEnded: ((row: number) => void) | null,
  ) {
    this.source = parts.source;
    this.rows = parts.source.window;
    this.collector = parts.collector;
    this.requests = new RequestLog(log.requestLog);
    this.capture = log.capturePerRequest ? new RequestCapture(parts.cluster.prefillPool !== null) : null;
    this.plan = parts.plan;
    this.events = parts.events;
    this.cluster = parts.cluster;
    this.ticks = parts.ticks;
    this.requestMs = parts.client.requestMs;
    this.responseMs = parts.client.responseMs;
    this.timeoutMs = parts.client.timeoutMs;
    this.checkEnded = checkEnded;
    const source = parts.source;
    const events = parts.events;
    this.scheduleArrival = (row, time) => {
      this.queuedArrivals++;
      events.pushClientSend(time, row, source.session(row));
    };
  }

  /** Whether requests are still to come or to end (client sends queued, or arrived requests open). */
  hasTraffic(): boolean {
    return this.openRequests > 0 || this.queuedArrivals > 0;
  }

  /** The client sends `row` at `t`: it reaches the router `requestMs` later (docs/client.md). */
  send(row: number, t: number): void {
    this.queuedArrivals--;
    this.collector.onArrival(row, t);
    this.openRequests++;
    this.ticks?.onArrival();
    if (this.timeoutMs !== null) this.deadlineRows.push(row);
    if (this.requestMs === 0) {
      this.reachRouter(row, t);
      return;
    }
    // Same phase and order as its send (sim/events.ts).
    this.events.pushRouterReach(t + this.requestMs, row, this.source.session(row));
  }

  /**
   * The request reaches the router: it is dispatched, or waits for a ready worker. A
   * disaggregated cluster routes it once every event of its timestamp is in, a scaling tick's
   * included (`Cluster.routesAfterTick`, `routeArrived`).
   */
  reachRouter(row: number, t: number): void {
    // Abandoned before it got there (a timeout shorter than request_ms).
    if (this.collector.isEnded(row)) return;
    if (this.cluster.routesAfterTick) this.arrivedRows.push(row);
    else this.cluster.route(row, t);
  }

  /** Routes the requests held by `reachRouter` at `t`, in the order they reached the router. */
  routeArrived(t: number): void {
    const rows = this.arrivedRows;
    if (rows.length === 0) return;
    for (let i = 0; i < rows.length; i++) {
      // A request that timed out at this very timestamp is not routed.
      if (!this.collector.isEnded(rows[i])) this.cluster.route(rows[i], t);
    }
    rows.length = 0;
  }

  /** An engine produced a token of `row` at engine time `t` (not its last). */
  onToken(row: number, t: number): void {
    // A token the client would see after its deadline is never seen: the request times out first.
    if (t + this.responseMs <= this.deadlineOf(row)) this.collector.onToken(row, t + this.responseMs);
  }

  onTokenRange(rows: Int32Array, from: number, to: number, t: number): void {
    if (this.timeoutMs === null) this.collector.onTokenRange(rows, from, to, t + this.responseMs);
    else for (let i = from; i < to; i++) this.onToken(rows[i], t);
  }

  onRunTokens(rows: Int32Array, count: number, endsMs: Float64Array, passes: number): void {
    // `Replay.runWindow` keeps the pass end + response time within every open deadline.
    this.collector.onTokenRun(rows, count, endsMs, passes, this.responseMs);
  }

  onLastToken(row: number, t: number): void {
    this.collector.onToken(row, t + this.responseMs);
    this.onEnded(row, t, Terminal.Completed);
  }

  /** The engine side ended a request at `t`: the client learns it `responseMs` later. */
  onEnded(row: number, t: number, status: number): void {
    const seen = t + this.responseMs;
    const deadline = this.deadlineOf(row);
    // The engine finished, but the answer reaches the client after it gave up.
    if (seen > deadline) this.terminate(row, deadline, Terminal.TimedOut);
    else this.terminate(row, seen, status);
  }

  /** When the client abandons `row` (+∞ without a timeout). */
  private deadlineOf(row: number): number {
    return this.timeoutMs === null
      ? Number.POSITIVE_INFINITY
      : this.collector.arrivalOf(row) + this.timeoutMs;
  }

  /** The earliest deadline of a request still open (+∞ when none); drops ended requests from the head. */
  nextDeadline(): number {
    if (this.timeoutMs === null) return Number.POSITIVE_INFINITY;
    const rows = this.deadlineRows;
    const c = this.collector;
    while (rows.length > 0 && c.isEnded(rows.front())) rows.shift();
    return rows.length > 0 ? c.arrivalOf(rows.front()) + this.timeoutMs : Number.POSITIVE_INFINITY;
  }

  /**
   * Abandons every open request whose deadline is `t` (docs/client.md): the cluster cancels it
   * wherever it is, and it ends `TimedOut` (a closed-loop or session's next turn follows as
   * after any other end).
   */
  expire(t: number): void {
    while (this.nextDeadline() === t) {
      const row = this.deadlineRows.front();
      this.cluster.cancel(row, t);
      this.terminate(row, t, Terminal.TimedOut);
    }
  }

  /** A request reached a terminal state (client time `t`): bookkeeping shared by every path. */
  private terminate(row: number, t: number, status: number): void {
    const c = this.collector;
    // A second terminal state is a simulator bug (cheap enough to check on every run).
    if (c.isEnded(row))
      throw new InvariantViolation("INV-1", `request ${row} reached a second terminal state`);
    c.onTerminal(row, t, status);
    this.openRequests--;
    if (status === Terminal.Completed && this.ticks !== null) {
      this.ticks.onCompleted(this.source.inputLength(row), c.tokensOf(row));
    }
    this.plan.onTerminal(row, t, this.scheduleArrival);
    this.releaseEnded();
  }

  /** Releases the oldest rows while they are terminal: in row order, so the log stays in row order. */
  private releaseEnded(): void {
    const rows = this.rows;
    const c = this.collector;
    while (rows.freed < rows.read && c.status[rows.freed & c.mask] !== Terminal.None)
      this.release(rows.freed);
  }

  /** At the end: every row still live (never arrived, or cut off by the time cap) goes to the log too. */
  releaseAll(): void {
    const rows = this.rows;
    while (rows.freed < rows.read) this.release(rows.freed);
  }

  /**
   * Copies `row` (the oldest live row) to the request log (and the capture) and frees its state
   * in the collector, the cluster's stores and the workload.
   */
  private release(row: number): void {
    const c = this.collector;
    const source = this.source;
    if (this.checkEnded !== null && c.statusOf(row) !== Terminal.None) this.checkEnded(row);
    this.requests.append(c, row, source.inputLength(row));
    this.capture?.append(c, row, source);
    c.release(row);
    source.release(row);
    this.rows.freed = row + 1;
  }
}
