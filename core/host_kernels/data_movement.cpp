// Creation, casts and layout ops: CAST, FILL, RANDOM_*, TRANSPOSE, COPY,
// SLICE, CONCAT, PAD, GATHER, ONE_HOT.
//
// Except for CAST and RANDOM these only move bytes, so they are written once
// per element size rather than per dtype. TRANSPOSE, SLICE, PAD and CONCAT are
// all one strided copy (strided_copy below) with different strides.
#include "element_conversions.hpp"
#include "kernels.hpp"

#include <accel/plugin/philox.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

template <typename Src, typename Dst>
void cast_typed(const HostTensor& x, const HostTensor& y) {
  const Src* __restrict in = data_of<const Src>(x);
  Dst* __restrict out = data_of<Dst>(y);
  parallel_ranges(element_count(y), kCheapGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = narrow<Dst>(widen(in[i]));
  });
}

template <typename T>
void fill_with(void* data, int64_t count, const void* value_bytes) {
  T value;
  std::memcpy(&value, value_bytes, sizeof(T));
  T* out = static_cast<T*>(data);
  parallel_ranges(count, kCheapGrain, [&](int64_t begin, int64_t end) {
    std::fill(out + begin, out + end, value);
  });
}

void fill_bytes(void* data, int64_t count, size_t element_bytes, const void* value_bytes) {
  switch (element_bytes) {
    case 1: return fill_with<uint8_t>(data, count, value_bytes);
    case 2: return fill_with<uint16_t>(data, count, value_bytes);
    case 4: return fill_with<uint32_t>(data, count, value_bytes);
    case 8: return fill_with<uint64_t>(data, count, value_bytes);
    default: invalid("unsupported element size");
  }
}

void parallel_memcpy(void* destination, const void* source, size_t bytes) {
  constexpr int64_t kChunk = int64_t{1} << 18;
  const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  parallel_ranges(chunks, 1 + kCheapGrain * 4 / kChunk, [&](int64_t begin, int64_t end) {
    const size_t first = static_cast<size_t>(begin * kChunk);
    const size_t last = std::min(bytes, static_cast<size_t>(end * kChunk));
    std::memcpy(static_cast<char*>(destination) + first, static_cast<const char*>(source) + first,
                last - first);
  });
}

void contiguous_strides(const HostTensor& tensor, int64_t* strides) {
  int64_t stride = 1;
  for (int axis = tensor.rank - 1; axis >= 0; --axis) {
    strides[axis] = stride;
    stride *= tensor.shape[axis];
  }
}

template <typename T>
void copy_strided_row(const char* from, int64_t from_step, char* to, int64_t to_step, int64_t length) {
  const T* source = reinterpret_cast<const T*>(from);
  T* destination = reinterpret_cast<T*>(to);
  for (int64_t i = 0; i < length; ++i) destination[i * to_step] = source[i * from_step];
}

