/**
 * The job loop of a sweep worker process: it runs one job at a time as the parent sends them and
 * exits when the parent disconnects. It never exits on its own: a crash is the parent's to report
 * (as the running job's failure). Between sweeps of a pool it waits, idle, with its task module
 * (and whatever that caches) loaded.
 */
import { deserialize } from "node:v8";
import { describeError, type JobMessage, parseJobMessage, type ResultMessage } from "./protocol.js";
import type { SweepTask } from "./types.js";

/** Task modules by name, imported lazily: a worker loads only its own task. */
export type TaskTable = Readonly<Record<string, () => Promise<SweepTask<never, unknown, never>>>>;

/** Serves the jobs of task `name` of `tasks` in this process (a worker `fork`ed by a sweep). */
export function serveTasks(tasks: TaskTable, name: string): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error("sweep worker: must be started by runSweep (no IPC channel)");

  // Started now, awaited per job: the listener must be attached before the first await, or a job
  // sent while the task module loads would be emitted with nobody listening.
  const task = loadTask(tasks, name);
  task.catch(() => {}); // reported per job below

  // The current sweep's shared value, deserialized once for all its jobs run here (or why it
  // could not be: every job of that sweep then fails alike).
  let shared: { readonly value: unknown } | { readonly error: string } = { value: undefined };

  async function runJob({ index, input, shared: payload }: JobMessage): Promise<void> {
    let reply: ResultMessage;
    try {
      if (payload !== undefined) shared = receive(payload.bytes);
      if ("error" in shared) throw new Error(shared.error);
      const value = await (await task).run(input, shared.value);
      reply = { type: "result", index, ok: true, value };
    } catch (e) {
      reply = { type: "result", index, ok: false, error: describeError(e) };
    }
    try {
      send!(reply);
    } catch (e) {
      // The value could not be cloned (a function, a class with private state...): report that.
      send!({ type: "result", index, ok: false, error: `result not serializable: ${describeError(e)}` });
    }
  }

  process.on("message", (raw: unknown) => {
    const job = parseJobMessage(raw);
    if (job === null) return;
    void runJob(job);
  });
  process.on("disconnect", () => process.exit(0));
}

function receive(bytes: Uint8Array | null): { readonly value: unknown } | { readonly error: string } {
  if (bytes === null) return { value: undefined };
  try {
    return { value: deserialize(bytes) };
  } catch (e) {
    return { error: `could not read the sweep's shared input: ${describeError(e)}` };
  }
}

async function loadTask(tasks: TaskTable, name: string): Promise<SweepTask<unknown, unknown, unknown>> {
  if (!Object.hasOwn(tasks, name)) {
    throw new Error(`unknown sweep task '${name}' (known: ${Object.keys(tasks).join(", ")})`);
  }
  // The table's `satisfies` checks each module's shape; inputs are checked by the task itself.
  return (await tasks[name]()) as SweepTask<unknown, unknown, unknown>;
}
