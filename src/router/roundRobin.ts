/**
 * Round-robin placement over the workers eligible for routing, in worker-id order, as Dynamo's
 * offline replay places (`ai-dynamo/dynamo@2f56548:lib/mocker/src/replay/offline/core/round_robin.rs`,
 * `AggregatedRoundRobin::next` and `PoolRoundRobinPlacement::place`): the pick is the eligible
 * worker at `next % count`, and `next` becomes that index + 1, unwrapped. A topology change does
 * not move `next`, so after a lone worker's picks (`next` = 1) a second worker that joins takes
 * the next request, and after 10, 11, 12, 10 of three workers draining 12 gives 11.
 */
export class RoundRobinRouter {
  private readonly eligible: number[] = [];
  private next = 0;

  addWorker(worker: number): void {
    let i = this.eligible.length;
    this.eligible.push(worker);
    while (i > 0 && this.eligible[i - 1] > worker) {
      this.eligible[i] = this.eligible[i - 1];
      i--;
    }
    this.eligible[i] = worker;
  }

  removeWorker(worker: number): void {
    const i = this.eligible.indexOf(worker);
    if (i >= 0) this.eligible.splice(i, 1);
  }

  /** Next worker in rotation; -1 when none is eligible (the position does not move then). */
  pick(): number {
    const n = this.eligible.length;
    if (n === 0) return -1;
    const index = this.next % n;
    this.next = index + 1;
    return this.eligible[index];
  }
}
