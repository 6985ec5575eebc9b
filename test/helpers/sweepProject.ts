/**
 * A small sweep project for the `fleetsim sweep` tests: a Mooncake trace, a base predict config
 * beside it (polynomial timing, fixed KV capacity: each point replays in milliseconds) and a sweep
 * file over replicas × router policy (six points).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { configFile, engineYaml } from "./configYaml.js";
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
  const { config: baseFile } = configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps, speedup: 4}
${engineYaml({
  replicas: 1,
  scheduler: "{max_batched_tokens: 4096, max_sequences: 64}",
  blocks: 512,
  timing: "{type: polynomial}",
})}evaluation:
  sla: {ttft_ms: 400, itl_ms: 40}
`,
    { dir },
  );
  const { config: sweepFile } = configFile(
    `# sweep.yaml
base: prediction.yaml
set:
  - {traffic.stop.max_virtual_time_seconds: 300}
vary:
${vary}
${extra}`,
    { dir, name: "sweep.yaml" },
  );
  return { dir, sweepFile, baseFile, trace };
}

export const VARY = `  engine.workers.aggregated.parallelism.replicas: [1, 2, 3]
  router.policy: [round_robin, kv_router]`;
