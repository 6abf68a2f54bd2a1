// Hand-built graphs for the pass tests: a builder that appends values and
// nodes with the shapes and dtypes the ops would give, the devices the tests
// use (the real CPU device; stand-in device pointers for the fusion passes,
// which only compare them), and fusion supports that say yes.
#pragma once

#include "graph/graph.hpp"
#include "graph/passes/passes.hpp"
#include "runtime/dispatch.hpp"

#include <accel/placement.hpp>
#include <accel/tensor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace accel::graph::testing {

// The CPU device of the runtime (the test environment pins ops to /CPU:0).
inline detail::LogicalDevice* cpu_device() { return find_device("/CPU:0").internal(); }

// Distinct device pointers that nothing dereferences.
inline detail::LogicalDevice* stand_in_device(int index) {
  static char slots[8];
  return reinterpret_cast<detail::LogicalDevice*>(&slots[index]);
}

inline FusionSupport support_everything() {
  FusionSupport support;
  support.fused_elementwise = [](detail::LogicalDevice*, AccelDType) { return true; };
  support.epilogue = [](detail::LogicalDevice*, AccelOp, AccelDType, int32_t, AccelOp) { return true; };
  support.plain_op = [](detail::LogicalDevice*, AccelOp, AccelDType) { return true; };
  return support;
}

inline Shape broadcast_shape(const Shape& left, const Shape& right) {
  const int32_t rank = std::max(left.rank(), right.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int32_t axis = 0; axis < rank; ++axis) {
    const int32_t left_axis = axis - (rank - left.rank());
    const int32_t right_axis = axis - (rank - right.rank());
    const int64_t left_dim = left_axis >= 0 ? left[left_axis] : 1;
    const int64_t right_dim = right_axis >= 0 ? right[right_axis] : 1;
    dims[static_cast<size_t>(axis)] = left_dim == 1 ? right_dim : left_dim;
  }
  return Shape(dims);
}

template <typename Attributes>
std::vector<std::byte> bytes_of(const Attributes& attributes) {
  std::vector<std::byte> bytes(sizeof(Attributes));
  std::memcpy(bytes.data(), &attributes, sizeof(Attributes));
  return bytes;
}

class GraphBuilder {
 public:
  explicit GraphBuilder(detail::LogicalDevice* device) : device_(device) {}

  Graph graph;

  // The device of the nodes and values added next.
  void on(detail::LogicalDevice* device) { device_ = device; }

  ValueId parameter(const Shape& shape, DType dtype = DType::kFloat32) {
    Value value;
    value.kind = ValueKind::kParameter;
    value.shape = shape;
    value.dtype = dtype;
    value.device = device_;
    value.parameter_index = static_cast<int32_t>(graph.parameters.size());
    const ValueId id = graph.add_value(std::move(value));
    graph.parameters.push_back(id);
    return id;
  }

  // A captured tensor (a variable); `tensor` may be left undefined when the
  // test never runs the graph.
  ValueId capture(const Shape& shape, DType dtype = DType::kFloat32, Tensor tensor = {}) {
    Value value;
    value.kind = ValueKind::kCapture;
    value.shape = shape;
    value.dtype = dtype;
    value.device = device_;
    value.tensor = std::move(tensor);
    return graph.add_value(std::move(value));
  }

  ValueId constant(const Tensor& tensor) {
    Value value;
    value.kind = ValueKind::kConstant;
    value.shape = tensor.shape();
    value.dtype = tensor.dtype();
    value.device = device_;
    value.tensor = tensor;
    return graph.add_value(std::move(value));
  }

  // A node of `op` with one output of `shape` and `dtype`.
  ValueId op(int32_t op, std::vector<ValueId> inputs, const Shape& shape, DType dtype = DType::kFloat32,
             std::vector<std::byte> attributes = {}) {
    const int32_t index = node(op, std::move(inputs), {{shape, dtype}}, std::move(attributes));
    return graph.nodes[static_cast<size_t>(index)].outputs[0];
  }

