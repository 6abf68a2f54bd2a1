// Internal: a compiled model's optimizer state as Keras 3 keeps it, the
// "optimizer/vars/<i>" datasets of a .weights.h5 (and of a .keras's
// model.weights.h5): the iteration count, the learning rate (a constant
// one), then the slots in Keras 3's order (Adam: momentum and velocity per
// variable; RMSprop: every velocity, then every momentum, then every average
// gradient; SGD: the momenta; a LossScaleOptimizer: its own iteration, rate,
// step counter and dynamic scale, then its inner optimizer's). Keras 3 and
// accel read each other's files: a model trained in one resumes in the other.
#pragma once

#include <accel/keras/model.hpp>

#include "hdf5_file.hpp"

#include <functional>
#include <string>
#include <vector>

namespace accel::keras::saving {

// Adds the "optimizer" group of a compiled model (its slots built for the
// trainable weights first, as Keras 3 builds its optimizer before saving).
// An uncompiled model has none.
void write_optimizer_state(const Model& model, Hdf5File& file);

// Reads the "optimizer" group for a compiled model's optimizer (slots built
// first) and returns what restores it, so that the caller assigns nothing
// before every check passed. A file without one, an uncompiled model, or a
// group of another count (an optimizer saved before its first step, or
// another optimizer) gives a no-op with a warning, as Keras 3 skips them; a
// variable of another shape or dtype is InvalidArgumentError naming the file
// and the dataset.
std::function<void()> read_optimizer_state(const Model& model, const Hdf5File& file);

}  // namespace accel::keras::saving
