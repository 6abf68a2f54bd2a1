#include "layer_shape_inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>

namespace accel::experiment {
namespace {

struct Window {
  std::int64_t rows = 1;
  std::int64_t columns = 1;
};

const Value* written(const KerasObject& layer, const std::string& key) {
  const Value* value = layer.argument(key);
  return value != nullptr && value->is_set() ? value : nullptr;
}

Window window_argument(const KerasObject& layer, const std::string& key, Window fallback) {
  const Value* value = written(layer, key);
  if (value == nullptr) return fallback;
  const auto ints = value->as_ints();
  return ints.size() == 1 ? Window{ints[0], ints[0]} : Window{ints[0], ints[1]};
}

std::string text_argument(const KerasObject& layer, const std::string& key, const std::string& fallback) {
  const Value* value = written(layer, key);
  return value != nullptr ? value->as_text() : fallback;
}

std::int64_t int_argument(const KerasObject& layer, const std::string& key, std::int64_t fallback) {
  const Value* value = written(layer, key);
  return value != nullptr ? value->as_int() : fallback;
}

bool bool_argument(const KerasObject& layer, const std::string& key, bool fallback) {
  const Value* value = written(layer, key);
  return value != nullptr ? value->as_bool() : fallback;
}

std::int64_t product(const Shape& shape, std::size_t from) {
  std::int64_t out = 1;  // saturates: a product past int64 reads as INT64_MAX
  for (std::size_t i = from; i < shape.size(); ++i) {
    if (__builtin_mul_overflow(out, shape[i], &out)) return INT64_MAX;
  }
  return out;
}

// A list of integers as written: "[-1, 3]" (shape_text would print -1 as None).
std::string written_ints(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

// Margins2D as written: n, [rows, columns] or [top, bottom, left, right].
struct Margins {
  std::int64_t top = 0;
  std::int64_t bottom = 0;
  std::int64_t left = 0;
  std::int64_t right = 0;
};

Margins margins_argument(const KerasObject& layer, const std::string& key, std::int64_t fallback) {
  const Value* value = written(layer, key);
  if (value == nullptr) return {fallback, fallback, fallback, fallback};
  const auto ints = value->as_ints();
  if (ints.size() == 1) return {ints[0], ints[0], ints[0], ints[0]};
  if (ints.size() == 2) return {ints[0], ints[0], ints[1], ints[1]};
  return {ints[0], ints[1], ints[2], ints[3]};
}

const std::vector<std::string>& merge_layers() {
  static const std::vector<std::string> names{"add", "subtract", "multiply", "average", "maximum", "minimum"};
  return names;
}

class ShapeWalker {
 public:
  ShapeWalker(const KerasObject& layer, const std::string& label, const std::vector<LayerInput>& inputs,
              const KerasObject* reversed)
      : layer_(layer), label_(label), inputs_(inputs), reversed_(reversed) {}

  Shape output() const {
    const std::string& name = layer_.name;
    if (std::find(merge_layers().begin(), merge_layers().end(), name) != merge_layers().end()) return merge();
    if (name == "concatenate") return concatenate();
    if (name == "multi_head_attention") return attention();
    need_inputs(1, 1);
    if (name == "dense") {
      need_rank_at_least(2, "[batch, ..., features]");
      Shape out = input();
      out.back() = written(layer_, "units")->as_int();
      return out;
    }
    if (name == "conv1d") return sequence_convolution();
    if (name == "conv2d") return convolution();
    if (name == "depthwise_conv2d") return depthwise_convolution();
    if (name == "separable_conv2d") return separable_convolution();
    if (name == "conv2d_transpose") return transposed_convolution();
    if (name == "max_pooling2d" || name == "average_pooling2d") return pooling();
    if (name == "global_average_pooling2d" || name == "global_max_pooling2d") {
      need_rank(4, "[batch, height, width, channels]");
      if (bool_argument(layer_, "keepdims", false)) return {input()[0], 1, 1, input()[3]};
      return {input()[0], input()[3]};
    }
    if (name == "global_average_pooling1d" || name == "global_max_pooling1d") {
      need_rank(3, "[batch, steps, features]");
      if (bool_argument(layer_, "keepdims", false)) return {input()[0], 1, input()[2]};
      return {input()[0], input()[2]};
    }
    if (name == "flatten") {
      need_rank_at_least(2, "[batch, ...]");
      if (product(input(), 1) == INT64_MAX) {
        fail("flattening " + shape_text(input()) + " overflows", "fewer than 2^63 values per example", layer_.where);
      }
      return {input()[0], product(input(), 1)};
    }
    if (name == "reshape") return reshape();
    if (name == "permute") return permute();
    if (name == "repeat_vector") {
      need_rank(2, "[batch, features]");
      return {input()[0], written(layer_, "n")->as_int(), input()[1]};
    }
    if (name == "zero_padding2d" || name == "cropping2d") return margins();
    if (name == "up_sampling2d") {
      need_rank(4, "[batch, height, width, channels]");
      const Window size = window_argument(layer_, "size", {2, 2});
      return {input()[0], input()[1] * size.rows, input()[2] * size.columns, input()[3]};
    }
    if (name == "embedding") {
      need_rank_at_least(2, "[batch, length] of integer ids");
      Shape out = input();
      out.push_back(written(layer_, "output_dim")->as_int());
      return out;
    }
    if (name == "reversed_embedding" && reversed_ != nullptr) {
      need_rank_at_least(2, "[batch, ..., features]");
      const std::int64_t features = written(*reversed_, "output_dim")->as_int();
      if (input().back() != features) {
        fail(fmt::format("the input {} has {} features, but embedding '{}' has vectors of {}", shape_text(input()),
                         input().back(), text_argument(layer_, "embedding", ""), features),
             fmt::format("an input of [batch, ..., {}] (the embedding's output_dim)", features), inputs_.front().where);
      }
      Shape out = input();
      out.back() = written(*reversed_, "input_dim")->as_int();
      return out;
    }
    if (name == "position_embedding") {
      need_rank(3, "[batch, length, features]");
      return input();
    }
    if (name == "batch_normalization" || name == "layer_normalization" || name == "rms_normalization") {
      need_rank_at_least(2, "[batch, ..., features]");
      const Value* axis_value = written(layer_, "axis");
      const std::int64_t axis = axis_value != nullptr ? axis_value->as_int() : -1;
      const auto rank = static_cast<std::int64_t>(input().size());
      if (axis >= rank || axis < -rank || axis == 0 || axis == -rank) {
        fail(fmt::format("axis {} is not a feature axis of the input {}", axis, shape_text(input())),
             fmt::format("an axis in 1..{} or -{}..-1", rank - 1, rank - 1),
             axis_value != nullptr ? axis_value->where : layer_.where);
      }
      return input();
    }
    if (name == "prelu") {
      need_rank_at_least(2, "[batch, ...]");
      if (const Value* shared_axes = written(layer_, "shared_axes")) {
        for (std::int64_t axis : shared_axes->as_ints()) {
          if (axis < 1 || axis >= static_cast<std::int64_t>(input().size())) {
            fail(fmt::format("shared axis {} is not an axis of the input {} after the batch axis", axis,
                             shape_text(input())),
                 fmt::format("axes in 1..{}", input().size() - 1), shared_axes->where);
          }
        }
      }
      return input();
    }
    if (name == "softmax") {
      const Value* axis_value = written(layer_, "axis");
      const std::int64_t axis = axis_value != nullptr ? axis_value->as_int() : -1;
      const auto rank = static_cast<std::int64_t>(input().size());
      if (axis >= rank || axis < -rank) {
        fail(fmt::format("axis {} is not an axis of the input {}", axis, shape_text(input())),
             fmt::format("an axis in 0..{} or -{}..-1", rank - 1, rank),
             axis_value != nullptr ? axis_value->where : layer_.where);
      }
    }
    return input();  // dropout, activation, relu, leaky_relu, elu, softmax, rescaling: same shape
  }

 private:
  const Shape& input() const { return inputs_.front().shape; }

  Shape convolution() const {
    need_rank(4, "[batch, height, width, channels]");
    const Window kernel = window_argument(layer_, "kernel_size", {});
    const std::int64_t filters = written(layer_, "filters")->as_int();
    if (const Value* groups = written(layer_, "groups"); groups != nullptr && !groups->defaulted) {
      const std::int64_t count = groups->as_int();
      if (input()[3] % count != 0 || filters % count != 0) {
        fail(fmt::format("groups {} does not divide both the {} input channels of {} and the {} filters", count,
                         input()[3], shape_text(input()), filters),
             "a number of groups dividing the input channels and the filters", groups->where);
      }
    }
    const auto [rows, columns] = spatial(dilated(kernel), window_argument(layer_, "strides", {1, 1}),
                                         text_argument(layer_, "padding", "valid"), "kernel_size");
    return {input()[0], rows, columns, filters};
  }

  // Keras's conv_output_length along the steps; "causal" pads the start and keeps ceil(steps / stride).
  Shape sequence_convolution() const {
    need_rank(3, "[batch, steps, channels]");
    const std::int64_t kernel = written(layer_, "kernel_size")->as_int();
    const std::int64_t stride = int_argument(layer_, "strides", 1);
    const std::int64_t span = int_argument(layer_, "dilation_rate", 1) * (kernel - 1) + 1;
    const std::int64_t filters = written(layer_, "filters")->as_int();
    const std::int64_t groups = int_argument(layer_, "groups", 1);
    if (input()[2] % groups != 0 || filters % groups != 0) {
      fail(fmt::format("groups {} does not divide both the {} input channels of {} and the {} filters", groups,
                       input()[2], shape_text(input()), filters),
           "a number of groups dividing the input channels and the filters", written(layer_, "groups")->where);
    }
    const std::string padding = text_argument(layer_, "padding", "valid");
    const std::int64_t steps = input()[1];
    if (padding != "valid") return {input()[0], (steps + stride - 1) / stride, filters};
    if (span > steps) {
      const Value* value = written(layer_, "kernel_size");
      fail(fmt::format("a window of {} steps (dilated) does not fit the {} steps of {} with padding 'valid'", span,
                       steps, shape_text(input())),
           fmt::format("a window of at most {} steps, or padding: same or causal", steps), value->where);
    }
    return {input()[0], (steps - span) / stride + 1, filters};
  }

  Shape depthwise_convolution() const {
    need_rank(4, "[batch, height, width, channels]");
    const Window kernel = window_argument(layer_, "kernel_size", {});
    const auto [rows, columns] = spatial(dilated(kernel), window_argument(layer_, "strides", {1, 1}),
                                         text_argument(layer_, "padding", "valid"), "kernel_size");
    return {input()[0], rows, columns, input()[3] * int_argument(layer_, "depth_multiplier", 1)};
  }

  // The depthwise pass's spatial size, then a 1x1 pointwise pass to `filters`.
  Shape separable_convolution() const {
    Shape out = depthwise_convolution();
    out[3] = written(layer_, "filters")->as_int();
    return out;
  }

  // Keras's deconv_output_length per spatial axis.
  Shape transposed_convolution() const {
    need_rank(4, "[batch, height, width, channels]");
    const Window kernel = dilated(window_argument(layer_, "kernel_size", {}));
    const Window stride = window_argument(layer_, "strides", {1, 1});
    const std::string padding = text_argument(layer_, "padding", "valid");
    const Value* output_padding = written(layer_, "output_padding");
    const auto length = [&](std::int64_t input_length, std::int64_t size, std::int64_t step,
                            std::optional<std::int64_t> extra) -> std::int64_t {
      if (!extra) return padding == "valid" ? input_length * step + std::max<std::int64_t>(size - step, 0) : input_length * step;
      const std::int64_t pad = padding == "same" ? size / 2 : 0;
      return (input_length - 1) * step + size - 2 * pad + *extra;
    };
    std::optional<Window> extra;
    if (output_padding != nullptr) {
      extra = window_argument(layer_, "output_padding", {});
      if (extra->rows >= stride.rows || extra->columns >= stride.columns) {
        fail(fmt::format("output_padding {}x{} is not below the strides {}x{}", extra->rows, extra->columns, stride.rows,
                         stride.columns),
             "an output_padding below the strides on each axis", output_padding->where);
      }
    }
    return {input()[0],
            length(input()[1], kernel.rows, stride.rows, extra ? std::optional(extra->rows) : std::nullopt),
            length(input()[2], kernel.columns, stride.columns, extra ? std::optional(extra->columns) : std::nullopt),
            written(layer_, "filters")->as_int()};
  }

  Window dilated(Window kernel) const {
    const Window dilation = window_argument(layer_, "dilation_rate", {1, 1});
    return {dilation.rows * (kernel.rows - 1) + 1, dilation.columns * (kernel.columns - 1) + 1};
  }

  Shape pooling() const {
    need_rank(4, "[batch, height, width, channels]");
    const Window pool = window_argument(layer_, "pool_size", {2, 2});
    const Window stride = window_argument(layer_, "strides", pool);
    const auto [rows, columns] = spatial(pool, stride, text_argument(layer_, "padding", "valid"), "pool_size");
    return {input()[0], rows, columns, input()[3]};
  }

  Shape reshape() const {
    const Value* target = written(layer_, "target_shape");
    Shape out{input()[0]};
    std::int64_t known = 1;
    int inferred = -1;
    for (auto d : target->as_ints()) {
      if (d == -1) {
        if (inferred >= 0) {
          fail("target_shape " + written_ints(target->as_ints()) + " has more than one -1",
               "at most one inferred (-1) size", target->where);
        }
        inferred = static_cast<int>(out.size());
      } else if (__builtin_mul_overflow(known, d, &known)) {
        known = INT64_MAX;
      }
      out.push_back(d);
    }
    const std::int64_t have = product(input(), 1);
    if (inferred >= 0) {
      if (have % known != 0) {
        fail(fmt::format("reshape cannot infer the -1 of target_shape: {} values per example ({}) do not divide by {}",
                         have, shape_text(input()), known),
             fmt::format("a target_shape whose sizes divide {}", have), target->where);
      }
      out[static_cast<std::size_t>(inferred)] = have / known;
    }
    if (product(out, 1) != have) {
      fail(fmt::format("reshape to {} needs {} values per example but gets {} ({})", shape_text(out), product(out, 1),
                       have, shape_text(input())),
           fmt::format("a target_shape holding {} values", have), target->where);
    }
    return out;
  }

  Shape permute() const {
    const Value* dims_value = written(layer_, "dims");
    const std::vector<std::int64_t> dims = dims_value->as_ints();
    std::vector<std::int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] != static_cast<std::int64_t>(i) + 1) {
        fail(fmt::format("dims {} is not a permutation of 1..{}", written_ints(dims), dims.size()),
             fmt::format("each of 1..{} once", dims.size()), dims_value->where);
      }
    }
    need_rank(dims.size() + 1, "[batch, ...] with one axis per entry of dims");
    Shape out{input()[0]};
    for (auto d : dims) out.push_back(input()[static_cast<std::size_t>(d)]);
    return out;
  }

