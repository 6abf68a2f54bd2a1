"""accel's model zoo, defined once in Keras's Functional API.

The C++ builders mirror these functions layer by layer: same layer classes,
same names, same arguments, same call order. docs/model-zoo.md describes each
model and tests/keras/golden/zoo_* hold the parameter counts and per-layer
tables made from these definitions (make_zoo_goldens.py).

Every layer is named explicitly, the input too ("input_1", tf.keras 2's name
for the first Input of a session), so nothing depends on name counters.
Every classifier ends in Dense(classes, activation="softmax") named
"predictions" (train with sparse_categorical_crossentropy on probabilities);
the decoder ends in logits (from_logits=True).

Needs Keras (3.x here; the definitions use nothing that differs from tf.keras
2.15 except where docs/model-zoo.md says so).
"""
import numpy as np
import keras
from keras import layers

BN_EPSILON = 1.001e-5  # keras.applications' ResNet value
LN_EPSILON = 1e-6


# --------------------------------------------------------------------------- custom layer

@keras.saving.register_keras_serializable(package="accel")
class PositionEmbedding(layers.Layer):
    """Adds a learned position embedding to a sequence: call((batch, length, dim))
    returns inputs + embeddings, with one weight `embeddings` of shape
    (length, dim), initialized RandomUniform(-0.05, 0.05) (Keras's "uniform").

    Keras 2 name of the weight: `<layer name>/embeddings:0`.
    """

    def __init__(self, initializer="uniform", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[1] is None or input_shape[2] is None:
            raise ValueError(f"PositionEmbedding needs (batch, length, dim) with known length and dim, "
                             f"got {input_shape}")
        self.embeddings = self.add_weight(name="embeddings", shape=(input_shape[1], input_shape[2]),
                                          initializer=self.initializer, trainable=True)

    def call(self, inputs):
        return inputs + keras.ops.cast(self.embeddings, inputs.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "initializer": keras.initializers.serialize(self.initializer)}


# --------------------------------------------------------------------------- ResNets

def resnet50(input_shape=(224, 224, 3), classes=1000):
    """keras.applications.ResNet50(weights=None, include_top=True), unchanged."""
    return keras.applications.ResNet50(weights=None, include_top=True, input_shape=input_shape, classes=classes)


MLPERF_BN_EPSILON = 1e-5  # MLPerf's ResNet-50 v1.5 (TensorFlow's official resnet_model)
MLPERF_BN_MOMENTUM = 0.9


def _mlperf_bottleneck(x, filters, stride, projection, name):
    """ResNet-50 v1.5's bottleneck: the stride on the 3x3 convolution (v1 puts it
    on the first 1x1), convolutions without bias, each followed by batch norm."""
    def conv(y, channels, kernel, strides, suffix):
        return layers.Conv2D(channels, kernel, strides=strides, padding="same" if kernel > 1 else "valid",
                             use_bias=False, name=name + suffix)(y)

    def norm(y, suffix):
        return layers.BatchNormalization(axis=3, momentum=MLPERF_BN_MOMENTUM, epsilon=MLPERF_BN_EPSILON,
                                         name=name + suffix)(y)

    shortcut = norm(conv(x, 4 * filters, 1, stride, "_0_conv"), "_0_bn") if projection else x
    y = layers.Activation("relu", name=name + "_1_relu")(norm(conv(x, filters, 1, 1, "_1_conv"), "_1_bn"))
    y = layers.Activation("relu", name=name + "_2_relu")(norm(conv(y, filters, 3, stride, "_2_conv"), "_2_bn"))
    y = norm(conv(y, 4 * filters, 1, 1, "_3_conv"), "_3_bn")
    y = layers.Add(name=name + "_add")([shortcut, y])
    return layers.Activation("relu", name=name + "_out")(y)


def resnet50_v1_5(input_shape=(224, 224, 3), classes=1000):
    """ResNet-50 v1.5 as MLPerf Training trains it: keras.applications' names and
    stem, the stride of each downsampling block on its 3x3 convolution,
    convolutions without bias, batch norm with momentum 0.9 and epsilon 1e-5."""
    inputs = keras.Input(shape=input_shape, name="input_1")
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(inputs)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = layers.BatchNormalization(axis=3, momentum=MLPERF_BN_MOMENTUM, epsilon=MLPERF_BN_EPSILON, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], start=2):
        for block in range(1, blocks + 1):
            x = _mlperf_bottleneck(x, filters, stride if block == 1 else 1, block == 1, f"conv{stage}_block{block}")
    x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    outputs = layers.Dense(classes, activation="softmax", name="predictions")(x)
    return keras.Model(inputs, outputs, name="resnet50_v1_5")


