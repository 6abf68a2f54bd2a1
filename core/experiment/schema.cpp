// The key tables of an experiment file (see schema.hpp) and the reference
// page rendered from them.
#include <accel/experiment/schema.hpp>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

namespace accel::experiment {

const Field* ValueSpec::field(const std::string& key) const {
  for (const Field& f : fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

const Call* ValueSpec::call(const std::string& name) const {
  for (const Call& c : calls) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

std::string number_text(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{}", static_cast<long long>(value));
  return fmt::format("{}", value);
}

std::string range_text(const ValueSpec& spec) {
  const bool has_min = !std::isinf(spec.min);
  const bool has_max = !std::isinf(spec.max);
  const char* low = spec.min_exclusive ? ">" : ">=";
  if (has_min && has_max) {
    return fmt::format(" in {}{}, {}]", spec.min_exclusive ? "(" : "[", number_text(spec.min), number_text(spec.max));
  }
  if (has_min) return fmt::format(" {} {}", low, number_text(spec.min));
  if (has_max) return fmt::format(" <= {}", number_text(spec.max));
  return "";
}

// ---- builders -------------------------------------------------------------

SpecPtr make(ValueSpec spec) { return std::make_shared<const ValueSpec>(std::move(spec)); }

SpecPtr text() { return make({.form = ValueForm::kText}); }
// Names that become folder and file names (the experiment's: runs/<name>/).
SpecPtr file_name() { return make({.form = ValueForm::kFileName}); }
SpecPtr boolean() { return make({.form = ValueForm::kBool}); }
SpecPtr choice(std::vector<std::string> choices) { return make({.form = ValueForm::kChoice, .choices = std::move(choices)}); }
SpecPtr integer(double min, double max = std::numeric_limits<double>::infinity()) {
  return make({.form = ValueForm::kInteger, .min = min, .max = max});
}
SpecPtr number(double min, double max, bool min_exclusive = false) {
  return make({.form = ValueForm::kNumber, .min = min, .max = max, .min_exclusive = min_exclusive});
}
SpecPtr positive_number() { return number(0, std::numeric_limits<double>::infinity(), true); }
// The bound of arguments that only need to be finite numbers.
constexpr double kLargeNumber = 1e30;
SpecPtr byte_size() { return make({.form = ValueForm::kByteSize}); }
SpecPtr shape() { return make({.form = ValueForm::kShape, .min = 1, .min_items = 1, .max_items = 8}); }
// Reshape's target_shape: sizes, and at most one -1 (checked with the shapes).
SpecPtr target_shape() { return make({.form = ValueForm::kShape, .min = -1, .min_items = 1, .max_items = 8}); }
SpecPtr int_or_shape(std::size_t min_items, std::size_t max_items, double min = 1) {
  return make({.form = ValueForm::kIntOrShape, .min = min, .max = 1 << 30, .min_items = min_items, .max_items = max_items});
}
SpecPtr names(std::size_t min_items, std::size_t max_items = std::numeric_limits<std::size_t>::max()) {
  return make({.form = ValueForm::kNames, .min_items = min_items, .max_items = max_items});
}
SpecPtr named_map(SpecPtr item, std::size_t min_items = 1) {
  return make({.form = ValueForm::kNamedMap, .min_items = min_items, .item = std::move(item)});
}
SpecPtr margins() { return make({.form = ValueForm::kMargins2D, .min = 0, .max = 1 << 30}); }
SpecPtr device_name() { return make({.form = ValueForm::kDeviceName}); }
SpecPtr array_size() { return make({.form = ValueForm::kArraySize, .min = 1, .max = 4096}); }
SpecPtr int_or_choice(double min, std::vector<std::string> choices) {
  return make({.form = ValueForm::kIntOrChoice, .min = min, .max = 1 << 30, .choices = std::move(choices)});
}
SpecPtr bool_or_text() { return make({.form = ValueForm::kBoolOrText}); }
SpecPtr free_map() { return make({.form = ValueForm::kFreeMap}); }
SpecPtr scalar_list() { return make({.form = ValueForm::kScalarList, .min_items = 1}); }
SpecPtr list(SpecPtr item, std::size_t min_items = 0) {
  return make({.form = ValueForm::kList, .min_items = min_items, .item = std::move(item)});
}
SpecPtr mapping(std::vector<Field> fields, std::string shorthand = "", std::vector<std::string> one_of = {}) {
  return make({.form = ValueForm::kMap, .fields = std::move(fields), .shorthand = std::move(shorthand),
               .one_of = std::move(one_of)});
}
SpecPtr calls(std::string kind, std::vector<Call> calls) {
  return make({.form = ValueForm::kCall, .call_kind = std::move(kind), .calls = std::move(calls)});
}
// A number in the range of `number`, or {name: {arguments}} of `objects`.
SpecPtr number_or_calls(const SpecPtr& number, const SpecPtr& objects) {
  ValueSpec spec = *objects;
  spec.form = ValueForm::kNumberOrCall;
  spec.min = number->min;
  spec.max = number->max;
  spec.min_exclusive = number->min_exclusive;
  return make(std::move(spec));
}

Field required(std::string key, SpecPtr spec, std::string doc, std::string example) {
  return {std::move(key), std::move(spec), true, "", std::move(doc), std::move(example)};
}
Field optional(std::string key, SpecPtr spec, std::string default_text, std::string doc, std::string example) {
  return {std::move(key), std::move(spec), false, std::move(default_text), std::move(doc), std::move(example)};
}

template <typename... Groups>
std::vector<Field> join(std::vector<Field> first, const Groups&... rest) {
  (first.insert(first.end(), rest.begin(), rest.end()), ...);
  return first;
}

// ---- Keras names ----------------------------------------------------------

// keras.activations as core/keras/activations.cpp knows them (a test checks
// each one builds).
const std::vector<std::string> kActivations{"linear", "relu",    "sigmoid", "tanh",     "softmax",
                                            "gelu",   "gelu_approximate",   "swish",    "silu",
                                            "softplus", "elu",   "selu",    "leaky_relu"};
// keras.initializers as keras::get_initializer knows them.
const std::vector<std::string> kInitializers{"glorot_uniform", "he_normal", "zeros", "ones", "uniform", "random_uniform"};
const std::vector<std::string> kPaddings{"valid", "same"};
const std::vector<std::string> kDTypes{"float32", "bfloat16", "float16"};

SpecPtr positive_integer() { return integer(1, 1 << 30); }

std::vector<Field> common_layer_arguments() {
  return {optional("name", text(), "layer type and index",
                   "The layer's name (required in model.graph, where other layers refer to it).", "conv1"),
          optional("inputs", names(1), "none",
                   "model.graph only (required there): the input or layer names this layer is called on; a list "
                   "for merge layers and [query, value(, key)] for multi_head_attention.",
                   "[conv1, shortcut]"),
          optional("input_shape", shape(), "from the data",
                   "model.layers only: shape of one example, without the batch axis (first layer only).", "[28, 28, 1]"),
          optional("dtype", choice({"float32", "bfloat16", "float16", "mixed_bfloat16", "mixed_float16"}),
                   "training.mixed_precision",
                   "The layer's dtype policy (Keras's dtype argument): compute and weight dtypes; the mixed_ ones "
                   "compute in 16 bits on float32 weights. float32 keeps a mixed model's last layer in float32.",
                   "float32"),
          optional("trainable", boolean(), "true", "Whether training updates the weights.", "false")};
}

std::vector<Field> weight_arguments(const std::string& kernel = "kernel_initializer") {
  return {optional("activation", choice(kActivations), "linear", "Applied to the output.", "relu"),
          optional("use_bias", boolean(), "true", "Adds a bias vector.", "false"),
          optional(kernel, choice(kInitializers), "glorot_uniform", "Initial kernel values.", "he_normal"),
          optional("bias_initializer", choice(kInitializers), "zeros", "Initial bias values.", "zeros")};
}

Field padding_argument() {
  return optional("padding", choice(kPaddings), "valid", "'valid' (no padding) or 'same' (output = ceil(input / stride)).",
                  "same");
}

Field strides_argument(const std::string& default_text = "1") {
  return optional("strides", int_or_shape(2, 2), default_text, "Step of the window: one integer or [rows, columns].", "2");
}

Field dilation_argument() {
  return optional("dilation_rate", int_or_shape(2, 2), "1", "Spacing of the kernel taps.", "1");
}

Field kernel_size_argument() {
  return required("kernel_size", int_or_shape(2, 2), "Window: one integer or [rows, columns].", "[3, 3]");
}

std::vector<Field> pooling_arguments() {
  return {optional("pool_size", int_or_shape(2, 2), "2", "Window size: one integer or [rows, columns].", "[2, 2]"),
          strides_argument("pool_size"), padding_argument()};
}

std::vector<Field> global_pooling_arguments() {
  return {optional("keepdims", boolean(), "false", "Keeps the pooled axes with size 1.", "true")};
}

Call layer(std::string name, std::string doc, std::vector<Field> arguments) {
  return {std::move(name), join(std::move(arguments), common_layer_arguments()), std::move(doc)};
}

SpecPtr layer_spec() {
  const auto filters = required("filters", positive_integer(), "Output channels.", "32");
  const auto margins_doc = " n (every side), [rows, columns] (each at both ends) or [[top, bottom], [left, right]].";
  return calls(
      "layer",
      {layer("dense", "Densely connected layer on the last axis (Keras accepts any rank >= 2).",
             join({required("units", positive_integer(), "Output size.", "128")}, weight_arguments())),
       layer("conv2d", "2-D convolution over [batch, height, width, channels] (channels last).",
             join({filters, kernel_size_argument(), strides_argument(), padding_argument(), dilation_argument(),
                   optional("groups", positive_integer(), "1",
                            "Grouped convolution: channels and filters split into this many blocks (both divisible).",
                            "2")},
                  weight_arguments())),
       layer("conv1d", "1-D convolution over [batch, steps, channels] (channels last).",
             join({filters, required("kernel_size", positive_integer(), "Window length in steps.", "3"),
                   optional("strides", positive_integer(), "1", "Step of the window.", "2"),
                   optional("padding", choice({"valid", "same", "causal"}), "valid",
                            "'valid', 'same' (output = ceil(steps / stride)) or 'causal' (zeros before the start: "
                            "step t sees steps <= t).",
                            "causal"),
                   optional("dilation_rate", positive_integer(), "1", "Spacing of the kernel taps.", "2"),
                   optional("groups", positive_integer(), "1",
                            "Grouped convolution: channels and filters split into this many blocks (both divisible).",
                            "2")},
                  weight_arguments())),
       layer("depthwise_conv2d", "Each input channel convolved with its own depth_multiplier filters.",
             join({kernel_size_argument(), strides_argument(), padding_argument(),
                   optional("depth_multiplier", positive_integer(), "1", "Filters per input channel.", "1"),
                   dilation_argument()},
                  weight_arguments("depthwise_initializer"))),
       layer("separable_conv2d",
             "A depthwise convolution (strided, dilated) followed by a 1x1 pointwise convolution to filters.",
             join({filters, kernel_size_argument(), strides_argument(), padding_argument(),
                   optional("depth_multiplier", positive_integer(), "1", "Depthwise filters per input channel.", "1"),
                   dilation_argument(),
                   optional("pointwise_initializer", choice(kInitializers), "glorot_uniform",
                            "Initial pointwise kernel values.", "he_normal")},
                  weight_arguments("depthwise_initializer"))),
       layer("conv2d_transpose", "Transposed 2-D convolution (the input gradient of conv2d): upsamples by strides.",
             join({filters, kernel_size_argument(), strides_argument(), padding_argument(),
                   optional("output_padding", int_or_shape(2, 2, 0), "none",
                            "Extra rows and columns after the output, each below its stride.", "1"),
                   dilation_argument()},
                  weight_arguments())),
       layer("max_pooling2d", "Maximum over windows of [batch, height, width, channels].", pooling_arguments()),
       layer("average_pooling2d", "Mean over windows of [batch, height, width, channels].", pooling_arguments()),
       layer("global_average_pooling2d", "Mean over height and width: [b, h, w, c] -> [b, c].", global_pooling_arguments()),
       layer("global_max_pooling2d", "Maximum over height and width: [b, h, w, c] -> [b, c].", global_pooling_arguments()),
       layer("global_average_pooling1d", "Mean over the steps: [b, steps, features] -> [b, features].",
             global_pooling_arguments()),
       layer("global_max_pooling1d", "Maximum over the steps: [b, steps, features] -> [b, features].",
             global_pooling_arguments()),
       layer("flatten", "[batch, d1, d2, ...] -> [batch, d1 * d2 * ...].", {}),
       layer("reshape", "Reshapes each example; the element count must stay the same.",
             {required("target_shape", target_shape(), "New shape without the batch axis; one entry may be -1 (inferred).",
                       "[49, 64]")}),
       layer("permute", "Reorders the axes after the batch axis.",
             {required("dims", shape(), "A permutation of 1..rank-1 (1-based, the batch axis excluded).", "[2, 1]")}),
       layer("repeat_vector", "[batch, features] -> [batch, n, features].",
             {required("n", positive_integer(), "Repetitions.", "3")}),
       layer("zero_padding2d", "Adds rows and columns of zeros around [batch, height, width, channels].",
             {optional("padding", margins(), "1", std::string("Zeros added:") + margins_doc, "[[3, 3], [3, 3]]")}),
       layer("cropping2d", "Removes rows and columns at the borders of [batch, height, width, channels].",
             {optional("cropping", margins(), "0", std::string("Cells removed:") + margins_doc, "[2, 2]")}),
       layer("up_sampling2d", "Repeats rows and columns: [b, h, w, c] -> [b, h * rows, w * columns, c].",
             {optional("size", int_or_shape(2, 2), "2", "Factors: one integer or [rows, columns].", "2"),
              optional("interpolation", choice({"nearest"}), "nearest", "How new cells are filled.", "nearest")}),
       layer("dropout", "Zeroes a fraction of the inputs while training.",
             {required("rate", number(0, 1), "Fraction dropped (below 1).", "0.2"),
              optional("seed", integer(0, 4294967295.0), "none", "Random seed.", "7")}),
       layer("batch_normalization", "Normalizes with batch statistics (moving averages when predicting).",
             {optional("axis", integer(-8, 8), "-1", "The feature axis.", "-1"),
              optional("momentum", number(0, 1), "0.99", "Moving-average momentum.", "0.9"),
              optional("epsilon", positive_number(), "0.001", "Added to the variance.", "1e-5"),
              optional("center", boolean(), "true", "Learns an offset.", "true"),
              optional("scale", boolean(), "true", "Learns a scale.", "true")}),
       layer("layer_normalization", "Normalizes each example over an axis (the last by default).",
             {optional("axis", integer(-8, 8), "-1", "The normalized axis.", "-1"),
              optional("epsilon", positive_number(), "0.001", "Added to the variance.", "1e-6"),
              optional("center", boolean(), "true", "Learns an offset.", "true"),
              optional("scale", boolean(), "true", "Learns a scale.", "true")}),
       layer("rms_normalization",
             "keras.layers.RMSNormalization: x * rsqrt(mean(x^2) + epsilon) * scale over an axis (no mean, no offset).",
             {optional("axis", integer(-8, 8), "-1", "The normalized axis.", "-1"),
              optional("epsilon", positive_number(), "1e-06", "Added to the mean square.", "1e-5")}),
       layer("embedding", "Looks up integer ids: [batch, length] -> [batch, length, output_dim].",
             {required("input_dim", positive_integer(), "Vocabulary size (ids are 0..input_dim-1).", "10000"),
              required("output_dim", positive_integer(), "Vector size.", "64"),
              optional("embeddings_initializer", choice(kInitializers), "uniform", "Initial vectors.", "uniform")}),
       layer("reversed_embedding",
             "Logits tied to an embedding (keras_hub's ReversibleEmbedding, reverse=True): [b, ..., output_dim] @ "
             "its table^T -> [b, ..., input_dim] (model.graph).",
             {required("embedding", text(), "The name of an earlier embedding layer of model.graph, whose table it reads.",
                       "token_embedding")}),
       layer("position_embedding",
             "Adds a learned vector per position (KerasHub's PositionEmbedding): [b, length, dim], same shape out.",
             {optional("initializer", choice(kInitializers), "uniform", "Initial vectors.", "uniform")}),
       layer("activation", "Applies an activation function.",
             {required("activation", choice(kActivations), "The function.", "softmax")}),
       layer("relu", "keras.layers.ReLU: max(x, 0), with an optional slope below the threshold and a cap.",
             {optional("max_value", number(0, kLargeNumber), "none", "The largest value returned.", "6"),
              optional("negative_slope", number(0, kLargeNumber), "0", "Slope below the threshold.", "0.1"),
              optional("threshold", number(-kLargeNumber, kLargeNumber), "0", "Values at or below it are damped.",
                       "0.5")}),
       layer("leaky_relu", "keras.layers.LeakyReLU: x, or negative_slope * x below 0.",
             {optional("negative_slope", number(0, kLargeNumber), "0.3", "Slope below 0.", "0.2")}),
       layer("elu", "keras.layers.ELU: x, or alpha (e^x - 1) below 0.",
             {optional("alpha", number(0, kLargeNumber), "1", "Scale of the negative part.", "0.5")}),
       layer("prelu", "keras.layers.PReLU: x, or alpha * x below 0, alpha learned per element.",
             {optional("alpha_initializer", choice(kInitializers), "zeros", "Initial slopes.", "zeros"),
              optional("shared_axes", shape(), "none",
                       "Axes (1-based, the batch axis excluded) sharing one slope: [1, 2] gives one per channel of an "
                       "image.",
                       "[1, 2]")}),
       layer("softmax", "keras.layers.Softmax along one axis.",
             {optional("axis", integer(-8, 8), "-1", "The axis normalized.", "1")}),
       layer("rescaling", "keras.layers.Rescaling: inputs * scale + offset (in the compute dtype).",
             {required("scale", number(-kLargeNumber, kLargeNumber), "Multiplier.", "0.00392156862745098"),
              optional("offset", number(-kLargeNumber, kLargeNumber), "0", "Added after scaling.", "-1")}),
       layer("add", "Sum of its inputs (model.graph; shapes broadcast).", {}),
       layer("subtract", "inputs[0] - inputs[1] (model.graph; exactly two inputs).", {}),
       layer("multiply", "Product of its inputs (model.graph; shapes broadcast).", {}),
       layer("average", "Mean of its inputs (model.graph; shapes broadcast).", {}),
       layer("maximum", "Elementwise largest of its inputs (model.graph; shapes broadcast).", {}),
       layer("minimum", "Elementwise smallest of its inputs (model.graph; shapes broadcast).", {}),
       layer("concatenate", "Its inputs joined along an axis (model.graph).",
             {optional("axis", integer(-8, 8), "-1", "The joined axis; the others must agree.", "-1")}),
       layer("multi_head_attention",
             "Scaled dot-product attention of a query sequence over a value sequence (model.graph; inputs "
             "[query, value] or [query, value, key], each [batch, length, features]; [x, x] is self-attention).",
             {required("num_heads", positive_integer(), "Attention heads.", "4"),
              required("key_dim", positive_integer(), "Size of each head for query and key.", "16"),
              optional("value_dim", positive_integer(), "key_dim", "Size of each head for value.", "16"),
              optional("dropout", number(0, 1), "0", "Dropout on the attention scores while training (below 1).",
                       "0.1"),
              optional("use_bias", boolean(), "true", "Biases in the projections.", "false"),
              optional("output_shape", positive_integer(), "the query's last axis", "Size of the output's last axis.",
                       "64"),
              optional("kernel_initializer", choice(kInitializers), "glorot_uniform", "Initial kernels.",
                       "glorot_uniform"),
              optional("bias_initializer", choice(kInitializers), "zeros", "Initial biases.", "zeros"),
              optional("use_causal_mask", boolean(), "false",
                       "A call option: position i attends only to positions <= i.", "true"),
              optional("rotary_max_wavelength", number(1, 1e12, true), "none (no rotary positions)",
                       "Rotary positions (RoPE, keras_hub's RotaryEmbedding): the projected query and key rotated by "
                       "their position before the dot product, at wavelengths up to this; key_dim must be even.",
                       "10000")})});
}

std::vector<Field> optimizer_common() {
  return {optional("clipnorm", positive_number(), "none", "Clips each gradient to this norm.", "1.0"),
          optional("clipvalue", positive_number(), "none", "Clips each gradient element to [-v, v].", "0.5"),
          optional("global_clipnorm", positive_number(), "none", "Clips all gradients to this global norm.", "1.0")};
}

// keras.optimizers.schedules, each a function of the optimizer's iteration.
SpecPtr schedule_spec() {
  const auto initial = required("initial_learning_rate", number(0, std::numeric_limits<double>::infinity()),
                                "The rate at step 0.", "0.001");
  const auto decay_steps = required("decay_steps", integer(1, 1e12), "Steps the decay takes.", "10000");
  return calls(
      "learning-rate schedule",
      {{"cosine_decay",
        {initial, decay_steps,
         optional("alpha", number(0, 1), "0", "The floor, as a fraction of the rate decayed from.", "0.1"),
         optional("warmup_target", positive_number(), "none",
                  "Rate reached by a linear warmup from initial_learning_rate; the cosine decays from it.", "0.001"),
         optional("warmup_steps", integer(0, 1e12), "0", "Steps of the warmup (needs warmup_target).", "1000")},
        "Cosine decay, after an optional linear warmup: from * ((1 - alpha) * 0.5 * (1 + cos(pi * t / "
        "decay_steps)) + alpha), t = step - warmup_steps, held at the floor after decay_steps."},
       {"exponential_decay",
        {initial, decay_steps, required("decay_rate", positive_number(), "Factor per decay_steps.", "0.96"),
         optional("staircase", boolean(), "false", "Decays in whole intervals of decay_steps.", "true")},
        "initial_learning_rate * decay_rate ^ (step / decay_steps)."},
       {"piecewise_constant_decay",
        {required("boundaries", list(integer(0, 1e12), 1), "Steps where the rate changes, increasing.", "[1000, 2000]"),
         required("values", list(number(0, std::numeric_limits<double>::infinity()), 2),
                  "One rate more than boundaries: values[i] up to and including boundaries[i].", "[0.01, 0.005, 0.001]")},
        "A constant rate per interval of steps."}});
}

Field learning_rate(std::string default_text) {
  return optional("learning_rate", number_or_calls(positive_number(), schedule_spec()), std::move(default_text),
                  "Step size: a number or a learning-rate schedule.", "{cosine_decay: {initial_learning_rate: 0.001, "
                  "decay_steps: 10000}}");
}

SpecPtr optimizer_spec() {
  const auto epsilon = optional("epsilon", positive_number(), "1e-07", "Added to denominators.", "1e-7");
  const auto beta_1 = optional("beta_1", number(0, 1), "0.9", "Decay of the first moment.", "0.9");
  const auto beta_2 = optional("beta_2", number(0, 1), "0.999", "Decay of the second moment.", "0.999");
  return calls(
      "optimizer",
      {{"sgd",
        join({learning_rate("0.01"), optional("momentum", number(0, 1), "0", "Velocity decay.", "0.9"),
              optional("nesterov", boolean(), "false", "Nesterov momentum.", "true")},
             optimizer_common()),
        "Stochastic gradient descent."},
       {"adam",
        join({learning_rate("0.001"), beta_1, beta_2, epsilon,
              optional("amsgrad", boolean(), "false", "The AMSGrad variant.", "true")},
             optimizer_common()),
        "Adam."},
       {"adamw",
        join({learning_rate("0.001"),
              optional("weight_decay", number(0, 1), "0.004",
                       "Decoupled weight decay: var -= learning_rate * weight_decay * var before each Adam step.",
                       "0.01"),
              beta_1, beta_2, epsilon,
              optional("exclude_from_weight_decay", list(text(), 1), "[]",
                       "Weights not decayed: those whose name (dense/bias:0) contains a match of one of these "
                       "regular expressions, as Keras's exclude_from_weight_decay(var_names=...).",
                       "[bias, layer_normalization]")},
             optimizer_common()),
        "Adam with decoupled weight decay (keras.optimizers.AdamW)."},
       {"rmsprop",
        join({learning_rate("0.001"), optional("rho", number(0, 1), "0.9", "Decay of the squared-gradient average.", "0.9"),
              optional("momentum", number(0, 1), "0", "Momentum.", "0.0"), epsilon,
              optional("centered", boolean(), "false", "Centered variant.", "true")},
             optimizer_common()),
        "RMSprop."},
       {"adagrad",
        join({learning_rate("0.001"),
              optional("initial_accumulator_value", number(0, 1e30), "0.1", "Starting accumulator.", "0.1"), epsilon},
             optimizer_common()),
        "Adagrad."}});
}

SpecPtr loss_spec() {
  const auto from_logits =
      optional("from_logits", boolean(), "false", "Whether the model outputs logits (no softmax/sigmoid).", "true");
  const auto smoothing = optional("label_smoothing", number(0, 1), "0",
                                  "Moves the labels towards uniform: y * (1 - ls) + ls / classes (categorical), "
                                  "y * (1 - ls) + 0.5 * ls (binary).",
                                  "0.1");
  return calls("loss",
               {{"sparse_categorical_crossentropy", {from_logits}, "Integer labels, one output per class."},
                {"categorical_crossentropy", {from_logits, smoothing}, "One-hot labels (data.one_hot: true)."},
                {"binary_crossentropy", {from_logits, smoothing}, "Labels 0/1, one output."},
                {"mean_squared_error", {}, "Regression."},
                {"mse", {}, "Same as mean_squared_error."},
                {"mean_absolute_error", {}, "Regression."},
                {"mae", {}, "Same as mean_absolute_error."},
                {"huber", {optional("delta", positive_number(), "1.0", "Quadratic below, linear above.", "1.0")},
                 "Huber loss."}});
}

SpecPtr metric_spec() {
  const auto k = optional("k", integer(1, 1 << 20), "5", "How many top classes count.", "5");
  return calls("metric",
               {{"accuracy", {}, "Matches the loss: sparse/categorical/binary accuracy."},
                {"sparse_categorical_accuracy", {}, "Integer labels."},
                {"categorical_accuracy", {}, "One-hot labels."},
                {"binary_accuracy", {optional("threshold", number(0, 1), "0.5", "Decision threshold.", "0.5")}, ""},
                {"top_k_categorical_accuracy", {k}, ""},
                {"sparse_top_k_categorical_accuracy", {k}, ""},
                {"mean_squared_error", {}, ""},
                {"mse", {}, ""},
                {"mean_absolute_error", {}, ""},
                {"mae", {}, ""}});
}

SpecPtr callback_spec() {
  const auto monitor = optional("monitor", text(), "loss", "The logged quantity watched.", "val_loss");
  const auto mode = optional("mode", choice({"auto", "min", "max"}), "auto", "Whether lower or higher is better.", "min");
  return calls(
      "callback",
      {{"early_stopping",
        {monitor, mode, optional("min_delta", number(0, 1e30), "0", "Smallest change that counts.", "0.001"),
         optional("patience", integer(0, 1 << 20), "0", "Epochs without improvement before stopping.", "2"),
         optional("restore_best_weights", boolean(), "false", "Restores the best epoch's weights.", "true")},
        "Stops training when the monitored quantity stops improving."},
       {"model_checkpoint",
        {required("filepath", text(),
                  "Where the model is saved; may hold {epoch} and logs ({val_loss:.2f}). Its extension says what is "
                  "written, as Keras 3's: .keras a Keras 3 model archive and .weights.h5 Keras 3 weights (each must "
                  "fit save_weights_only), .safetensors the weights, with the optimizer's state unless weights only.",
                  "checkpoints/{epoch}.weights.h5"),
         monitor, mode, optional("save_best_only", boolean(), "false", "Only when the monitor improves.", "true"),
         optional("save_weights_only", boolean(), "true", "Weights only.", "true")},
        "Saves the model each epoch."},
       {"csv_logger",
        {required("filename", text(), "The CSV file.", "training.csv"),
         optional("separator", text(), ",", "Field separator.", "';'"),
         optional("append", boolean(), "false", "Appends to an existing file.", "true")},
        "Writes each epoch's logs to a CSV file."},
       {"reduce_lr_on_plateau",
        {monitor, mode, optional("factor", number(0, 1, true), "0.1", "Multiplies the learning rate (below 1).", "0.5"),
         optional("patience", integer(0, 1 << 20), "10", "Epochs without improvement.", "2"),
         optional("min_lr", number(0, 1e30), "0", "Lower bound.", "1e-6")},
        "Lowers the learning rate when the monitor stops improving."},
       {"terminate_on_nan", {}, "Stops when the loss is NaN."},
       {"backup_and_restore",
        {required("backup_dir", text(), "Where the backup lives (the chief's, in multi-worker runs).", "backup/quickstart"),
         optional("save_freq", int_or_choice(1, {"epoch"}), "epoch", "Also save every N steps.", "100")},
        "Saves the training state so a restarted run resumes where it stopped."}});
}

SpecPtr resolver_spec() {
  return calls(
      "cluster resolver",
      {{"tf_config", {}, "Reads the TF_CONFIG environment variable."},
       {"slurm",
        {optional("port_base", integer(1024, 65535), "8888", "First port used by the workers.", "8888"),
         optional("tasks_per_node", integer(1, 1024), "from SLURM", "Tasks on each node.", "1")},
        "Reads SLURM's environment (SLURM_PROCID, SLURM_STEP_NODELIST, ...)."},
       {"simple",
        {required("workers", list(text(), 1), "host:port of every worker, in task order.", "[localhost:12345, localhost:12346]"),
         optional("task_id", integer(0, 1 << 20), "0", "This process's index in workers.", "0")},
        "An explicit cluster."}});
}

SpecPtr strategy_spec() {
  return calls(
      "strategy",
      {{"one_device", {optional("device", device_name(), "the default device", "The device used.", "/GPU:0")},
        "Everything on one device."},
       {"mirrored",
        {optional("devices", list(device_name(), 1), "every GPU, else the CPU", "One replica per device.",
                  "[/GPU:0, /GPU:1]"),
         optional("cross_device_ops", choice({"auto", "reduce_to_one_device", "ring", "nccl"}), "auto",
                  "How gradients are all-reduced: auto is reduce_to_one_device; ring is a host ring all-reduce.",
                  "ring")},
        "Synchronous data parallelism on the devices of one machine."},
       {"tpu",
        {optional("tpu", text(), "sim://v4-8", "The TPU cluster resolver's address (sim:// is the emulator).",
                  "sim://v4-8")},
        "Data parallelism on the TPU cores of a slice."},
       {"multi_worker_mirrored",
        {required("resolver", resolver_spec(), "How the workers find each other.", "tf_config"),
         optional("communication", choice({"auto", "ring", "nccl"}), "auto", "Collective implementation (ring = Gloo).",
                  "ring"),
         optional("timeout_seconds", number(0.1, 86400), "30", "Bounds joining the cluster and every collective.", "60")},
        "Synchronous data parallelism across processes and machines."}});
}

std::vector<Field> run_fields() {
  const auto plugin = mapping({required("path", text(), "The plugin library (relative to the experiment file).",
                                        "build/lib/libaccel-plugin-foo.so"),
                               optional("required", boolean(), "true",
                                        "A required plugin that fails to load is an error; an optional one is skipped.",
                                        "false")},
                              "path");
  const auto logical_device =
      mapping({optional("memory_limit", byte_size(), "none", "Memory of this logical device.", "2 GiB")});
  const auto device_options = mapping(
      {required("device", device_name(), "A device type (all of its devices) or one device.", "GPU"),
       optional("memory_growth", boolean(), "false", "Allocate as needed instead of reserving memory up front.", "true"),
       optional("memory_limit", byte_size(), "none", "Cap on the device's memory.", "4 GiB"),
       optional("logical_devices", list(logical_device, 1), "none",
                "Split one physical device into logical devices (tf.config.set_logical_device_configuration).",
                "[{memory_limit: 2 GiB}, {memory_limit: 2 GiB}]")});
  const auto tpu = mapping(
      {optional("preset", text(), "tpu_v4", "A preset name (configs/tpu/<name>.yaml) or a path to a hardware YAML file.",
                "tpu_v4"),
       optional("array", array_size(), "the preset's", "What-if: one MXU of rows x columns per core.", "64x64"),
       optional("dataflow", choice({"ws", "os", "is"}), "the preset's", "What-if: weight-, output- or input-stationary.",
                "os"),
       optional("hardware", free_map(), "none", "What-if: any preset field, nested or dotted (checked against the preset).",
                "{core.mxus: 2, hbm: {bandwidth_bytes_per_s: 2e12}}"),
       optional("timing", choice({"analytical", "cycle_accurate"}), "analytical", "The emulator's timing model.",
                "analytical")},
      "preset");
  const auto graph_input = mapping(
      {required("shape", shape(), "One example's shape, without the batch axis.", "[28, 28, 1]"),
       optional("dtype", choice({"float32", "int32"}), "float32", "The input's type: int32 for token ids.", "int32")});
  const auto graph = mapping(
      {required("inputs", named_map(graph_input),
                "The model's inputs by name (keras.Input(shape, dtype, name)), in order.",
                "{image: {shape: [28, 28, 1]}}"),
       required("layers", list(layer_spec(), 1),
                "The layers, each `keras_name: {name, inputs, arguments}`, listed after the layers they take.",
                "[conv2d: {name: c1, filters: 32, kernel_size: 3, inputs: image}]"),
       required("outputs", names(1), "The output layer (or a list of them): keras.Model(inputs, outputs).",
                "predictions")});
  const auto model = mapping(
      {optional("name", text(), "sequential (layers), model (graph)", "The model's name.", "fashion_cnn"),
       optional("layers", list(layer_spec(), 1), "none",
                "A Sequential model: its layers in order, each `keras_name: {arguments}` (or just `keras_name`).",
                "[flatten: {input_shape: [28, 28]}, dense: {units: 10}]"),
       optional("graph", graph, "none",
                "A Functional model: named inputs, layers that name their inputs, and outputs.",
                "{inputs: {x: {shape: [784]}}, layers: [dense: {name: out, units: 10, inputs: x}], outputs: out}"),
       optional("keras_file", text(), "none",
                "A Keras 3 .keras file (model.save in TensorFlow 2.16+, or accel): its architecture and weights. "
                "Relative paths start at the experiment file's folder.",
                "models/fashion_cnn.keras"),
       optional("initial_weights", text(), "none",
                "Weights loaded into the model before training: a Keras 3 .weights.h5 or an accel .safetensors "
                "file. Relative paths start at the experiment file's folder.",
                "fashion_cnn.weights.h5")},
      "", {"layers", "graph", "keras_file"});
  const auto benchmark = mapping(
      {required("op", choice({"matmul", "conv2d", "add", "relu", "softmax"}), "The op timed.", "matmul"),
       required("sizes", list(int_or_shape(1, 7), 1),
                "Problem sizes: N (square) or [M, N, K] for matmul; [N, H, W, C, K, R, S] for conv2d; elements for others.",
                "[256, 1024, [4096, 4096, 1024]]"),
       optional("dtype", choice(kDTypes), "float32", "Element type.", "bfloat16"),
       optional("repeats", integer(1, 1 << 20), "10", "Timed repetitions (the median is reported).", "20"),
       optional("warmup", integer(0, 1 << 20), "2", "Untimed repetitions first.", "1")});
  const auto data = mapping(
      {required("source", choice({"fashion_mnist", "mnist", "idx", "csv", "synthetic", "text"}),
                "Where examples come from. text: any file as next-byte prediction (a byte-level language model's "
                "task; vocabulary 256).",
                "fashion_mnist"),
       optional("path", text(), "fashion_mnist: $ACCEL_FASHION_MNIST_DIR or /usr/share/datasets/fashion-mnist",
                "fashion_mnist / mnist: the folder of IDX files; csv, text: the file.", "data/train.csv"),
       optional("sequence_length", integer(1, 1 << 20), "64",
                "text: bytes per example (int32 [sequence_length]); its labels are the next byte at every position.",
                "128"),
       optional("held_out", number(0, 0.9, true), "0.1",
                "text: the fraction of the file, at its end, kept out of training and evaluated after it.", "0.05"),
       optional("split", choice({"train", "test"}), "train", "fashion_mnist / mnist: which files.", "test"),
       optional("images", text(), "none", "idx: the images file (required for idx).", "train-images-idx3-ubyte.gz"),
       optional("labels", text(), "none", "idx: the labels file (required for idx).", "train-labels-idx1-ubyte.gz"),
       optional("label_column", text(), "last column", "csv: the label column's name.", "species"),
       optional("input_columns", named_map(names(1)), "every column but the labels, to the one input",
                "csv, for a model.graph of several inputs: the columns each input takes, by input name, in order.",
                "{measures: [sepal_length, sepal_width], ratio: petal_ratio}"),
       optional("label_columns", named_map(text()), "label_column, for every output",
                "csv, for a model.graph of several outputs: the label column of each output, by output name.",
                "{species: species, size_class: size}"),
       optional("header", boolean(), "true", "csv: the first row names the columns.", "false"),
       optional("shape", shape(), "none", "synthetic: shape of one example (required for synthetic).", "[32, 32, 3]"),
       optional("classes", integer(1, 1 << 24), "10", "synthetic: label values 0..classes-1.", "100"),
       optional("samples", integer(1, 1e12), "1024", "synthetic: examples per epoch.", "60000"),
       optional("tokens", choice({"fashion_mnist_blocks"}), "none",
                "fashion_mnist / mnist: the images as token sequences instead: int32 [49], a 7x7 grid of 4x4-pixel "
                "blocks read row-major, each min(sum of its pixels / 255, 15) (vocabulary 16; docs/model-zoo.md).",
                "fashion_mnist_blocks"),
       optional("normalize", boolean(), "true", "Scales 8-bit images to [0, 1].", "true"),
       optional("one_hot", boolean(), "false", "One-hot labels (for categorical_crossentropy).", "true"),
       optional("take", integer(1, 1e12), "all", "Uses only the first N examples.", "6000"),
       optional("batch", integer(1, 1 << 24), "32", "Global batch size (split across replicas).", "64"),
       optional("drop_remainder", boolean(), "false", "Drops a last, smaller batch.", "true"),
       optional("shuffle", int_or_choice(1, {"true", "false"}), "true",
                "Shuffle buffer size, true (whole dataset) or false.", "10000"),
       optional("cache", bool_or_text(), "false", "Caches examples after the first epoch: true (memory) or a file path.",
                "true"),
       optional("prefetch", int_or_choice(1, {"autotune", "false"}), "autotune", "Batches prepared ahead.", "2")});
  const auto training = mapping(
      {required("optimizer", optimizer_spec(), "The optimizer and its arguments.", "{adam: {learning_rate: 0.001}}"),
       required("loss", loss_spec(), "The loss and its arguments.", "sparse_categorical_crossentropy"),
       optional("metrics", list(metric_spec()), "[]", "Metrics reported each epoch.", "[accuracy]"),
       optional("epochs", integer(1, 1 << 20), "1", "Passes over the data.", "5"),
       optional("steps_per_epoch", integer(1, 1e12), "the whole dataset", "Batches per epoch.", "100"),
       optional("validation_split", number(0, 1), "0", "Fraction of the examples held out for validation (below 1).", "0.1"),
       optional("evaluation_steps", integer(1, 1e12), "the whole test split",
                "Batches of the test split evaluated after training (Keras's evaluate(steps=...)).", "20"),
       optional("callbacks", list(callback_spec()), "[]", "Keras callbacks.", "[{early_stopping: {patience: 2}}]"),
       optional("seed", integer(0, 4294967295.0), "none", "Seeds weights, shuffling and dropout for repeatable runs.",
                "42"),
       optional("mixed_precision", choice({"float32", "mixed_bfloat16", "mixed_float16", "bfloat16", "float16"}),
                "float32",
                "Keras's global dtype policy (keras.mixed_precision.set_global_policy) for every layer without a "
                "dtype of its own: mixed_bfloat16 (TPUs) and mixed_float16 (GPUs; the optimizer then scales the "
                "loss, as Keras's LossScaleOptimizer) compute in 16 bits and keep float32 weights; losses and "
                "normalization statistics stay float32.",
                "mixed_bfloat16"),
       optional("jit_compile", choice({"true", "false", "auto"}), "auto",
                "Keras's jit_compile. true: fit, evaluate and predict run as traced, fused graphs "
                "(docs/compiled-steps.md); false: eagerly, op by op (for debugging). auto: compiled on the emulated "
                "TPU (TensorFlow always compiles for TPUs) and on the CPU and GPU, where compiled steps are never "
                "slower than eager by design; today auto means compiled everywhere.",
                "false"),
       optional("remat", choice({"none", "full", "minimal"}), "none",
                "Rematerialization of the compiled train step (MaxText's remat_policy): full keeps only each layer "
                "call's inputs for the backward pass and recomputes the rest there; minimal keeps the matmul and "
                "convolution outputs too. Lower peak memory for more compute; the same gradients to rounding. "
                "Applies with jit_compile.",
                "full"),
       optional("remat_blocks", text(), "each layer call",
                "The unit remat recomputes: a regular expression whose first group names a layer's block; the "
                "layers of one block are one unit, of which only what enters it is kept (MaxText remats each "
                "decoder layer whole). Layers it does not match stay units of their own.",
                "'^(layer\\d+)_'")});
  const auto distribution = mapping({required(
      "mesh", named_map(positive_integer()),
      "The mesh's axes and sizes, row-major over the devices (the last fastest): fsdp (the batch and every weight "
      "split over it) or data (the batch only), and optionally tensor (heads, MLP units and vocabulary split).",
      "{fsdp: 4}"),
      optional("async_collectives", list(choice({"all_gather", "reduce_scatter", "all_reduce", "all_to_all"})),
               "[all_gather]",
               "Pod estimates: the collectives that overlap the ops that do not read them, as XLA's flags make "
               "them (the default is what MaxText's published runs set); the others block the chip. "
               "--async-collectives overrides it.",
               "[all_gather, reduce_scatter]"),
      optional("scan_layers", boolean(), "true",
               "Pod estimates: the blocks of training.remat_blocks run as a loop, one per iteration, as MaxText's "
               "scan_layers compiles them (a collective overlaps only its own iteration's ops). --scan-layers "
               "overrides it.",
               "false")});
  const auto output = mapping(
      {optional("directory", text(), "runs/<name>", "Where results are written: a <UTC timestamp> folder inside it.",
                "results/quickstart"),
       optional("trace", boolean(), "true", "Writes a Chrome trace (opens in Perfetto) per run.", "false"),
       optional("report", list(choice({"markdown", "json", "csv"})), "[markdown, json]", "Report formats.",
                "[markdown]")});
  return {
      optional("plugins", list(plugin), "[]", "Plugins loaded before discovery: a path, or {path, required}.",
               "[{path: plugins/libaccel-plugin-foo.so, required: false}]"),
      optional("device", device_name(), "the default placement (GPU, then TPU, then CPU)",
               "The device the run places its ops on.", "/TPU:0"),
      optional("devices", list(device_options), "[]", "Physical-device options, set before the runtime starts.",
               "[{device: GPU, memory_growth: true}]"),
      optional("strategy", strategy_spec(), "none (the default device)", "A tf.distribute strategy.",
               "{mirrored: {devices: [/CPU:0, /CPU:1]}}"),
      optional("tpu", tpu, "tpu_v4", "The emulated TPU system (used by TPU devices).", "{preset: tpu_v4, array: 64x64}"),
      optional("distribution", distribution, "none",
               "keras.distribution: the model sharded over a mesh of the run's devices (fit traces, partitions and "
               "runs the step on every device of the mesh; compiled steps only). `accel tpu estimate --model` "
               "lays the same mesh on an emulated pod.",
               "{mesh: {fsdp: 2, tensor: 2}}"),
      optional("model", model, "none",
               "A Keras model, Sequential (layers) or Functional (graph), with data and training; or use benchmark.",
               "{layers: [...]}"),
      optional("benchmark", benchmark, "none", "An op benchmark instead of a model.", "{op: matmul, sizes: [1024]}"),
      optional("data", data, "none", "The input pipeline (required with model).", "{source: fashion_mnist, batch: 32}"),
      optional("training", training, "none", "How the model is trained (required with model).",
               "{optimizer: adam, loss: sparse_categorical_crossentropy}"),
      optional("output", output, "{directory: runs/<name>}", "What is written and where.", "{trace: false}")};
}

ValueSpec build_run_spec() {
  return {.form = ValueForm::kMap, .fields = run_fields()};
}

ValueSpec build_experiment_spec() {
  std::vector<Field> compare_fields =
      join({required("name", file_name(), "The run's name (unique).", "tpu_v4"),
            optional("description", text(), "none", "What the run shows.", "TPU v4, emulated")},
           run_fields());
  const auto sweep = mapping(
      {required("parameter", text(), "A dotted key of a run, as for --set.", "tpu.array"),
       required("values", scalar_list(), "One run per value.", "[32x32, 64x64, 128x128]"),
       optional("runs", list(text(), 1), "every run", "The compare runs swept (the others run once).", "[tpu_v4]")});
  return {.form = ValueForm::kMap,
          .fields = join({required("name", file_name(), "The experiment's name (the results go to runs/<name>/).",
                                   "quickstart"),
                          optional("description", text(), "none", "What the experiment is for.", "CNN on Fashion-MNIST")},
                         run_fields(),
                         std::vector<Field>{
                             optional("compare", list(mapping(compare_fields), 1), "none",
                                      "Named runs, each the base above with its own keys merged in (mappings merge "
                                      "key by key, lists and values replace).",
                                      "[{name: cpu, device: /CPU:0}, {name: gpu, device: /GPU:0}]"),
                             optional("sweep", sweep, "none", "Repeats runs for each value of one parameter.",
                                      "{parameter: data.batch, values: [32, 64, 128]}")})};
}

// ---- reference page --------------------------------------------------------

// The rules checked in run_reader.cpp, layer_shape_inference.cpp,
// tpu_preset_lookup.cpp, compare_runs.cpp and sweep.cpp.
constexpr const char* kRulesAcrossKeys = R"(
## Rules that span several keys

- **Runs.** Without `compare`, the file is one run named `default`. With it, each entry is a
  run: the top-level keys merged with the entry's (mappings merge key by key, the same Keras
  object merges its arguments, anything else is replaced). Run names are unique.
- **Sweep.** `parameter` is a dotted key of a run (as for `--set`); each swept run becomes one
  run per value, named `<run>[<last key>=<value>]` (`array=64x64` without compare runs). Each
  value is checked like a written one.
- **`--set key=value`** (repeatable) replaces or adds one key before anything is checked.
  Segments are mapping keys, list indexes (`model.layers.0.dense.units=64`) or compare run
  names (`compare.gpu.device=/GPU:1`); the value is YAML. Errors in it are reported as
  `override 'key=value':1:COLUMN: ...`.
- **Work.** A run has `model` (then `data` and `training` are required) or `benchmark` (then
  neither is allowed). A model is `model.layers` (Sequential) or `model.graph` (Functional),
  exactly one; a compare run's one replaces the base's other. Benchmark sizes: matmul `N` or `[M, N, K]`; conv2d
  `[N, H, W, C, K, R, S]`; add/relu one element count; softmax `N` or `[rows, columns]`.
- **Data sources.** `path`, `split` and `tokens` apply to fashion_mnist / mnist (`path` a folder);
  `images` and `labels` (required) to idx; `path` (required), `label_column`, `header`,
  `input_columns`, `label_columns` to csv; `shape` (required for one input), `classes`,
  `samples` to synthetic; `path` (required), `sequence_length` and `held_out` to text. Paths are
  relative to the experiment file and must exist. fashion_mnist and mnist examples are 28x28
  with 10 classes; with `tokens: fashion_mnist_blocks` they are int32 sequences of 49 tokens in
  0..15. text examples are int32 sequences of `sequence_length` bytes labelled with the next
  byte at every position, so the model outputs [batch, sequence_length, 256]; the last
  `held_out` of the file is the evaluation split.
- **Shapes.** The first layer's `input_shape` (or else the data's example shape) is walked
  through the layers with Keras' rules: dense maps the last axis of any rank >= 2; conv2d and
  the 2-D poolings need rank 4 (`[batch, height, width, channels]`), and a `valid` window must
  fit; flatten needs rank >= 2; reshape keeps the element count. An `input_shape` with the same
  element count as the data's examples is accepted (the data is reshaped), another one is an
  error. `input_shape` belongs on the first layer only. When neither is known (idx, csv without
  `input_shape`) shapes are checked when the data is read. A model.graph's shapes start from its
  inputs' declared shapes and go through the graph: merge layers broadcast their inputs (an add
  of [None, 28, 28, 32] and [None, 14, 14, 64] is an error at the second name), concatenate's
  inputs agree but on `axis`, multi_head_attention takes rank-3 [query, value(, key)]. A single
  graph input must hold as many values as the data's examples, and be int32 exactly when the
  data gives tokens.
- **Model graphs.** Every layer of `model.graph.layers` has a `name` and `inputs`: the names of
  graph inputs or of layers listed before it (as Keras calls them), one name for a one-input
  layer, a list for add, subtract (two), multiply, average, maximum, minimum, concatenate and
  multi_head_attention (`[query, value]` or `[query, value, key]`; `[x, x]` is self-attention).
  Names are unique among inputs and layers. A name listed later, a cycle, an unknown name, and
  a layer or input that no output depends on (Keras drops those silently; here it is most
  likely a misspelt name) are errors at the name. `input_shape` belongs to `model.layers`, and
  `inputs` and the list-input layers to `model.graph`.
- **Several inputs and outputs.** A graph of several inputs trains on `synthetic` data (one
  random tensor per input, of the input's declared shape; an int32 input takes token ids below
  the `input_dim` of the embedding it feeds; `data.shape` does not apply)
  or on `csv` with `data.input_columns` naming every input's columns (its declared shape must
  hold that many values; float32 inputs only). fashion_mnist, mnist and idx give one input (the
  image) and are an error for several. Several outputs each get a loss (the one `training.loss`,
  summed, as Keras): `synthetic` draws labels per output, `csv` reads `data.label_columns`
  (every output named) or else `label_column` for each, and the image sources give each output
  the image's label (auxiliary heads). Names in `input_columns` / `label_columns` that are not
  the graph's inputs / outputs are errors at the name.
