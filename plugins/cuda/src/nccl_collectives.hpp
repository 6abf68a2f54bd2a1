// The CUDA plugin's NCCL extension ("accel.nccl.v1",
// accel/plugin/nccl_extension.h): clique ids, one communicator per opened
// device, and all-reduces queued on the devices' streams. NCCL is loaded on
// the first call (math_libraries.hpp), never by device listing.
#pragma once

#include <accel/plugin/nccl_extension.h>

namespace accel::cuda {

// The extension's function table (static; valid for the plugin's life).
const AccelNcclExtension& nccl_extension();

}  // namespace accel::cuda