def _batch_norm(name):
    return layers.BatchNormalization(axis=3, epsilon=BN_EPSILON, name=name)


def basic_block(x, filters, stride, name):
    """Two 3x3 convolutions with BatchNormalization (ResNet-18/34's block), written
    in keras.applications' style (ResNet50's block1): convolutions with bias,
    'same' padding, the shortcut first in the Add. The shortcut is a 1x1
    convolution + BN (`<name>_0_conv`, `<name>_0_bn`) when the block changes the
    shape (stride > 1 or a new channel count), the identity otherwise."""
    if stride != 1 or x.shape[-1] != filters:
        shortcut = layers.Conv2D(filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = _batch_norm(name + "_0_bn")(shortcut)
    else:
        shortcut = x
    y = layers.Conv2D(filters, 3, strides=stride, padding="same", name=name + "_1_conv")(x)
    y = _batch_norm(name + "_1_bn")(y)
    y = layers.Activation("relu", name=name + "_1_relu")(y)
    y = layers.Conv2D(filters, 3, padding="same", name=name + "_2_conv")(y)
    y = _batch_norm(name + "_2_bn")(y)
    y = layers.Add(name=name + "_add")([shortcut, y])
    return layers.Activation("relu", name=name + "_out")(y)


def basic_stage(x, filters, blocks, stride, name):
    """`blocks` basic blocks named <name>_block1, <name>_block2, ...; the first has `stride`."""
    x = basic_block(x, filters, stride, name + "_block1")
    for index in range(2, blocks + 1):
        x = basic_block(x, filters, 1, f"{name}_block{index}")
    return x


def resnet18(input_shape=(224, 224, 3), classes=1000):
    """ResNet-18 in keras.applications' layout: the ResNet50 stem, 4 stages of 2 basic
    blocks (64, 128, 256, 512 filters; stride 2 in the first block of stages 3-5)."""
    inputs = keras.Input(shape=input_shape, name="input_1")
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(inputs)
    x = layers.Conv2D(64, 7, strides=2, name="conv1_conv")(x)
    x = _batch_norm("conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = basic_stage(x, 64, 2, 1, "conv2")
    x = basic_stage(x, 128, 2, 2, "conv3")
    x = basic_stage(x, 256, 2, 2, "conv4")
    x = basic_stage(x, 512, 2, 2, "conv5")
    x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    outputs = layers.Dense(classes, activation="softmax", name="predictions")(x)
    return keras.Model(inputs, outputs, name="resnet18")


def resnet_small_28x28(input_shape=(28, 28, 1), classes=10):
    """A small ResNet for 28x28 grayscale images (Fashion-MNIST): a 3x3/32 stem
    convolution + BN + ReLU at full resolution, then 3 stages of one basic block
    (32 filters at 28x28, 64 at 14x14, 128 at 7x7; stride 2 in stages conv3 and
    conv4), global average pooling, Dense softmax."""
    inputs = keras.Input(shape=input_shape, name="input_1")
    x = layers.Conv2D(32, 3, padding="same", name="conv1_conv")(inputs)
    x = _batch_norm("conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = basic_stage(x, 32, 1, 1, "conv2")
    x = basic_stage(x, 64, 1, 2, "conv3")
    x = basic_stage(x, 128, 1, 2, "conv4")
    x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    outputs = layers.Dense(classes, activation="softmax", name="predictions")(x)
    return keras.Model(inputs, outputs, name="resnet_small_28x28")


# --------------------------------------------------------------------------- transformers

VIT_DIM = 64
VIT_HEADS = 4
VIT_MLP = 128
VIT_BLOCKS = 4


def vit_fashion_mnist(patch_size=4, input_shape=(28, 28, 1), classes=10, dim=VIT_DIM, heads=VIT_HEADS,
                      mlp=VIT_MLP, blocks=VIT_BLOCKS):
    """A small Vision Transformer: non-overlapping patches embedded by a
    Conv2D(dim, patch, strides=patch), reshaped to (num_patches, dim), plus a
    learned PositionEmbedding, then `blocks` pre-norm encoder blocks

        y = LayerNormalization(eps 1e-6)(x); y = MultiHeadAttention(heads, dim/heads)(y, y); x = x + y
        y = LayerNormalization(eps 1e-6)(x); y = Dense(mlp, gelu)(y); y = Dense(dim)(y);       x = x + y

    then a final LayerNormalization, GlobalAveragePooling1D over the patches
    (no class token) and Dense softmax. GELU is the exact (erf) one."""
    if input_shape[0] % patch_size or input_shape[1] % patch_size:
        raise ValueError(f"patch_size {patch_size} does not divide the image size {input_shape[:2]}")
    if dim % heads:
        raise ValueError(f"dim {dim} is not a multiple of heads {heads}")
    num_patches = (input_shape[0] // patch_size) * (input_shape[1] // patch_size)
    inputs = keras.Input(shape=input_shape, name="input_1")
    x = layers.Conv2D(dim, patch_size, strides=patch_size, name="patch_embedding")(inputs)
    x = layers.Reshape((num_patches, dim), name="patch_reshape")(x)
    x = PositionEmbedding(name="position_embedding")(x)
    for index in range(1, blocks + 1):
        name = f"encoder{index}"
        y = layers.LayerNormalization(epsilon=LN_EPSILON, name=name + "_ln1")(x)
        y = layers.MultiHeadAttention(heads, dim // heads, name=name + "_mha")(y, y)
        x = layers.Add(name=name + "_add1")([x, y])
        y = layers.LayerNormalization(epsilon=LN_EPSILON, name=name + "_ln2")(x)
        y = layers.Dense(mlp, activation="gelu", name=name + "_mlp_dense1")(y)
        y = layers.Dense(dim, name=name + "_mlp_dense2")(y)
        x = layers.Add(name=name + "_add2")([x, y])
    x = layers.LayerNormalization(epsilon=LN_EPSILON, name="final_ln")(x)
    x = layers.GlobalAveragePooling1D(name="avg_pool")(x)
    outputs = layers.Dense(classes, activation="softmax", name="predictions")(x)
    return keras.Model(inputs, outputs, name=f"vit_fashion_mnist_p{patch_size}")


# The synthetic sequence task of transformer_encoder_classifier.
TOKEN_BLOCK = 4                                   # 4x4 pixel blocks of a 28x28 image
TOKEN_VOCAB = 16                                  # intensity levels
TOKEN_SEQUENCE_LENGTH = (28 // TOKEN_BLOCK) ** 2  # 49 tokens per image
TOKEN_CLASSES = 10

ENCODER_DIM = 64
ENCODER_HEADS = 4
ENCODER_FF = 128
ENCODER_BLOCKS = 2


def fashion_mnist_tokens(images_uint8):
    """Fashion-MNIST as token sequences: uint8 images (N, 28, 28) -> int32 (N, 49).

    Each image is cut into a 7x7 grid of 4x4-pixel blocks, read row-major
    (token i = block row i // 7, block column i % 7). A block's token is its
    mean intensity quantized to 16 levels, in integer arithmetic so that every
    implementation agrees exactly:

        S = the sum of the block's 16 uint8 pixel values (0 ... 4080)
        token = min(S // 255, 15)          (= floor(16 * mean / 255), clipped)

    In float32 the same: S summed from the uint8 values is exact, and
    floor(S / 255.0f) is exact too (S / 255 is never within float32 rounding of
    the next integer); do NOT average images already scaled to [0, 1].
    The label is the image's Fashion-MNIST label. Train on the 60000 training
    images, test on the 10000 test images."""
    images = np.asarray(images_uint8)
    if images.dtype != np.uint8 or images.shape[1:] != (28, 28):
        raise ValueError(f"expected uint8 images (N, 28, 28), got {images.dtype} {images.shape}")
    grid = 28 // TOKEN_BLOCK
    blocks = images.astype(np.int32).reshape(-1, grid, TOKEN_BLOCK, grid, TOKEN_BLOCK)
    sums = blocks.sum(axis=(2, 4))
    return np.minimum(sums // 255, TOKEN_VOCAB - 1).reshape(-1, grid * grid).astype(np.int32)


def transformer_encoder_classifier(vocab=TOKEN_VOCAB, sequence_length=TOKEN_SEQUENCE_LENGTH, classes=TOKEN_CLASSES,
                                   dim=ENCODER_DIM, heads=ENCODER_HEADS, ff=ENCODER_FF, blocks=ENCODER_BLOCKS):
    """Token classifier: Embedding(vocab, dim) + PositionEmbedding, `blocks`
    post-norm encoder blocks (the original Transformer's, and the Keras
    "text classification with Transformer" example's, without dropout)

        y = MultiHeadAttention(heads, dim/heads)(x, x); x = LayerNormalization(eps 1e-6)(x + y)
        y = Dense(ff, relu)(x); y = Dense(dim)(y);     x = LayerNormalization(eps 1e-6)(x + y)

    then GlobalAveragePooling1D over the sequence and Dense softmax. Its task:
    fashion_mnist_tokens (49 tokens of vocabulary 16, 10 classes)."""
    inputs = keras.Input(shape=(sequence_length,), dtype="int32", name="input_1")
    x = layers.Embedding(vocab, dim, name="token_embedding")(inputs)
    x = PositionEmbedding(name="position_embedding")(x)
    for index in range(1, blocks + 1):
        name = f"encoder{index}"
        y = layers.MultiHeadAttention(heads, dim // heads, name=name + "_mha")(x, x)
        x = layers.Add(name=name + "_add1")([x, y])
        x = layers.LayerNormalization(epsilon=LN_EPSILON, name=name + "_ln1")(x)
        y = layers.Dense(ff, activation="relu", name=name + "_ffn_dense1")(x)
        y = layers.Dense(dim, name=name + "_ffn_dense2")(y)
        x = layers.Add(name=name + "_add2")([x, y])
        x = layers.LayerNormalization(epsilon=LN_EPSILON, name=name + "_ln2")(x)
    x = layers.GlobalAveragePooling1D(name="avg_pool")(x)
    outputs = layers.Dense(classes, activation="softmax", name="predictions")(x)
    return keras.Model(inputs, outputs, name="transformer_encoder_classifier")


def decoder_language_model(vocabulary=256, sequence_length=64, dim=64, heads=4, feed_forward=256, blocks=2,
                           mlp="gelu", norm="rms", parallel_block=False, causal=True,
                           name="decoder_language_model"):
    """Decoder-only language model: Embedding(vocabulary, dim) + PositionEmbedding,
    `blocks` pre-norm blocks, a final norm and Dense(vocabulary) logits at
    every position (untied from the embedding; no softmax: train with
    from_logits=True). Norms are RMSNormalization (norm="rms") or
    LayerNormalization(eps 1e-6) (norm="layer"). A sequential block (GPT-2,
    Llama) is

        x = x + MultiHeadAttention(heads, dim/heads)(n1(x), n1(x), use_causal_mask=causal)
        x = x + mlp(n2(x))

    a parallel one (GPT-J, PaLM) is x = x + attention(n1(x)) + mlp(n1(x)), one
    Add of three. The MLP is Dense(feed_forward, relu|gelu) then Dense(dim), or
    SwiGLU (mlp="swiglu", no biases): Dense(dim)(silu(x W_gate) * (x W_up))."""
    inputs = keras.Input(shape=(sequence_length,), dtype="int32", name="tokens")
    x = layers.Embedding(vocabulary, dim, name="token_embedding")(inputs)
    x = PositionEmbedding(name="position_embedding")(x)

    def normalize(x, layer_name):
        if norm == "rms":
            return layers.RMSNormalization(name=layer_name)(x)
        return layers.LayerNormalization(epsilon=LN_EPSILON, name=layer_name)(x)

    def feed(x, prefix):
        if mlp == "swiglu":
            gate = layers.Dense(feed_forward, activation="silu", use_bias=False, name=prefix + "_mlp_gate")(x)
            up = layers.Dense(feed_forward, use_bias=False, name=prefix + "_mlp_up")(x)
            product = layers.Multiply(name=prefix + "_mlp_product")([gate, up])
            return layers.Dense(dim, use_bias=False, name=prefix + "_mlp_out")(product)
        y = layers.Dense(feed_forward, activation=mlp, name=prefix + "_mlp_in")(x)
        return layers.Dense(dim, name=prefix + "_mlp_out")(y)

    for index in range(1, blocks + 1):
        prefix = f"block{index}"
        h = normalize(x, prefix + "_norm1")
        attention = layers.MultiHeadAttention(heads, dim // heads, name=prefix + "_attention")(
            h, h, use_causal_mask=causal)
        if parallel_block:
            x = layers.Add(name=prefix + "_add")([x, attention, feed(h, prefix)])
            continue
        x = layers.Add(name=prefix + "_add1")([x, attention])
        x = layers.Add(name=prefix + "_add2")([x, feed(normalize(x, prefix + "_norm2"), prefix)])
    x = normalize(x, "final_norm")
    outputs = layers.Dense(vocabulary, name="logits")(x)
    return keras.Model(inputs, outputs, name=name)


# name -> (builder, keyword arguments): every configuration the goldens cover.
CONFIGURATIONS = {
    "resnet50_224x224x3_1000": (resnet50, {"input_shape": (224, 224, 3), "classes": 1000}),
    "resnet50_32x32x3_10": (resnet50, {"input_shape": (32, 32, 3), "classes": 10}),
    "resnet50_v1_5_224x224x3_1000": (resnet50_v1_5, {"input_shape": (224, 224, 3), "classes": 1000}),
    "resnet18_224x224x3_1000": (resnet18, {"input_shape": (224, 224, 3), "classes": 1000}),
    "resnet_small_28x28": (resnet_small_28x28, {}),
    "vit_fashion_mnist_p4": (vit_fashion_mnist, {"patch_size": 4}),
    "vit_fashion_mnist_p7": (vit_fashion_mnist, {"patch_size": 7}),
    "transformer_encoder_classifier": (transformer_encoder_classifier, {}),
    "decoder_language_model": (decoder_language_model, {}),
    # configs/models/decoder_lm.yaml
    "decoder_lm": (decoder_language_model, {"feed_forward": 192, "mlp": "swiglu", "name": "decoder_lm"}),
    "decoder_lm_parallel_layer_norm_relu": (decoder_language_model, {
        "mlp": "relu", "norm": "layer", "parallel_block": True, "causal": False,
        "name": "decoder_lm_parallel_layer_norm_relu"}),
}


def build(configuration):
    builder, kwargs = CONFIGURATIONS[configuration]
    keras.backend.clear_session()
    return builder(**kwargs)
