/**
 * A mistake in what the user gave fleetsim (a config, a trace, a flag, an output directory, a
 * model or GPU id), as opposed to a failure of fleetsim itself. The CLI prints its message, with
 * no stack trace, and exits 2 (docs/cli.md "Exit codes"); every user-facing error class extends
 * it, so that rule is one `instanceof`.
 */
export class UserError extends Error {}
