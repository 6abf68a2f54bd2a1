// LayoutMap (keras.distribution.LayoutMap): variable paths to layouts, by
// regular expression, as Keras matches them: a key equal to the path wins;
// else the one key that re.search finds in the path; a path that two keys
// match is an error, and one that no key matches has no layout (whole).
#pragma once

#include <accel/keras/distribution/device_mesh.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accel::keras::distribution {

class LayoutMap {
 public:
  explicit LayoutMap(DeviceMesh mesh) : mesh_(std::move(mesh)) {}

  // layout_map["dense.*kernel"] = (None, "model"). Throws InvalidArgumentError
  // for a key that is not a regular expression, an axis the mesh does not
  // have, or an axis named twice; a key set again replaces its layout.
  void set(const std::string& key, TensorLayout layout);
  // The layout of the variable at `path` ("dense/kernel"), or none.
  std::optional<TensorLayout> find(const std::string& path) const;

  const DeviceMesh& mesh() const noexcept { return mesh_; }
  const std::vector<std::pair<std::string, TensorLayout>>& entries() const noexcept { return entries_; }

 private:
  DeviceMesh mesh_;
  std::vector<std::pair<std::string, TensorLayout>> entries_;  // in the order set
};

}  // namespace accel::keras::distribution
