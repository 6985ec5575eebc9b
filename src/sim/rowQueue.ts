/**
 * A FIFO of request rows in a growable Int32Array ring (the replay's timeout queue): memory
 * follows the rows queued at once, not the run's request count.
 */
export class RowQueue {
  private data = new Int32Array(64);
  private head = 0;
  /** Rows queued. */
  length = 0;

  push(row: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      for (let i = 0; i < this.length; i++) next[i] = this.data[(this.head + i) & (this.data.length - 1)];
      this.data = next;
      this.head = 0;
    }
    this.data[(this.head + this.length) & (this.data.length - 1)] = row;
    this.length++;
  }

  /** The oldest row (the queue must not be empty). */
  front(): number {
    return this.data[this.head];
  }

  /** Drops the oldest row. */
  shift(): void {
    this.head = (this.head + 1) & (this.data.length - 1);
    this.length--;
  }
}
