#include "keras_file_inspection.hpp"

#ifdef HAVE_ACCEL_EXPERIMENT
#include <accel/error.hpp>
#include <accel/keras/saving/keras_file.hpp>

namespace accel::cli {

void inspect_keras_files(experiment::LoadOptions& options) {
  options.inspect_keras_file = [](const std::string& path) {
    const keras::saving::KerasFileSummary summary = keras::saving::inspect_keras_file(path);
    if (summary.input_shapes.size() != 1 || summary.outputs != 1) {
      throw InvalidArgumentError(path + ": the model has " + std::to_string(summary.input_shapes.size()) +
                                 " inputs and " + std::to_string(summary.outputs) +
                                 " outputs; an experiment's data gives one tensor of examples");
    }
    const keras::LayerShape& input = summary.input_shapes.front();
    return std::vector<std::int64_t>(input.begin() + 1, input.end());
  };
}

}  // namespace accel::cli
#endif
