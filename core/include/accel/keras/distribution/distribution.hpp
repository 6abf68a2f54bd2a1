// Distribution, DataParallel and ModelParallel (keras.distribution): what a
// model's compiled steps are split by. A distribution gives the layout of
// each batch (split along its batch axis) and of each variable (whole, or as
// its LayoutMap says; an optimizer's slots take their variable's layout);
// the SPMD partitioning pass turns those into each device's program
// (docs/sharding.md).
#pragma once

#include <accel/keras/distribution/device_mesh.hpp>
#include <accel/keras/distribution/layout_map.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accel::keras::distribution {

class Distribution {
 public:
  virtual ~Distribution() = default;

  const DeviceMesh& mesh() const noexcept { return mesh_; }
  const std::string& batch_dim_name() const noexcept { return batch_dim_name_; }

  // A batch of `rank` dimensions: the first split along the batch axis.
  TensorLayout data_layout(int32_t rank) const;
  // The variable at `path` ("dense/kernel", Keras 3's variable path) of
  // `rank` dimensions; throws InvalidArgumentError when the layout found has
  // another rank, naming the path and the key.
  virtual TensorLayout variable_layout(const std::string& path, int32_t rank) const = 0;

 protected:
  Distribution(DeviceMesh mesh, std::string batch_dim_name);

 private:
  DeviceMesh mesh_;
  std::string batch_dim_name_;
};

// Data parallelism: a one-axis mesh ("batch" by default) over `devices`
// (none: every device of the default type, in every process, as
// list_devices names them); the batch split, every variable whole on every
// device.
class DataParallel : public Distribution {
 public:
  explicit DataParallel(std::vector<std::string> devices = {});
  explicit DataParallel(DeviceMesh mesh);
  TensorLayout variable_layout(const std::string& path, int32_t rank) const override;
};

// Model parallelism (with data parallelism, FSDP and tensor parallelism as
// layouts): variables as `layout_map` lays them out, the batch split along
// `batch_dim_name` (default: the mesh's first axis).
class ModelParallel : public Distribution {
 public:
  explicit ModelParallel(LayoutMap layout_map, std::optional<std::string> batch_dim_name = std::nullopt);
  TensorLayout variable_layout(const std::string& path, int32_t rank) const override;
  const LayoutMap& layout_map() const noexcept { return layout_map_; }

 private:
  LayoutMap layout_map_;
};

// keras.distribution.set_distribution / distribution(): the distribution that
// models compiled from now on shard their compiled train step by (fit then
// runs it as an SPMD program over the mesh's devices); null: none.
// Process-wide, as Keras's global.
void set_distribution(std::shared_ptr<const Distribution> distribution);
std::shared_ptr<const Distribution> distribution();

}  // namespace accel::keras::distribution
