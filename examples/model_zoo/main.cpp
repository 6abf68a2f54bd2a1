// Trains a model of the zoo on Fashion-MNIST (the Transformer on its token
// sequences, docs/model-zoo.md), or prints its summary.
//
//   model_zoo --model resnet_small_28x28 [--epochs 3] [--batch-size 128]
//             [--min-test-accuracy 0.90] [--device /CPU:0] [--jit] [--summary-only]
//
// Adam's rate follows a cosine decay from --learning-rate to 0 over the whole
// run (--constant-learning-rate keeps it): the last epochs at a small rate let
// BatchNormalization's moving statistics catch up with the weights, without
// which the small ResNet's test accuracy lags its training accuracy.
//
// The ImageNet ResNets take 224x224x3 images, which Fashion-MNIST is not:
// for them only --summary-only is offered. A missing dataset exits with 77,
// which ctest reports as skipped.
#include "model_zoo.hpp"

#include <accel/data/fashion_mnist.hpp>
#include <accel/data/fashion_mnist_tokens.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/optimizers/adam.hpp>
#include <accel/keras/optimizers/schedules.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

namespace keras = accel::keras;
namespace zoo = accel::model_zoo;

namespace {

constexpr int kSkipExitCode = 77;

struct Arguments {
  std::string model = "resnet_small_28x28";
  int epochs = 3;
  int64_t batch_size = 128;
  std::optional<double> min_test_accuracy;
  std::string device = "/CPU:0";
  std::string data_dir;
  int verbose = keras::kVerboseAuto;
  uint64_t seed = 1;
  double learning_rate = 0.001;
  bool jit = false;
  bool constant_learning_rate = false;
  bool summary_only = false;
};

struct Inputs {
  accel::Tensor train;
  accel::Tensor test;
};

// Images (N, 28, 28, 1) in [0, 1] for the convolutional models and the ViT;
// token ids (N, 49) for the Transformer.
Inputs model_inputs(const std::string& model, const std::string& data_dir) {
  if (model == "transformer_encoder_classifier") {
    const accel::data::FashionMnist raw =
        accel::data::load_fashion_mnist(data_dir, {.image_dtype = accel::DType::kUInt8});
    return {accel::data::fashion_mnist_block_tokens(raw.train_images), accel::data::fashion_mnist_block_tokens(raw.test_images)};
  }
  const accel::data::FashionMnist data = accel::data::load_fashion_mnist(data_dir);
  return {data.train_images.reshape(accel::Shape{-1, 28, 28, 1}), data.test_images.reshape(accel::Shape{-1, 28, 28, 1})};
}

}  // namespace

int main(int argc, char** argv) {
  Arguments arguments;
  CLI::App app{"Trains a model of accel's model zoo on Fashion-MNIST."};
  app.add_option("--model", arguments.model, "The model (see --list).");
  bool list = false;
  app.add_flag("--list", list, "Lists the models and exits.");
  app.add_option("--epochs", arguments.epochs, "Epochs of training.")->check(CLI::PositiveNumber);
  app.add_option("--batch-size", arguments.batch_size, "Batch size.")->check(CLI::PositiveNumber);
  app.add_option("--learning-rate", arguments.learning_rate, "Adam's learning rate.")->check(CLI::PositiveNumber);
  app.add_option("--min-test-accuracy", arguments.min_test_accuracy, "Exit 1 below this test accuracy.");
  app.add_option("--device", arguments.device, "Where the model trains (tf.device): /CPU:0, /TPU:0, /GPU:0.");
  app.add_option("--data-dir", arguments.data_dir, "The Fashion-MNIST folder (default: the usual places).");
  app.add_option("--verbose", arguments.verbose, "0 silent, 1 progress bar, 2 one line per epoch.");
  app.add_option("--seed", arguments.seed, "Weights and shuffling.");
  app.add_flag("--jit", arguments.jit, "Compiled steps (Keras's jit_compile).");
  app.add_flag("--constant-learning-rate", arguments.constant_learning_rate,
               "Keeps Adam's rate constant instead of a cosine decay to 0.");
  app.add_flag("--summary-only", arguments.summary_only, "Prints the model's summary and exits.");
  CLI11_PARSE(app, argc, argv);

  try {
    if (list) {
      for (const std::string& name : zoo::model_names()) std::cout << name << "\n";
      return 0;
    }
    accel::DeviceScope device(arguments.device);
    keras::set_random_seed(arguments.seed);
    const std::shared_ptr<keras::Model> model = zoo::build_model(arguments.model);
    model->summary(std::cout);
    if (arguments.summary_only) return 0;
    if (arguments.model == "resnet50" || arguments.model == "resnet18") {
      std::cerr << arguments.model << " takes 224x224x3 images; Fashion-MNIST has none: use --summary-only\n";
      return 2;
    }

    Inputs inputs;
    accel::data::FashionMnist labels;
    try {
      inputs = model_inputs(arguments.model, arguments.data_dir);
      labels = accel::data::load_fashion_mnist(arguments.data_dir);
    } catch (const accel::NotFoundError& error) {
      std::cout << "SKIPPED: Fashion-MNIST not found: " << error.what() << "\n";
      return kSkipExitCode;
    }
    const int64_t samples = inputs.train.shape()[0];
    const int64_t total_steps = arguments.epochs * ((samples + arguments.batch_size - 1) / arguments.batch_size);
    const keras::LearningRate learning_rate =
        arguments.constant_learning_rate ? keras::LearningRate(arguments.learning_rate)
                                         : keras::LearningRate(keras::CosineDecay(arguments.learning_rate, total_steps));
    model->compile(std::make_shared<keras::Adam>(keras::AdamOptions{.learning_rate = learning_rate}),
                   "sparse_categorical_crossentropy", {"accuracy"}, {.jit_compile = arguments.jit});

    const auto start = std::chrono::steady_clock::now();
    model->fit(inputs.train, labels.train_labels,
               {.epochs = arguments.epochs, .batch_size = arguments.batch_size, .verbose = arguments.verbose});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const keras::Logs test = model->evaluate(inputs.test, labels.test_labels,
                                             {.batch_size = arguments.batch_size, .verbose = arguments.verbose});
    std::printf("\nTest accuracy: %.4f (loss %.4f); training %.1f s, %.1f s per epoch, %.0f samples/s\n",
                test.at("accuracy"), test.at("loss"), seconds, seconds / arguments.epochs,
                static_cast<double>(samples) * arguments.epochs / seconds);
    if (arguments.min_test_accuracy && test.at("accuracy") < *arguments.min_test_accuracy) {
      std::printf("FAILED: test accuracy %.4f is below %.4f\n", test.at("accuracy"), *arguments.min_test_accuracy);
      return 1;
    }
    return 0;
  } catch (const accel::Error& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
}
