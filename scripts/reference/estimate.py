"""The reference's forward-pass estimator for the conformance harness (docs/conformance.md).

Reads a JSON list of queries on stdin, prints a JSON list of answers: the same op-level AIC
estimator that `aisimulate predict` prices passes with (aisimulate_core's
RustForwardPassPerfModel, `estimation_mode: op_level`), asked for one uncorrected pass.

query: {"model", "system", "backend", "tp", "moe_tp", "moe_ep", "phase": "prefill"|"decode",
        "batch", "tokens", "prefix"}  -- prefill: `tokens` new prompt tokens per request over
        `prefix` cached ones (absent: none; the estimator is given the whole length, prefix
        included, and the prefix); decode: one token per request at `tokens` tokens of context each.
answer: {"ms": float} or {"error": str}
"""

import json
import sys

from aisimulate_core.sdk.rust_engine_step import ForwardPassPerfModelConfig, RustForwardPassPerfModel

models: dict = {}


def estimator(q: dict) -> RustForwardPassPerfModel:
    key = (q["model"], q["system"], q["backend"], q.get("tp", 1), q.get("moe_tp"), q.get("moe_ep"))
    if key not in models:
        moe_tp, moe_ep = q.get("moe_tp"), q.get("moe_ep")
        if moe_tp is not None or moe_ep is not None:
            # The reference asks for both or neither ("must be configured together").
            moe_tp, moe_ep = moe_tp or 1, moe_ep or 1
        config = ForwardPassPerfModelConfig(
            model=q["model"],
            system=q["system"],
            backend=q["backend"],
            worker_type="aggregated",
            tp=q.get("tp", 1),
            moe_tp_size=moe_tp,
            moe_ep_size=moe_ep,
            estimation_mode="op_level",
        )
        models[key] = RustForwardPassPerfModel.best_available(config)
    return models[key]


def answer(q: dict) -> dict:
    try:
        model = estimator(q)
        if q["phase"] == "prefill":
            prefix = q.get("prefix") or 0
            return {"ms": model.predict_prefill_latency(q["batch"], q["tokens"] + prefix, prefix)}
        return {"ms": model.predict_decode_latency_total(q["batch"], q["batch"] * q["tokens"])}
    except Exception as exc:  # the harness reports the error in its table
        return {"error": f"{type(exc).__name__}: {exc}"}


if __name__ == "__main__":
    queries = json.load(sys.stdin)
    json.dump([answer(q) for q in queries], sys.stdout)
