import { UserError } from "../util/userError.js";

/** Errors that are the user's mistake (exit 2, one clear message), not execution failures. */
export function isUserError(err: unknown): boolean {
  return err instanceof UserError;
}