  Shape margins() const {
    need_rank(4, "[batch, height, width, channels]");
    const bool padding = layer_.name == "zero_padding2d";
    const std::string key = padding ? "padding" : "cropping";
    const Margins m = margins_argument(layer_, key, padding ? 1 : 0);
    const std::int64_t sign = padding ? 1 : -1;
    const std::int64_t rows = input()[1] + sign * (m.top + m.bottom);
    const std::int64_t columns = input()[2] + sign * (m.left + m.right);
    if (rows < 1 || columns < 1) {
      const Value* value = written(layer_, key);
      fail(fmt::format("cropping {} rows and {} columns leaves nothing of {}", m.top + m.bottom, m.left + m.right,
                       shape_text(input())),
           fmt::format("at most {} rows and {} columns cropped", input()[1] - 1, input()[2] - 1),
           value != nullptr ? value->where : layer_.where);
    }
    return {input()[0], rows, columns, input()[3]};
  }

  // Keras's _compute_elemwise_op_output_shape, input by input: aligned at
  // the last axis, an axis of 1 takes the other's size.
  Shape merge() const {
    need_inputs(layer_.name == "subtract" ? 2 : 1, layer_.name == "subtract" ? 2 : SIZE_MAX);
    Shape output(input().begin() + 1, input().end());
    for (std::size_t index = 1; index < inputs_.size(); ++index) {
      const Shape other(inputs_[index].shape.begin() + 1, inputs_[index].shape.end());
      const Shape& longer = output.size() >= other.size() ? output : other;
      const Shape& shorter = output.size() >= other.size() ? other : output;
      Shape merged(longer.begin(), longer.end() - static_cast<std::ptrdiff_t>(shorter.size()));
      const std::size_t offset = longer.size() - shorter.size();
      for (std::size_t axis = 0; axis < shorter.size(); ++axis) {
        const std::int64_t a = longer[offset + axis];
        const std::int64_t b = shorter[axis];
        if (a != 1 && b != 1 && a != b) {
          std::string shapes;
          for (std::size_t i = 0; i <= index; ++i) shapes += (i > 0 ? " and " : "") + shape_text(inputs_[i].shape);
          fail(fmt::format("{} cannot combine {}: the shapes do not broadcast", layer_.name, shapes),
               fmt::format("inputs of one shape ({} here, or sizes of 1 to broadcast)", shape_text(inputs_[0].shape)),
               inputs_[index].where);
        }
        merged.push_back(a == 1 ? b : a);
      }
      output = std::move(merged);
    }
    output.insert(output.begin(), -1);
    return output;
  }