- **Loss and labels.** sparse_categorical_crossentropy and categorical_crossentropy need a
  `[batch, classes]` output whose size equals the data's classes when known;
  categorical_crossentropy needs `data.one_hot: true` and sparse the opposite;
  binary_crossentropy needs one output unit and two classes.
- **Devices.** Device names follow TensorFlow (`/job:localhost/replica:0/task:0/device:GPU:0`,
  `/GPU:0`, `GPU:0`); a bare type (`GPU`) means every device of that type in `devices`. A type
  that neither accel (CPU, GPU, TPU) nor a loaded plugin knows is an error. A known type with no
  device here (no GPU on this machine) is not an error: the run is kept and reported as skipped
  with the reason. Finding which types exist loads the plugins once (milliseconds); nothing is
  initialized beyond discovery. `memory_growth` and `logical_devices` exclude each other.
- **TPU.** A run that uses a TPU device or the tpu strategy gets `tpu` (default `tpu_v4`).
  `preset` is a name searched in $ACCEL_TPU_CONFIG_DIR, the experiment's folder and its `tpu/`
  folder, the source tree's `configs/tpu`, and the install location; or a path. Every
  `hardware` key must exist in the preset, except the fields the timing library defaults
  (`core.accumulator_bytes`, `interconnect.link_latency_s`, `interconnect.wraparound_axis`,
  `interconnect.dcn_bandwidth_bytes_per_s`, `interconnect.dcn_latency_s`).
  `accel validate` also runs the TPU timing library's full hardware check on the result
  (e.g. an MXU tile must fit the on-chip buffer).
