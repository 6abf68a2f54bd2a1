// Keras optimizers (keras.optimizers): SGD, Adam, AdamW, RMSprop, the
// learning-rate schedules, and lookup by name.
#pragma once

#include <accel/keras/optimizers/adam.hpp>
#include <accel/keras/optimizers/adamw.hpp>
#include <accel/keras/optimizers/loss_scale_optimizer.hpp>
#include <accel/keras/optimizers/optimizer.hpp>
#include <accel/keras/optimizers/rmsprop.hpp>
#include <accel/keras/optimizers/schedules.hpp>
#include <accel/keras/optimizers/sgd.hpp>

#include <memory>
#include <string_view>

namespace accel::keras {

// "adam", "adamw", "sgd", "rmsprop" (any case, as Keras) with Keras's defaults; throws
// InvalidArgumentError listing the names for an unknown one.
std::shared_ptr<Optimizer> get_optimizer(std::string_view name);

}  // namespace accel::keras
