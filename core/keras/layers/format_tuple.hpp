// A layer argument printed as Python prints the tuple Keras holds ("(2, 1)",
// "(3,)"), for error messages. Private to core/keras/layers.
#pragma once

#include <string>
#include <vector>

namespace accel::keras {

template <typename Integer>
std::string format_tuple(const std::vector<Integer>& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return text + (values.size() == 1 ? ",)" : ")");
}

}  // namespace accel::keras