  // A node with any number of outputs; returns its index.
  int32_t node(int32_t op, std::vector<ValueId> inputs, const std::vector<std::pair<Shape, DType>>& outputs,
               std::vector<std::byte> attributes = {}) {
    Node added;
    added.op = op;
    added.inputs = std::move(inputs);
    added.device = device_;
    added.attributes = std::move(attributes);
    added.label = node_name(op);
    return graph.add_node(std::move(added), outputs);
  }

  ValueId unary(int32_t op, ValueId x) { return this->op(op, {x}, shape(x), dtype(x)); }
  ValueId binary(int32_t op, ValueId a, ValueId b) {
    const bool comparison = op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL;
    return this->op(op, {a, b}, broadcast_shape(shape(a), shape(b)), comparison ? DType::kBool : dtype(a));
  }
  ValueId cast(ValueId x, DType to) { return op(ACCEL_OP_CAST, {x}, shape(x), to); }
  ValueId reshape(ValueId x, const Shape& to) { return op(kReshapeNode, {x}, to, dtype(x)); }
  ValueId fill(const Shape& shape, double value, DType dtype = DType::kFloat32) {
    AccelFillAttributes attributes{sizeof(AccelFillAttributes), value};
    return op(ACCEL_OP_FILL, {}, shape, dtype, bytes_of(attributes));
  }
  ValueId reduce(int32_t op, ValueId x, std::initializer_list<int32_t> axes, bool keep_dims = false) {
    AccelReduceAttributes attributes{};
    attributes.struct_size = sizeof(attributes);
    std::vector<int64_t> dims;
    const Shape input = shape(x);
    for (int32_t axis = 0; axis < input.rank(); ++axis) {
      const bool reduced = std::find(axes.begin(), axes.end(), axis) != axes.end();
      if (!reduced) dims.push_back(input[axis]);
      if (reduced && keep_dims) dims.push_back(1);
    }
    for (int32_t axis : axes) attributes.axes[attributes.num_axes++] = axis;
    attributes.keep_dims = keep_dims ? 1 : 0;
    return this->op(op, {x}, Shape(dims), dtype(x), bytes_of(attributes));
  }
  ValueId matmul(ValueId a, ValueId b) {
    AccelMatmulAttributes attributes{};
    attributes.struct_size = sizeof(attributes);
    return op(ACCEL_OP_MATMUL, {a, b}, Shape{shape(a)[0], shape(b)[1]}, dtype(a), bytes_of(attributes));
  }
  // Stride 1, no padding: [N,H,W,C] * [R,S,C,K] -> [N,H-R+1,W-S+1,K].
  static AccelConv2dAttributes plain_convolution() {
    AccelConv2dAttributes attributes{};
    attributes.struct_size = sizeof(attributes);
    attributes.stride_h = attributes.stride_w = 1;
    attributes.dilation_h = attributes.dilation_w = 1;
    return attributes;
  }
  ValueId conv2d(ValueId x, ValueId filter) {
    const Shape in = shape(x);
    const Shape kernel = shape(filter);
    return op(ACCEL_OP_CONV2D, {x, filter}, Shape{in[0], in[1] - kernel[0] + 1, in[2] - kernel[1] + 1, kernel[3]},
              dtype(x), bytes_of(plain_convolution()));
  }
  ValueId conv2d_backward_input(ValueId dy, ValueId filter, const Shape& input_shape) {
    return op(ACCEL_OP_CONV2D_BACKWARD_INPUT, {dy, filter}, input_shape, dtype(dy), bytes_of(plain_convolution()));
  }
  int32_t sgd_update(ValueId variable, ValueId gradient) {
    AccelSgdAttributes attributes{};
    attributes.struct_size = sizeof(attributes);
    attributes.learning_rate = 0.1;
    return node(ACCEL_OP_SGD_UPDATE, {variable, gradient}, {}, bytes_of(attributes));
  }
  int32_t assign(ValueId destination, ValueId source) { return node(kAssignNode, {destination, source}, {}); }
  int32_t host(std::function<void()> work = [] {}) {
    Node added;
    added.op = kHostNode;
    added.host_work = std::move(work);
    added.label = "Host";
    return graph.add_node(std::move(added), {});
  }
  void result(ValueId id) { graph.results.push_back(id); }

  const Shape& shape(ValueId id) const { return graph.values[static_cast<size_t>(id)].shape; }
  DType dtype(ValueId id) const { return graph.values[static_cast<size_t>(id)].dtype; }

