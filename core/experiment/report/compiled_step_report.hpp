// The compiled-step part of the reports (training.jit_compile): per run one
// line saying how fit's train step ran (compiled: ops traced -> compiled,
// fusions, intermediates saved, peak step memory planned vs eager; eager; or
// compiled but fallen back to eager, with the reason), and the experiment's
// table of them beside the emulator's HBM traffic per training step, with the
// eager / compiled ratio of TPU runs that differ in jit_compile.
#pragma once

#include <accel/experiment/headline.hpp>
#include <accel/experiment/run_results.hpp>

#include <string>
#include <vector>

namespace accel::experiment {

// "- train step: compiled, 31 ops -> 22 (...)\n", or "" for a run without a train step.
std::string compiled_step_line(const RunResult& run);

// "## Compiled steps\n\n| run | ... |\n..." when any run has a train step, else "".
// `headline` holds the rows of headline_rows(results), in the same order.
std::string compiled_steps_section(const ExperimentResults& results, const std::vector<HeadlineRow>& headline);

}  // namespace accel::experiment
