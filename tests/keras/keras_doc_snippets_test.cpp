// The C++ examples of docs/keras.md, compiled here and, where they are cheap,
// run on small tensors. Each example is the text between `// doc:<name>` and
// `// end doc` (a name's regions joined in order, each without its common
// indentation); keras_doc_test.cpp checks that docs/keras.md shows each one,
// under `<!-- example: <name> -->`, as it is here, so the guide cannot drift
// from the API.
// doc:sequential
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/sequential.hpp>
#include <iostream>
namespace keras = accel::keras;

// end doc
// doc:functional
#include <accel/keras/layers.hpp>
#include <accel/keras/model.hpp>
#include <iostream>
namespace keras = accel::keras;
using std::make_shared;

// end doc
// doc:training
#include <accel/data/fashion_mnist.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/sequential.hpp>
namespace keras = accel::keras;

// end doc
// doc:adamw
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>

// end doc
// doc:callbacks
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/callbacks/csv_logger.hpp>
#include <accel/keras/callbacks/early_stopping.hpp>
#include <accel/keras/callbacks/learning_rate_scheduler.hpp>
#include <accel/keras/callbacks/model_checkpoint.hpp>

// end doc
// doc:keras3_files
#include <accel/keras/saving/keras_file.hpp>

// end doc
// doc:mixed_precision
#include <accel/keras/mixed_precision.hpp>

// end doc
#include <accel/accel.hpp>
#include <accel/data/dataset.hpp>
#include <accel/keras/backend.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <vector>

namespace {

using accel::Shape;
using accel::Tensor;

void sequential_example(const Tensor& x) {
  // doc:sequential
  keras::Sequential model({std::make_shared<keras::Flatten>(),
                           std::make_shared<keras::Dense>(128, keras::DenseOptions{.activation = "relu"}),
                           std::make_shared<keras::Dense>(10)});
  model.build({keras::kUnknownDim, 28, 28});
  model.summary(std::cout);

  accel::GradientTape tape;
  accel::Tensor loss = accel::ops::reduce_mean(accel::ops::square(model(x)));
  auto grads = tape.gradient(loss, model.trainable_weights());
  // end doc
  EXPECT_EQ(grads.size(), 4u);
}

// `image`, `meta`, `score` and `kind`: the symbolic inputs and outputs of a
// graph of two inputs and two outputs; `images`, `labels`, `metadata` its data.
void functional_example(const Tensor& images, const Tensor& labels, const keras::KerasTensor& image,
                        const keras::KerasTensor& meta, const keras::KerasTensor& score,
                        const keras::KerasTensor& kind, const Tensor& metadata) {
  // doc:functional
  keras::KerasTensor inputs = keras::Input({28, 28, 1});
  keras::KerasTensor x = (*make_shared<keras::Conv2D>(32, 3, keras::Conv2DOptions{.activation = "relu"}))(inputs);
  keras::KerasTensor shortcut = x;
  x = (*make_shared<keras::Conv2D>(32, 3, keras::Conv2DOptions{.padding = "same"}))(x);
  x = (*make_shared<keras::Add>())({x, shortcut});                // a list: Keras's Add()([x, shortcut])
  x = (*make_shared<keras::Flatten>())(x);
  keras::KerasTensor outputs = (*make_shared<keras::Dense>(10))(x);  // logits: no softmax
  keras::Model model(inputs, outputs);                               // keras.Model(inputs, outputs)
  model.summary(std::cout);
  model.compile("adam",
                make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                {"accuracy"});
  model.fit(images, labels, {.epochs = 5});

  keras::Model two_heads({image, meta}, {score, kind});              // several inputs and outputs
  std::vector<accel::Tensor> results = two_heads.predict(std::vector<accel::Tensor>{images, metadata});
  // end doc
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].shape(), (Shape{images.shape().dims()[0], 1}));
}

