// MultiHeadAttention: the weights (Keras 2's EinsumDense kernels), the shape
// checks, the masks and the attention itself. Every step is a primitive op
// (reshape, matmul, transpose, softmax...), so the tape differentiates it.
#include <accel/keras/layers/multi_head_attention.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <cmath>

namespace accel::keras {
namespace {

LayerShape shape_of(const Tensor& tensor) { return LayerShape(tensor.shape().dims().begin(), tensor.shape().dims().end()); }

// Two sizes of one axis agree when either is unknown or they are equal.
bool compatible(int64_t a, int64_t b) { return a == kUnknownDim || b == kUnknownDim || a == b; }

// Keras's _large_compatible_negative for float32: what a masked logit gets added.
// Keras's _large_negative_number: -1e9, or -3e4 where float16 would overflow.
double masked_logit(DType dtype) { return dtype == DType::kFloat16 ? -3e4 : -1e9; }

}  // namespace

MultiHeadAttention::MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options)
    : Layer("MultiHeadAttention", options.name),
      num_heads_(num_heads),
      key_dim_(key_dim),
      value_dim_(options.value_dim.value_or(key_dim)),
      options_(std::move(options)) {
  if (num_heads_ <= 0 || key_dim_ <= 0 || value_dim_ <= 0) {
    throw InvalidArgumentError(where() + "num_heads, key_dim and value_dim must be positive, got " +
                               std::to_string(num_heads_) + ", " + std::to_string(key_dim_) + ", " +
                               std::to_string(value_dim_));
  }
  if (options_.output_shape && *options_.output_shape <= 0) {
    throw InvalidArgumentError(where() + "output_shape must be positive, got " + std::to_string(*options_.output_shape));
  }
  if (!(options_.dropout >= 0.0 && options_.dropout < 1.0)) {
    throw InvalidArgumentError(where() + "dropout must be in [0, 1), got " + std::to_string(options_.dropout));
  }
  if (options_.rotary_max_wavelength) {
    if (!(*options_.rotary_max_wavelength > 1.0) || !std::isfinite(*options_.rotary_max_wavelength)) {
      throw InvalidArgumentError(where() + "rotary_max_wavelength must be a finite number above 1, got " +
                                 std::to_string(*options_.rotary_max_wavelength));
    }
    if (key_dim_ % 2 != 0) {
      throw InvalidArgumentError(where() + "rotary positions rotate pairs of features: key_dim must be even, got " +
                                 std::to_string(key_dim_));
    }
  }
  // Named after this layer so that it takes no name of Keras's counters.
  if (options_.dropout > 0.0) dropout_ = std::make_unique<Dropout>(options_.dropout, DropoutOptions{.name = name() + "_dropout"});
}

std::string MultiHeadAttention::where() const { return "MultiHeadAttention '" + name() + "': "; }

LayerShape MultiHeadAttention::compute_output_shape(const LayerShape& input_shape) const {
  throw InvalidArgumentError(where() + "call it on a query and a value (a list of at least 2 inputs), got one input " +
                             format_layer_shape(input_shape));
}

std::vector<LayerShape> MultiHeadAttention::compute_output_shapes(const std::vector<LayerShape>& input_shapes) const {
  if (input_shapes.size() < 2 || input_shapes.size() > 4) {
    throw InvalidArgumentError(where() + "expects [query, value(, key(, attention_mask))], got " +
                               std::to_string(input_shapes.size()) + " inputs " + format_layer_shapes(input_shapes));
  }
  const LayerShape& query = input_shapes[0];
  const LayerShape& value = input_shapes[1];
  const LayerShape& key = input_shapes.size() > 2 ? input_shapes[2] : value;
  for (const LayerShape* shape : {&query, &value, &key}) {
    if (shape->size() != 3) {
      throw InvalidArgumentError(where() + "query, value and key must be (batch, sequence, features), got " +
                                 format_layer_shapes(input_shapes));
    }
  }
  int64_t batch = kUnknownDim;
  for (const LayerShape* shape : {&query, &value, &key}) {
    if (!compatible(batch, (*shape)[0])) {
      throw InvalidArgumentError(where() + "query, value and key have different batch sizes: " + format_layer_shapes(input_shapes));
    }
    if ((*shape)[0] != kUnknownDim) batch = (*shape)[0];
  }
  if (!compatible(key[1], value[1])) {
    throw InvalidArgumentError(where() + "key and value must have the same sequence length, got " +
                               format_layer_shapes(input_shapes));
  }
  const int64_t target = query[1];
  const int64_t source = value[1] != kUnknownDim ? value[1] : key[1];
  if (query_.kernel.defined()) {
    if (!compatible(query[2], query_.kernel.shape()[0]) || !compatible(value[2], value_.kernel.shape()[0]) ||
        !compatible(key[2], key_.kernel.shape()[0])) {
      throw InvalidArgumentError(where() + "was built for query, value and key features " +
                                 std::to_string(query_.kernel.shape()[0]) + ", " +
                                 std::to_string(value_.kernel.shape()[0]) + ", " +
                                 std::to_string(key_.kernel.shape()[0]) + ", got " + format_layer_shapes(input_shapes));
    }
  }
  if (input_shapes.size() == 4) {
    const LayerShape& mask = input_shapes[3];
    const LayerShape expected{batch, target, source};
    bool broadcasts = mask.size() == 3;
    for (size_t axis = 0; broadcasts && axis < 3; ++axis) broadcasts = mask[axis] == 1 || compatible(mask[axis], expected[axis]);
    if (!broadcasts) {
      throw InvalidArgumentError(where() + "attention_mask " + format_layer_shape(mask) + " must be (batch, T, S) = " +
                                 format_layer_shape(expected) + " or broadcast to it");
    }
  }
  const int64_t features = options_.output_shape.value_or(query[2]);
  std::vector<LayerShape> outputs{{batch, target, features}};
  if (list_call_settings_.return_attention_scores) outputs.push_back({batch, num_heads_, target, source});
  return outputs;
}

