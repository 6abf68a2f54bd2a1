// Internal: one layer's config from a Keras 3 config.json, read strictly
// (and, named as such in messages, the other Keras objects of a file: an
// optimizer's or a loss's config in compile_config).
// Each argument accel understands is taken once; an argument left over at the
// end, or one whose value accel cannot honour (a regularizer, a constraint,
// channels_first), is an error naming the file, the layer and the argument,
// so that a model never loads as something other than what was saved.
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/mixed_precision.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace accel::keras::saving {

// A config's "dtype": a Keras 3 DTypePolicy object or a policy name; null
// gives nullopt (the global policy). Anything else is InvalidArgumentError.
std::optional<DTypePolicy> read_dtype_policy(const nlohmann::json& dtype);

class LayerArguments {
 public:
  // `config` is the layer's "config" object; `source` the file; `kind` what
  // the object is, for messages ("layer", "optimizer", "loss").
  LayerArguments(const nlohmann::json& config, std::string class_name, std::string source, std::string kind = "layer");

  const std::string& layer_name() const noexcept { return layer_name_; }
  const std::string& class_name() const noexcept { return class_name_; }
  // The layer's "dtype" (a DTypePolicy object or a policy name); unset when
  // the config leaves it out or null, where the layer takes the global policy.
  const std::optional<DTypePolicy>& dtype_policy() const noexcept { return dtype_policy_; }

  // The argument's value, or `fallback` when the config leaves it out.
  int64_t integer(const std::string& key, int64_t fallback);
  double number(const std::string& key, double fallback);
  bool boolean(const std::string& key, bool fallback);
  std::string text(const std::string& key, const std::string& fallback);
  // An int or a pair ([3, 3]) as Keras's kernel_size and strides.
  std::array<int32_t, 2> pair(const std::string& key, std::array<int32_t, 2> fallback);
  // Like pair, but null stays nullopt (pooling strides).
  std::optional<std::array<int32_t, 2>> optional_pair(const std::string& key);
  // Like number, but absent or null stays nullopt (an optimizer's clipnorm).
  std::optional<double> optional_number(const std::string& key);
  // A shape with null (or -1, as Reshape's target_shape may hold) for unknown axes.
  std::vector<int64_t> shape(const std::string& key);
  // Like shape, but absent or null stays nullopt.
  std::optional<std::vector<int64_t>> optional_shape(const std::string& key);
  // The argument's JSON as written (null when absent), for arguments of several spellings.
  nlohmann::json raw(const std::string& key);
  // null or an integer.
  std::optional<uint64_t> optional_seed(const std::string& key);
  // An initializer object ({"class_name": "GlorotUniform", "config": {"seed": 1}}) or name.
  std::shared_ptr<Initializer> initializer(const std::string& key, std::shared_ptr<Initializer> fallback);

  // Arguments accel accepts only with this value (or absent): null for
  // regularizers and constraints, "channels_last" for data_format, ...
  void require(const std::string& key, const nlohmann::json& only_value, const std::string& why);
  // Arguments that do not change the computation (trainable is read separately).
  void ignore(const std::string& key);

  // Throws for every argument not taken.
  void finish() const;

  [[noreturn]] void fail(const std::string& what) const;

 private:
  const nlohmann::json* take(const std::string& key);

  const nlohmann::json& config_;
  std::string class_name_;
  std::string source_;
  std::string kind_;
  std::string layer_name_;
  std::optional<DTypePolicy> dtype_policy_;
  std::set<std::string> taken_;
};

}  // namespace accel::keras::saving