void attention_example(const Tensor& query, const Tensor& value, const Tensor& mask, const Tensor& sequence) {
  // doc:attention
  auto mha = std::make_shared<keras::MultiHeadAttention>(2, 16);
  // Eager: output, or output and scores (return_attention_scores=True).
  accel::Tensor y = (*mha)(query, value, {.attention_mask = mask}, /*training=*/true);
  keras::AttentionOutputs both = mha->call_with_attention_scores(sequence, sequence, {.use_causal_mask = true});
  // Functional: self-attention, a residual Add and a LayerNormalization.
  keras::KerasTensor x = keras::Input({64, 32});
  keras::KerasTensor a = (*mha)(x, x, {.use_causal_mask = true});
  keras::KerasTensor h = (*std::make_shared<keras::LayerNormalization>())((*std::make_shared<keras::Add>())({x, a}));
  // end doc
  EXPECT_EQ(y.shape(), query.shape());
  EXPECT_EQ(both.scores.shape(), (Shape{sequence.shape().dims()[0], 2, 64, 64}));
  EXPECT_EQ(keras::Model(x, h).count_params(), mha->count_params() + 2 * 32);
}

// Compiled only: it reads the real Fashion-MNIST and trains for minutes.
[[maybe_unused]] void training_example() {
  // doc:training
  auto data = accel::data::load_fashion_mnist();   // images [N, 28, 28] in [0, 1], labels [N]
  keras::Sequential model({std::make_shared<keras::Flatten>(),
                           std::make_shared<keras::Dense>(128, keras::DenseOptions{.activation = "relu"}),
                           std::make_shared<keras::Dense>(10, keras::DenseOptions{.activation = "softmax"})});
  model.compile("adam", "sparse_categorical_crossentropy", {"accuracy"});  // probabilities: softmax above
  keras::History history = model.fit(data.train_images, data.train_labels,
                                     {.epochs = 5, .validation_split = 0.1});
  history.history["val_accuracy"];                  // one value per epoch
  keras::Logs test = model.evaluate(data.test_images, data.test_labels);
  accel::Tensor probabilities = model.predict(data.test_images);
  auto dataset = accel::data::Dataset::from_tensor_slices({data.train_images, data.train_labels});
  model.fit(dataset.shuffle(10000, 42).batch(32), {.epochs = 2});   // (features, labels) batches
  // end doc
}

// Run in a folder holding TensorFlow's cnn.keras (tests/keras/golden/keras3/).
void keras3_files_example(const Tensor& x, const Tensor& y) {
  // doc:keras3_files
  // A model TensorFlow 2.21 saved with model.save("cnn.keras"): its architecture and weights.
  std::unique_ptr<keras::Model> model = keras::saving::load_model("cnn.keras");
  model->compile("adam", std::make_shared<keras::SparseCategoricalCrossentropy>(
                             keras::CrossentropyOptions{.from_logits = true}));
  model->fit(x, y, {.epochs = 1});
  keras::saving::save_model(*model, "cnn_trained.keras");  // keras.models.load_model reads it
  model->save_weights("cnn_trained.weights.h5");           // Keras 3's HDF5 layout (".h5")
  model->save_weights("cnn_trained.safetensors");          // accel's, under Keras 2 names
  // end doc
  EXPECT_TRUE(std::filesystem::exists("cnn_trained.keras"));
}

void adamw_example(keras::Model& model) {
  // doc:adamw
  auto adamw = std::make_shared<keras::AdamW>(keras::AdamWOptions{
      .learning_rate = keras::CosineDecay(0.0, 10000, {.warmup_target = 1e-3, .warmup_steps = 500}),
      .weight_decay = 0.05});
  adamw->exclude_from_weight_decay({}, {"bias", "layer_normalization"});
  model.compile(adamw, std::make_shared<keras::CategoricalCrossentropy>(
                           keras::CrossentropyOptions{.from_logits = true, .label_smoothing = 0.1}));
  // end doc
}

// Compiled only: it trains for 50 epochs and writes files in the working directory.
[[maybe_unused]] void callbacks_example(keras::Model& model, keras::Model& other, const Tensor& x, const Tensor& y) {
  // doc:callbacks
  // The fields in FitOptions' order (see "FitOptions and CompileOptions"): callbacks before validation_split.
  model.fit(x, y, {.epochs = 50, .callbacks = {
      std::make_shared<keras::CSVLogger>("training.csv"),
      std::make_shared<keras::ModelCheckpoint>("ckpt/w.{epoch:02d}-{val_loss:.2f}.safetensors",
          keras::ModelCheckpointOptions{.save_best_only = true, .save_weights_only = true}),
      std::make_shared<keras::EarlyStopping>(keras::EarlyStoppingOptions{.patience = 3, .restore_best_weights = true}),
      std::make_shared<keras::LearningRateScheduler>([](int epoch, double lr) { return epoch < 10 ? lr : lr * 0.9; }),
      std::make_shared<keras::BackupAndRestore>("/tmp/backup", keras::BackupAndRestoreOptions{.save_freq = 100})},
      .validation_split = 0.1});
  model.save_weights("final.safetensors");
  other.load_weights("final.safetensors");            // skip_mismatch = false
  // end doc
}

