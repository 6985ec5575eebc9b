/**
 * Test task: returns its input's value with the worker's pid. `throw` makes the job fail with that
 * message; `exit` makes the worker process exit with that code mid-job (a crash).
 */
export interface EchoInput {
  readonly value: unknown;
  readonly throw?: string;
  readonly exit?: number;
}

export interface EchoOutput {
  readonly value: unknown;
  readonly pid: number;
}

export function run(input: EchoInput): EchoOutput {
  if (input.exit !== undefined) process.exit(input.exit);
  if (input.throw !== undefined) throw new Error(input.throw);
  return { value: input.value, pid: process.pid };
}
