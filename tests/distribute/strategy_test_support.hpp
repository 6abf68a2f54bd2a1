// What the strategy tests share: splitting the CPU into logical devices, the
// tutorial CNN and the synthetic images it trains on, and comparing trained
// weights. Used in-process (MirroredStrategy, TPUStrategy) and by the worker
// program of the multi-worker tests, so every case trains the same model on
// the same data.
#pragma once

#include <accel/data/dataset.hpp>
#include <accel/keras/optimizers/optimizer.hpp>
#include <accel/keras/sequential.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::distribute::testing {

// Splits the one CPU into `logical_devices` logical devices (before the runtime starts).
void split_cpu(int logical_devices);
// "/CPU:0" .. "/CPU:count-1".
std::vector<std::string> cpu_devices(int count);

inline constexpr int64_t kImageSize = 8;

// The tutorial CNN on kImageSize x kImageSize x 1 images: Conv2D 32 3x3 relu,
// MaxPooling2D 2, Flatten, Dense 10 (logits), built.
std::shared_ptr<keras::Sequential> make_tutorial_cnn();

enum class OptimizerKind { kSgd, kAdam };
// SGD(0.05, momentum 0.9) or Adam(0.001).
std::shared_ptr<keras::Optimizer> make_optimizer(OptimizerKind kind);

// `samples` learnable images (the label is the brightest of 10 image bands)
// with int32 labels, as (images [samples, 8, 8, 1], labels [samples]) on the host.
struct SyntheticImages {
  Tensor images;
  Tensor labels;
};
SyntheticImages synthetic_images(int64_t samples);
data::Dataset synthetic_image_dataset(int64_t samples);

// The weights' values (each variable's first copy), in model order.
using WeightValues = std::vector<std::vector<float>>;
WeightValues weight_values(const keras::Model& model);
// max |a - b| / max|b| over each weight tensor, the worst of them (relative
// to the tensor's scale, so weights that cross zero do not blow it up).
double worst_relative_difference(const WeightValues& replicated, const WeightValues& single);

}  // namespace accel::distribute::testing