// Copies a region of `shape` from src (element strides src_strides) to dst
// (dst_strides). Size-1 axes are dropped and axes both sides walk
// contiguously are merged, so most copies become rows of memcpy.
void strided_copy(const char* src, const int64_t* src_strides_in, char* dst,
                  const int64_t* dst_strides_in, const int64_t* shape_in, int rank_in,
                  size_t element_bytes) {
  int64_t shape[ACCEL_MAX_RANK], src_strides[ACCEL_MAX_RANK], dst_strides[ACCEL_MAX_RANK];
  int rank = 0;
  for (int axis = 0; axis < rank_in; ++axis) {
    if (shape_in[axis] == 0) return;
    if (shape_in[axis] == 1) continue;
    if (rank > 0 && src_strides[rank - 1] == src_strides_in[axis] * shape_in[axis] &&
        dst_strides[rank - 1] == dst_strides_in[axis] * shape_in[axis]) {
      shape[rank - 1] *= shape_in[axis];
      src_strides[rank - 1] = src_strides_in[axis];
      dst_strides[rank - 1] = dst_strides_in[axis];
      continue;
    }
    shape[rank] = shape_in[axis];
    src_strides[rank] = src_strides_in[axis];
    dst_strides[rank] = dst_strides_in[axis];
    ++rank;
  }
  if (rank == 0) {
    std::memcpy(dst, src, element_bytes);
    return;
  }
  const int inner_axis = rank - 1;
  const int64_t inner = shape[inner_axis];
  const bool contiguous_rows = src_strides[inner_axis] == 1 && dst_strides[inner_axis] == 1;
  auto copy_row = [&](const char* from, char* to) {
    if (contiguous_rows) {
      std::memcpy(to, from, static_cast<size_t>(inner) * element_bytes);
      return;
    }
    switch (element_bytes) {
      case 1: return copy_strided_row<uint8_t>(from, src_strides[inner_axis], to, dst_strides[inner_axis], inner);
      case 2: return copy_strided_row<uint16_t>(from, src_strides[inner_axis], to, dst_strides[inner_axis], inner);
      case 4: return copy_strided_row<uint32_t>(from, src_strides[inner_axis], to, dst_strides[inner_axis], inner);
      default: return copy_strided_row<uint64_t>(from, src_strides[inner_axis], to, dst_strides[inner_axis], inner);
    }
  };
  int64_t outer = 1;
  for (int axis = 0; axis < inner_axis; ++axis) outer *= shape[axis];
  parallel_ranges(outer, grain_for(inner), [&](int64_t begin, int64_t end) {
    int64_t index[ACCEL_MAX_RANK];
    int64_t src_offset = 0, dst_offset = 0, remainder = begin;
    for (int axis = inner_axis - 1; axis >= 0; --axis) {
      index[axis] = remainder % shape[axis];
      remainder /= shape[axis];
      src_offset += index[axis] * src_strides[axis];
      dst_offset += index[axis] * dst_strides[axis];
    }
    for (int64_t row = begin; row < end; ++row) {
      copy_row(src + src_offset * static_cast<int64_t>(element_bytes),
               dst + dst_offset * static_cast<int64_t>(element_bytes));
      for (int axis = inner_axis - 1; axis >= 0; --axis) {
        src_offset += src_strides[axis];
        dst_offset += dst_strides[axis];
        if (++index[axis] < shape[axis]) break;
        src_offset -= shape[axis] * src_strides[axis];
        dst_offset -= shape[axis] * dst_strides[axis];
        index[axis] = 0;
      }
    }
  });
}

int64_t read_index(const HostTensor& indices, int64_t i) {
  switch (indices.dtype) {
    case ACCEL_DTYPE_I32: return data_of<const int32_t>(indices)[i];
    case ACCEL_DTYPE_I64: return data_of<const int64_t>(indices)[i];
    case ACCEL_DTYPE_U8: return data_of<const uint8_t>(indices)[i];
    default: invalid("indices must be int32, int64 or uint8");
  }
}

}  // namespace

void encode_scalar(double value, AccelDType dtype, void* bytes) {
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T encoded = narrow<T>(value);
    std::memcpy(bytes, &encoded, sizeof(T));
  });
}

void cast(const HostTensor& x, const HostTensor& y) {
  if (element_count(x) != element_count(y)) invalid("cast must keep the element count");
  with_storage_type(x.dtype, [&](auto source) {
    with_storage_type(y.dtype, [&](auto target) {
      cast_typed<decltype(source), decltype(target)>(x, y);
    });
  });
}

HostTensor float_tensor_like(const HostTensor& like, std::vector<float>& storage) {
  HostTensor tensor = like;
  tensor.dtype = ACCEL_DTYPE_F32;
  storage.resize(static_cast<size_t>(element_count(like)));
  tensor.data = storage.data();
  return tensor;
}

HostTensor float_copy_of(const HostTensor& tensor, std::vector<float>& storage) {
  const HostTensor copy = float_tensor_like(tensor, storage);
  cast(tensor, copy);
  return copy;
}

void fill(const HostTensor& y, double value) {
  uint64_t bytes = 0;
  encode_scalar(value, y.dtype, &bytes);
  fill_bytes(y.data, element_count(y), element_size(y), &bytes);
}

