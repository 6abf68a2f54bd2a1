// ReduceLROnPlateau and TerminateOnNaN against hand-worked runs of tf.keras
// 2's rules (the epoch-end values are scripted).
#include <accel/error.hpp>
#include <accel/keras/callbacks/reduce_lr_on_plateau.hpp>
#include <accel/keras/callbacks/terminate_on_nan.hpp>
#include <accel/keras/model.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "saving_test_support.hpp"

namespace accel::keras {
namespace {

// The learning rate after each scripted epoch end; "lr" is logged each time.
std::vector<double> learning_rates(ReduceLROnPlateauOptions options, const std::vector<double>& values,
                                   const std::string& monitor = "val_loss") {
  auto model = testing::toy_classifier();
  model->compile("sgd", "sparse_categorical_crossentropy");  // SGD's rate: 0.01
  ReduceLROnPlateau callback(options);
  callback.set_model(model.get());
  callback.on_train_begin({});
  std::vector<double> rates;
  for (int epoch = 0; epoch < static_cast<int>(values.size()); ++epoch) {
    Logs logs{{monitor, values[static_cast<size_t>(epoch)]}};
    callback.on_epoch_end(epoch, logs);
    EXPECT_TRUE(logs.contains("lr"));
    rates.push_back(model->optimizer().learning_rate());
  }
  return rates;
}

TEST(ReduceLROnPlateau, ReducesAfterPatienceEpochsWithoutImprovement) {
  // e0 best; e1 wait 1; e2 wait 2 >= 2: 0.01 -> 0.005; e3 wait 1; e4 wait 2: 0.0025.
  const std::vector<double> rates = learning_rates({.factor = 0.5, .patience = 2}, {1.0, 1.0, 1.0, 1.0, 1.0});
  const std::vector<double> expected{0.01, 0.01, 0.005, 0.005, 0.0025};
  ASSERT_EQ(rates.size(), expected.size());
  for (size_t i = 0; i < rates.size(); ++i) EXPECT_NEAR(rates[i], expected[i], 1e-12) << "epoch " << i;
}

TEST(ReduceLROnPlateau, MinDeltaCooldownAndMinLr) {
  // An improvement smaller than min_delta (1e-4) does not count.
  EXPECT_NEAR(learning_rates({.factor = 0.5, .patience = 1}, {1.0, 0.99995}).back(), 0.005, 1e-12);
  // Cooldown 2 after a reduction: e1 reduces; e2 counts the cooldown down to 1
  // and waits; e3 counts it to 0, so it waits 1 and reduces again; e4 cools down.
  const std::vector<double> cooled = learning_rates({.factor = 0.5, .patience = 1, .cooldown = 2}, {1, 1, 1, 1, 1});
  const std::vector<double> expected{0.01, 0.005, 0.005, 0.0025, 0.0025};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(cooled[i], expected[i], 1e-12) << "epoch " << i;
  // Never below min_lr.
  EXPECT_NEAR(learning_rates({.factor = 0.1, .patience = 1, .min_lr = 0.004}, {1, 1, 1}).back(), 0.004, 1e-12);
}

TEST(ReduceLROnPlateau, AutoModeMaximizesNamesWithAcc) {
  // val_accuracy rising is an improvement: no reduction.
  EXPECT_NEAR(learning_rates({.factor = 0.5, .patience = 1}, {0.5, 0.6, 0.7}, "val_accuracy").back(), 0.01, 1e-12);
  EXPECT_NEAR(learning_rates({.factor = 0.5, .patience = 1}, {0.5, 0.6, 0.7}, "val_loss").back(), 0.0025, 1e-12);
  EXPECT_THROW(ReduceLROnPlateau({.factor = 1.0}), InvalidArgumentError);
}

TEST(TerminateOnNaN, StopsTrainingAtANonFiniteLoss) {
  auto model = testing::toy_classifier();
  TerminateOnNaN callback;
  callback.set_model(model.get());
  callback.on_train_batch_end(0, {{"loss", 0.5}});
  EXPECT_FALSE(model->stop_training());
  callback.on_train_batch_end(1, {{"loss", std::numeric_limits<double>::infinity()}});
  EXPECT_TRUE(model->stop_training());
  model->set_stop_training(false);
  callback.on_train_batch_end(2, {{"loss", std::nan("")}});
  EXPECT_TRUE(model->stop_training());
}

}  // namespace
}  // namespace accel::keras
