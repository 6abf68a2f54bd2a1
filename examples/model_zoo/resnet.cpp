// The ResNets of the zoo, in keras.applications' layout (its resnet.py):
// ZeroPadding2D + 7x7/2 stem, BatchNormalization with epsilon 1.001e-5,
// convolutions with bias, the shortcut first in each block's Add.
#include "model_zoo.hpp"

#include <accel/keras/input_layer.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/layers/zero_padding2d.hpp>

#include <string>

namespace accel::model_zoo {
namespace {

using keras::KerasTensor;

constexpr double kBatchNormEpsilon = 1.001e-5;  // keras.applications' ResNet value

KerasTensor convolution(const KerasTensor& x, int64_t filters, int32_t kernel, int32_t stride, const std::string& padding,
                        const std::string& name) {
  return (*std::make_shared<keras::Conv2D>(
      filters, kernel, keras::Conv2DOptions{.strides = {stride, stride}, .padding = padding, .name = name}))(x);
}

KerasTensor batch_norm(const KerasTensor& x, const std::string& name) {
  return (*std::make_shared<keras::BatchNormalization>(
      keras::BatchNormalizationOptions{.axis = 3, .epsilon = kBatchNormEpsilon, .name = name}))(x);
}

KerasTensor relu(const KerasTensor& x, const std::string& name) {
  return (*std::make_shared<keras::Activation>("relu", name))(x);
}

KerasTensor add(const KerasTensor& shortcut, const KerasTensor& residual, const std::string& name) {
  return (*std::make_shared<keras::Add>(name))({shortcut, residual});
}

KerasTensor zero_padding(const KerasTensor& x, int32_t padding, const std::string& name) {
  return (*std::make_shared<keras::ZeroPadding2D>(keras::ZeroPadding2DOptions{.padding = padding, .name = name}))(x);
}

KerasTensor image_input(const ImageClassifierOptions& options) {
  return keras::Input({options.input_shape[0], options.input_shape[1], options.input_shape[2]},
                      keras::InputOptions{.name = "input_1"});
}

// conv1 (7x7/2 after 3 rows and columns of zeros) and pool1 (3x3/2 max after one).
KerasTensor imagenet_stem(const KerasTensor& inputs) {
  KerasTensor x = zero_padding(inputs, 3, "conv1_pad");
  x = convolution(x, 64, 7, 2, "valid", "conv1_conv");
  x = relu(batch_norm(x, "conv1_bn"), "conv1_relu");
  x = zero_padding(x, 1, "pool1_pad");
  return (*std::make_shared<keras::MaxPooling2D>(
      keras::Pooling2DOptions{.pool_size = {3, 3}, .strides = std::array<int32_t, 2>{2, 2}, .name = "pool1_pool"}))(x);
}

KerasTensor classifier_head(const KerasTensor& x, int64_t classes) {
  const KerasTensor pooled =
      (*std::make_shared<keras::GlobalAveragePooling2D>(keras::GlobalAveragePooling2DOptions{.name = "avg_pool"}))(x);
  return (*std::make_shared<keras::Dense>(classes,
                                          keras::DenseOptions{.activation = "softmax", .name = "predictions"}))(pooled);
}

// keras.applications' block1: 1x1 (stride) -> 3x3 -> 1x1 (4 * filters), with
// a 1x1 projection shortcut when `conv_shortcut`.
KerasTensor bottleneck_block(const KerasTensor& x, int64_t filters, int32_t stride, bool conv_shortcut,
                             const std::string& name) {
  KerasTensor shortcut = x;
  if (conv_shortcut) {
    shortcut = batch_norm(convolution(x, 4 * filters, 1, stride, "valid", name + "_0_conv"), name + "_0_bn");
  }
  KerasTensor y = convolution(x, filters, 1, stride, "valid", name + "_1_conv");
  y = relu(batch_norm(y, name + "_1_bn"), name + "_1_relu");
  y = convolution(y, filters, 3, 1, "same", name + "_2_conv");
  y = relu(batch_norm(y, name + "_2_bn"), name + "_2_relu");
  y = batch_norm(convolution(y, 4 * filters, 1, 1, "valid", name + "_3_conv"), name + "_3_bn");
  return relu(add(shortcut, y, name + "_add"), name + "_out");
}

// keras.applications' stack1: `blocks` bottleneck blocks, the first with the
// projection shortcut and `stride`.
KerasTensor bottleneck_stage(KerasTensor x, int64_t filters, int blocks, int32_t stride, const std::string& name) {
  x = bottleneck_block(x, filters, stride, true, name + "_block1");
  for (int index = 2; index <= blocks; ++index) {
    x = bottleneck_block(x, filters, 1, false, name + "_block" + std::to_string(index));
  }
  return x;
}

// ResNet-18/34's block (two 3x3 convolutions) in the same style; a 1x1
// projection shortcut where the block changes the shape.
KerasTensor basic_block(const KerasTensor& x, int64_t filters, int32_t stride, const std::string& name) {
  KerasTensor shortcut = x;
  if (stride != 1 || x.shape().back() != filters) {
    shortcut = batch_norm(convolution(x, filters, 1, stride, "valid", name + "_0_conv"), name + "_0_bn");
  }
  KerasTensor y = convolution(x, filters, 3, stride, "same", name + "_1_conv");
  y = relu(batch_norm(y, name + "_1_bn"), name + "_1_relu");
  y = batch_norm(convolution(y, filters, 3, 1, "same", name + "_2_conv"), name + "_2_bn");
  return relu(add(shortcut, y, name + "_add"), name + "_out");
}

KerasTensor basic_stage(KerasTensor x, int64_t filters, int blocks, int32_t stride, const std::string& name) {
  x = basic_block(x, filters, stride, name + "_block1");
  for (int index = 2; index <= blocks; ++index) x = basic_block(x, filters, 1, name + "_block" + std::to_string(index));
  return x;
}

// ResNet-50 v1.5 as MLPerf trains it: convolutions without bias, batch norm
// with momentum 0.9 and epsilon 1e-5 (TensorFlow's official resnet_model).
constexpr double kMlperfBatchNormEpsilon = 1e-5;
constexpr double kMlperfBatchNormMomentum = 0.9;

KerasTensor mlperf_convolution(const KerasTensor& x, int64_t filters, int32_t kernel, int32_t stride,
                               const std::string& padding, const std::string& name) {
  return (*std::make_shared<keras::Conv2D>(
      filters, kernel,
      keras::Conv2DOptions{.strides = {stride, stride}, .padding = padding, .use_bias = false, .name = name}))(x);
}

KerasTensor mlperf_batch_norm(const KerasTensor& x, const std::string& name) {
  return (*std::make_shared<keras::BatchNormalization>(keras::BatchNormalizationOptions{
      .axis = 3, .momentum = kMlperfBatchNormMomentum, .epsilon = kMlperfBatchNormEpsilon, .name = name}))(x);
}

// v1.5's bottleneck: the stride on the 3x3 convolution, where v1 has it on the first 1x1.
KerasTensor mlperf_bottleneck_block(const KerasTensor& x, int64_t filters, int32_t stride, bool projection,
                                    const std::string& name) {
  KerasTensor shortcut = x;
  if (projection) {
    shortcut = mlperf_batch_norm(mlperf_convolution(x, 4 * filters, 1, stride, "valid", name + "_0_conv"),
                                 name + "_0_bn");
  }
  KerasTensor y = mlperf_convolution(x, filters, 1, 1, "valid", name + "_1_conv");
  y = relu(mlperf_batch_norm(y, name + "_1_bn"), name + "_1_relu");
  y = mlperf_convolution(y, filters, 3, stride, "same", name + "_2_conv");
  y = relu(mlperf_batch_norm(y, name + "_2_bn"), name + "_2_relu");
  y = mlperf_batch_norm(mlperf_convolution(y, 4 * filters, 1, 1, "valid", name + "_3_conv"), name + "_3_bn");
  return relu(add(shortcut, y, name + "_add"), name + "_out");
}

}  // namespace

std::shared_ptr<keras::Model> resnet50_v1_5(const ImageClassifierOptions& options) {
  const KerasTensor inputs = image_input(options);
  KerasTensor x = zero_padding(inputs, 3, "conv1_pad");
  x = mlperf_convolution(x, 64, 7, 2, "valid", "conv1_conv");
  x = relu(mlperf_batch_norm(x, "conv1_bn"), "conv1_relu");
  x = zero_padding(x, 1, "pool1_pad");
  x = (*std::make_shared<keras::MaxPooling2D>(
      keras::Pooling2DOptions{.pool_size = {3, 3}, .strides = std::array<int32_t, 2>{2, 2}, .name = "pool1_pool"}))(x);
  const struct {
    int64_t filters;
    int blocks;
    int32_t stride;
  } stages[] = {{64, 3, 1}, {128, 4, 2}, {256, 6, 2}, {512, 3, 2}};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 1; block <= stages[stage].blocks; ++block) {
      x = mlperf_bottleneck_block(x, stages[stage].filters, block == 1 ? stages[stage].stride : 1, block == 1,
                                  "conv" + std::to_string(stage + 2) + "_block" + std::to_string(block));
    }
  }
  return std::make_shared<keras::Model>(inputs, classifier_head(x, options.classes), "resnet50_v1_5");
}