  Shape concatenate() const {
    need_inputs(1, SIZE_MAX);
    const auto rank = static_cast<std::int64_t>(input().size());
    const Value* axis_value = written(layer_, "axis");
    const std::int64_t written_axis = axis_value != nullptr ? axis_value->as_int() : -1;
    const std::int64_t axis = written_axis < 0 ? written_axis + rank : written_axis;
    if (axis < 0 || axis >= rank) {
      fail(fmt::format("axis {} is outside the inputs' rank {} ({})", written_axis, rank, shape_text(input())),
           fmt::format("an axis in -{}..{}", rank, rank - 1), axis_value != nullptr ? axis_value->where : layer_.where);
    }
    Shape out = input();
    for (std::size_t index = 1; index < inputs_.size(); ++index) {
      const Shape& shape = inputs_[index].shape;
      bool fits = static_cast<std::int64_t>(shape.size()) == rank;
      for (std::int64_t d = 1; fits && d < rank; ++d) {
        if (d != axis && shape[static_cast<std::size_t>(d)] != out[static_cast<std::size_t>(d)]) fits = false;
      }
      if (!fits) {
        fail(fmt::format("concatenate along axis {} needs inputs that agree on every other axis, but gets {} and {}",
                         written_axis, shape_text(input()), shape_text(shape)),
             fmt::format("an input of shape {} except along axis {}", shape_text(input()), written_axis),
             inputs_[index].where);
      }
      if (axis > 0) out[static_cast<std::size_t>(axis)] += shape[static_cast<std::size_t>(axis)];
    }
    return out;
  }

