/**
 * A sweep worker process: `fork`ed by `runSweep` with the task name as its only argument. It runs
 * one job at a time as the parent sends them and exits when the parent disconnects. It never
 * exits on its own: a crash is the parent's to report (as the running job's failure).
 */
import { describeError, parseJobMessage, type ResultMessage } from "./protocol.js";
import { loadTask } from "./registry.js";

const send = process.send?.bind(process);
if (send === undefined) throw new Error("sweep worker: must be started by runSweep (no IPC channel)");

// Started now, awaited per job: the listener must be attached before the first await, or a job
// sent while the task module loads would be emitted with nobody listening.
const task = loadTask(process.argv[2] ?? "");
task.catch(() => {}); // reported per job below

process.on("message", (raw: unknown) => {
  const job = parseJobMessage(raw);
  if (job === null) return;
  void runJob(job.index, job.input);
});
process.on("disconnect", () => process.exit(0));

async function runJob(index: number, input: unknown): Promise<void> {
  let reply: ResultMessage;
  try {
    const value = await (await task).run(input);
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
