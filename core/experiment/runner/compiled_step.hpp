// training.jit_compile for a run: what `auto` means on each device, and what
// compiling fit's train step did, read from the model's train function
// (Keras's model.train_function; under a strategy, the first replica's
// compiled pass) into the run's results.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/run_results.hpp>
#include <accel/keras/model.hpp>

#include <string>

namespace accel::experiment {

// The jit_compile flag a run compiles its model with on `device_type`
// ("CPU", "GPU", "TPU", or a plugin's own).
bool resolve_jit_compile(JitCompile setting, const std::string& device_type);

// "true", "false" or "auto", as written in the file.
const char* jit_compile_text(JitCompile setting);

// After fit: the statistics of the train function, or under a strategy of
// the first replica's compiled pass; for a compiled model that made neither
// although steps ran, the reason it ran eagerly.
CompiledStepResult read_compiled_step(const keras::Model& model, JitCompile setting, int64_t steps_run);

}  // namespace accel::experiment
