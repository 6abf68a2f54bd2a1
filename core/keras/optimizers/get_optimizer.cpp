// Optimizers by Keras name (keras.optimizers.get), case-insensitive as Keras.
#include <accel/keras/optimizers.hpp>

#include <accel/error.hpp>

#include <algorithm>
#include <cctype>

namespace accel::keras {

std::shared_ptr<Optimizer> get_optimizer(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "adam") return std::make_shared<Adam>();
  if (lower == "adamw") return std::make_shared<AdamW>();
  if (lower == "sgd") return std::make_shared<SGD>();
  if (lower == "rmsprop") return std::make_shared<RMSprop>();
  throw InvalidArgumentError("unknown optimizer '" + std::string(name) + "'; expected one of adam, adamw, sgd, rmsprop");
}

}  // namespace accel::keras
