"""Golden fixture of the reference's Planner regression (docs/conformance.md "Planner").

Feeds seeded random forward passes to the AIS core's FPM regression exactly as Dynamo 1.6's Planner
builds it (`PlannerEnginePerfModel._build_ais_config`: `estimation_mode: fpm_regression`, options
from `max_num_fpm_samples`, `load_min_observations`, `fpm_sample_bucket_size`) and records, after
every few passes, its estimates of query passes and each store's readiness and retained count.
Writes the fixture JSON on stdout; test/conformance/reference.regression.test.ts replays it
through fleetsim's perf model without Python.

The reference keeps its retention cells in a Rust HashMap, so which of two equally full cells
loses a sample varies between runs; a scenario is kept only if eight fresh models agree on it.

    .reference/venv/bin/python scripts/reference/regression.py > test/golden/reference-planner/regression.json
"""

import json
import random
import sys
from dataclasses import asdict
from importlib.metadata import version

from aisimulate_core.sdk.rust_engine_step import ForwardPassPerfModelConfig, RustForwardPassPerfModel

ROLES = ("prefill", "decode", "aggregated")
# Fresh models that must agree before a scenario is kept (each has its own HashMap hasher).
REPEATS = 7


def new_model(role: str, opts: dict) -> RustForwardPassPerfModel:
    legacy = ForwardPassPerfModelConfig.from_legacy_engine_config(
        {"schema_version": 1, "model_name": "m", "system_name": "unprofiled", "backend": "vllm",
         "tp_size": 1, "pp_size": 1},
        role,
        {"max_observations": opts["max"], "min_observations": opts["min"], "bucket_count": opts["buckets"],
         "max_num_tokens": 8192, "max_batch_size": 512, "max_kv_tokens": 2_000_000},
    )
    config = asdict(ForwardPassPerfModelConfig(model="m", system="unprofiled", backend="vllm",
                                               worker_type=role, estimation_mode="fpm_regression"))
    config["estimator_config"] = legacy.estimator_config
    return RustForwardPassPerfModel.best_available(config)


def fpm(p: dict) -> dict:
    return {
        "version": 1, "worker_id": "0", "dp_rank": 0, "counter_id": 0, "wall_time": p.get("wall", 0.0),
        "scheduled_requests": {
            "num_prefill_requests": p["n"], "sum_prefill_tokens": p["p"], "var_prefill_length": 0.0,
            "sum_prefill_kv_tokens": p["h"], "num_decode_requests": p["b"], "sum_decode_kv_tokens": p["k"],
            "var_decode_kv_tokens": 0.0,
        },
        "queued_requests": {"num_prefill_requests": 0, "sum_prefill_tokens": 0, "var_prefill_length": 0.0,
                            "num_decode_requests": 0, "sum_decode_kv_tokens": 0, "var_decode_kv_tokens": 0.0},
    }


def random_pass(rng: random.Random, role: str) -> dict:
    prefill = role == "prefill" or (role == "aggregated" and rng.random() < 0.6)
    decode = role == "decode" or (role == "aggregated" and (not prefill or rng.random() < 0.6))
    p = rng.choice([rng.randint(16, 512), rng.randint(512, 8192)]) if prefill else 0
    n = rng.randint(1, 4) if prefill else 0
    h = rng.choice([0, rng.randint(0, 60_000)]) if prefill else 0
    b = rng.randint(1, 96) if decode else 0
    k = b * rng.randint(100, 12_000) if decode else 0
    # A plausible pass time with noise: weights, attention, per-token and per-request work.
    ms = 3 + 2.5e-8 * (h * p / max(n, 1) + p * p / (2 * max(n, 1))) + 0.04 * p + 4e-5 * k + 0.03 * b
    ms *= rng.uniform(0.85, 1.2)
    wall = 0.0 if rng.random() < 0.05 else ms / 1000
    return {"p": p, "n": n, "h": h, "b": b, "k": k, "wall": wall}


