#include "convert_command.hpp"

#include "commands.hpp"

#include <accel/error.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/keras_file.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <string_view>

namespace accel::cli {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

enum class FileKind { kKerasArchive, kWeights };

FileKind kind_of(const std::string& path) {
  if (ends_with(path, ".keras")) return FileKind::kKerasArchive;
  if (ends_with(path, ".h5") || ends_with(path, ".safetensors")) return FileKind::kWeights;
  throw InvalidArgumentError("'" + path +
                             "': unknown format; expected a .keras archive, a .weights.h5 file or a .safetensors file");
}

struct ConvertRequest {
  std::string input;
  std::string output;
  std::string model;  // the architecture for a weights-only input
};

void convert(const ConvertRequest& request) {
  const FileKind output_kind = kind_of(request.output);
  std::unique_ptr<keras::Model> model;
  if (kind_of(request.input) == FileKind::kKerasArchive) {
    model = keras::saving::load_model(request.input);
  } else {
    if (request.model.empty() || kind_of(request.model) != FileKind::kKerasArchive) {
      throw InvalidArgumentError("'" + request.input +
                                 "' holds weights only; name the model they belong to with --model ARCH.keras");
    }
    model = keras::saving::load_model(request.model);
    model->load_weights(request.input);
  }
  if (output_kind == FileKind::kKerasArchive) {
    keras::saving::save_model(*model, request.output);
  } else {
    model->save_weights(request.output);
  }
  std::cout << fmt::format("{} -> {}: {} model '{}', {} layers, {} parameters\n", request.input, request.output,
                           model->class_name(), model->name(), model->layers().size(), model->count_params());
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto request = std::make_shared<ConvertRequest>();
  CLI::App* command = app.add_subcommand(
      "convert", "convert a model or its weights between .keras, .weights.h5 (Keras 3) and .safetensors");
  command->add_option("input", request->input, "the file to read (.keras, .weights.h5 or .safetensors)")->required();
  command->add_option("output", request->output, "the file to write, its format from its suffix")->required();
  command->add_option("--model", request->model, "the architecture (.keras) of a weights-only input");
  command->callback([request] { convert(*request); });
}

}  // namespace accel::cli
