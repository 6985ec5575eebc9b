import { UserError } from "../util/userError.js";

/**
 * The one error type of model resolution and memory sizing. Everything here that stops a run
 * (unknown model id, unsupported architecture or quantization, weights that do not fit) is a
 * user error, so the CLI maps a ModelError to exit code 2 rather than reporting a crash.
 */
export class ModelError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "ModelError";
  }
}
