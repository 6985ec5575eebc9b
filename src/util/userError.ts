/**
 * A mistake in what the user gave fleetsim (a config, a trace, a flag, an output directory, a
 * model or GPU id), as opposed to a failure of fleetsim itself. The CLI prints its message, with
 * no stack trace, and exits 2 (docs/cli.md "Exit codes"); every user-facing error class extends
 * it, so that rule is one `instanceof`.
 */
export class UserError extends Error {}

/**
 * A failure of the run that is not the user's mistake and not a bug either (a full disk, an I/O
 * error): the CLI prints its message alone, with no class name or stack trace, and exits 1.
 */
export class ExecutionFailure extends Error {}
