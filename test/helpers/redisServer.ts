/**
 * A real `redis-server` for the Redis executor's tests (npm run test:redis): started on a free
 * port with no persistence, in its own temporary directory, and stopped by `stop()`. The binary
 * is `redis-server` on PATH or `FLEETSIM_REDIS_SERVER`; without one the tests fail here with the
 * install command, never skip (.ci/run installs Debian's redis-server).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

function binary(): string {
  const bin = process.env.FLEETSIM_REDIS_SERVER ?? "redis-server";
  const probe = spawnSync(bin, ["--version"], { encoding: "utf8" });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `the Redis executor's tests need a redis-server (${bin} could not run: ` +
        `${probe.error?.message ?? probe.stderr}); install it (Debian: apt-get install redis-server) ` +
        "or set FLEETSIM_REDIS_SERVER",
    );
  }
  return bin;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts a redis-server and resolves once it accepts connections. */
export async function startRedisServer(): Promise<RedisServer> {
  const bin = binary();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-redis-"));
  const child: ChildProcess = spawn(
    bin,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)),
    );
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
