import {
  Command,
  CommanderError,
  type CommandUnknownOpts,
  InvalidArgumentError,
  Option,
} from "@commander-js/extra-typings";
import { ConfigError } from "../config/errors.js";
import { DETAIL_SECTIONS, type DetailSection, parseDetailSections } from "../output/detailSections.js";
import { ResourceLimited, ResourceRefusal, SupervisorTimeout } from "../resources/errors.js";
import type { ResourceHooks } from "../resources/runtime.js";
import { DEFAULT_CONVERT_BLOCK_SIZE, DEFAULT_ORIGIN_UNIX_MS } from "../traffic/dynamo/convert.js";
import { packageVersion } from "../util/packageRoot.js";
import { ExecutionFailure } from "../util/userError.js";
import { ExitCode, Interrupted } from "./exitCodes.js";
import type { ProgressSettings } from "./progress.js";
import { DEFAULT_STACK, onlineRefusal, STACK_HELP } from "./stack.js";
import type { Streams } from "./streams.js";
import { isUserError } from "./userErrors.js";

const VERSION = packageVersion();

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--stack engine|dynamo`: the commands that load a config take it alike (cli/stack.ts). */
function stackOption() {
  return new Option("--stack <stack>", STACK_HELP)
    .choices(["dynamo", "engine"] as const)
    .default(DEFAULT_STACK);
}

/** `--set PATH=YAML_VALUE`, repeatable: the commands that load a config take it alike. */
function setOption() {
  return new Option("--set <PATH=YAML_VALUE>", "override a config value after loading (repeatable)")
    .argParser(collect)
    .default([] as string[]);
}

/** `--format table|json`: the stdout form of the commands that print a table. */
function tableFormatOption() {
  return new Option("--format <format>", "stdout form").choices(["table", "json"] as const).default("table");
}

/** `--overwrite` of the commands that write fleetsim's files into an output directory. */
function overwriteOutputOption() {
  return new Option("--overwrite", "replace fleetsim's own files in a non-empty output directory").default(
    false,
  );
}

/** Parses a positive (or, with `allowZero`, non-negative) integer option. */
function intOption(name: string, allowZero = false): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) {
      throw new InvalidArgumentError(
        `${name} must be ${allowZero ? "a non-negative" : "a positive"} integer`,
      );
    }
    return n;
  };
}

/** Parses a finite, positive number. */
function positiveNumber(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
      throw new InvalidArgumentError(`${name} must be a positive number`);
    }
    return n;
  };
}

/** Parses `--detail SECTIONS` (docs/output.md "Details"). */
function detailOption(value: string): DetailSection[] {
  const parsed = parseDetailSections(value);
  if (!Array.isArray(parsed)) {
    throw new InvalidArgumentError(
      `--detail: unknown section '${parsed.unknown}' (choose from ${[...DETAIL_SECTIONS, "all"].join(", ")}, comma-separated)`,
    );
  }
  return parsed;
}

/** Parses a finite, non-negative number of seconds. */
function secondsOption(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < 0) {
      throw new InvalidArgumentError(`${name} must be a non-negative number of seconds`);
    }
    return n;
  };
}

/** Test injection points of `runCli`; production passes none. */
export interface CliDeps {
  readonly resources?: ResourceHooks;
  /** The CLI owns its process (the `fleetsim` executable), so predict may pin it to cpu_limit CPUs. */
  readonly ownsProcess?: boolean;
  /** predict's progress bar: a fake terminal and a shorter delay (tests). */
  readonly progress?: ProgressSettings;
}

/** Builds the command tree; `run` resolves to the exit code. Separate from process for tests. */
export async function runCli(argv: readonly string[], io: Streams, deps: CliDeps = {}): Promise<number> {
  let exitCode: number = ExitCode.Ok;
  /** Runs one command's body under `guarded` and keeps its exit code. */
  const run = async (command: string, body: () => Promise<unknown>): Promise<void> => {
    exitCode = await guarded(io, command, body);
  };
  const program = new Command()
    .name("fleetsim")
    .description("Simulate LLM inference fleets offline: trace replay through vLLM-like engines and routers.")
    .version(VERSION, "-V, --version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      `
