/**
 * Test task: takes `ms` of wall time, either waiting on a timer or, with `busy`, spinning without
 * yielding (a runaway job: only killing the process stops it).
 */
import { setTimeout as delay } from "node:timers/promises";

export interface SleepInput {
  readonly ms: number;
  readonly busy?: boolean;
}

export interface SleepOutput {
  readonly sleptMs: number;
  readonly pid: number;
}

export async function run(input: SleepInput): Promise<SleepOutput> {
  const t0 = performance.now();
  if (input.busy === true) {
    while (performance.now() - t0 < input.ms) {
      // spin
    }
  } else {
    await delay(input.ms);
  }
  return { sleptMs: performance.now() - t0, pid: process.pid };
}