- **Strategies.** `mirrored.devices` and `one_device.device` must name known device types; a
  mirrored device listed twice is an error. The tpu strategy initializes the emulated slice its
  `tpu` names (`sim://v4-8`: the tpu_v4 preset with 4 chips, 8 TensorCores), one replica per
  TensorCore; `tpu.preset`, when written, must be that slice's preset. multi_worker_mirrored runs
  one process per worker, each running `accel run` on the same file (e.g. under
  `accel launch --workers N` with `resolver: tf_config`); the chief writes the results, the
  other workers write nothing. `data.batch` is the global batch, split across all replicas.
- **Learning rates.** Every optimizer's `learning_rate` is a number or one learning-rate schedule
  (`{cosine_decay: {initial_learning_rate: 0.0, decay_steps: 10000, warmup_target: 0.001,
  warmup_steps: 500}}`), evaluated at each training step (compiled steps included).
  cosine_decay's `warmup_steps` needs `warmup_target`; piecewise_constant_decay's `boundaries`
  increase strictly and `values` has one rate more. A schedule and `reduce_lr_on_plateau`
  exclude each other (the callback would replace the schedule). adamw's
  `exclude_from_weight_decay` lists regular expressions searched in the weight names
  (`dense/bias:0`), e.g. `[bias, layer_normalization]`.
