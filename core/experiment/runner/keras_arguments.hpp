// Reading the typed arguments of a configured Keras object (a layer, an
// optimizer, a loss): a value written or defaulted, else the caller's
// fallback, in the C++ types the Keras constructors take. Shared by the
// layer and model factories.
#pragma once

#include <accel/error.hpp>
#include <accel/experiment/experiment.hpp>
#include <accel/keras/initializers.hpp>

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace accel::experiment {

// Something the schema accepts that accel's Keras lacks: the run fails with this reason.
[[noreturn]] inline void unsupported(const std::string& kind, const std::string& name) {
  throw UnimplementedError(fmt::format("{} '{}' is not implemented by accel's Keras yet", kind, name));
}

inline const Value* set_argument(const KerasObject& object, const std::string& key) {
  const Value* value = object.argument(key);
  return value != nullptr && value->is_set() ? value : nullptr;
}

inline std::string text_or(const KerasObject& object, const std::string& key, std::string fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_text() : fallback;
}

inline double number_or(const KerasObject& object, const std::string& key, double fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_number() : fallback;
}

inline int64_t int_or(const KerasObject& object, const std::string& key, int64_t fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_int() : fallback;
}

inline bool bool_or(const KerasObject& object, const std::string& key, bool fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_bool() : fallback;
}

// 3 -> {3, 3}; [3, 2] -> {3, 2}.
inline std::array<int32_t, 2> pair_of(const Value& value) {
  const std::vector<int64_t> ints = value.as_ints();
  if (ints.size() == 1) return {static_cast<int32_t>(ints[0]), static_cast<int32_t>(ints[0])};
  return {static_cast<int32_t>(ints.at(0)), static_cast<int32_t>(ints.at(1))};
}

inline std::array<int32_t, 2> pair_or(const KerasObject& object, const std::string& key,
                                      std::array<int32_t, 2> fallback) {
  const Value* value = set_argument(object, key);
  return value ? pair_of(*value) : fallback;
}

// A written initializer by name; the Keras class's own default otherwise.
inline std::shared_ptr<keras::Initializer> initializer_or_default(const KerasObject& object, const std::string& key,
                                                                  std::shared_ptr<keras::Initializer> fallback) {
  const Value* value = set_argument(object, key);
  if (!value || value->defaulted) return fallback;
  return keras::get_initializer(value->as_text());
}

}  // namespace accel::experiment