def run(role: str, opts: dict, passes: list, queries: list, every: int) -> list:
    model = new_model(role, opts)
    checkpoints = []
    for i, p in enumerate(passes, 1):
        model.tune_with_fpms([[fpm(p)]])
        if i % every == 0 or i == len(passes):
            stores = model.regression_store_diagnostics()
            checkpoints.append({
                "after": i,
                "ready": model.diagnostics()["readiness"] == "ready",
                "stores": {s["workload_kind"]: [s["ready"], s["retained_observations"]] for s in stores},
                "estimates_ms": [model.estimate_forward_pass_time_ms(fpm(q)) for q in queries],
            })
    return checkpoints


def random_options(rng: random.Random) -> dict:
    return {"max": rng.choice([8, 16, 64]), "min": rng.choice([3, 5]), "buckets": rng.choice([4, 16])}


def reproducible(role: str, opts: dict, passes: list, queries: list, every: int):
    """The scenario's checkpoints, or None where fresh models disagree (a tie between equally full
    cells decided it: not reproducible)."""
    first = run(role, opts, passes, queries, every)
    if any(run(role, opts, passes, queries, every) != first for _ in range(REPEATS)):
        return None
    return first


def stale_pass(rng: random.Random, role: str, slope: float) -> dict:
    """A pass whose time follows its work with `slope` (negative: falls as the work grows), around
    a flat time, as chunk-bound passes on polynomial timing do: the refit is intercept-only."""
    p = random_pass(rng, role)
    work = p["p"] + p["b"] + 1e-4 * (p["h"] + p["k"])
    ms = 190 + slope * 1e-3 * work + rng.uniform(-0.05, 0.05)
    return {**p, "wall": max(ms, 1.0) / 1000}


def stale_scenarios(rng: random.Random) -> list:
    """Stores whose refits stop being models (intercept-only) after a ready fit: the reference keeps
    the last accepted plane, through insertions and evictions (src/planner/perfModel/index.ts)."""
    out = []
    attempts = 0
    while len(out) < 9 and attempts < 100:
        attempts += 1
        role = ROLES[len(out) % 3]
        opts = random_options(rng)
        first_slope = rng.choice([0.0, 1.0, 4.0])
        passes = [stale_pass(rng, role, first_slope) for _ in range(rng.choice([6, 10]))]
        passes += [stale_pass(rng, role, -rng.choice([1.0, 4.0])) for _ in range(rng.choice([12, 40]))]
        queries = [{**random_pass(rng, role), "wall": 0.0} for _ in range(6)]
        first = reproducible(role, opts, passes, queries, 2)
        if first is None:
            continue
        out.append({"role": role, "options": opts, "passes": passes, "queries": queries,
                    "every": 2, "checkpoints": first, "stale": True})
    return out


def main() -> None:
    rng = random.Random(20261206)
    scenarios = []
    attempts = 0
    while len(scenarios) < 36 and attempts < 200:
        attempts += 1
        role = ROLES[len(scenarios) % 3]
        opts = random_options(rng)
        passes = [random_pass(rng, role) for _ in range(rng.choice([12, 40, 90]))]
        queries = [{**random_pass(rng, role), "wall": 0.0} for _ in range(8)]
        queries.append({"p": 0, "n": 0, "h": 0, "b": 0, "k": 0})
        every = 4
        first = reproducible(role, opts, passes, queries, every)
        if first is None:
            continue
        scenarios.append({"role": role, "options": opts, "passes": passes, "queries": queries,
                          "every": every, "checkpoints": first})
    scenarios += stale_scenarios(random.Random(20261207))
    json.dump({
        "about": "The reference's Planner regression (AIS core FPM regression) on seeded random passes",
        "reference": {"aisimulate": version("aisimulate"), "generator": "scripts/reference/regression.py"},
        "scenarios": scenarios,
    }, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
