// The synthetic batch of a step estimate: uninitialized tensors when the
// emulator keeps no values, zeros otherwise; labels shaped for the loss.
#include "estimate_inputs.hpp"

#include <accel/ops.hpp>
#include <accel/placement.hpp>

namespace accel::experiment {

// A batch of `shape`: uninitialized when the emulator keeps no values (a
// step's timing does not depend on them, and a global batch of ResNet-50
// images, 616 MB at 1024 x 224 x 224 x 3, is then never touched on the host);
// zeros otherwise (labels must be valid class ids), made on the host and
// copied in as a real input batch arrives, so that no op on the TPU leaves
// it in VMEM.
Tensor batch_of(const Shape& shape, DType dtype, const Device& device, bool timing_only) {
  if (timing_only) return Tensor::empty(shape, dtype, device);
  Tensor zeros;
  {
    DeviceScope on_host(find_device("/CPU:0"));
    zeros = ops::zeros(shape, dtype);
  }
  return zeros.to(device);
}

// The labels a loss compares the output with: class ids for the sparse
// cross-entropy (one per position of a sequence output), the output's shape
// otherwise.
Tensor labels_for(const std::string& loss, const keras::LayerShape& output_shape, int64_t batch, const Device& device,
                  bool timing_only) {
  std::vector<int64_t> dims{batch};
  if (loss == "sparse_categorical_crossentropy") {
    dims.insert(dims.end(), output_shape.begin() + 1, output_shape.end() - 1);
    return batch_of(Shape(dims), DType::kInt32, device, timing_only);
  }
  dims.insert(dims.end(), output_shape.begin() + 1, output_shape.end());
  return batch_of(Shape(dims), DType::kFloat32, device, timing_only);
}

}  // namespace accel::experiment
