/** Resource stops (exit code 3, aisimulate.md §1.3). */

/** The preflight estimate exceeds the budget: nothing ran; resource-plan.json was written. */
export class ResourceRefusal extends Error {
  override name = "ResourceRefusal";
}

/** The process tree's RSS exceeded the budget during the run: stopped, resource-runtime.json written. */
export class ResourceLimited extends Error {
  override name = "ResourceLimited";
}
