// The zoo's models by name.
#include "model_zoo.hpp"

#include <accel/error.hpp>

#include <functional>
#include <map>

namespace accel::model_zoo {
namespace {

const std::map<std::string, std::function<std::shared_ptr<keras::Model>()>>& builders() {
  static const std::map<std::string, std::function<std::shared_ptr<keras::Model>()>> table = {
      {"resnet50", [] { return resnet50(); }},
      {"resnet50_v1_5", [] { return resnet50_v1_5(); }},
      {"resnet18", [] { return resnet18(); }},
      {"resnet_small_28x28", [] { return resnet_small_28x28(); }},
      {"vit_fashion_mnist", [] { return vit_fashion_mnist(); }},
      {"transformer_encoder_classifier", [] { return transformer_encoder_classifier(); }},
      {"decoder_language_model", [] { return decoder_language_model(); }},
      {"decoder_lm", [] { return decoder_language_model(decoder_lm_options()); }},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& entry : builders()) list.push_back(entry.first);
    return list;
  }();
  return names;
}

std::shared_ptr<keras::Model> build_model(const std::string& name) {
  const auto found = builders().find(name);
  if (found == builders().end()) {
    std::string known;
    for (const std::string& candidate : model_names()) known += (known.empty() ? "" : ", ") + candidate;
    throw NotFoundError("no model '" + name + "' in the zoo; expected one of " + known);
  }
  return found->second();
}

}  // namespace accel::model_zoo