void mixed_precision_example(const Tensor& x, const Tensor& y) {
  // doc:mixed_precision
  keras::mixed_precision::set_global_policy("mixed_bfloat16");  // TPUs; "mixed_float16" on GPUs
  auto head = std::make_shared<keras::Dense>(10);
  head->set_dtype_policy(keras::DTypePolicy("float32"));          // Keras's dtype="float32"
  keras::Sequential model({std::make_shared<keras::Conv2D>(32, 3, keras::Conv2DOptions{.activation = "relu"}),
                           std::make_shared<keras::MaxPooling2D>(), std::make_shared<keras::Flatten>(), head});
  model.compile("sgd", "sparse_categorical_crossentropy");       // mixed_float16 adds a LossScaleOptimizer
  model.fit(x, y, {.epochs = 1, .verbose = 0});
  // The convolution computes in bfloat16 on float32 weights; the head gives float32 logits.
  keras::mixed_precision::set_global_policy("float32");
  // end doc
  EXPECT_EQ(model.layers()[1]->compute_dtype(), accel::DType::kBFloat16);
  EXPECT_EQ(model.weights().front().dtype(), accel::DType::kFloat32);
  EXPECT_EQ(model(x).dtype(), accel::DType::kFloat32);
}

Tensor random_images(int64_t count) { return accel::ops::random_uniform(Shape{count, 28, 28, 1}, 7); }

TEST(KerasDocExamples, MixedPrecisionTrainsInBfloat16OnFloat32Weights) {
  keras::clear_session();
  mixed_precision_example(random_images(8), Tensor::from_vector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, Shape{8}));
}

TEST(KerasDocExamples, SequentialBuildsSummarizesAndDifferentiates) {
  keras::clear_session();
  sequential_example(accel::ops::random_uniform(Shape{2, 28, 28}, 1));
}

TEST(KerasDocExamples, FunctionalTrainsOnLogitsAndPredictsTwoHeads) {
  keras::clear_session();
  keras::KerasTensor image = keras::Input({28, 28, 1});
  keras::KerasTensor meta = keras::Input({3});
  keras::KerasTensor features = (*make_shared<keras::Concatenate>())({(*make_shared<keras::Flatten>())(image), meta});
  keras::KerasTensor score = (*make_shared<keras::Dense>(1))(features);
  keras::KerasTensor kind = (*make_shared<keras::Dense>(4))(features);
  const Tensor labels = Tensor::from_vector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, Shape{8});
  functional_example(random_images(8), labels, image, meta, score, kind, accel::ops::random_uniform(Shape{8, 3}, 3));
}

TEST(KerasDocExamples, AttentionRunsEagerAndBuildsAnEncoderBlock) {
  keras::clear_session();
  const Tensor mask = accel::ops::greater(accel::ops::random_uniform(Shape{2, 4, 6}, 5), accel::ops::fill(Shape{}, 0.3));
  attention_example(accel::ops::random_uniform(Shape{2, 4, 32}, 1), accel::ops::random_uniform(Shape{2, 6, 32}, 2),
                    mask, accel::ops::random_uniform(Shape{2, 64, 32}, 4));
}

TEST(KerasDocExamples, AdamwCompilesAModel) {
  keras::clear_session();
  keras::Sequential model({std::make_shared<keras::Dense>(4), std::make_shared<keras::LayerNormalization>()});
  model.build({keras::kUnknownDim, 3});
  adamw_example(model);
  EXPECT_NE(dynamic_cast<keras::AdamW*>(&model.optimizer()), nullptr);
}

TEST(KerasDocExamples, Keras3FilesLoadTrainAndSave) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / ("accel_keras3_doc_" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(std::string(ACCEL_KERAS_GOLDEN_DIR) + "/keras3/cnn.keras", folder / "cnn.keras");
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(folder);
  keras3_files_example(Tensor::from_vector<float>(std::vector<float>(4 * 28 * 28, 0.5f), Shape{4, 28, 28, 1}),
                       Tensor::from_vector<int32_t>({1, 2, 3, 4}, Shape{4}));
  std::filesystem::current_path(previous);
  std::filesystem::remove_all(folder);
}

}  // namespace