 private:
  detail::LogicalDevice* device_;
};

// The ops of the graph's nodes, in order.
inline std::vector<int32_t> ops_of(const Graph& graph) {
  std::vector<int32_t> ops;
  for (const Node& node : graph.nodes) ops.push_back(node.op);
  return ops;
}

inline int32_t count_op(const Graph& graph, int32_t op) {
  return static_cast<int32_t>(std::count_if(graph.nodes.begin(), graph.nodes.end(),
                                            [&](const Node& node) { return node.op == op; }));
}

// The node defining `id`, which must be a node output.
inline const Node& producer_of(const Graph& graph, ValueId id) {
  return graph.nodes[static_cast<size_t>(graph.values[static_cast<size_t>(id)].producer)];
}

// Runs a graph node by node with run_op (a fusion with its program, as the
// executor binds it), on the current device: a reference for what a pass
// must not change.
inline std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& arguments) {
  std::vector<Tensor> slots(graph.values.size());
  for (size_t index = 0; index < graph.parameters.size(); ++index) {
    slots[static_cast<size_t>(graph.parameters[index])] = arguments[index];
  }
  for (size_t index = 0; index < graph.values.size(); ++index) {
    if (graph.values[index].kind == ValueKind::kConstant || graph.values[index].kind == ValueKind::kCapture) {
      slots[index] = graph.values[index].tensor;
    }
  }
  for (const Node& node : graph.nodes) {
    std::vector<Tensor> inputs;
    for (ValueId input : node.inputs) inputs.push_back(slots[static_cast<size_t>(input)]);
    std::vector<detail::OutputSpec> outputs;
    for (ValueId output : node.outputs) {
      const Value& value = graph.values[static_cast<size_t>(output)];
      outputs.push_back({value.shape, value.dtype});
    }
    std::vector<std::byte> attributes = node.attributes;
    if (node.op == ACCEL_OP_FUSED_ELEMENTWISE) {
      auto* fused = reinterpret_cast<AccelFusedElementwiseAttributes*>(attributes.data());
      fused->num_instructions = static_cast<int32_t>(node.program->instructions.size());
      fused->instructions = node.program->instructions.data();
      fused->num_outputs = static_cast<int32_t>(node.program->outputs.size());
      fused->outputs = node.program->outputs.data();
    }
    std::vector<Tensor> results;
    if (node.op == kReshapeNode) {
      results.push_back(inputs[0].reshape(outputs[0].shape));
    } else {
      results = detail::run_op(static_cast<AccelOp>(node.op), inputs, outputs,
                               attributes.empty() ? nullptr : attributes.data());
    }
    for (size_t output = 0; output < node.outputs.size(); ++output) {
      slots[static_cast<size_t>(node.outputs[output])] = results[output];
    }
  }
  std::vector<Tensor> results;
  for (ValueId result : graph.results) results.push_back(slots[static_cast<size_t>(result)]);
  return results;
}

inline Tensor random_tensor(const Shape& shape, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-2.0f, 2.0f);
  std::vector<float> values(static_cast<size_t>(shape.element_count()));
  for (float& value : values) value = distribution(generator);
  return Tensor::from_vector<float>(values, shape);
}

// Same shapes and dtypes; integers equal, floats to rounding.
inline void expect_same_results(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t index = 0; index < expected.size(); ++index) {
    ASSERT_EQ(actual[index].shape(), expected[index].shape()) << "result " << index;
    ASSERT_EQ(actual[index].dtype(), expected[index].dtype()) << "result " << index;
    if (expected[index].dtype() == DType::kInt32) {
      EXPECT_EQ(actual[index].to_vector<int32_t>(), expected[index].to_vector<int32_t>()) << "result " << index;
      continue;
    }
    const std::vector<float> want = expected[index].to_vector<float>();
    const std::vector<float> got = actual[index].to_vector<float>();
    for (size_t element = 0; element < want.size(); ++element) {
      EXPECT_NEAR(got[element], want[element], 1e-5f * (1.0f + std::abs(want[element])))
          << "result " << index << " element " << element;
    }
  }
}

}  // namespace accel::graph::testing
