/**
 * SIGINT / SIGTERM during a run (docs/cli.md): the first one stops the run (the owner's `onStop`
 * callback: the replay at its next yield point, a write before its commit), a second one ends it
 * at once (`onSecond`, which exits the process).
 */
export type StopSignal = "SIGINT" | "SIGTERM";

export class StopSignals {
  private signal: StopSignal | null = null;
  private stop: () => void = () => {};
  private readonly onSigint = this.handler("SIGINT");
  private readonly onSigterm = this.handler("SIGTERM");

  constructor(private readonly onSecond: (signal: StopSignal) => void) {}

  /** Starts listening (until `uninstall`). */
  install(): this {
    process.on("SIGINT", this.onSigint);
    process.on("SIGTERM", this.onSigterm);
    return this;
  }

  uninstall(): void {
    process.off("SIGINT", this.onSigint);
    process.off("SIGTERM", this.onSigterm);
  }

  /** The first signal received, or null. */
  get stopped(): StopSignal | null {
    return this.signal;
  }

  /** What the first signal does (replaces the previous callback). */
  onStop(f: () => void): void {
    this.stop = f;
  }

  private handler(signal: StopSignal): () => void {
    return () => {
      if (this.signal !== null) this.onSecond(signal);
      this.signal = signal;
      this.stop();
    };
  }
}
