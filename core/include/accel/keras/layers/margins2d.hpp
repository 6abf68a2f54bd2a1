// Margins2D: the `padding` of ZeroPadding2D and the `cropping` of Cropping2D,
// the rows and columns added or removed at each side of an NHWC image, in
// Keras's three spellings: an int (every side), a pair (symmetric height,
// symmetric width), or ((top, bottom), (left, right)). Shared by those two
// layers, which check the values and name themselves in the errors.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace accel::keras {

struct Margins2D {
  // Implicit, so that `.padding = 2`, `.padding = {1, 2}` and
  // `.padding = {{1, 2}, {3, 4}}` read as Keras's padding=2, (1, 2), ((1, 2), (3, 4)).
  Margins2D(int64_t every_side) : Margins2D(every_side, every_side) {}
  Margins2D(int64_t height, int64_t width) : Margins2D({height, height}, {width, width}) {}
  Margins2D(std::pair<int64_t, int64_t> top_bottom, std::pair<int64_t, int64_t> left_right)
      : top(top_bottom.first), bottom(top_bottom.second), left(left_right.first), right(left_right.second) {}

  bool any_negative() const noexcept { return top < 0 || bottom < 0 || left < 0 || right < 0; }
  // "((top, bottom), (left, right))", Keras's normalized form.
  std::string to_string() const;
  bool operator==(const Margins2D& other) const noexcept = default;

  int64_t top;
  int64_t bottom;
  int64_t left;
  int64_t right;
};

}  // namespace accel::keras
