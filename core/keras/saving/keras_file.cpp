// save_model / load_model: the three members of a .keras archive.
#include <accel/error.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/atomic_file.hpp>
#include <accel/keras/saving/keras_file.hpp>
#include <accel/keras/saving/weights_h5.hpp>

#include "compile_config.hpp"
#include "hdf5_file.hpp"
#include "model_config.hpp"
#include "zip_archive.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <optional>

namespace accel::keras::saving {
namespace {

// The Keras version whose files accel writes (TensorFlow 2.21's).
constexpr const char* kKerasVersion = "3.15.1";

std::string date_saved() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d@%H:%M:%S", &utc);
  return text;
}

nlohmann::json parse_member(const std::map<std::string, std::string>& members, const std::string& name,
                            const std::string& path) {
  const auto member = members.find(name);
  if (member == members.end()) {
    throw InvalidArgumentError(path + ": the archive has no " + name + " (a .keras file holds config.json, "
                               "metadata.json and model.weights.h5)");
  }
  nlohmann::json value = nlohmann::json::parse(member->second, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    throw InvalidArgumentError(path + ": " + name + " is not a JSON object");
  }
  return value;
}

// A .keras file's members, checked: metadata.json and config.json JSON
// objects, model.weights.h5 present.
struct KerasArchive {
  nlohmann::json config;
  std::string weights;  // model.weights.h5's bytes
};

KerasArchive read_keras_archive(const std::string& path) {
  std::map<std::string, std::string> members = read_zip_archive(path);
  (void)parse_member(members, "metadata.json", path);
  KerasArchive archive{parse_member(members, "config.json", path), {}};
  const auto weights = members.find("model.weights.h5");
  if (weights == members.end()) {
    throw InvalidArgumentError(path + ": the archive has no model.weights.h5" +
                               (members.contains("model.weights.npz")
                                    ? std::string(" (only the .npz form, which accel does not read)")
                                    : std::string()));
  }
  archive.weights = std::move(weights->second);
  return archive;
}

}  // namespace

void save_model(const Model& model, const std::string& path) {
  nlohmann::json config = model_config(model);
  if (std::optional<nlohmann::json> compiled = compile_config(model)) config["compile_config"] = std::move(*compiled);
  const nlohmann::json metadata{{"keras_version", kKerasVersion}, {"date_saved", date_saved()}};
  const std::string weights = weights_h5_image(model, path + ":model.weights.h5");
  write_file_atomically(path, make_zip_archive({{"metadata.json", metadata.dump()},
                                                {"config.json", config.dump()},
                                                {"model.weights.h5", weights}},
                                               path));
}

std::unique_ptr<Model> load_model(const std::string& path) {
  const KerasArchive archive = read_keras_archive(path);
  std::unique_ptr<Model> model = model_from_config(archive.config, path + ":config.json");
  // Compiled first, as Keras's load_model(compile=True), so that the
  // optimizer's state in model.weights.h5 is restored too.
  if (archive.config.contains("compile_config") && !archive.config["compile_config"].is_null()) {
    compile_from_config(*model, archive.config["compile_config"], path + ":config.json");
  }
  load_weights_h5_image(*model, archive.weights, path + ":model.weights.h5");
  return model;
}

KerasFileSummary inspect_keras_file(const std::string& path) {
  const KerasArchive archive = read_keras_archive(path);
  const ConfigSummary checked = check_model_config(archive.config, path + ":config.json");
  (void)Hdf5File::open_image(archive.weights, path + ":model.weights.h5");  // an HDF5 file at least
  return {checked.class_name, checked.name, checked.input_shapes, checked.outputs};
}

}  // namespace accel::keras::saving
