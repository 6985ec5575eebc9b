/**
 * The suite's one process harness: a command as a child process, with its exit code (or the signal
 * that ended it), stdout and stderr collected. `fleetsimProcess` and `fleetsimSync` run the CLI
 * from the sources (`node --import tsx src/cli/bin.ts`); in-process runs of the CLI are
 * test/helpers/cli.ts.
 */
import { spawn, spawnSync } from "node:child_process";

export interface ProcessRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly err: string;
}

export interface ProcessOptions {
  /** Variables added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** SIGKILL this long after the start. */
  readonly killAfterMs?: number;
  /** `signal` (default SIGKILL) `ms` after `text` first shows on stderr. */
  readonly killAfterLine?: { readonly text: string; readonly ms: number; readonly signal?: NodeJS.Signals };
  /** Called with the child's pid once it is started. */
  readonly onSpawn?: (pid: number) => void;
}

/** `argv[0]` with the arguments `argv[1..]`, stdin closed; resolves when the process has ended. */
export function runProcess(argv: readonly string[], opts: ProcessOptions = {}): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...opts.env },
    });
    let out = "";
    let err = "";
    let armed = false;
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
      const line = opts.killAfterLine;
      if (line !== undefined && !armed && err.includes(line.text)) {
        armed = true;
        setTimeout(() => child.kill(line.signal ?? "SIGKILL"), line.ms);
      }
    });
    if (opts.killAfterMs !== undefined) setTimeout(() => child.kill("SIGKILL"), opts.killAfterMs);
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, out, err }));
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
  });
}

/** The arguments of `fleetsim predict -c CONFIG --output-dir OUT MORE…`. */
export function predictArgv(config: string, out: string, ...more: string[]): string[] {
  return ["predict", "-c", config, "--output-dir", out, ...more];
}

/** The command line of `fleetsim ARGS` from the sources; `nodeArgs` go to node (e.g. a heap limit). */
export function fleetsimArgv(args: readonly string[], nodeArgs: readonly string[] = []): string[] {
  return [process.execPath, ...nodeArgs, "--import", "tsx", "src/cli/bin.ts", ...args];
}

/** `fleetsim ARGS` as its own process (from the sources), with extra environment variables. */
export function fleetsimProcess(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  opts: Omit<ProcessOptions, "env"> & { readonly nodeArgs?: readonly string[] } = {},
): Promise<ProcessRun> {
  return runProcess(fleetsimArgv(args, opts.nodeArgs), { ...opts, env });
}

export interface SyncOptions {
  readonly cwd?: string;
  /** Variables added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly timeout?: number;
}

/** `argv` run to its end, synchronously. */
export function runSync(argv: readonly string[], opts: SyncOptions = {}): ProcessRun {
  const r = spawnSync(argv[0], argv.slice(1), {
    cwd: opts.cwd,
    encoding: "utf8",
    env: { ...process.env, ...opts.env },
    timeout: opts.timeout,
  });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

/** `fleetsim ARGS` as its own process (from the sources), synchronously. */
export function fleetsimSync(args: readonly string[], opts: SyncOptions = {}): ProcessRun {
  return runSync(fleetsimArgv(args), opts);
}