void random(AccelOp op, const HostTensor& y, const AccelRandomAttributes& attributes) {
  const uint64_t seed = attributes.seed, first = attributes.counter_offset;
  // Computed in float32 exactly as documented, so every device matches.
  const float a = static_cast<float>(attributes.a);
  const float b = static_cast<float>(attributes.b);
  const float width = static_cast<float>(attributes.b - attributes.a);
  auto value_at = [&](int64_t i) -> float {
    const uint64_t index = first + static_cast<uint64_t>(i);
    switch (op) {
      case ACCEL_OP_RANDOM_UNIFORM:
        return a + width * accel_bits_to_unit_float(accel_philox_bits(seed, index));
      case ACCEL_OP_RANDOM_NORMAL: return accel_philox_normal(seed, index, 0) * b + a;
      default: return accel_philox_truncated_normal(seed, index) * b + a;
    }
  };
  with_storage_type(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16_t> || std::is_same_v<T, f16_t>) {
      T* out = data_of<T>(y);
      parallel_ranges(element_count(y), kExpensiveGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = narrow<T>(value_at(i));
      });
    } else {
      fail(ACCEL_STATUS_UNIMPLEMENTED, "random ops produce float32, bfloat16 or float16");
    }
  });
}

void transpose(const HostTensor& x, const HostTensor& y, const int32_t* permutation) {
  if (x.rank != y.rank) invalid("transpose keeps the rank");
  bool seen[ACCEL_MAX_RANK] = {};
  int64_t x_strides[ACCEL_MAX_RANK], y_strides[ACCEL_MAX_RANK], src_strides[ACCEL_MAX_RANK];
  contiguous_strides(x, x_strides);
  contiguous_strides(y, y_strides);
  for (int axis = 0; axis < x.rank; ++axis) {
    const int32_t from = permutation[axis];
    if (from < 0 || from >= x.rank || seen[from]) invalid("permutation is not a permutation of the axes");
    seen[from] = true;
    if (y.shape[axis] != x.shape[from]) invalid("output shape does not match the permutation");
    src_strides[axis] = x_strides[from];
  }
  strided_copy(static_cast<const char*>(x.data), src_strides, static_cast<char*>(y.data), y_strides,
               y.shape, y.rank, element_size(y));
}

void copy(const HostTensor& x, const HostTensor& y) {
  if (element_count(x) != element_count(y)) invalid("copy must keep the element count");
  const size_t bytes = static_cast<size_t>(element_count(y)) * element_size(y);
  if (bytes != 0 && x.data != y.data) parallel_memcpy(y.data, x.data, bytes);
}

void slice(const HostTensor& x, const HostTensor& y, const int64_t* begin) {
  if (x.rank != y.rank) invalid("slice keeps the rank");
  int64_t x_strides[ACCEL_MAX_RANK], y_strides[ACCEL_MAX_RANK];
  contiguous_strides(x, x_strides);
  contiguous_strides(y, y_strides);
  int64_t offset = 0;
  for (int axis = 0; axis < x.rank; ++axis) {
    if (begin[axis] < 0 || y.shape[axis] < 0 || begin[axis] + y.shape[axis] > x.shape[axis]) {
      invalid("slice [" + std::to_string(begin[axis]) + ", +" + std::to_string(y.shape[axis]) +
              ") exceeds axis " + std::to_string(axis));
    }
    offset += begin[axis] * x_strides[axis];
  }
  if (element_count(y) == 0) return;
  const size_t bytes = element_size(x);
  strided_copy(static_cast<const char*>(x.data) + offset * static_cast<int64_t>(bytes), x_strides,
               static_cast<char*>(y.data), y_strides, y.shape, y.rank, bytes);
}

void concat(std::span<const HostTensor> inputs, const HostTensor& y, int32_t axis) {
  if (axis < 0 || axis >= y.rank) invalid("axis " + std::to_string(axis) + " out of range");
  int64_t y_strides[ACCEL_MAX_RANK];
  contiguous_strides(y, y_strides);
  int64_t position = 0;
  for (const HostTensor& input : inputs) {
    if (input.rank != y.rank) invalid("concat inputs must have the output's rank");
    for (int a = 0; a < y.rank; ++a) {
      if (a != axis && input.shape[a] != y.shape[a]) invalid("concat inputs differ off the axis: " + describe(input));
    }
    position += input.shape[axis];
  }
  if (position != y.shape[axis]) invalid("concat inputs do not add up to the output along the axis");
  const size_t bytes = element_size(y);
  position = 0;
  for (const HostTensor& input : inputs) {
    int64_t x_strides[ACCEL_MAX_RANK];
    contiguous_strides(input, x_strides);
    if (element_count(input) != 0) {
      strided_copy(static_cast<const char*>(input.data), x_strides,
                   static_cast<char*>(y.data) + position * y_strides[axis] * static_cast<int64_t>(bytes),
                   y_strides, input.shape, input.rank, bytes);
    }
    position += input.shape[axis];
  }
}

