/** Resource stops (exit code 3, `ai-dynamo/aisimulate@9339d0b:docs/cli/user-guide.md`). */

/** The preflight estimate exceeds the budget: nothing ran; resource-plan.json was written. */
export class ResourceRefusal extends Error {
  override name = "ResourceRefusal";
}

/** The process tree's RSS exceeded the budget during the run: stopped, resource-runtime.json written. */
export class ResourceLimited extends Error {
  override name = "ResourceLimited";
}

/**
 * Start-up (until the replay begins) or shutdown (from the replay's end until the outputs are
 * written) took longer than `execution.resources.initialization_timeout_seconds` /
 * `shutdown_timeout_seconds`: exit code 124, the reference's supervisor timeout.
 */
export class SupervisorTimeout extends Error {
  override name = "SupervisorTimeout";
}
