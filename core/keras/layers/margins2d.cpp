#include <accel/keras/layers/margins2d.hpp>

namespace accel::keras {

std::string Margins2D::to_string() const {
  return "((" + std::to_string(top) + ", " + std::to_string(bottom) + "), (" + std::to_string(left) + ", " +
         std::to_string(right) + "))";
}

}  // namespace accel::keras
