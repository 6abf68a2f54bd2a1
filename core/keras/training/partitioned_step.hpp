// Model::PartitionedStep: the built-in train step traced once for a batch's
// shapes and partitioned by the SPMD pass with the global distribution's
// layouts (the batch along its batch axis, each variable as the
// distribution lays it out, each optimizer slot as its variable). Made by
// Model::partition_train_step (sharded_steps.cpp); run on the mesh by fit
// (SpmdProgram) or on one device by analyze_device_step, both compiled with
// partitioned_step_options.
#pragma once

#include <accel/function.hpp>
#include <accel/keras/model.hpp>

#include "graph/graph.hpp"
#include "graph/passes/passes.hpp"

namespace accel::keras {

struct Model::PartitionedStep {
  graph::Graph graph;  // as partitioned: every value's shape is one device's
  graph::SpmdPartition partition;
};

// The compiler's options for the partitioned step, as the model's compile
// asked (jit_compile's fusions, remat): one for fit's program and the pod
// estimate's, so that the estimate prices the program fit runs.
inline FunctionOptions partitioned_step_options(const Model& model) {
  return FunctionOptions{.name = "partitioned_train_step", .jit_compile = model.jit_compile(), .remat = model.remat()};
}

}  // namespace accel::keras