std::vector<DType> MultiHeadAttention::compute_output_dtypes(const std::vector<DType>&) const {
  return std::vector<DType>(list_call_settings_.return_attention_scores ? 2 : 1, compute_dtype());
}

MultiHeadAttention::Projection MultiHeadAttention::add_projection(const std::string& prefix, const Shape& kernel_shape,
                                                                  const Shape& bias_shape) {
  Projection projection;
  projection.kernel = add_weight(prefix + "/kernel", kernel_shape, *options_.kernel_initializer);
  if (options_.use_bias) projection.bias = add_weight(prefix + "/bias", bias_shape, *options_.bias_initializer);
  return projection;
}

void MultiHeadAttention::build_weights_for_list(const std::vector<LayerShape>& input_shapes) {
  if (query_.kernel.defined()) return;
  compute_output_shapes(input_shapes);  // checks the list
  const int64_t query_features = input_shapes[0][2];
  const int64_t value_features = input_shapes[1][2];
  const int64_t key_features = input_shapes.size() > 2 ? input_shapes[2][2] : value_features;
  if (query_features <= 0 || value_features <= 0 || key_features <= 0) {
    throw InvalidArgumentError(where() + "the last axis of query, value and key must be known, got " +
                               format_layer_shapes(input_shapes));
  }
  const int64_t output_features = options_.output_shape.value_or(query_features);
  // Keras 2's _build_from_signature: query, key, value, then the output projection.
  query_ = add_projection("query", Shape{query_features, num_heads_, key_dim_}, Shape{num_heads_, key_dim_});
  key_ = add_projection("key", Shape{key_features, num_heads_, key_dim_}, Shape{num_heads_, key_dim_});
  value_ = add_projection("value", Shape{value_features, num_heads_, value_dim_}, Shape{num_heads_, value_dim_});
  output_ = add_projection("attention_output", Shape{num_heads_, value_dim_, output_features}, Shape{output_features});
}

void MultiHeadAttention::build_if_needed(const std::vector<LayerShape>& input_shapes) {
  if (built()) return;
  std::vector<LayerShape> unknown_batch = input_shapes;
  for (LayerShape& shape : unknown_batch) shape[0] = kUnknownDim;
  build_weights_for_list(unknown_batch);
  mark_built(compute_output_shapes(unknown_batch));
}

// einsum("abc,cde->abde") as one matmul: (batch * N, d) @ (d, heads * dim).
Tensor MultiHeadAttention::project(const Tensor& x, const Projection& projection, const std::string& role) const {
  const Shape& kernel_shape = projection.kernel.shape();
  if (x.shape()[2] != kernel_shape[0]) {
    throw InvalidArgumentError(where() + role + " has " + std::to_string(x.shape()[2]) +
                               " features, the layer was built for " + std::to_string(kernel_shape[0]));
  }
  const int64_t batch = x.shape()[0], length = x.shape()[1];
  const Tensor kernel = projection.kernel.value().reshape(Shape{kernel_shape[0], kernel_shape[1] * kernel_shape[2]});
  Tensor projected =
      ops::matmul(x.reshape(Shape{batch * length, kernel_shape[0]}), kernel).reshape(Shape{batch, length, kernel_shape[1], kernel_shape[2]});
  if (projection.bias.defined()) projected = ops::add(projected, projection.bias.value());
  return projected;
}