  // [query, value(, key)], each [batch, length, features].
  Shape attention() const {
    need_inputs(2, 3);
    for (const LayerInput& in : inputs_) {
      if (in.shape.size() != 3) {
        fail(fmt::format("multi_head_attention needs [batch, length, features] inputs but gets {}", shape_text(in.shape)),
             "query, value and key of rank 3", in.where);
      }
    }
    if (inputs_.size() == 3 && inputs_[2].shape[1] != inputs_[1].shape[1]) {
      fail(fmt::format("key {} and value {} have different lengths", shape_text(inputs_[2].shape),
                       shape_text(inputs_[1].shape)),
           fmt::format("a key of length {}", inputs_[1].shape[1]), inputs_[2].where);
    }
    if (written(layer_, "rotary_max_wavelength") != nullptr && int_argument(layer_, "key_dim", 0) % 2 != 0) {
      const Value* key_dim = written(layer_, "key_dim");
      fail(fmt::format("rotary positions rotate pairs of features, and key_dim is {}", int_argument(layer_, "key_dim", 0)),
           "an even key_dim", key_dim != nullptr ? key_dim->where : layer_.where);
    }
    return {input()[0], input()[1], int_argument(layer_, "output_shape", input()[2])};
  }

  std::pair<std::int64_t, std::int64_t> spatial(Window window, Window stride, const std::string& padding,
                                                const std::string& window_key) const {
    const std::int64_t height = input()[1];
    const std::int64_t width = input()[2];
    if (padding == "same") {
      return {(height + stride.rows - 1) / stride.rows, (width + stride.columns - 1) / stride.columns};
    }
    if (window.rows > height || window.columns > width) {
      const Value* value = written(layer_, window_key);
      fail(fmt::format("a {}x{} window does not fit the {}x{} input {} with padding 'valid'", window.rows,
                       window.columns, height, width, shape_text(input())),
           fmt::format("a window of at most {}x{}, or padding: same", height, width),
           value != nullptr && !value->defaulted ? value->where : layer_.where);
    }
    return {(height - window.rows) / stride.rows + 1, (width - window.columns) / stride.columns + 1};
  }