Exit codes: 0 ok, 1 execution failure, 2 usage or config error, 3 resource limit,
124 start-up/shutdown timeout, 130 interrupted (docs/cli.md).

Examples:
  fleetsim validate -c examples/aggregated.yaml
  fleetsim predict -c examples/aggregated.yaml --output-dir out/ --overwrite
  fleetsim recommend -c examples/recommend/recommendation.yaml --output-dir rec/ --overwrite
  fleetsim report out/prediction.json
  fleetsim compare out/prediction.json best/prediction.json -o compare.html
  fleetsim sweep plan -c sweep.yaml -o sweep-dir && fleetsim sweep run sweep-dir
  fleetsim schema -o fleetsim.schema.json
  fleetsim <command> --help`,
    );

  program
    .command("predict")
    .description("Replay a workload through a simulated deployment and write prediction.json")
    .requiredOption("-c, --config <path>", "YAML config (same schema as aisimulate predict)")
    .addOption(setOption())
    .option("--output-dir <dir>", "directory for prediction.json and requests.jsonl", "./fleetsim-output")
    .addOption(overwriteOutputOption())
    .option("--capture-per-request", "write requests.jsonl and fill per_request in prediction.json", false)
    .option("--html", "also write report.html, a self-contained HTML report (docs/report.md)", false)
    .option(
      "--detail <sections>",
      "evidence blocks to add: comma-separated summary,memory,time,energy,source, or all; fleetsim writes memory, and lists the others under details.skipped (docs/output.md)",
      detailOption,
    )
    .addOption(tableFormatOption())
    .addOption(stackOption())
    .option("--online", "wall-clock paced replay: rejected, fleetsim replays offline only", false)
    .addOption(
      new Option("--progress <mode>", "progress bar on stderr (auto: on a terminal, not with --format json)")
        .choices(["auto", "bar", "none"] as const)
        .default("auto"),
    )
    .option(
      "--executor <executor>",
      "where planner.retune's window sweeps run: local (worker processes, default), inline or redis://HOST:PORT (docs/sweep.md)",
    )
    .addHelpText(
      "after",
      `
