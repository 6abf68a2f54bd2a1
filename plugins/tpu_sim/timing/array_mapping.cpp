#include "timing/array_mapping.hpp"

namespace accel::tpu {

ArrayMapping map_to_array(const GemmShape& gemm, Dataflow dataflow, int rows, int columns) {
  ArrayMapping mapping;
  switch (dataflow) {
    case Dataflow::kOutputStationary:
      mapping.rows_dim = gemm.m, mapping.columns_dim = gemm.n, mapping.time_dim = gemm.k;
      break;
    case Dataflow::kWeightStationary:
      mapping.rows_dim = gemm.k, mapping.columns_dim = gemm.n, mapping.time_dim = gemm.m;
      break;
    case Dataflow::kInputStationary:
      mapping.rows_dim = gemm.k, mapping.columns_dim = gemm.m, mapping.time_dim = gemm.n;
      break;
  }
  mapping.row_folds = ceil_div(mapping.rows_dim, rows);
  mapping.column_folds = ceil_div(mapping.columns_dim, columns);
  return mapping;
}

double mapping_efficiency(const ArrayMapping& mapping, int rows, int columns) {
  return static_cast<double>(mapping.rows_dim) * static_cast<double>(mapping.columns_dim) /
         (static_cast<double>(mapping.folds()) * rows * columns);
}

}  // namespace accel::tpu