// keras_hub's RotaryEmbedding on (batch, N, heads, d): x cos + rotate_half(x) sin,
// rotate_half(x) = [-x2, x1] for the halves x1, x2 of the last axis, the
// angle of position p and feature i (and i + d/2) p / max_wavelength^(2i/d).
Tensor MultiHeadAttention::rotated(const Tensor& x) const {
  if (!options_.rotary_max_wavelength) return x;
  const int64_t length = x.shape()[1], dim = x.shape()[3], half = dim / 2;
  auto& [cosine, sine] = rotary_tables_[{length, x.dtype()}];
  if (!cosine.defined() || cosine.device() != x.device()) {
    std::vector<float> cosines(static_cast<size_t>(length * dim)), sines(cosines.size());
    for (int64_t position = 0; position < length; ++position) {
      for (int64_t i = 0; i < dim; ++i) {
        const double frequency =
            std::pow(*options_.rotary_max_wavelength, -2.0 * static_cast<double>(i % half) / static_cast<double>(dim));
        const double angle = static_cast<double>(position) * frequency;
        cosines[static_cast<size_t>(position * dim + i)] = static_cast<float>(std::cos(angle));
        sines[static_cast<size_t>(position * dim + i)] = static_cast<float>(std::sin(angle));
      }
    }
    cosine = Tensor::from_vector<float>(cosines, Shape{1, length, 1, dim}).to(x.device());
    sine = Tensor::from_vector<float>(sines, Shape{1, length, 1, dim}).to(x.device());
    if (x.dtype() != DType::kFloat32) {
      cosine = ops::cast(cosine, x.dtype());
      sine = ops::cast(sine, x.dtype());
    }
  }
  const int64_t batch = x.shape()[0], heads = x.shape()[2];
  const Tensor first = ops::slice(x, {0, 0, 0, 0}, {batch, length, heads, half});
  const Tensor second = ops::slice(x, {0, 0, 0, half}, {batch, length, heads, dim - half});
  const Tensor rotated_half = ops::concat({ops::neg(second), first}, 3);
  return ops::add(ops::mul(x, cosine), ops::mul(rotated_half, sine));
}

Tensor MultiHeadAttention::attention_mask_for(const Tensor& attention_mask, bool use_causal_mask,
                                              const Shape& query_shape, const Shape& value_shape) const {
  Tensor mask;
  if (attention_mask.defined()) {
    // Keras casts the mask to bool: any nonzero value attends.
    const Tensor allowed = attention_mask.dtype() == DType::kBool
                               ? attention_mask
                               : ops::not_equal(attention_mask, ops::zeros({}, attention_mask.dtype()));
    mask = ops::cast(allowed, compute_dtype());
  }
  if (use_causal_mask) {
    // Keras's _compute_causal_mask: row index >= column index.
    const int64_t target = query_shape[1], source = value_shape[1];
    std::vector<float> lower(static_cast<size_t>(target * source));
    for (int64_t t = 0; t < target; ++t) {
      for (int64_t s = 0; s < source; ++s) lower[static_cast<size_t>(t * source + s)] = s <= t ? 1.0f : 0.0f;
    }
    Tensor causal = Tensor::from_vector<float>(lower, Shape{1, target, source});
    if (compute_dtype() != DType::kFloat32) causal = ops::cast(causal, compute_dtype());
    mask = mask.defined() ? ops::mul(mask, causal) : causal;
  }
  if (!mask.defined()) return mask;
  // Shared by the heads: (batch, T, S) -> (batch, 1, T, S).
  return mask.reshape(Shape{mask.shape()[0], 1, mask.shape()[1], mask.shape()[2]});
}

