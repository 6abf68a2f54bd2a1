// Layouts made from a mesh's axis names, for a model whose variables no
// LayoutMap describes: what `accel tpu estimate --mesh fsdp=256,tensor=4`
// and an experiment's `distribution: {mesh: ...}` shard a model with.
//   data    the batch split over it; the weights whole on every device.
//   fsdp    the batch split over it, and every variable (with its optimizer
//           slots) split along its largest dimension the axis divides,
//           gathered before use (MaxText's FSDP over the embedding axis).
//   tensor  every variable split along its first dimension other than the
//           model's width (the size most variables' dimensions share) that
//           the axis divides: attention heads, the MLP's hidden units, the
//           vocabulary (Megatron's column- and row-parallel layers).
// One of data and fsdp is the batch axis; tensor composes with either.
#pragma once

#include <accel/autodiff/variable.hpp>
#include <accel/keras/distribution/distribution.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::keras::distribution {

// The batch axis of a mesh of these axis names ("fsdp" or "data"). Throws
// InvalidArgumentError for a name other than data, fsdp and tensor, for a
// name given twice, for both data and fsdp, or for neither.
std::string auto_layout_batch_axis(const std::vector<std::string>& axis_names);

// A ModelParallel over `mesh` with a LayoutMap of each variable of
// `weights` (by its exact path); the mesh's axis names as
// auto_layout_batch_axis takes them.
std::shared_ptr<const Distribution> auto_distribution(const DeviceMesh& mesh, const std::vector<Variable>& weights);

}  // namespace accel::keras::distribution
