// Embedding: Keras's weight, initializer and output shape, lookups of
// integer and float ids, bad ids, and the scatter-add gradient (repeated ids
// accumulate) against finite differences. ReversedEmbedding: logits tied to
// the table, whose gradient sums both uses.
#include "layer_gradient_check.hpp"

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace accel::keras {
namespace {

class EmbeddingTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_session(); }
};

// Row r of the table holds 10 * r + {0, 1, 2}.
void fill_rows(Embedding& layer, int64_t rows) {
  std::vector<float> table;
  for (int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < 3; ++c) table.push_back(static_cast<float>(10 * r + c));
  testing::assign_weight(layer.embeddings(), Tensor::from_vector<float>(table, Shape{rows, 3}));
}

TEST_F(EmbeddingTest, WeightShapeNameAndDefaultInitializer) {
  Embedding layer(1000, 64);
  layer.build({kUnknownDim, 10});
  ASSERT_EQ(layer.weights().size(), 1u);
  EXPECT_EQ(layer.embeddings().name(), "embedding/embeddings:0");
  EXPECT_EQ(layer.embeddings().shape(), (Shape{1000, 64}));
  EXPECT_EQ(layer.count_params(), 64000);
  EXPECT_EQ(layer.output_shape(), (LayerShape{kUnknownDim, 10, 64}));
  float largest = 0.0f;
  for (float value : layer.embeddings().value().to_vector<float>()) largest = std::max(largest, std::abs(value));
  EXPECT_LE(largest, 0.05f);  // "uniform": U(-0.05, 0.05)
  EXPECT_GT(largest, 0.04f);
  EXPECT_EQ(Embedding(5, 2).name(), "embedding_1");
}

TEST_F(EmbeddingTest, LooksUpRowsForIntegerAndFloatIds) {
  Embedding layer(4, 3);
  layer.build({kUnknownDim, 2});
  fill_rows(layer, 4);
  const Tensor ids = Tensor::from_vector<int32_t>({3, 0, 1, 3}, Shape{2, 2});
  const Tensor y = layer(ids);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{30, 31, 32, 0, 1, 2, 10, 11, 12, 30, 31, 32}));
  EXPECT_EQ(layer(Tensor::from_vector<int64_t>({2}, Shape{1, 1})).to_vector<float>(), (std::vector<float>{20, 21, 22}));
  // Float ids are cast to int32, as Keras does.
  EXPECT_EQ(layer(Tensor::from_vector<float>({1.0f, 2.0f}, Shape{2, 1})).to_vector<float>(),
            (std::vector<float>{10, 11, 12, 20, 21, 22}));
}

TEST_F(EmbeddingTest, RejectsBadArgumentsAndIds) {
  EXPECT_THROW(Embedding(0, 4), InvalidArgumentError);
  Embedding layer(4, 3);
  EXPECT_THROW(layer(Tensor::from_vector<int32_t>({4}, Shape{1, 1})), InvalidArgumentError);
}

TEST_F(EmbeddingTest, GradientAccumulatesIntoTheLookedUpRows) {
  Embedding layer(5, 3);
  const Tensor ids = Tensor::from_vector<int32_t>({1, 4, 1, 1, 0, 4}, Shape{2, 3});
  layer(ids);  // build
  GradientTape tape;
  const Tensor gradient = tape.gradient(ops::reduce_sum(layer(ids)), std::vector<Variable>{layer.embeddings()})[0];
  // Each row's gradient is how often it was looked up: row 1 three times, 4 twice, 0 once, 2 and 3 never.
  EXPECT_EQ(gradient.to_vector<float>(), (std::vector<float>{1, 1, 1, 3, 3, 3, 0, 0, 0, 0, 0, 0, 2, 2, 2}));
  testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return layer(input); }, ids,
                                                           {layer.embeddings()});
}

// Tied logits read the table transposed: h @ E^T, and the table's gradient
// is the lookup's scatter-add plus the logits' h^T dy, transposed.
TEST_F(EmbeddingTest, ReversedEmbeddingTiesTheLogitsToTheTable) {
  auto embedding = std::make_shared<Embedding>(4, 3, EmbeddingOptions{.name = "tokens"});
  ReversedEmbedding logits(embedding, "logits");
  const Tensor ids = Tensor::from_vector<int32_t>({3, 0}, Shape{1, 2});
  EXPECT_THROW(logits(Tensor::from_vector<float>({1, 0, 0}, Shape{1, 1, 3})), FailedPreconditionError);  // not built
  (*embedding)(ids);
  fill_rows(*embedding, 4);
  const Tensor hidden = Tensor::from_vector<float>({1, 0, 0, 0, 1, -1}, Shape{1, 2, 3});
  const Tensor y = logits(hidden);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(logits.output_shape(), (LayerShape{kUnknownDim, 2, 4}));
  // Row r of E is 10 r + {0, 1, 2}: h = e0 gives E[:, 0]; h = e1 - e2 gives -1 everywhere.
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 10, 20, 30, -1, -1, -1, -1}));
  EXPECT_TRUE(logits.weights().empty());  // the table is the embedding's alone

  GradientTape tape;
  const Tensor gradient =
      tape.gradient(ops::reduce_sum(logits((*embedding)(ids))), std::vector<Variable>{embedding->embeddings()})[0];
  // d/dE of sum_t sum_r E[ids_t] . E[r]: each row r gets sum_t E[ids_t] (the logits),
  // and each looked-up row gets sum_r E[r] (the lookup) once per lookup.
  const std::vector<float> table = embedding->embeddings().value().to_vector<float>();
  std::vector<float> expected(12, 0.0f);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) expected[r * 3 + c] = table[3 * 3 + c] + table[0 * 3 + c];
  }
  for (int looked_up : {3, 0}) {
    for (int c = 0; c < 3; ++c) {
      for (int r = 0; r < 4; ++r) expected[looked_up * 3 + c] += table[r * 3 + c];
    }
  }
  EXPECT_EQ(gradient.to_vector<float>(), expected);

  EXPECT_THROW(logits(Tensor::from_vector<float>({1, 0}, Shape{1, 1, 2})), InvalidArgumentError);  // 2 features, not 3
  EXPECT_THROW(ReversedEmbedding(nullptr), InvalidArgumentError);
}

}  // namespace
}  // namespace accel::keras
