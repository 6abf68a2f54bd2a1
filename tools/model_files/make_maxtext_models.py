#!/usr/bin/env python3
"""Writes configs/models/maxtext/{16b,32b,64b}.yaml: MaxText's decoders of
commit 9bc243c9536bbd80268be23f6374a164fa36efbe (2023-10-27), the models of
its v5e-256 training table, as model.graph files (one block per layer, so
the files are long; this script is how they are made and checked).

    python3 tools/model_files/make_maxtext_models.py
"""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]

# name: (emb, heads, mlp, layers, per-chip batch of the published run)
MODELS = {
    "16b": (5120, 32, 32768, 32, 6),
    "32b": (10240, 32, 32768, 32, 4),
    "64b": (10240, 32, 32768, 64, 2),
}
HEAD_DIM = 256
VOCAB = 32768
SEQUENCE = 2048
CHIPS = 256


def model_file(size, emb, heads, mlp, layers, per_chip_batch):
    lines = [
        f"# MaxText's {size.upper()} decoder of commit 9bc243c9536bbd80268be23f6374a164fa36efbe",
        "# (2023-10-27), the model of its TPU v5e-256 training table",
        "# (../shared/reference/tpu-modern-figures.md; docs/tpu-emulator.md, \"Pods\"):",
        f"# embedding {emb}, {heads} heads of {HEAD_DIM}, MLP {mlp} (one ReLU up-projection, no",
        f"# gating), {layers} layers, vocabulary {VOCAB}, sequence {SEQUENCE}, no biases.",
        "# Each layer is MaxText's parallel block: one RMS norm, then attention",
        "# (non-causal, as the run's flash-attention kernel was) and the MLP both",
        "# read it, and their outputs are added to the residual.",
        "# The logits are tied to the embedding (its table transposed), as",
        "# MaxText's were. Positions are rotary (RoPE, wavelengths up to 10000),",
        "# applied to Q and K as MaxText does.",
        f"# Made by tools/model_files/make_maxtext_models.py. The published run:",
        f"#   accel tpu estimate --model configs/models/maxtext/{size}.yaml",
        f"# (the same as --slice v5e-256 --mesh fsdp={CHIPS} --remat full --batch {per_chip_batch * CHIPS}).",
        f"name: maxtext_{size}",
        f"description: MaxText {size.upper()} decoder (Oct 2023), parallel blocks, for v5e-256 FSDP estimates",
        "",
        "model:",
        f"  name: maxtext_{size}",
        "  graph:",
        f"    inputs: {{tokens: {{shape: [{SEQUENCE}], dtype: int32}}}}",
        "    layers:",
        f"      - embedding: {{name: token_embedding, input_dim: {VOCAB}, output_dim: {emb}, inputs: tokens}}",
    ]
    previous = "token_embedding"
    for layer in range(1, layers + 1):
        block = f"layer{layer}"
        lines += [
            f"      - rms_normalization: {{name: {block}_norm, inputs: {previous}}}",
            f"      - multi_head_attention: {{name: {block}_attention, num_heads: {heads}, key_dim: {HEAD_DIM}, "
            f"use_bias: false, rotary_max_wavelength: 10000, inputs: [{block}_norm, {block}_norm]}}",
            f"      - dense: {{name: {block}_mlp_in, units: {mlp}, activation: relu, use_bias: false, inputs: {block}_norm}}",
            f"      - dense: {{name: {block}_mlp_out, units: {emb}, use_bias: false, inputs: {block}_mlp_in}}",
            f"      - add: {{name: {block}_out, inputs: [{previous}, {block}_attention, {block}_mlp_out]}}",
        ]
        previous = f"{block}_out"
    lines += [
        f"      - rms_normalization: {{name: final_norm, inputs: {previous}}}",
        "      - reversed_embedding: {name: logits, embedding: token_embedding, inputs: final_norm}",
        "    outputs: logits",
        "",
        "# Bytes of a text as token ids (the estimate makes its own batch of the",
        "# global size; `accel run` would train on these, 256 of the vocabulary's ids).",
        "data:",
        "  source: text",
        "  path: /usr/share/common-licenses/GPL-3",
        f"  sequence_length: {SEQUENCE}",
        f"  batch: {per_chip_batch * CHIPS}",
        "",
        "# The published runs: FSDP over all 256 chips of a v5e-256 (the mesh's",
        "# size is the pod's), full remat of each decoder layer, the layers",
        "# scanned (MaxText's scan_layers), and the runs' XLA flags: the",
        "# all-gathers asynchronous (--xla_enable_async_all_gather and the async",
        "# collective fusion of all-gathers), the reduce-scatters not.",
        "tpu: {preset: tpu_v5e}",
        "distribution:",
        f"  mesh: {{fsdp: {CHIPS}}}",
        "  async_collectives: [all_gather]",
        "  scan_layers: true",
        "",
        "training:",
        "  optimizer: {adam: {learning_rate: 0.0001}}",
        "  loss: {sparse_categorical_crossentropy: {from_logits: true}}",
        "  mixed_precision: mixed_bfloat16",
        "  remat: full",
        "  remat_blocks: '^(layer\\d+)_'   # each decoder layer remat'd whole, as MaxText does",
        "  epochs: 1",
        "  steps_per_epoch: 1",
        "",
    ]
    return "\n".join(lines)


def main():
    for size, (emb, heads, mlp, layers, batch) in MODELS.items():
        path = ROOT / "configs" / "models" / "maxtext" / f"{size}.yaml"
        path.write_text(model_file(size, emb, heads, mlp, layers, batch))
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
