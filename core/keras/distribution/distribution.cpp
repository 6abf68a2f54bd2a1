#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/distribution/processes.hpp>

#include <accel/config.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>

#include <mutex>

namespace accel::keras::distribution {

Distribution::Distribution(DeviceMesh mesh, std::string batch_dim_name)
    : mesh_(std::move(mesh)), batch_dim_name_(std::move(batch_dim_name)) {
  (void)mesh_.axis_size(batch_dim_name_);  // names the mesh's axes when it has no such axis
}

namespace {

std::mutex global_mutex;
std::shared_ptr<const Distribution> global_distribution;

}  // namespace

void set_distribution(std::shared_ptr<const Distribution> distribution) {
  const std::lock_guard lock(global_mutex);
  global_distribution = std::move(distribution);
}

std::shared_ptr<const Distribution> distribution() {
  const std::lock_guard lock(global_mutex);
  return global_distribution;
}

TensorLayout Distribution::data_layout(int32_t rank) const {
  TensorLayout layout = TensorLayout::replicated(rank);
  if (rank > 0) layout.axes[0] = batch_dim_name_;
  return layout;
}

namespace {

DeviceMesh one_axis_mesh(std::vector<std::string> devices) {
  if (devices.empty()) {
    // As Keras: every device of the default type (the type listed first), in every process.
    const std::vector<config::LogicalDevice> all = config::list_logical_devices();
    if (!all.empty()) devices = list_devices(all.front().device_type);
  }
  const auto count = static_cast<int64_t>(devices.size());
  return DeviceMesh({count}, {"batch"}, std::move(devices));
}

}  // namespace

DataParallel::DataParallel(std::vector<std::string> devices) : Distribution(one_axis_mesh(std::move(devices)), "batch") {}

DataParallel::DataParallel(DeviceMesh mesh) : Distribution(mesh, mesh.axis_names().front()) {
  if (mesh.axis_names().size() != 1) {
    throw InvalidArgumentError(fmt::format("DataParallel: a mesh of one axis; this one has {}", mesh.axis_names().size()));
  }
}

TensorLayout DataParallel::variable_layout(const std::string& /*path*/, int32_t rank) const {
  return TensorLayout::replicated(rank);
}

ModelParallel::ModelParallel(LayoutMap layout_map, std::optional<std::string> batch_dim_name)
    : Distribution(layout_map.mesh(), batch_dim_name.value_or(layout_map.mesh().axis_names().front())),
      layout_map_(std::move(layout_map)) {}

TensorLayout ModelParallel::variable_layout(const std::string& path, int32_t rank) const {
  const std::optional<TensorLayout> layout = layout_map_.find(path);
  if (!layout) return TensorLayout::replicated(rank);
  if (static_cast<int32_t>(layout->axes.size()) != rank) {
    throw InvalidArgumentError(fmt::format("ModelParallel: the layout {} found for '{}' has {} axes; the variable has {} "
                                           "dimensions",
                                           format_layout(*layout), path, layout->axes.size(), rank));
  }
  return *layout;
}

}  // namespace accel::keras::distribution
