// Maps a GEMM onto one R x C systolic array for a dataflow: which GEMM
// dimension lies on the rows (Sr), on the columns (Sc), which streams in time
// (T), and how many folds (tiles of the array) it takes.
//   os: Sr = M, Sc = N, T = K    ws: Sr = K, Sc = N, T = M    is: Sr = K, Sc = M, T = N
#pragma once

#include <cstdint>

#include "timing/checked_count.hpp"
#include "timing/hardware_config.hpp"
#include "timing/op_lowering.hpp"

namespace accel::tpu {

struct ArrayMapping {
  std::int64_t rows_dim = 0;      // Sr
  std::int64_t columns_dim = 0;   // Sc
  std::int64_t time_dim = 0;      // T
  std::int64_t row_folds = 0;     // Fr = ceil(Sr / R)
  std::int64_t column_folds = 0;  // Fc = ceil(Sc / C)
  std::int64_t folds() const { return checked_mul(row_folds, column_folds, "the array folds"); }
};

ArrayMapping map_to_array(const GemmShape& gemm, Dataflow dataflow, int rows, int columns);

// Fraction of the array's PEs that hold real (not padding) data, over all folds.
double mapping_efficiency(const ArrayMapping& mapping, int rows, int columns);

}  // namespace accel::tpu
