/**
 * The first check of a sweep task's input: the worker has only the parent's word for its type, so
 * a task that reads a `spec` fails with a clear message on anything without one.
 */
export function hasSpec(input: unknown): boolean {
  return (
    typeof input === "object" &&
    input !== null &&
    "spec" in input &&
    typeof input.spec === "object" &&
    input.spec !== null
  );
}
