// sdk::is_unary_elementwise / is_binary_elementwise and op_since_minor: the
// op classes every plugin and the host share, now that an op appended after
// FUSED_ELEMENTWISE (ERF, 1.3) is elementwise outside the enum's ranges.
#include <accel/plugin/op_classes.hpp>

#include <gtest/gtest.h>

namespace accel::sdk {
namespace {

static_assert(is_unary_elementwise(ACCEL_OP_ERF) && !is_binary_elementwise(ACCEL_OP_ERF));
static_assert(op_since_minor(ACCEL_OP_ERF) == 3 && op_since_minor(ACCEL_OP_FUSED_ELEMENTWISE) == 2);

TEST(OpClasses, UnaryAndBinaryElementwiseOpsAreExactlyTheTablesOfTheOpSet) {
  for (int32_t op = 0; op < ACCEL_OP_COUNT; ++op) {
    const bool unary = (op >= ACCEL_OP_NEG && op <= ACCEL_OP_LOGICAL_NOT) || op == ACCEL_OP_ERF;
    const bool binary = op >= ACCEL_OP_ADD && op <= ACCEL_OP_TANH_BACKWARD;
    EXPECT_EQ(is_unary_elementwise(op), unary) << "op " << op;
    EXPECT_EQ(is_binary_elementwise(op), binary) << "op " << op;
  }
  EXPECT_FALSE(is_unary_elementwise(ACCEL_OP_COUNT));
  EXPECT_FALSE(is_unary_elementwise(-1));
}

TEST(OpClasses, EachOpNamesTheMinorVersionThatAddedIt) {
  EXPECT_EQ(ACCEL_OP_COUNT, 67);
  for (int32_t op = 0; op < ACCEL_OP_FUSED_ELEMENTWISE; ++op) EXPECT_EQ(op_since_minor(op), 0u) << "op " << op;
  EXPECT_EQ(op_since_minor(ACCEL_OP_FUSED_ELEMENTWISE), 2u);
  EXPECT_EQ(op_since_minor(ACCEL_OP_ERF), 3u);
  EXPECT_EQ(op_since_minor(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER), 4u);
  EXPECT_EQ(op_since_minor(ACCEL_OP_BATCH_NORM), 6u);
  EXPECT_EQ(op_since_minor(ACCEL_OP_BATCH_NORM_BACKWARD), 6u);
  // No op is newer than the API this header describes.
  for (int32_t op = 0; op < ACCEL_OP_COUNT; ++op) EXPECT_LE(op_since_minor(op), static_cast<uint32_t>(ACCEL_PLUGIN_API_MINOR));
}

}  // namespace
}  // namespace accel::sdk
