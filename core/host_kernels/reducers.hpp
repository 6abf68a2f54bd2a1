// The reductions' combining rules (sum, max, min with their identities) and
// the lane-parallel loop that reduces one contiguous run. Shared by the plain
// reductions and the reduced outputs of a fusion, which must add in the same
// order to give the same sums.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace accel::host_kernels::detail {

template <typename T>
struct SumReducer {
  static T identity() { return T{0}; }
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};
template <typename T>
struct MaxReducer {
  static T identity() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  T operator()(T a, T b) const { return (a >= b || a != a) ? a : b; }
};
template <typename T>
struct MinReducer {
  static T identity() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  T operator()(T a, T b) const { return (a <= b || a != a) ? a : b; }
};

// Reduces one run fed in pieces, with 16 independent lane accumulators: the
// compiler vectorizes the lanes, and float sums lose less precision than one
// chain. Element i of the run goes to lane i % 16 while whole groups of 16
// last; then the lanes are combined in order and the remaining elements added
// one by one. The order depends only on the run's length, never on how it is
// cut into pieces, so a fused kernel that computes a row block by block sums
// it exactly as reduce_run sums the stored row.
template <typename T, typename Reducer>
class LaneReduction {
 public:
  static constexpr int kLanes = 16;

  void begin(int64_t length) noexcept {
    for (int lane = 0; lane < kLanes; ++lane) lanes_[lane] = Reducer::identity();
    result_ = Reducer::identity();
    position_ = 0;
    lane_end_ = length - length % kLanes;
    folded_ = false;
    if (lane_end_ == 0) fold();
  }

  // The next `count` elements: x[0], x[Step], ... (Step 0 repeats x[0]).
  template <int64_t Step>
  void feed(const T* __restrict x, int64_t count) noexcept {
    const Reducer reducer;
    int64_t i = 0;
    if (!folded_) {  // then position_ < lane_end_
      for (; i < count && position_ % kLanes != 0; ++i, ++position_) {
        lanes_[position_ % kLanes] = reducer(lanes_[position_ % kLanes], x[i * Step]);
      }
      const int64_t groups = std::min(count - i, lane_end_ - position_) / kLanes;
      T lanes[kLanes];  // a local copy the compiler keeps in vector registers
      for (int lane = 0; lane < kLanes; ++lane) lanes[lane] = lanes_[lane];
      const int64_t group_end = i + groups * kLanes;
      for (; i < group_end; i += kLanes) {
        for (int lane = 0; lane < kLanes; ++lane) lanes[lane] = reducer(lanes[lane], x[(i + lane) * Step]);
      }
      for (int lane = 0; lane < kLanes; ++lane) lanes_[lane] = lanes[lane];
      position_ += groups * kLanes;
      for (; i < count && position_ < lane_end_; ++i, ++position_) {
        lanes_[position_ % kLanes] = reducer(lanes_[position_ % kLanes], x[i * Step]);
      }
      if (position_ == lane_end_) fold();
    }
    for (; i < count; ++i, ++position_) result_ = reducer(result_, x[i * Step]);
  }

  T finish() noexcept {
    if (!folded_) fold();
    return result_;
  }

 private:
  void fold() noexcept {
    const Reducer reducer;
    for (int lane = 0; lane < kLanes; ++lane) result_ = reducer(result_, lanes_[lane]);
    folded_ = true;
  }

  T lanes_[kLanes];
  T result_;
  int64_t position_ = 0;
  int64_t lane_end_ = 0;
  bool folded_ = true;
};

// Reduces a contiguous run (see LaneReduction for the order).
template <typename T, typename Reducer>
T reduce_run(const T* __restrict x, int64_t length, Reducer) {
  if (length < LaneReduction<T, Reducer>::kLanes) {
    // No whole group of lanes: the lanes hold only the identity, and folding
    // them gives the identity back, so the run is added to it one by one.
    // The same order as below, without filling and folding 16 lanes, which
    // cost more than the run itself on short rows (softmax over 10 classes:
    // 4x faster).
    const Reducer reducer;
    T result = Reducer::identity();
    for (int64_t i = 0; i < length; ++i) result = reducer(result, x[i]);
    return result;
  }
  LaneReduction<T, Reducer> reduction;
  reduction.begin(length);
  reduction.template feed<1>(x, length);
  return reduction.finish();
}

}  // namespace accel::host_kernels::detail
