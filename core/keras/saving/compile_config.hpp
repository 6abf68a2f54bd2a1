// Internal: Keras 3's compile_config, the "compile_config" of a .keras's
// config.json: the optimizer's, the loss's and the metrics' configs and the
// compile options, so that a saved model loads compiled (Keras's
// load_model(compile=True)) and its optimizer state, beside it in
// model.weights.h5, has somewhere to go. Both ways for accel's optimizers
// (Adam, AdamW, SGD, RMSprop, LossScaleOptimizer) and losses (the three
// crossentropies, MeanSquaredError).
#pragma once

#include <accel/keras/model.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace accel::keras::saving {

// nullopt for an uncompiled model, and (with a warning) for one whose
// optimizer or loss has no Keras 3 config here (a learning-rate schedule, a
// loss of one's own): the file then loads uncompiled, as Keras loads a model
// whose compile_config it cannot rebuild.
std::optional<nlohmann::json> compile_config(const Model& model);

// Compiles `model` as `config` says. What accel cannot honour (another
// optimizer, a schedule, amsgrad, EMA, loss weights) is a warning naming it
// and `source`, and the model stays uncompiled, as Keras warns and loads.
void compile_from_config(Model& model, const nlohmann::json& config, const std::string& source);

}  // namespace accel::keras::saving