  void need_inputs(std::size_t min, std::size_t max) const {
    if (inputs_.size() >= min && inputs_.size() <= max) return;
    std::string expected = min == max ? fmt::format("{} input{}", min, min == 1 ? "" : "s")
                                      : max == SIZE_MAX ? fmt::format("at least {} inputs", min)
                                                        : fmt::format("{} to {} inputs", min, max);
    if (layer_.name == "multi_head_attention") expected += " ([query, value] or [query, value, key])";
    fail(fmt::format("{} takes {} but is called on {}", layer_.name, expected, inputs_.size()), expected,
         inputs_.size() > max ? inputs_[max].where : inputs_.front().where);
  }

  void need_rank(std::size_t rank, const std::string& layout) const {
    if (input().size() == rank) return;
    std::string hint;
    if (rank == 4 && input().size() == 3) {
      hint = fmt::format("; add {{reshape: {{target_shape: [{}, {}, 1]}}}} first", input()[1], input()[2]);
    }
    if (rank == 4 && input().size() == 2) hint = "; 2-D layers need images, not flattened features";
    fail(fmt::format("{} needs a rank-{} input {} but gets {} (rank {})", layer_.name, rank, layout, shape_text(input()),
                     input().size()),
         fmt::format("an input of rank {}{}", rank, hint), inputs_.front().where);
  }

