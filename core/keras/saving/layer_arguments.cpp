// LayerArguments: typed, strict reads of a Keras 3 layer config.
#include "layer_arguments.hpp"

#include <accel/error.hpp>
#include <accel/keras/layer_shape.hpp>

namespace accel::keras::saving {

std::optional<DTypePolicy> read_dtype_policy(const nlohmann::json& dtype) {
  if (dtype.is_null()) return std::nullopt;
  const bool policy_object = dtype.is_object() && dtype.value("class_name", nlohmann::json()) == "DTypePolicy";
  const nlohmann::json name =
      policy_object ? dtype.value("config", nlohmann::json::object()).value("name", nlohmann::json()) : dtype;
  if (!name.is_string()) {
    throw InvalidArgumentError("dtype " + dtype.dump().substr(0, 200) +
                               " is not a dtype policy accel has (expected a DTypePolicy object or one of the "
                               "names float32, bfloat16, float16, mixed_bfloat16, mixed_float16; quantized "
                               "policies and policy maps are not supported)");
  }
  try {
    return DTypePolicy(name.get<std::string>());
  } catch (const InvalidArgumentError& error) {
    throw InvalidArgumentError(std::string("dtype: ") + error.what());
  }
}

LayerArguments::LayerArguments(const nlohmann::json& config, std::string class_name, std::string source,
                               std::string kind)
    : config_(config), class_name_(std::move(class_name)), source_(std::move(source)), kind_(std::move(kind)) {
  if (!config_.is_object()) fail("its \"config\" is not an object");
  if (const nlohmann::json* name = take("name"); name != nullptr && name->is_string()) {
    layer_name_ = name->get<std::string>();
  }
  ignore("trainable");  // read by the model reader, which sets it after construction
  if (const nlohmann::json* dtype = take("dtype"); dtype != nullptr) {
    try {
      dtype_policy_ = read_dtype_policy(*dtype);
    } catch (const InvalidArgumentError& error) {
      fail(error.what());
    }
  }
}

const nlohmann::json* LayerArguments::take(const std::string& key) {
  taken_.insert(key);
  const auto found = config_.find(key);
  return found == config_.end() ? nullptr : &*found;
}

void LayerArguments::fail(const std::string& what) const {
  throw InvalidArgumentError(source_ + ": " + kind_ + " '" + layer_name_ + "' (" + class_name_ + "): " + what);
}

int64_t LayerArguments::integer(const std::string& key, int64_t fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (!value->is_number_integer()) fail("argument '" + key + "' is " + value->dump() + ", expected an integer");
  return value->get<int64_t>();
}

double LayerArguments::number(const std::string& key, double fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (!value->is_number()) fail("argument '" + key + "' is " + value->dump() + ", expected a number");
  return value->get<double>();
}

bool LayerArguments::boolean(const std::string& key, bool fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) fail("argument '" + key + "' is " + value->dump() + ", expected true or false");
  return value->get<bool>();
}

std::optional<double> LayerArguments::optional_number(const std::string& key) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_number()) fail("argument '" + key + "' is " + value->dump() + ", expected null or a number");
  return value->get<double>();
}

std::string LayerArguments::text(const std::string& key, const std::string& fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (!value->is_string()) fail("argument '" + key + "' is " + value->dump() + ", expected a string");
  return value->get<std::string>();
}

std::array<int32_t, 2> LayerArguments::pair(const std::string& key, std::array<int32_t, 2> fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (value->is_number_integer()) return {value->get<int32_t>(), value->get<int32_t>()};
  if (value->is_array() && value->size() == 2 && (*value)[0].is_number_integer() && (*value)[1].is_number_integer()) {
    return {(*value)[0].get<int32_t>(), (*value)[1].get<int32_t>()};
  }
  fail("argument '" + key + "' is " + value->dump() + ", expected an integer or a pair of integers");
}

