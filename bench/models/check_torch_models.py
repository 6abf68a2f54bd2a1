#!/usr/bin/python3
"""Checks that torch_zoo_training.py's PyTorch models are the zoo's models:
Keras builds each from tools/keras_goldens/zoo_models.py (the definitions the
C++ builders mirror), with random weights (biases and BatchNormalization's
moving statistics too), and computes the outputs of a random batch in
inference and in training mode (BatchNormalization on batch statistics);
the same weights are copied into the PyTorch model, whose softmax outputs
must agree to float32 rounding.

    /usr/bin/python3 bench/models/check_torch_models.py [--keras-python bench/.venv-tensorflow/bin/python]

The Keras half runs in TensorFlow's virtual environment
(bench/keras/setup_tensorflow.sh), the PyTorch half in Debian's python3-torch;
they meet through one .npz file. Exit status 1 when a model disagrees.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CONFIGURATIONS = {"resnet_small_28x28": "resnet_small_28x28", "vit_fashion_mnist": "vit_fashion_mnist_p4"}
BATCH = 8
TOLERANCE = 1e-4  # absolute, on probabilities


def keras_reference(path):
    """In the Keras environment: every model's weights (<layer>/<index>) and outputs."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "keras_goldens"))
    import zoo_models  # noqa: E402  (needs Keras)

    rng = np.random.default_rng(0)
    arrays = {"x": rng.random((BATCH, 28, 28, 1), dtype=np.float32)}
    for name, configuration in CONFIGURATIONS.items():
        model = zoo_models.build(configuration)
        for layer in model.layers:
            weights = []
            for weight in layer.get_weights():
                value = rng.normal(0.0, 0.2, weight.shape).astype(np.float32)
                if "variance" in layer.weights[len(weights)].path:
                    value = np.abs(value) + 0.5
                weights.append(value)
                arrays[f"{name}:{layer.name}/{len(weights) - 1}"] = value
            layer.set_weights(weights)
        arrays[f"{name}:inference"] = np.asarray(model(arrays["x"], training=False))
        arrays[f"{name}:training"] = np.asarray(model(arrays["x"], training=True))
    np.savez(path, **arrays)


def load_into_torch(name, model, arrays):
    """Copies the Keras weights of `name` into the PyTorch model, layer by layer."""
    import torch

    def weights(layer):
        found = [arrays[f"{name}:{layer}/{i}"] for i in range(8) if f"{name}:{layer}/{i}" in arrays]
        if not found:
            raise KeyError(f"no Keras weights for layer {layer}")
        return [torch.from_numpy(w) for w in found]

    def conv(module, layer):
        kernel, bias = weights(layer)
        module.weight.copy_(kernel.permute(3, 2, 0, 1))  # (kh, kw, in, out) -> (out, in, kh, kw)
        module.bias.copy_(bias)

    def dense(module, layer):
        kernel, bias = weights(layer)
        module.weight.copy_(kernel.T)
        module.bias.copy_(bias)

    def batch_norm(module, layer):
        gamma, beta, mean, variance = weights(layer)
        for target, value in ((module.weight, gamma), (module.bias, beta), (module.running_mean, mean),
                              (module.running_var, variance)):
            target.copy_(value)

    def layer_norm(module, layer):
        gamma, beta = weights(layer)
        module.weight.copy_(gamma)
        module.bias.copy_(beta)

    def attention(module, layer):
        # Keras: query/key/value kernels (dim, heads, key_dim) and biases
        # (heads, key_dim), output kernel (heads, key_dim, dim) and bias (dim).
        q, q_bias, k, k_bias, v, v_bias, out, out_bias = weights(layer)
        dim = q.shape[0]
        module.in_proj_weight.copy_(torch.cat([w.reshape(dim, -1).T for w in (q, k, v)]))
        module.in_proj_bias.copy_(torch.cat([b.reshape(-1) for b in (q_bias, k_bias, v_bias)]))
        module.out_proj.weight.copy_(out.reshape(-1, dim).T)
        module.out_proj.bias.copy_(out_bias)

    with torch.no_grad():
        if name == "resnet_small_28x28":
            conv(model.conv1, "conv1_conv")
            batch_norm(model.bn1, "conv1_bn")
            for stage, block in zip(("conv2", "conv3", "conv4"), model.stages):
                prefix = f"{stage}_block1"
                if not isinstance(block.shortcut, torch.nn.Identity):
                    conv(block.shortcut[0], prefix + "_0_conv")
                    batch_norm(block.shortcut[1], prefix + "_0_bn")
                conv(block.conv1, prefix + "_1_conv")
                batch_norm(block.bn1, prefix + "_1_bn")
                conv(block.conv2, prefix + "_2_conv")
                batch_norm(block.bn2, prefix + "_2_bn")
        else:
            conv(model.patch_embedding, "patch_embedding")
            model.position_embedding.copy_(weights("position_embedding")[0])
            for index, block in enumerate(model.blocks, start=1):
                prefix = f"encoder{index}"
                layer_norm(block.ln1, prefix + "_ln1")
                attention(block.mha, prefix + "_mha")
                layer_norm(block.ln2, prefix + "_ln2")
                dense(block.mlp_dense1, prefix + "_mlp_dense1")
                dense(block.mlp_dense2, prefix + "_mlp_dense2")
            layer_norm(model.final_ln, "final_ln")
        dense(model.predictions, "predictions")


def compare(path):
    """In the PyTorch environment: the PyTorch models' outputs against Keras's."""
    import torch
    from torch_zoo_training import MODELS

    arrays = dict(np.load(path))
    x = torch.from_numpy(arrays["x"]).permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW
    failed = False
    for name in CONFIGURATIONS:
        model = MODELS[name]()
        load_into_torch(name, model, arrays)
        for mode in ("inference", "training"):
            model.train(mode == "training")
            with torch.no_grad():
                probabilities = torch.softmax(model(x), dim=1).numpy()
            error = float(np.max(np.abs(probabilities - arrays[f"{name}:{mode}"])))
            ok = error <= TOLERANCE
            failed |= not ok
            print(f"{name} {mode}: max |PyTorch - Keras| = {error:.2e} on probabilities ({'ok' if ok else 'DIFFERENT'})")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keras-python", default=os.path.join(ROOT, "bench", ".venv-tensorflow", "bin", "python"))
    parser.add_argument("--keras-reference", metavar="NPZ", help=argparse.SUPPRESS)  # the Keras half
    args = parser.parse_args()
    if args.keras_reference:
        keras_reference(args.keras_reference)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "reference.npz")
        environment = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
        subprocess.run([args.keras_python, os.path.abspath(__file__), "--keras-reference", path], check=True,
                       env=environment)
        return compare(path)


if __name__ == "__main__":
    sys.exit(main())