  void need_rank_at_least(std::size_t rank, const std::string& layout) const {
    if (input().size() >= rank) return;
    fail(fmt::format("{} needs an input of rank >= {} {} but gets {}", layer_.name, rank, layout, shape_text(input())),
         fmt::format("an input of rank >= {}", rank), inputs_.front().where);
  }

  [[noreturn]] void fail(const std::string& problem, const std::string& expected, const SourceLocation& where) const {
    fail_at(where, fmt::format("{}: {}", label_, problem), expected);
  }

  const KerasObject& layer_;
  const std::string& label_;
  const std::vector<LayerInput>& inputs_;
  const KerasObject* reversed_;
};

void check_sizes(const Shape& output, const KerasObject& layer, const std::string& label) {
  for (std::size_t d = 1; d < output.size(); ++d) {
    if (output[d] <= 0) fail_at(layer.where, fmt::format("{} would output {}", label, shape_text(output)), "every dimension at least 1");
  }
}

}  // namespace

std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += shape[i] < 0 ? "None" : std::to_string(shape[i]);
  }
  return out + "]";
}

std::string graph_layer_label(const KerasObject& layer, std::size_t index) {
  const Value* name = layer.argument("name");
  return fmt::format("model.graph.layers[{}] ({} '{}')", index, layer.name,
                     name != nullptr && name->is_set() ? name->as_text() : "");
}

Shape infer_layer_output_shape(const KerasObject& layer, const std::string& label, const std::vector<LayerInput>& inputs,
                               const KerasObject* reversed) {
  Shape output = ShapeWalker(layer, label, inputs, reversed).output();
  check_sizes(output, layer, label);
  return output;
}

std::vector<Shape> infer_layer_output_shapes(const std::vector<KerasObject>& layers, const Shape& example_shape) {
  std::vector<Shape> outputs;
  Shape current{-1};
  current.insert(current.end(), example_shape.begin(), example_shape.end());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    current = infer_layer_output_shape(layers[i], fmt::format("model.layers[{}] ({})", i, layers[i].name),
                                       {LayerInput{current, layers[i].where}});
    outputs.push_back(current);
  }
  return outputs;
}

std::vector<Shape> infer_graph_output_shapes(const std::vector<KerasObject>& layers, const ModelGraph& graph) {
  std::map<std::string, Shape> shapes;
  for (const GraphInput& input : graph.inputs) {
    Shape shape{-1};
    shape.insert(shape.end(), input.shape.begin(), input.shape.end());
    shapes[input.name] = std::move(shape);
  }
  std::vector<Shape> outputs;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::vector<LayerInput> inputs;
    for (const GraphReference& reference : graph.calls[i].inputs) inputs.push_back({shapes.at(reference.name), reference.where});
    const KerasObject* reversed = nullptr;  // the reader checked that it names an earlier embedding
    if (layers[i].name == "reversed_embedding") {
      const std::string embedding = text_argument(layers[i], "embedding", "");
      for (std::size_t j = 0; j < i; ++j) {
        if (layers[j].name == "embedding" && text_argument(layers[j], "name", "") == embedding) reversed = &layers[j];
      }
    }
    outputs.push_back(infer_layer_output_shape(layers[i], graph_layer_label(layers[i], i), inputs, reversed));
    shapes[layers[i].argument("name")->as_text()] = outputs.back();
  }
  return outputs;
}

}  // namespace accel::experiment
