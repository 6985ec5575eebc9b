/**
 * Test task: returns its input's value with the worker's pid and the sweep's shared value. `throw`
 * makes the job fail with that message; `exit` makes the worker process exit with that code
 * mid-job (a crash). `sharedReceipts` counts the distinct shared values this process has been
 * given so far (one object per sweep it served: the worker deserializes a sweep's value once).
 */
export interface EchoInput {
  readonly value: unknown;
  readonly throw?: string;
  readonly exit?: number;
}

export interface EchoOutput {
  readonly value: unknown;
  readonly pid: number;
  readonly shared: unknown;
  readonly sharedReceipts: number;
}

let lastShared: unknown;
let receipts = 0;

export function run(input: EchoInput, shared: unknown): EchoOutput {
  if (input.exit !== undefined) process.exit(input.exit);
  if (input.throw !== undefined) throw new Error(input.throw);
  if (shared !== undefined && shared !== lastShared) receipts++;
  lastShared = shared;
  return { value: input.value, pid: process.pid, shared, sharedReceipts: receipts };
}
