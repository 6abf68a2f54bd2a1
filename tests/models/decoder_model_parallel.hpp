// The layouts the one-process sharding tests fit the zoo's decoder under:
// FSDP over "data" x tensor parallelism over "model" on a 2 x 2 mesh of the
// logical CPUs /CPU:0 ... /CPU:3 (attention heads, the MLP's hidden axis,
// the token embedding over both axes).
#pragma once

#include <accel/keras/distribution/distribution.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accel::model_zoo {

inline std::shared_ptr<keras::distribution::ModelParallel> decoder_model_parallel() {
  using keras::distribution::TensorLayout;
  keras::distribution::LayoutMap layout_map(
      keras::distribution::DeviceMesh({2, 2}, {"data", "model"}, {"/CPU:0", "/CPU:1", "/CPU:2", "/CPU:3"}));
  layout_map.set("(query|key|value)/kernel$", TensorLayout{{"data", "model", std::nullopt}});
  layout_map.set("attention_output/kernel$", TensorLayout{{"model", std::nullopt, "data"}});
  layout_map.set("mlp_in/kernel$", TensorLayout{{"data", "model"}});
  layout_map.set("mlp_out/kernel$", TensorLayout{{"model", "data"}});
  layout_map.set("token_embedding/embeddings$", TensorLayout{{"model", "data"}});
  return std::make_shared<keras::distribution::ModelParallel>(layout_map, "data");
}

}  // namespace accel::model_zoo
