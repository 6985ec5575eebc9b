/**
 * Round-robin placement over the workers eligible for routing, in worker-id order. The cursor
 * keeps its position when the set changes (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/tests.rs`: the pool rotation keeps its position).
 */
export class RoundRobinRouter {
  private readonly eligible: number[] = [];
  private cursor = 0;

  addWorker(worker: number): void {
    let i = this.eligible.length;
    this.eligible.push(worker);
    while (i > 0 && this.eligible[i - 1] > worker) {
      this.eligible[i] = this.eligible[i - 1];
      i--;
    }
    this.eligible[i] = worker;
    if (i < this.cursor) this.cursor++;
  }

  removeWorker(worker: number): void {
    const i = this.eligible.indexOf(worker);
    if (i < 0) return;
    this.eligible.splice(i, 1);
    if (i < this.cursor) this.cursor--;
    if (this.cursor >= this.eligible.length) this.cursor = 0;
  }

  /** Next worker in rotation; -1 when none is eligible. */
  pick(): number {
    const n = this.eligible.length;
    if (n === 0) return -1;
    if (this.cursor >= n) this.cursor = 0;
    const w = this.eligible[this.cursor];
    this.cursor = this.cursor + 1 === n ? 0 : this.cursor + 1;
    return w;
  }
}