Examples:
  fleetsim predict -c examples/aggregated.yaml
  fleetsim predict -c prediction.yaml --set engine.workers.aggregated.parallelism.replicas=4 --overwrite
  fleetsim predict -c prediction.yaml --set 'traffic.load={type: constant_rate, requests_per_second: 8}'
  fleetsim predict -c prediction.yaml --format json --capture-per-request --output-dir out/
  fleetsim predict -c prediction.yaml --detail memory --output-dir out/        # + each role's KV sizing
  fleetsim predict --stack dynamo -c examples/seed-aggregated.yaml --html --output-dir out/ --overwrite   # + out/report.html`,
    )
    .action(async (opts) => {
      if (opts.online) {
        io.err(`fleetsim: error: ${onlineRefusal(opts.stack)}\n`);
        exitCode = ExitCode.UserError;
        return;
      }
      await run("predict", async () =>
        (await import("./predict.js")).predictCommand(
          {
            ...opts,
            resources: deps.resources,
            ownsProcess: deps.ownsProcess,
            progressSettings: deps.progress,
          },
          io,
        ),
      );
    });

  program
    .command("calibrate")
    .description(
      "Fit a calibration profile to a benchmark's results (vllm bench serve, AIPerf, inference-perf)",
    )
    .requiredOption("-c, --config <path>", "YAML config of the deployment and traffic the benchmark ran")
    .requiredOption("--results <file...>", "benchmark results files (JSON), of the run the config describes")
    .requiredOption("-o, --output <file>", "where to write the profile (YAML)")
    .option("--name <name>", "the profile's name (default: the output file's name)")
    .addOption(setOption())
    .addOption(stackOption())
    .option("--overwrite", "replace an existing profile file", false)
    .addHelpText(
      "after",
      `
Replays the config engine-side (no client overhead), reads the means the client measured, and fits
the client's fixed overhead (client.overhead.request_ms) as the fidelity benchmark does
(docs/calibrate.md). Apply the profile with client: {profile: PROFILE.yaml}; a run names it.

Examples:
  fleetsim calibrate -c deployment.yaml --results bench/result.json -o h100-vllm.yaml
  fleetsim calibrate -c deployment.yaml --results run1.json run2.json -o h100-vllm.yaml --overwrite`,
    )
    .action((opts) =>
      run("calibrate", async () => (await import("./calibrate.js")).calibrateCommand(opts, io)),
    );

  program
    .command("recommend")
    .description(
      "Search deployments for an objective under an SLA and write ranked, runnable predict configs",
    )
    .requiredOption(
      "-c, --config <path>",
      "recommendation YAML: a predict config with search domains (docs/recommend.md)",
    )
    .addOption(setOption())
    .option(
      "--output-dir <dir>",
      "directory for recommendation.json/.csv and recommendations/",
      "./fleetsim-output",
    )
    .addOption(overwriteOutputOption())
    .addOption(tableFormatOption())
    .addOption(stackOption())
    .option(
      "--executor <executor>",
      "where candidates replay: local (worker processes here, the default) or redis://HOST:PORT (fleetsim worker processes)",
    )
    .addHelpText(
      "after",
      `
Exit codes: 0 a configuration was selected, 1 none was feasible, 2 config error,
3 candidates were resource-limited (the files are written in all three cases).

Examples:
  fleetsim recommend -c examples/recommend/recommendation.yaml --output-dir rec/ --overwrite
  fleetsim predict -c rec/recommendations/0001.yaml --output-dir best/
  fleetsim recommend -c recommendation.yaml --set optimizer.max_trials=64 --set optimization.target=goodput_per_gpu`,
    )
    .action((opts) =>
      run("recommend", async () => (await import("./recommend.js")).recommendCommand(opts, io)),
    );

  program
    .command("report")
    .description("Render a prediction.json as a self-contained HTML report (charts inline, works offline)")
    .argument("<prediction-json>", "prediction.json written by fleetsim predict")
    .option("-o, --output <file>", "HTML file to write (default: report.html next to the JSON)")
    .option("--title <text>", "page title (default: fleetsim report)")
    .option(
      "--sla-ttft-ms <ms>",
      "TTFT SLA line (default: the Planner's ttft_ms, if any)",
      positiveNumber("--sla-ttft-ms"),
    )
    .option(
      "--sla-itl-ms <ms>",
      "ITL SLA line (default: the Planner's itl_ms, if any)",
      positiveNumber("--sla-itl-ms"),
    )
    .addHelpText(
      "after",
      `
Shows replicas per role with scaling events, TTFT/ITL percentiles over time against the SLA,
throughput, observed vs predicted load, queue depth and KV utilization per worker, and the
summary (docs/report.md). \`predict --html\` writes the same report after a run.

Examples:
  fleetsim report fleetsim-output/prediction.json                  # fleetsim-output/report.html
  fleetsim report out/prediction.json -o reports/run-42.html --title "run 42"
  fleetsim report out/prediction.json --sla-ttft-ms 1500 --sla-itl-ms 50`,
    )
    .action((input, opts) =>
      run("report", async () => (await import("./report.js")).reportCommand({ input, ...opts }, io)),
    );

  program
    .command("compare")
    .description("Compare two or more prediction.json files side by side, with deltas (and an HTML page)")
    .argument("<prediction-json...>", "prediction.json files; the first is the base of the deltas")
    .option("-o, --output <file>", "also write a self-contained HTML page overlaying the runs")
    .addHelpText(
      "after",
      `
Prints throughput, goodput, SLA attainment, latency, GPU-hours and cost of each run and the
change of each later run against the first; -o writes one HTML page with every run overlaid
(replicas, provisioned GPUs and GPU-hours, TTFT/ITL over time, SLA attainment; docs/report.md).

Examples:
  fleetsim compare base/prediction.json candidate/prediction.json
  fleetsim compare a/prediction.json b/prediction.json c/prediction.json -o compare.html`,
    )
    .action((inputs, opts) =>
      run("compare", async () => (await import("./compare.js")).compareCommand({ inputs, ...opts }, io)),
    );

  const sweep = program
    .command("sweep")
    .description(
      "Plan a grid of predict runs, run its points anywhere (one per shard index), merge the results",
    )
    .addHelpText(
      "after",
      `
A sweep directory holds a content-hashed manifest of points; any worker that mounts it runs point I
(--index I, or JOB_COMPLETION_INDEX / SLURM_ARRAY_TASK_ID / AWS_BATCH_JOB_ARRAY_INDEX) and writes
results/<point-hash>.json atomically; merge writes the same bytes however the points ran
(docs/sweep.md).

Examples:
  fleetsim sweep plan -c sweep.yaml -o sweep-dir
  fleetsim sweep run sweep-dir                       # every point, worker processes here
  fleetsim sweep run sweep-dir --index 3             # one point
  fleetsim sweep k8s sweep-dir --image registry/fleetsim:0.1.0 --parallelism 50 > job.yaml
  fleetsim sweep merge sweep-dir -o sweep-out`,
    );

  sweep
    .command("plan")
    .description(
      "Write a sweep directory: the manifest of every point of a sweep file, its base config and traces",
    )
    .requiredOption("-c, --config <path>", "sweep file: base, set, vary (docs/sweep.md)")
    .requiredOption("-o, --output <dir>", "the sweep directory to write")
    .option(
      "--set <PATH=YAML_VALUE>",
      "override a value of every point, after the file's set (repeatable)",
      collect,
      [] as string[],
    )
    .addOption(
      new Option(
        "--stack <stack>",
        `${STACK_HELP} (default: the file's stack, else dynamo when a point has a router or planner section)`,
      ).choices(["dynamo", "engine"] as const),
    )
    .addOption(
      new Option(
        "--inputs <mode>",
        "copy the trace files into the directory, or reference them by absolute path (default: the file's, else copy)",
      ).choices(["copy", "reference"] as const),
    )
    .option("--overwrite", "plan again over an earlier plan in the directory (its results are kept)", false)
    .action((opts) => run("sweep plan", async () => (await import("./sweep.js")).sweepPlanCommand(opts, io)));

  sweep
    .command("run")
    .description("Run the points of a sweep directory that have no result yet (all, or one shard index)")
    .argument("<dir>", "a directory written by fleetsim sweep plan")
    .option(
      "--index <i>",
      "run point I only (default: JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or AWS_BATCH_JOB_ARRAY_INDEX; none: every point)",
    )
    .option(
      "--executor <executor>",
      "local (worker processes here; default for all points), inline (this process; default for one point) or redis://HOST:PORT",
    )
    .option(
      "--parallel <n>",
      "worker processes at most with the local executor (default: CPUs - 1)",
      intOption("--parallel"),
    )
    .option(
      "--timeout-seconds <s>",
      "wall-clock bound of the whole run (default: none)",
      positiveNumber("--timeout-seconds"),
    )
    .addHelpText(
      "after",
      `
Exit codes: 0 every point has its result, 1 some point failed (the others are kept), 2 usage,
sweep directory or index error, 130/143 interrupted (finished points are kept).

Examples:
  fleetsim sweep run sweep-dir --parallel 4
  JOB_COMPLETION_INDEX=7 fleetsim sweep run /sweep
  sbatch --array=0-99 --wrap 'fleetsim sweep run /shared/sweep-dir'`,
    )
    .action((dir, opts) =>
      run("sweep run", async () => (await import("./sweep.js")).sweepRunCommand({ dir, ...opts }, io)),
    );

  sweep
    .command("merge")
    .description("Merge a sweep's results: sweep.csv, a recommendation-style ranking and a comparison page")
    .argument("<dir>", "a directory written by fleetsim sweep plan")
    .option(
      "-o, --output <dir>",
      "directory for sweep.csv, recommendation.json/.csv, recommendations/ and compare.html",
      "./fleetsim-sweep",
    )
    .addOption(overwriteOutputOption())
    .option(
      "--allow-missing",
      "merge the points that have results instead of refusing when some have none",
      false,
    )
    .option("--compare-top <n>", "best-ranked points on the comparison page", intOption("--compare-top"), 8)
    .addOption(tableFormatOption())
    .addHelpText(
      "after",
      `
The points are ranked by the sweep file's optimization section (recommend's targets; default
throughput). Same results in, same bytes out, however the points were run. Exit 2 when points
have no result (listed) unless --allow-missing.

Examples:
  fleetsim sweep merge sweep-dir -o sweep-out
  fleetsim sweep merge sweep-dir -o sweep-out --overwrite --allow-missing`,
    )
    .action((dir, opts) =>
      run("sweep merge", async () => (await import("./sweep.js")).sweepMergeCommand({ dir, ...opts }, io)),
    );

  sweep
    .command("k8s")
    .description(
      "Print a Kubernetes Indexed Job that runs every point of a sweep directory, one pod per index",
    )
    .argument("<dir>", "a directory written by fleetsim sweep plan, on the volume the pods mount")
    .requiredOption(
      "--image <image>",
      "container image with fleetsim as its entrypoint (--dockerfile writes one)",
    )
    .requiredOption("--parallelism <p>", "pods at once", intOption("--parallelism"))
    .option(
      "--claim <name>",
      "PersistentVolumeClaim (ReadWriteMany) that holds the sweep directory",
      "fleetsim-sweep",
    )
    .option("--sub-path <path>", "the sweep directory's path inside that volume (default: its root)", "")
    .option("--name <name>", "Job name (default: fleetsim-sweep-<manifest hash>)")
    .option("--namespace <ns>", "namespace of the Job")
    .option(
      "--retries <n>",
      "retries of a failed point (backoffLimitPerIndex)",
      intOption("--retries", true),
      2,
    )
    .option("--dockerfile <file>", "also write the Dockerfile of the image (node:20-slim + npm pack)")
    .addHelpText(
      "after",
      `
Examples:
  fleetsim sweep k8s sweep-dir --image registry.example/fleetsim:0.1.0 --parallelism 100 > job.yaml
  fleetsim sweep k8s sweep-dir --image fleetsim:0.1.0 --parallelism 8 --dockerfile Dockerfile --claim sweeps --sub-path team/sweep-dir`,
    )
    .action((dir, opts) =>
      run("sweep k8s", async () => (await import("./sweep.js")).sweepK8sCommand({ dir, ...opts }, io)),
    );

  program
    .command("estimate")
    .description("Price one forward pass with the op-level timing model and show its per-operation breakdown")
    .requiredOption("--model <id>", "model id (catalog, local directory, or Hugging Face cache)")
    .requiredOption("--hardware <gpu>", "GPU system, e.g. h200_sxm")
    .addOption(
      new Option("--backend <backend>", "serving backend (its block-FP8 kernel rule)")
        .choices(["vllm", "sglang", "trtllm"] as const)
        .default("vllm"),
    )
    .addOption(
      new Option("--op-tables <tables>", "op tables: vllm, or the backend's own (timing.op_tables)")
        .choices(["vllm", "backend"] as const)
        .default("vllm"),
    )
    .option("--tensor <n>", "tensor-parallel size", intOption("--tensor"), 1)
    .option("--pipeline <n>", "pipeline-parallel size", intOption("--pipeline"), 1)
    .option("--moe-tensor <n>", "MoE tensor-parallel size", intOption("--moe-tensor"), 1)
    .option("--moe-expert <n>", "MoE expert-parallel size", intOption("--moe-expert"), 1)
    .option(
      "--prefill-tokens <n>",
      "new prompt tokens per request (prices a prefill pass)",
      intOption("--prefill-tokens"),
    )
    .option("--prefix <n>", "cached prefix tokens per request", intOption("--prefix", true), 0)
    .option("--batch <n>", "requests in the pass", intOption("--batch"), 1)
    .option("--context <n>", "context length per request (prices a decode pass)", intOption("--context"))
    .option(
      "--perf-database <dir>",
      "read an AIConfigurator-format perf-data tree instead of the built-in tables",
    )
    .option("--enable-eplb", "price MoE layers with balanced expert load (engine.enable_eplb)")
    .addOption(
      new Option(
        "--context-attention-extrapolation <rule>",
        "context attention beyond the tables' longest sequence (timing.context_attention_extrapolation)",
      )
        .choices(["sqrt", "quadratic"] as const)
        .default("sqrt"),
    )
    .addOption(tableFormatOption())
    .addHelpText(
      "after",
      `
Examples:
  fleetsim estimate --model nvidia/Llama-3.1-8B-Instruct-FP8 --hardware h200_sxm --prefill-tokens 4096
  fleetsim estimate --model meta-llama/Llama-3.1-70B --hardware h100_sxm --tensor 4 --batch 64 --context 8192
  fleetsim estimate --model Qwen/Qwen3-32B --hardware b200_sxm --prefill-tokens 2048 --prefix 8192 --format json
  fleetsim estimate --model deepseek-ai/DeepSeek-V3 --hardware h200_sxm --tensor 8 --moe-tensor 8 --batch 32 --context 2048 --backend trtllm --op-tables backend`,
    )
    .action((opts) =>
      run("estimate", async () =>
        (await import("./estimate.js")).estimateCommand(
          { ...opts, enableEplb: opts.enableEplb === true },
          io,
        ),
      ),
    );

  program
    .command("convert")
    .description("Convert a Mooncake trace into a Dynamo request trace (dynamo.request.trace.v1)")
    .requiredOption("--input <path>", "Mooncake JSONL trace, plain or gzip")
    .option("--output <path>", "Dynamo trace to write (gzip when the name ends in .gz)")
    .option(
      "--trace-block-size <n>",
      "tokens per Mooncake hash id",
      intOption("--trace-block-size"),
      DEFAULT_CONVERT_BLOCK_SIZE,
    )
    .option(
      "--split-at-seconds <s>",
      "split at this trace time: earlier arrivals go to --history, the rest to --replay",
      secondsOption("--split-at-seconds"),
    )
    .option("--history <path>", "with --split-at-seconds: requests arriving before the split")
    .option("--replay <path>", "with --split-at-seconds: requests arriving at or after the split")
    .option(
      "--start-unix-ms <n>",
      `unix ms that trace time 0 becomes (default ${DEFAULT_ORIGIN_UNIX_MS})`,
      intOption("--start-unix-ms", true),
    )
    .option(
      "--request-id-prefix <text>",
      "request ids are <prefix>-<line index> (default: from the input name)",
    )
    .addHelpText(
      "after",
      `
Each Mooncake row becomes one request_end record, as the reference's mooncake_to_dynamo.py writes
it; see docs/traces.md.

Examples:
  fleetsim convert --input traces/toolagent_trace.jsonl --output traces/toolagent-dynamo.jsonl.gz
  fleetsim convert --input traces/toolagent_trace.jsonl --split-at-seconds 1200 \
    --history traces/toolagent-history.jsonl --replay traces/toolagent-replay.jsonl
  fleetsim convert --input trace.jsonl.gz --output out.jsonl --trace-block-size 256 --start-unix-ms 0`,
    )
    .action((opts) => run("convert", async () => (await import("./convert.js")).convertCommand(opts, io)));

  program
    .command("validate")
    .description("Check a config (and its --set overrides) as predict would, without running it")
    .requiredOption("-c, --config <path>", "YAML config (same schema as aisimulate predict)")
    .addOption(setOption())
    .addOption(
      new Option("--format <format>", "stdout form").choices(["text", "json"] as const).default("text"),
    )
    .addOption(stackOption())
    .addHelpText(
      "after",
      `
Checks the YAML, the schema, the cross-field rules, the --set overrides, model and GPU
resolution, the trace files and the timing tables; prints "FILE: ok" and what would run.
Errors are printed as predict prints them (exit 2).

Examples:
  fleetsim validate -c examples/aggregated.yaml
  fleetsim validate --stack dynamo -c prediction.yaml --set router.policy=kv_router --set planner.policy=enabled
  fleetsim validate -c prediction.yaml --format json | jq .run.workers`,
    )
    .action((opts) => run("validate", async () => (await import("./validate.js")).validateCommand(opts, io)));

  program
    .command("worker")
    .description(
      "Serve sweep jobs from a Redis queue (recommend, sweep run and predict's retune with --executor redis://HOST:PORT)",
    )
    .requiredOption("--redis <url>", "the Redis server of the queue: redis://HOST:PORT")
    .option(
      "--concurrency <n>",
      "jobs at once per task queue, each in its own process",
      intOption("--concurrency"),
      1,
    )
    .option(
      "--lock-seconds <s>",
      "a job whose worker stops renewing its lock this long is handed to another worker",
      positiveNumber("--lock-seconds"),
      30,
    )
    .addHelpText(
      "after",
      `
Runs until SIGINT/SIGTERM, then finishes its running jobs and exits 0 (a second signal exits at
once; the unfinished jobs go to another worker). A job that throws is retried, then fails with
its reason; a worker killed mid-job has its job re-run by another after --lock-seconds.

Examples:
  fleetsim worker --redis redis://queue.internal:6379 --concurrency 2
  fleetsim sweep run sweep-dir --executor redis://queue.internal:6379`,
    )
    .action((opts) =>
      run("worker", async () =>
        (await import("./worker.js")).workerCommand({ ...opts, ownsProcess: deps.ownsProcess }, io),
      ),
    );

  program
    .command("schema")
    .description("Print the JSON Schema of the config file (draft 2020-12), for editor completion")
    .option("-o, --output <file>", "write the schema to this file instead of stdout")
    .option("--prediction", "the JSON Schema of prediction.json (the output contract) instead", false)
    .addHelpText(
      "after",
      `
Generated from the schema the loader validates with. For completion and checking in editors
that use yaml-language-server (VS Code YAML, Neovim, ...), start the config with:
  # yaml-language-server: $schema=./fleetsim.schema.json

Examples:
  fleetsim schema -o fleetsim.schema.json
  fleetsim schema | jq '.properties.router'
  fleetsim schema --prediction -o prediction.schema.json`,
    )
    .action((opts) =>
      run("schema", async () =>
        (await import("./schema.js")).schemaCommand({ ...opts, version: VERSION }, io),
      ),
    );

  // Commander answers `--help` before it looks the command up, so `fleetsim frob --help` would
  // print the top-level help and exit 0: without the flag it reports the unknown command (exit 2).
  const args = namesUnknownCommand(program, argv) ? argv.filter((a) => a !== "--help" && a !== "-h") : argv;
  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every other commander error is CLI syntax (exit 2).
      return err.exitCode === 0 ? ExitCode.Ok : ExitCode.UserError;
    }
    throw err;
  }
  return exitCode;
}

