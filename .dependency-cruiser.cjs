// The layering rule of docs/architecture.md, checked by `npm run depcheck` (CI: .ci/run).
//
// LAYERS is the one place the layer order is written: bottom first. A folder of src/ may import
// only from itself and the layers below it; type-only imports count (an upward type import is
// still a design dependency). Every folder of src/ must be listed, so a new folder
// has to be placed deliberately. Cycles are forbidden everywhere, also inside one folder.
"use strict";

/** Bottom → top. Entries in one inner array share a layer (they may not import each other). */
const LAYERS = [
  ["util"], // prng, UserError, hashing primitives
  ["knobs"], // the Planner knob table (names, value rules, defaults) every Planner key derives from
  ["output"], // the prediction.json contract (zod schema and its types)
  ["sweep"], // a generic pool of worker processes; the tasks it runs are the pipeline's
  ["hardware"], // GPU specs, op tables, numeric formats (dtypes)
  ["model"], // architectures, memory sizing on a GPU
  ["timing"], // pass pricing (TimingModel); the factory that reads a RunSpec is the pipeline's
  ["traffic"], // request tables, trace readers, synthetic workloads
  ["engine"],
  ["router"],
  ["metrics"],
  ["planner"], // the pure Planner core
  ["config"], // YAML → RunSpec
  ["cluster"],
  ["sim"], // the event loop; it sees the autoscaler only through ScalingPolicy (sim/scaling.ts)
  ["autoscale"], // the Planner in the loop: its replay adapter, set-up, retune controller and candidate replays
  ["report"], // prediction document, per-request records, HTML report, output directory
  ["pipeline"], // spec → workload → timing → policy → replay → prediction document
  ["resources"], // host limits, preflight, process supervision
  ["recommend"], // deployment search: domains, studies, optimizers, candidate sweeps, result files
  ["shard"], // sweep plans: manifest, shard-index runs, atomic results, merge, Kubernetes Job
  ["calibrate"], // fitting a calibration profile to a user's benchmark results
  ["api"],
  ["cli"],
  ["index.ts"], // the package's entry point, above everything it re-exports
];

const escapeDots = (path) => path.replace(/[.]/g, "[.]");
/** The path regex of a LAYERS entry: a folder of src/, or a file directly in src/. */
const layerPath = (name) => (name.endsWith(".ts") ? `^src/${escapeDots(name)}$` : `^src/${name}/`);
const LISTED = LAYERS.flat().map(layerPath);

/** One rule per LAYERS entry: nothing in it may import from a layer above it or from another entry of its own layer. */
function layerRules() {
  return LAYERS.flatMap((layer, index) =>
    layer.flatMap((name) => {
      const forbidden = [...LAYERS.slice(index + 1).flat(), ...layer.filter((other) => other !== name)];
      if (forbidden.length === 0) return [];
      return [
        {
          name: `layer-${name.replace(/[.]ts$/, "")}`,
          comment: `src/${name} may import only from the layers below it (LAYERS in .dependency-cruiser.cjs)`,
          severity: "error",
          from: { path: layerPath(name) },
          to: { path: forbidden.map(layerPath) },
        },
      ];
    }),
  );
}

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "import cycles hide the layer order (type-only imports count)",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    // A module of an unlisted folder is caught by what it imports, by who imports it, or (if
    // neither) as an orphan.
    ...[
      { from: { path: "^src/", pathNot: LISTED }, to: {} },
      { from: {}, to: { path: "^src/", pathNot: LISTED } },
      { from: { orphan: true, path: "^src/", pathNot: LISTED }, to: {} },
    ].map((rule) => ({
      name: "unlisted-folder",
      comment: "every folder of src/ has a place in LAYERS",
      severity: "error",
      ...rule,
    })),
    {
      name: "engine-backends-behind-contract",
      comment:
        "the backends (engine/vllmEngine.ts, engine/sglangEngine.ts) are built by engine/create.ts and used through engine/workerEngine.ts, so one can change or be added without touching their users",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/engine/create[.]ts$" },
      to: { path: "^src/engine/(vllmEngine|sglangEngine)[.]ts$" },
    },
    ...layerRules(),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    includeOnly: "^src/",
    parser: "swc",
    tsPreCompilationDeps: true,
  },
};