void pad(const HostTensor& x, const HostTensor& y, const AccelPadAttributes& attributes) {
  if (x.rank != y.rank) invalid("pad keeps the rank");
  int64_t x_strides[ACCEL_MAX_RANK], y_strides[ACCEL_MAX_RANK];
  contiguous_strides(x, x_strides);
  contiguous_strides(y, y_strides);
  int64_t offset = 0;
  for (int axis = 0; axis < x.rank; ++axis) {
    const int64_t before = attributes.before[axis], after = attributes.after[axis];
    if (before < 0 || after < 0 || before + x.shape[axis] + after != y.shape[axis]) {
      invalid("padding of axis " + std::to_string(axis) + " does not give the output shape");
    }
    offset += before * y_strides[axis];
  }
  fill(y, attributes.value);
  if (element_count(x) == 0) return;
  const size_t bytes = element_size(y);
  strided_copy(static_cast<const char*>(x.data), x_strides,
               static_cast<char*>(y.data) + offset * static_cast<int64_t>(bytes), y_strides, x.shape,
               x.rank, bytes);
}

namespace {

// Rows gathered at random from a large table (a shuffled batch of a data set
// on the device) each start with a cache miss that the hardware prefetcher
// cannot foresee; asking for the rows a few ahead overlaps those misses with
// the copies (a batch of 256 Fashion-MNIST rows out of 60,000: 164 -> 104-127 us on a
// 2-core AVX2 machine).
constexpr int64_t kGatherLookahead = 4;
constexpr size_t kCacheLine = 64;

void prefetch_bytes(const char* begin, size_t bytes) {
  for (size_t offset = 0; offset < bytes; offset += kCacheLine) __builtin_prefetch(begin + offset);
}

}  // namespace

void gather(const HostTensor& params, const HostTensor& indices, const HostTensor& y, int32_t axis) {
  if (axis < 0 || axis >= params.rank) invalid("axis " + std::to_string(axis) + " out of range");
  if (y.rank != params.rank - 1 + indices.rank) invalid("output rank must be params rank - 1 + indices rank");
  for (int a = 0; a < y.rank; ++a) {
    const int64_t expected = a < axis ? params.shape[a]
                             : a < axis + indices.rank ? indices.shape[a - axis]
                                                       : params.shape[a - indices.rank + 1];
    if (y.shape[a] != expected) invalid("output shape must be params[:axis] + indices + params[axis+1:]");
  }
  const int64_t outer = extent(params, 0, axis), limit = params.shape[axis],
                inner = extent(params, axis + 1, params.rank), count = element_count(indices);
  std::vector<int64_t> index(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    index[i] = read_index(indices, i);
    if (index[i] < 0 || index[i] >= limit) {
      invalid("index " + std::to_string(index[i]) + " at position " + std::to_string(i) +
              " is outside [0, " + std::to_string(limit) + ")");
    }
  }
  if (element_count(y) == 0) return;
  const size_t row_bytes = static_cast<size_t>(inner) * element_size(params);
  const char* source = static_cast<const char*>(params.data);
  char* destination = static_cast<char*>(y.data);
  auto source_row = [&](int64_t item) { return source + ((item / count) * limit + index[item % count]) * row_bytes; };
  parallel_ranges(outer * count, grain_for(inner), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      if (item + kGatherLookahead < end) prefetch_bytes(source_row(item + kGatherLookahead), row_bytes);
      std::memcpy(destination + item * row_bytes, source_row(item), row_bytes);
    }
  });
}

void one_hot(const HostTensor& indices, const HostTensor& y, const AccelOneHotAttributes& attributes) {
  if (y.rank != indices.rank + 1) invalid("output rank must be indices rank + 1");
  for (int a = 0; a < indices.rank; ++a) {
    if (y.shape[a] != indices.shape[a]) invalid("output shape must be indices shape + [depth]");
  }
  const int64_t depth = y.shape[y.rank - 1], count = element_count(indices);
  const size_t bytes = element_size(y);
  uint64_t on = 0;
  encode_scalar(attributes.on_value, y.dtype, &on);
  fill(y, attributes.off_value);
  char* out = static_cast<char*>(y.data);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t hot = read_index(indices, i);
    if (hot >= 0 && hot < depth) std::memcpy(out + (i * depth + hot) * static_cast<int64_t>(bytes), &on, bytes);
  }
}

}  // namespace accel::host_kernels::detail