- **Callbacks.** Relative paths (`filepath`, `filename`, `backup_dir`) are relative to the
  working directory, as in Keras; in multi-worker runs only the chief keeps the files.
- **Plugins.** A required plugin's file must exist; an optional one may be missing.
- **Limits.** At most 4 MiB, 64 levels of nesting and 200000 nodes after expanding aliases
  (alias bombs); duplicate keys, anchor loops, YAML tags, non-text keys, tabs used as
  indentation, invalid UTF-8 and control bytes are errors. `<<: *anchor` merge keys work.
- **Exit codes.** `accel validate` exits 0 when the file is valid (printing its runs and any
  that will be skipped) and 2 with one line `file:line:column: problem; expected ...` on stderr
  otherwise. Nothing is run or written.
)";

std::string type_text(const ValueSpec& spec) {
  switch (spec.form) {
    case ValueForm::kMap: return spec.shorthand.empty() ? "mapping" : "mapping or " + spec.shorthand;
    case ValueForm::kList:
      if (spec.item->form == ValueForm::kCall) return "list of " + spec.item->call_kind + "s";
      if (spec.item->form == ValueForm::kMap) return "list of mappings";
      return "list of " + type_text(*spec.item);
    case ValueForm::kNamedMap:
      return "mapping of names to " + (spec.item->form == ValueForm::kMap ? std::string("mappings") : type_text(*spec.item));
    case ValueForm::kCall: return spec.call_kind + " (name or {name: {arguments}})";
    case ValueForm::kNumberOrCall: return "number" + range_text(spec) + " or " + spec.call_kind + " ({name: {arguments}})";
    default: return describe_expected(spec);
  }
}