std::optional<std::array<int32_t, 2>> LayerArguments::optional_pair(const std::string& key) {
  const auto found = config_.find(key);
  if (found == config_.end() || found->is_null()) {
    taken_.insert(key);
    return std::nullopt;
  }
  return pair(key, {1, 1});
}

std::vector<int64_t> LayerArguments::shape(const std::string& key) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || !value->is_array()) fail("argument '" + key + "' is missing or not a list of sizes");
  std::vector<int64_t> dims;
  for (const nlohmann::json& dim : *value) {
    if (dim.is_null()) {
      dims.push_back(kUnknownDim);
    } else if (dim.is_number_integer() && dim.get<int64_t>() >= -1) {  // -1: inferred (Reshape)
      dims.push_back(dim.get<int64_t>());
    } else {
      fail("argument '" + key + "' is " + value->dump() + ", expected sizes (null for any size)");
    }
  }
  return dims;
}

std::optional<std::vector<int64_t>> LayerArguments::optional_shape(const std::string& key) {
  const auto found = config_.find(key);
  if (found == config_.end() || found->is_null()) {
    taken_.insert(key);
    return std::nullopt;
  }
  return shape(key);
}

nlohmann::json LayerArguments::raw(const std::string& key) {
  const nlohmann::json* value = take(key);
  return value == nullptr ? nlohmann::json() : *value;
}

std::optional<uint64_t> LayerArguments::optional_seed(const std::string& key) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_number_integer()) fail("argument '" + key + "' is " + value->dump() + ", expected null or an integer");
  return value->get<uint64_t>();
}

std::shared_ptr<Initializer> LayerArguments::initializer(const std::string& key,
                                                         std::shared_ptr<Initializer> fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || value->is_null()) return fallback;
  if (value->is_string()) {
    try {
      return get_initializer(value->get<std::string>());
    } catch (const InvalidArgumentError& error) {
      fail("argument '" + key + "': " + error.what());
    }
  }
  const std::string class_name = value->value("class_name", "");
  const nlohmann::json config = value->value("config", nlohmann::json::object());
  // Keras 3 adds input_axes / output_axes (for EinsumDense fans); null is the default.
  for (const char* axes : {"input_axes", "output_axes"}) {
    if (config.contains(axes) && !config[axes].is_null()) {
      fail("argument '" + key + "': " + class_name + " with " + axes + " is not supported");
    }
  }
  const std::optional<uint64_t> seed =
      config.contains("seed") && config["seed"].is_number_integer() ? std::optional(config["seed"].get<uint64_t>())
                                                                     : std::nullopt;
  if (class_name == "Zeros") return std::make_shared<Zeros>();
  if (class_name == "Ones") return std::make_shared<Ones>();
  if (class_name == "GlorotUniform") return std::make_shared<GlorotUniform>(seed);
  if (class_name == "HeNormal") return std::make_shared<HeNormal>(seed);
  if (class_name == "RandomUniform") {
    return std::make_shared<RandomUniform>(config.value("minval", -0.05), config.value("maxval", 0.05), seed);
  }
  fail("argument '" + key + "' is the initializer " + value->dump() +
       "; accel knows Zeros, Ones, GlorotUniform, HeNormal and RandomUniform");
}

void LayerArguments::require(const std::string& key, const nlohmann::json& only_value, const std::string& why) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || *value == only_value) return;
  fail("argument '" + key + "' is " + value->dump() + "; accel supports only " + only_value.dump() + " (" + why + ")");
}

void LayerArguments::ignore(const std::string& key) { taken_.insert(key); }

void LayerArguments::finish() const {
  std::string unknown;
  for (const auto& [key, value] : config_.items()) {
    if (!taken_.contains(key)) unknown += (unknown.empty() ? "'" : ", '") + key + "'";
  }
  if (!unknown.empty()) fail("unknown argument " + unknown + " (not an argument of accel's " + class_name_ + ")");
}

}  // namespace accel::keras::saving
