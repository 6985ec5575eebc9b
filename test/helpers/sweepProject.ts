/**
 * A small sweep project for the `fleetsim sweep` tests: a Mooncake trace, a base predict config
 * beside it (polynomial timing, fixed KV capacity: each point replays in milliseconds) and a sweep
 * file over replicas × router policy (six points).
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./specs.js";

export interface SweepProject {
  readonly dir: string;
  readonly sweepFile: string;
  readonly baseFile: string;
  readonly trace: string;
}

export function sweepProject(vary = VARY, extra = ""): SweepProject {
  const dir = tempDir("fleetsim-sweep-");
  const rows: string[] = [];
  for (let i = 0; i < 40; i++) {
    rows.push(
      JSON.stringify({
        timestamp: i * 25,
        input_length: 700 + 41 * (i % 6),
        output_length: 10 + (i % 9),
        hash_ids: [i % 4, 20 + i],
      }),
    );
  }
  const trace = join(dir, "trace.jsonl");
  writeFileSync(trace, `${rows.join("\n")}\n`);
  const baseFile = join(dir, "prediction.yaml");
  writeFileSync(
    baseFile,
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps, speedup: 4}
engine:
  model: test/model
  hardware: h200_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 1}
      scheduler: {max_batched_tokens: 4096, max_sequences: 64}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 512}}
      timing: {type: polynomial}
evaluation:
  sla: {ttft_ms: 400, itl_ms: 40}
`,
  );
  const sweepFile = join(dir, "sweep.yaml");
  writeFileSync(
    sweepFile,
    `# sweep.yaml
base: prediction.yaml
set:
  - {traffic.stop.max_virtual_time_seconds: 300}
vary:
${vary}
${extra}`,
  );
  return { dir, sweepFile, baseFile, trace };
}

export const VARY = `  engine.workers.aggregated.parallelism.replicas: [1, 2, 3]
  router.policy: [round_robin, kv_router]`;

const BIN = ["--import", "tsx", "src/cli/bin.ts"];

export interface ProcessRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly err: string;
}

/** `fleetsim ARGS` as its own process (from the sources), with extra environment variables. */
export function fleetsimProcess(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  opts: {
    killAfterMs?: number;
    killAfterLine?: { readonly text: string; readonly ms: number; readonly signal?: NodeJS.Signals };
  } = {},
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...BIN, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
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
  });
}
