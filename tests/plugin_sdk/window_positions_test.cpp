// sdk::window_positions, the output-size rule every plugin checks convolution
// and pooling shapes with: TensorFlow's VALID arithmetic on the padded input.
#include <accel/plugin/plugin_sdk.hpp>

#include <gtest/gtest.h>

namespace accel::sdk {
namespace {

TEST(WindowPositions, CountsEveryStartThatLeavesTheWindowInside) {
  EXPECT_EQ(window_positions(28, 3, 1), 26);  // the tutorial CNN's first convolution
  EXPECT_EQ(window_positions(26, 2, 2), 13);
  EXPECT_EQ(window_positions(7, 3, 2), 3);    // starts 0, 2, 4
  EXPECT_EQ(window_positions(8, 3, 2), 3);    // start 6 would run past the end
  EXPECT_EQ(window_positions(3, 3, 5), 1);    // exactly one fit, whatever the stride
}

TEST(WindowPositions, AWindowLongerThanTheInputFitsNoTimes) {
  // (2 - 3) / 2 + 1 truncates to 1 in C++; TensorFlow gives an empty output.
  EXPECT_EQ(window_positions(2, 3, 2), 0);
  EXPECT_EQ(window_positions(0, 1, 1), 0);
  EXPECT_EQ(window_positions(4, 9, 1), 0);
  static_assert(window_positions(5, 5, 3) == 1, "usable in constant expressions");
}

}  // namespace
}  // namespace accel::sdk
