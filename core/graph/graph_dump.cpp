// graph_to_text: values, nodes with their attributes, fusion programs.
#include "graph/graph_dump.hpp"

#include "runtime/logical_device.hpp"
#include "runtime/op_registry.hpp"

#include <accel/plugin/op_classes.hpp>

#include <fmt/format.h>

namespace accel::graph {
namespace {

// " CPU:0"; nothing for a node on no device (a host node).
std::string short_device(const detail::LogicalDevice* device) {
  if (device == nullptr) return "";
  return fmt::format(" {}:{}", device->type(), device->index());
}

std::string type_of(const Value& value) {
  std::string dims;
  for (int32_t axis = 0; axis < value.shape.rank(); ++axis) dims += (axis ? "," : "") + std::to_string(value.shape[axis]);
  return fmt::format("{}[{}]", dtype_name(value.dtype), dims);
}

std::string epilogue_text(int32_t flags, AccelOp activation) {
  if (flags == 0) return "";
  std::string text = ", epilogue ";
  std::string separator;
  if (flags & ACCEL_EPILOGUE_BIAS) { text += "bias"; separator = "+"; }
  if (flags & ACCEL_EPILOGUE_ACTIVATION) { text += separator + detail::op_info(activation).name; separator = "+"; }
  if (flags & ACCEL_EPILOGUE_RELU_MASK) text += separator + "relu_mask";
  return text;
}

std::string convolution_text(const AccelConv2dAttributes& a) {
  return fmt::format("stride {}x{}, dilation {}x{}, pad {},{},{},{}", a.stride_h, a.stride_w, a.dilation_h,
                     a.dilation_w, a.pad_top, a.pad_bottom, a.pad_left, a.pad_right);
}

std::string pool_text(const AccelPoolAttributes& a) {
  return fmt::format("window {}x{}, stride {}x{}, pad {},{},{},{}", a.window_h, a.window_w, a.stride_h, a.stride_w,
                     a.pad_top, a.pad_bottom, a.pad_left, a.pad_right);
}

std::string attributes_text(const Node& node) {
  if (!node.has_attributes()) return "";
  switch (node.op) {
    case ACCEL_OP_MAX_POOL:
    case ACCEL_OP_MAX_POOL_BACKWARD:
    case ACCEL_OP_AVG_POOL:
    case ACCEL_OP_AVG_POOL_BACKWARD:
      return fmt::format(" {{{}}}", pool_text(node.attributes_as<AccelPoolAttributes>()));
    case ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER: {
      const auto& a = node.attributes_as<AccelPoolFilterGradientAttributes>();
      return fmt::format(" {{pool {}; convolution {}}}", pool_text(a.pool), convolution_text(a.convolution));
    }
    case ACCEL_OP_MATMUL: {
      const auto& a = node.attributes_as<AccelMatmulAttributes>();
      return fmt::format(" {{transpose_a {}, transpose_b {}{}}}", a.transpose_a, a.transpose_b,
                         epilogue_text(a.epilogue_flags, a.activation));
    }
    case ACCEL_OP_CONV2D:
    case ACCEL_OP_CONV2D_BACKWARD_INPUT:
    case ACCEL_OP_CONV2D_BACKWARD_FILTER: {
      const auto& a = node.attributes_as<AccelConv2dAttributes>();
      return fmt::format(" {{{}{}}}", convolution_text(a), epilogue_text(a.epilogue_flags, a.activation));
    }
    case ACCEL_OP_REDUCE_SUM:
    case ACCEL_OP_REDUCE_MEAN:
    case ACCEL_OP_REDUCE_MAX:
    case ACCEL_OP_REDUCE_MIN: {
      const auto& a = node.attributes_as<AccelReduceAttributes>();
      std::string axes;
      for (int32_t i = 0; i < a.num_axes; ++i) axes += (i ? "," : "") + std::to_string(a.axes[i]);
      return fmt::format(" {{axes [{}], keep_dims {}}}", axes, a.keep_dims);
    }
    case ACCEL_OP_FILL:
      return fmt::format(" {{value {}}}", node.attributes_as<AccelFillAttributes>().value);
    case ACCEL_OP_BATCH_NORM:
    case ACCEL_OP_BATCH_NORM_BACKWARD:
      return fmt::format(" {{epsilon {}}}", node.attributes_as<AccelBatchNormAttributes>().epsilon);
    default:
      return fmt::format(" {{{} bytes}}", node.attributes.size());
  }
}

std::string program_text(const FusedProgram& program) {
  std::string text;
  for (size_t index = 0; index < program.instructions.size(); ++index) {
    const AccelFusedInstruction& instruction = program.instructions[index];
    std::string body;
    switch (instruction.kind) {
      case ACCEL_FUSED_LOAD: body = fmt::format("load(input {})", instruction.operands[0]); break;
      case ACCEL_FUSED_CONSTANT: body = fmt::format("constant({})", instruction.value); break;
      case ACCEL_FUSED_OP: {
        const int32_t arity = instruction.op == ACCEL_OP_SELECT ? 3 : sdk::is_binary_elementwise(instruction.op) ? 2 : 1;
        std::string operands;
        for (int32_t i = 0; i < arity; ++i) operands += fmt::format("{}${}", i ? ", " : "", instruction.operands[i]);
        body = fmt::format("{}({})", detail::op_info(instruction.op).name, operands);
        break;
      }
    }
    text += fmt::format("      ${} = {} {}\n", index, body, dtype_name(static_cast<DType>(instruction.dtype)));
  }
  for (size_t index = 0; index < program.outputs.size(); ++index) {
    const AccelFusedOutput& output = program.outputs[index];
    std::string reduction;
    if (output.reduce_op != 0) {
      std::string axes;
      for (int32_t i = 0; i < output.num_axes; ++i) axes += (i ? "," : "") + std::to_string(output.axes[i]);
      reduction = fmt::format(" reduced by {} over [{}]", detail::op_info(output.reduce_op).name, axes);
    }
    text += fmt::format("      output {} = ${}{}\n", index, output.value, reduction);
  }
  return text;
}

}  // namespace

std::string graph_to_text(const Graph& graph, const std::string& name, const BufferPlan* plan) {
  std::string text = fmt::format("graph {} ({} nodes, {} values)\n", name, graph.nodes.size(), graph.values.size());
  for (size_t index = 0; index < graph.values.size(); ++index) {
    const Value& value = graph.values[index];
    if (value.kind == ValueKind::kNodeOutput) continue;
    const char* kind = value.kind == ValueKind::kParameter ? "parameter" : value.kind == ValueKind::kCapture ? "capture" : "constant";
    const std::string argument = value.kind == ValueKind::kParameter ? std::to_string(value.parameter_index) : "";
    text += fmt::format("  %{} = {}({}) {}{}\n", index, kind, argument, type_of(value), short_device(value.device));
  }
  for (const Node& node : graph.nodes) {
    std::string inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) inputs += fmt::format("{}%{}", i ? ", " : "", node.inputs[i]);
    std::string outputs;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      std::string placement;
      if (plan != nullptr && static_cast<size_t>(node.outputs[i]) < plan->offsets.size() &&
          plan->offsets[static_cast<size_t>(node.outputs[i])] != BufferPlan::kNotPlanned) {
        placement = fmt::format(" @arena+{}", plan->offsets[static_cast<size_t>(node.outputs[i])]);
      }
      outputs += fmt::format("{}%{}{}", i ? ", " : "", node.outputs[i], placement);
      if (i + 1 == node.outputs.size()) outputs += " = ";
    }
    std::string types;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      types += (i ? ", " : " ") + type_of(graph.values[static_cast<size_t>(node.outputs[i])]);
    }
    const std::string label = node.label.empty() ? node_name(node.op) : node.label;
    text += fmt::format("  {}{}({}){}{}{}{}\n", outputs, label, inputs, attributes_text(node), types,
                        short_device(node.device), node.refresh ? " (refreshed each run)" : "");
    if (node.program) text += program_text(*node.program);
  }
  std::string results;
  for (size_t i = 0; i < graph.results.size(); ++i) results += fmt::format("{}%{}", i ? ", " : "", graph.results[i]);
  text += fmt::format("  return ({})\n", results);
  return text;
}

}  // namespace accel::graph