std::string escape_cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void render_fields(std::string& out, const std::vector<Field>& fields) {
  out += "| key | type | required / default | meaning | example |\n|---|---|---|---|---|\n";
  for (const Field& f : fields) {
    out += fmt::format("| `{}` | {} | {} | {} | `{}` |\n", f.key, escape_cell(type_text(*f.spec)),
                       f.required ? "**required**" : escape_cell(f.default_text), escape_cell(f.doc),
                       escape_cell(f.example));
  }
}

void render_calls(std::string& out, const ValueSpec& spec, std::set<std::string>& done) {
  if (!done.insert(spec.call_kind).second) return;
  out += fmt::format("\n### {}s\n\n", spec.call_kind);
  for (const Call& c : spec.calls) {
    std::vector<std::string> names;
    for (const Field& f : c.arguments) {
      names.push_back(fmt::format("`{}`{} ({}{})", f.key, f.required ? " **required**" : "", type_text(*f.spec),
                                  f.required ? "" : ", default " + f.default_text));
    }
    std::string arguments;
    for (const auto& n : names) arguments += (arguments.empty() ? "" : "; ") + n;
    out += fmt::format("- **`{}`**{}{}\n", c.name, c.doc.empty() ? "" : ": " + c.doc,
                       arguments.empty() ? "" : "\n  Arguments: " + escape_cell(arguments) + ".");
  }
  for (const Call& c : spec.calls) {
    for (const Field& f : c.arguments) {
      if (f.spec->form == ValueForm::kCall || f.spec->form == ValueForm::kNumberOrCall) render_calls(out, *f.spec, done);
    }
  }
}

