// Two trainings of one model compared step by step: every step's loss
// within 1e-5 relative, every weight within 1e-5 relative (absolute under
// 1, since a weight whose gradient is zero up to rounding stays near 0), as
// the sharding tests require of a sharded fit against one device.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace accel::model_zoo {

inline void expect_trained_alike(const std::vector<double>& losses, const std::vector<std::vector<float>>& weights,
                                 const std::vector<double>& reference_losses,
                                 const std::vector<std::vector<float>>& reference_weights) {
  ASSERT_EQ(losses.size(), reference_losses.size());
  for (size_t step = 0; step < reference_losses.size(); ++step) {
    EXPECT_NEAR(losses[step], reference_losses[step], 1e-5 * reference_losses[step]) << "step " << step;
  }
  ASSERT_EQ(weights.size(), reference_weights.size());
  for (size_t index = 0; index < reference_weights.size(); ++index) {
    ASSERT_EQ(weights[index].size(), reference_weights[index].size());
    for (size_t element = 0; element < reference_weights[index].size(); ++element) {
      const float expected = reference_weights[index][element];
      ASSERT_NEAR(weights[index][element], expected, 1e-5 * std::max(1.0f, std::fabs(expected)))
          << "weight " << index << " [" << element << "]";
    }
  }
}

}  // namespace accel::model_zoo