AttentionOutputs MultiHeadAttention::attend(const Tensor& query, const Tensor& value, const Tensor& key,
                                            const Tensor& attention_mask, bool use_causal_mask, bool training) {
  std::vector<LayerShape> shapes{shape_of(query), shape_of(value), shape_of(key)};
  if (attention_mask.defined()) shapes.push_back(shape_of(attention_mask));
  compute_output_shapes(shapes);  // checks ranks, batch and sequence sizes, the mask

  // (batch, N, heads, dim) -> (batch, heads, N, dim): heads become a batch axis of the matmuls.
  const std::vector<int32_t> heads_first{0, 2, 1, 3};
  // Keras scales the projected query (bias included) before the dot product.
  const Tensor scale = ops::fill({}, 1.0 / std::sqrt(static_cast<double>(key_dim_)), query.dtype());
  const Tensor q = ops::transpose(ops::mul(rotated(project(query, query_, "query")), scale), heads_first);
  const Tensor k = ops::transpose(rotated(project(key, key_, "key")), heads_first);
  const Tensor v = ops::transpose(project(value, value_, "value"), heads_first);

  Tensor logits = ops::matmul(q, k, /*transpose_a=*/false, /*transpose_b=*/true);  // (batch, heads, T, S)
  const Tensor mask = attention_mask_for(attention_mask, use_causal_mask, query.shape(), value.shape());
  if (mask.defined()) {
    // Keras's Softmax with a mask: logits + (1 - mask) * -1e9.
    const Tensor masked = ops::sub(ops::ones({}, logits.dtype()), mask);
    logits = ops::add(logits, ops::mul(masked, ops::fill({}, masked_logit(logits.dtype()), logits.dtype())));
  }
  const Tensor scores = ops::softmax(logits);
  // The scores' dropout computes under this layer's policy (Keras makes it with dtype=self.dtype_policy).
  if (dropout_ && !dropout_->built()) dropout_->set_dtype_policy(dtype_policy());
  const Tensor dropped = dropout_ ? (*dropout_)(scores, training) : scores;

  // (batch, heads, T, value_dim) -> (batch, T, heads * value_dim) @ (heads * value_dim, d_out).
  const Tensor attended = ops::transpose(ops::matmul(dropped, v), heads_first);
  const int64_t batch = query.shape()[0], target = query.shape()[1];
  const Shape& output_kernel_shape = output_.kernel.shape();
  const Tensor output_kernel = output_.kernel.value().reshape(
      Shape{output_kernel_shape[0] * output_kernel_shape[1], output_kernel_shape[2]});
  Tensor output = ops::matmul(attended.reshape(Shape{batch * target, num_heads_ * value_dim_}), output_kernel)
                      .reshape(Shape{batch, target, output_kernel_shape[2]});
  if (output_.bias.defined()) output = ops::add(output, output_.bias.value());
  return {output, scores};
}

Tensor MultiHeadAttention::operator()(const Tensor& query, const Tensor& value, const AttentionArguments<Tensor>& arguments,
                                      bool training) {
  return call_with_attention_scores(query, value, arguments, training).output;
}

AttentionOutputs MultiHeadAttention::call_with_attention_scores(const Tensor& query, const Tensor& value,
                                                                const AttentionArguments<Tensor>& arguments,
                                                                bool training) {
  const Tensor& key = arguments.key.defined() ? arguments.key : value;
  std::vector<LayerShape> shapes{shape_of(query), shape_of(value), shape_of(key)};
  if (arguments.attention_mask.defined()) shapes.push_back(shape_of(arguments.attention_mask));
  for (const LayerShape& shape : shapes) {
    if (shape.empty()) throw InvalidArgumentError(where() + "inputs need a batch axis, got " + format_layer_shapes(shapes));
  }
  build_if_needed(shapes);
  return attend(query, value, key, arguments.attention_mask, arguments.use_causal_mask, training);
}

std::vector<Tensor> MultiHeadAttention::call_list(const std::vector<Tensor>& inputs, bool training) {
  if (inputs.size() < 2 || inputs.size() > 4) {
    throw InvalidArgumentError(where() + "expects [query, value(, key(, attention_mask))], got " +
                               std::to_string(inputs.size()) + " inputs");
  }
  const Tensor& key = inputs.size() > 2 ? inputs[2] : inputs[1];
  const Tensor mask = inputs.size() > 3 ? inputs[3] : Tensor();
  AttentionOutputs outputs = attend(inputs[0], inputs[1], key, mask, list_call_settings_.use_causal_mask, training);
  if (list_call_settings_.return_attention_scores) return {outputs.output, outputs.scores};
  return {outputs.output};
}

std::vector<KerasTensor> MultiHeadAttention::call_symbolic(const KerasTensor& query, const KerasTensor& value,
                                                           const AttentionArguments<KerasTensor>& arguments,
                                                           bool return_attention_scores) {
  const ListCallSettings settings{arguments.use_causal_mask, return_attention_scores};
  if (!(settings == list_call_settings_)) {
    if (!inbound_nodes().empty()) {
      throw UnimplementedError(where() + "every call in a Functional model must use the same use_causal_mask and "
                               "return_attention_scores (a model replays the layer without per-call arguments)");
    }
    list_call_settings_ = settings;
  }
  std::vector<KerasTensor> inputs{query, value};
  if (arguments.key.defined() || arguments.attention_mask.defined()) {
    inputs.push_back(arguments.key.defined() ? arguments.key : value);
  }
  if (arguments.attention_mask.defined()) inputs.push_back(arguments.attention_mask);
  return call_outputs(inputs);
}

KerasTensor MultiHeadAttention::operator()(const KerasTensor& query, const KerasTensor& value,
                                           const AttentionArguments<KerasTensor>& arguments) {
  return call_symbolic(query, value, arguments, /*return_attention_scores=*/false).front();
}

std::vector<KerasTensor> MultiHeadAttention::call_with_attention_scores(const KerasTensor& query,
                                                                        const KerasTensor& value,
                                                                        const AttentionArguments<KerasTensor>& arguments) {
  return call_symbolic(query, value, arguments, /*return_attention_scores=*/true);
}

}  // namespace accel::keras