// The spec inside a list or a mapping of names (its entries), else `spec`.
const ValueSpec& entry_spec(const ValueSpec& spec) {
  if (spec.form == ValueForm::kList || spec.form == ValueForm::kNamedMap) return *spec.item;
  return spec;
}

// A section's table, its Keras objects, then each nested mapping's table
// ("### `model.graph`").
void render_section(std::string& out, const std::string& title, const ValueSpec& spec, std::set<std::string>& done,
                    bool nested = false) {
  out += fmt::format("\n{} `{}`\n\n", nested ? "###" : "##", title);
  if (!spec.one_of.empty()) out += fmt::format("Exactly one of {}.\n\n", quoted_list(spec.one_of));
  render_fields(out, spec.fields);
  for (const Field& f : spec.fields) {
    const ValueSpec& inner = entry_spec(*f.spec);
    if (inner.form == ValueForm::kCall) render_calls(out, inner, done);
  }
  for (const Field& f : spec.fields) {
    const ValueSpec& inner = entry_spec(*f.spec);
    if (inner.form != ValueForm::kMap || inner.fields.empty()) continue;
    const bool named = f.spec->form == ValueForm::kNamedMap;  // model.graph.inputs.<name>
    render_section(out, title + "." + f.key + (named ? ".<name>" : ""), inner, done, true);
  }
}

}  // namespace

