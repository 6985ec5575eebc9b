"""Writes the reference's offline model directories (run by setup.sh with the venv's Python).

aisimulate reads a model's Hugging Face config from the configs bundled in its wheel
(`aisimulate_core/model_configs/<org>--<name>_config.json`) or downloads it; there is no network
here, so a model the wheel does not bundle is given to both tools as a local checkpoint directory
(`config.json` + `hf_quant_config.json`), which aisimulate and fleetsim both accept as
`engine.model` (docs/conformance.md "Harness"). Each directory is built from a bundled config and
the publisher's FP8 convention, the rule fleetsim's own catalog applies to the same ids
(scripts/derive-model-catalog.ts, ID_RULES).

    python models.py OUT_DIR
"""

import json
import sys
from importlib import resources
from pathlib import Path

BUNDLED = resources.files("aisimulate_core") / "model_configs"

# NVIDIA's ModelOpt FP8 checkpoints: BF16 config.json plus this hf_quant_config.json (the shape of
# the bundled nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json).
MODELOPT_FP8 = {
    "producer": {"name": "modelopt"},
    "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]},
}

# Mixtral-8x7B is not bundled in this aisimulate wheel: the values of its public Hugging Face
# config (huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json), as fleetsim's catalog
# has them (scripts/derive-model-catalog.ts, SUPPLEMENTARY_CONFIGS).
MIXTRAL_8X7B = {
    "architectures": ["MixtralForCausalLM"],
    "model_type": "mixtral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "num_attention_heads": 32,
    "num_experts_per_tok": 2,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "rms_norm_eps": 1e-05,
    "rope_theta": 1000000.0,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 32000,
}

# id -> (bundled config stem or a config dict, hf_quant_config or None)
LOCAL_MODELS = {
    "nvidia/Llama-3.1-8B-Instruct-FP8": ("meta-llama--Meta-Llama-3.1-8B", MODELOPT_FP8),
    "mistralai/Mixtral-8x7B-v0.1": (MIXTRAL_8X7B, None),
}


def main(out_dir: str) -> None:
    out = Path(out_dir)
    for model_id, (stem, quant) in LOCAL_MODELS.items():
        config = stem if isinstance(stem, dict) else json.loads((BUNDLED / f"{stem}_config.json").read_text())
        target = out / model_id.replace("/", "--")
        target.mkdir(parents=True, exist_ok=True)
        (target / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        if quant is not None:
            (target / "hf_quant_config.json").write_text(json.dumps(quant, indent=2) + "\n")
        print(f"  {model_id} -> {target}")


if __name__ == "__main__":
    main(sys.argv[1])