std::shared_ptr<keras::Model> resnet50(const ImageClassifierOptions& options) {
  const KerasTensor inputs = image_input(options);
  KerasTensor x = imagenet_stem(inputs);
  x = bottleneck_stage(x, 64, 3, 1, "conv2");
  x = bottleneck_stage(x, 128, 4, 2, "conv3");
  x = bottleneck_stage(x, 256, 6, 2, "conv4");
  x = bottleneck_stage(x, 512, 3, 2, "conv5");
  return std::make_shared<keras::Model>(inputs, classifier_head(x, options.classes), "resnet50");
}

std::shared_ptr<keras::Model> resnet18(const ImageClassifierOptions& options) {
  const KerasTensor inputs = image_input(options);
  KerasTensor x = imagenet_stem(inputs);
  x = basic_stage(x, 64, 2, 1, "conv2");
  x = basic_stage(x, 128, 2, 2, "conv3");
  x = basic_stage(x, 256, 2, 2, "conv4");
  x = basic_stage(x, 512, 2, 2, "conv5");
  return std::make_shared<keras::Model>(inputs, classifier_head(x, options.classes), "resnet18");
}

std::shared_ptr<keras::Model> resnet_small_28x28(const ImageClassifierOptions& options) {
  const KerasTensor inputs = image_input(options);
  KerasTensor x = convolution(inputs, 32, 3, 1, "same", "conv1_conv");
  x = relu(batch_norm(x, "conv1_bn"), "conv1_relu");
  x = basic_stage(x, 32, 1, 1, "conv2");
  x = basic_stage(x, 64, 1, 2, "conv3");
  x = basic_stage(x, 128, 1, 2, "conv4");
  return std::make_shared<keras::Model>(inputs, classifier_head(x, options.classes), "resnet_small_28x28");
}

}  // namespace accel::model_zoo
