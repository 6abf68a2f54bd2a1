// Weight initializers (keras.initializers) with Keras's formulas. Random ones
// use the stateless ops random functions: one seed gives the same numbers on
// every device. Unseeded ones take a seed from keras::next_seed().
#pragma once

#include <accel/tensor.hpp>

#include <memory>
#include <optional>
#include <string_view>

namespace accel::keras {

class Initializer {
 public:
  virtual ~Initializer() = default;
  virtual Tensor operator()(const Shape& shape, DType dtype = DType::kFloat32) const = 0;
};

class Zeros final : public Initializer {
 public:
  Tensor operator()(const Shape& shape, DType dtype = DType::kFloat32) const override;
};

class Ones final : public Initializer {
 public:
  Tensor operator()(const Shape& shape, DType dtype = DType::kFloat32) const override;
};

// keras.initializers.RandomUniform (defaults -0.05, 0.05).
class RandomUniform final : public Initializer {
 public:
  explicit RandomUniform(double minval = -0.05, double maxval = 0.05,
                         std::optional<uint64_t> seed = std::nullopt)
      : minval_(minval), maxval_(maxval), seed_(seed) {}
  Tensor operator()(const Shape& shape, DType dtype = DType::kFloat32) const override;
  double minval() const noexcept { return minval_; }
  double maxval() const noexcept { return maxval_; }
  const std::optional<uint64_t>& seed() const noexcept { return seed_; }

 private:
  double minval_, maxval_;
  std::optional<uint64_t> seed_;
};

// U(-limit, limit), limit = sqrt(6 / (fan_in + fan_out)).
class GlorotUniform final : public Initializer {
 public:
  explicit GlorotUniform(std::optional<uint64_t> seed = std::nullopt) : seed_(seed) {}
  Tensor operator()(const Shape& shape, DType dtype = DType::kFloat32) const override;
  const std::optional<uint64_t>& seed() const noexcept { return seed_; }

 private:
  std::optional<uint64_t> seed_;
};

// Truncated normal with stddev = sqrt(2 / fan_in) / 0.87962566103423978 (the
// stddev of a unit normal truncated at 2 sigma), as Keras's VarianceScaling.
class HeNormal final : public Initializer {
 public:
  explicit HeNormal(std::optional<uint64_t> seed = std::nullopt) : seed_(seed) {}
  Tensor operator()(const Shape& shape, DType dtype = DType::kFloat32) const override;
  const std::optional<uint64_t>& seed() const noexcept { return seed_; }

 private:
  std::optional<uint64_t> seed_;
};

// Keras's fan computation: a kernel (h, w, in, out) has receptive field h*w,
// fan_in = in * h*w, fan_out = out * h*w; a matrix (in, out); a vector (n, n).
struct Fans {
  double fan_in;
  double fan_out;
};
Fans compute_fans(const Shape& shape);

// By Keras name: "zeros", "ones", "uniform"/"random_uniform", "glorot_uniform",
// "he_normal"; throws InvalidArgumentError listing the names otherwise.
std::shared_ptr<Initializer> get_initializer(std::string_view name);

}  // namespace accel::keras