std::string describe_expected(const ValueSpec& spec) {
  switch (spec.form) {
    case ValueForm::kText: return "a text value";
    case ValueForm::kFileName:
      return fmt::format("a name usable as a file name: at most {} bytes, no '/', not '.' or '..', no control characters",
                         kMaxFileNameBytes);
    case ValueForm::kChoice: return "one of " + quoted_list(spec.choices);
    case ValueForm::kBool: return "true or false";
    case ValueForm::kInteger: return "an integer" + range_text(spec);
    case ValueForm::kNumber: return "a number" + range_text(spec);
    case ValueForm::kByteSize: return "a size with a unit, e.g. 512 MiB or 2 GiB";
    case ValueForm::kIntOrShape: {
      const char* kind = spec.min < 1 ? "non-negative" : "positive";
      if (spec.min_items == spec.max_items) {
        return fmt::format("a {} integer or a list of {} {} integers", kind, spec.max_items, kind);
      }
      return fmt::format("a {} integer or a list of {} to {} {} integers", kind, spec.min_items, spec.max_items, kind);
    }
    case ValueForm::kShape:
      if (spec.min < 1) return "a list of positive integers with at most one -1 (inferred), e.g. [49, -1]";
      return "a list of positive integers, e.g. [28, 28, 1]";
    case ValueForm::kNames:
      if (spec.max_items != std::numeric_limits<std::size_t>::max()) {
        return fmt::format("a name or a list of {} to {} names", spec.min_items, spec.max_items);
      }
      return "a name or a list of names";
    case ValueForm::kNamedMap: return "a mapping of names, each to " + describe_expected(*spec.item);
    case ValueForm::kMargins2D:
      return "a non-negative integer, [rows, columns] or [[top, bottom], [left, right]] of non-negative integers";
    case ValueForm::kDeviceName: return "a device name such as /CPU:0, /GPU:1 or a device type such as GPU";
    case ValueForm::kArraySize: return "rows x columns, e.g. 128x128, each in [1, 4096]";
    case ValueForm::kIntOrChoice: return "an integer" + range_text(spec) + " or " + quoted_list(spec.choices);
    case ValueForm::kBoolOrText: return "true, false or a file path";
    case ValueForm::kMap: {
      std::vector<std::string> keys;
      for (const Field& f : spec.fields) keys.push_back(f.key);
      return "a mapping with keys " + quoted_list(keys);
    }
    case ValueForm::kList:
      return spec.min_items > 0 ? fmt::format("a list of at least {} entr{}", spec.min_items, spec.min_items == 1 ? "y" : "ies")
                                : "a list";
    case ValueForm::kCall: {
      std::vector<std::string> names;
      for (const Call& c : spec.calls) names.push_back(c.name);
      const bool vowel = std::string("aeiou").find(spec.call_kind.front()) != std::string::npos;
      return (vowel ? "an " : "a ") + spec.call_kind + ": " + quoted_list(names);
    }
    case ValueForm::kNumberOrCall: {
      ValueSpec objects = spec;
      objects.form = ValueForm::kCall;
      return "a number" + range_text(spec) + " or " + describe_expected(objects);
    }
    case ValueForm::kFreeMap: return "a mapping";
    case ValueForm::kScalarList: return "a list of values";
  }
  return "";
}

