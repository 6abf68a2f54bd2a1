// "The tutorial CNN" of docs/PERFORMANCE.md on Fashion-MNIST in accel (54,410
// parameters; configs/quickstart.yaml's fashion_cnn is another, two-convolution model):
// Conv2D(32, 3x3, relu) on 28x28x1 -> MaxPooling2D(2) -> Flatten ->
// Dense(10, softmax), Adam, sparse categorical cross-entropy, batch 32.
//
//   tutorial_cnn [--epochs 5] [--min-test-accuracy 0.85] [--verbose 1]
#include <accel/error.hpp>
#include <accel/placement.hpp>
#include <accel/data/fashion_mnist.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/sequential.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "../common/tutorial_args.hpp"

namespace keras = accel::keras;

int main(int argc, char** argv) {
  const tutorial::Args args = tutorial::parse_args(argc, argv);

  accel::data::FashionMnist data;
  try {
    data = accel::data::load_fashion_mnist(args.data_dir);
  } catch (const accel::NotFoundError& error) {
    std::cout << "SKIPPED: Fashion-MNIST not found: " << error.what() << "\n";
    return tutorial::kSkipExitCode;
  }
  // Conv2D takes NHWC: add the channel axis (a reshape shares the storage).
  const accel::Tensor train_images = data.train_images.reshape(accel::Shape{-1, 28, 28, 1});
  const accel::Tensor test_images = data.test_images.reshape(accel::Shape{-1, 28, 28, 1});

  accel::DeviceScope device(args.device);  // tf.device: weights and ops live there
  keras::set_random_seed(args.seed);
  keras::Sequential model({std::make_shared<keras::Conv2D>(32, std::array<int32_t, 2>{3, 3},
                                                            keras::Conv2DOptions{.activation = "relu"}),
                           std::make_shared<keras::MaxPooling2D>(keras::Pooling2DOptions{.pool_size = {2, 2}}),
                           std::make_shared<keras::Flatten>(),
                           std::make_shared<keras::Dense>(10, keras::DenseOptions{.activation = "softmax"})});
  model.build({keras::kUnknownDim, 28, 28, 1});
  model.summary(std::cout);
  model.compile("adam", "sparse_categorical_crossentropy", {"accuracy"});

  const auto start = std::chrono::steady_clock::now();
  model.fit(train_images, data.train_labels, {.epochs = args.epochs, .verbose = args.verbose});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const keras::Logs test = model.evaluate(test_images, data.test_labels, {.verbose = args.verbose});
  std::printf("\nTest accuracy: %.4f (loss %.4f); training %.1f s, %.1f s per epoch\n", test.at("accuracy"),
              test.at("loss"), seconds, seconds / args.epochs);
  if (args.min_test_accuracy && test.at("accuracy") < *args.min_test_accuracy) {
    std::printf("FAILED: test accuracy %.4f is below %.4f\n", test.at("accuracy"), *args.min_test_accuracy);
    return 1;
  }
  return 0;
}