/** Whether the leading words of `argv` (before any option) name a command the tree does not have. */
function namesUnknownCommand(program: CommandUnknownOpts, argv: readonly string[]): boolean {
  let command = program;
  for (const arg of argv) {
    if (arg.startsWith("-") || command.commands.length === 0) return false;
    const next = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (next === undefined) return arg !== "help";
    command = next;
  }
  return false;
}

/**
 * Maps errors to exit codes: user mistakes print one clear message, never a stack trace. Each
 * command's module is imported only when that command runs (start-up, docs/performance.md), so
 * the replay's `ReplayAborted` is looked up only for an error.
 */
async function guarded(
  io: Streams,
  command: string,
  /** Resolves to the exit code, or to anything else for success. */
  body: () => Promise<unknown>,
): Promise<number> {
  try {
    const code = await body();
    return typeof code === "number" ? code : ExitCode.Ok;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`fleetsim: error: ${err.format()}\n`);
      return ExitCode.UserError;
    }
    if (isUserError(err)) {
      io.err(`fleetsim: error: ${(err as Error).message}\n`);
      return ExitCode.UserError;
    }
    if (err instanceof ResourceRefusal || err instanceof ResourceLimited) {
      io.err(`fleetsim: error: ${err.message}\n`);
      return ExitCode.ResourceLimited;
    }
    if (err instanceof SupervisorTimeout) {
      io.err(`fleetsim: error: ${err.message}\n`);
      return ExitCode.SupervisorTimeout;
    }
    if (err instanceof Interrupted) {
      io.err(`fleetsim: interrupted (${err.signal}); no results were written\n`);
      return err.exitCode;
    }
    if (err instanceof ExecutionFailure) {
      io.err(`fleetsim: error: ${err.message}\n`);
      return ExitCode.Failure;
    }
    const { ReplayAborted } = await import("../sim/replay.js");
    if (err instanceof ReplayAborted) {
      io.err("fleetsim: interrupted; no results were written\n");
      return ExitCode.Interrupted;
    }
    const e = err instanceof Error ? err : new Error(String(err));
    io.err(`fleetsim ${command} failed: ${e.name}: ${e.message}\n`);
    if (process.env.FLEETSIM_DEBUG) io.err(`${e.stack ?? ""}\n`);
    return ExitCode.Failure;
  }
}