const ValueSpec& experiment_spec() {
  static const ValueSpec spec = build_experiment_spec();
  return spec;
}

const ValueSpec& run_spec() {
  static const ValueSpec spec = build_run_spec();
  return spec;
}

std::string render_schema_reference() {
  const ValueSpec& top = experiment_spec();
  std::string out =
      "# Experiment YAML reference\n\n"
      "<!-- Generated from core/experiment/schema.cpp by `accel validate --print-schema`; "
      "tests/experiment checks it is current. Edit the tables there, not here. -->\n\n"
      "An experiment file describes one or more runs of a model (or an op benchmark) on accel's\n"
      "backends. `accel validate FILE [--set key=value]...` checks a file without running anything:\n"
      "every problem is one line `file:line:column: what is wrong; expected what` and exit code 2.\n"
      "Rules that span several keys are at the end of this page.\n";
  out += "\nForms: a *layer*, *optimizer*, *loss*, *metric*, *callback*, *strategy* or *cluster resolver* is\n"
         "written as its Keras name (`adam`) or as a one-key mapping of the name to its keyword arguments\n"
         "(`{adam: {learning_rate: 0.001}}`). A mapping marked \"or KEY\" also accepts a plain value\n"
         "meaning `{KEY: value}`.\n";
  std::set<std::string> done;
  out += "\n## Top level\n\n";
  render_fields(out, top.fields);
  for (const Field& f : top.fields) {
    const ValueSpec* inner = f.spec.get();
    if (inner->form == ValueForm::kList && inner->item->form == ValueForm::kMap) inner = inner->item.get();
    if (inner->form == ValueForm::kCall) {
      out += fmt::format("\n## `{}`\n", f.key);
      render_calls(out, *inner, done);
      continue;
    }
    if (inner->form != ValueForm::kMap || f.key == "compare") continue;
    render_section(out, f.key, *inner, done);
  }
  out += kRulesAcrossKeys;
  return out;
}

}  // namespace accel::experiment
