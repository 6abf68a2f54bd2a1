// The median of a benchmark's timed windows or rounds (the upper middle value
// for an even count), which a stray slow window on a shared machine does not move.
#pragma once

#include <algorithm>
#include <vector>

namespace accel::bench {

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace accel::bench
