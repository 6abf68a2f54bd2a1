// CONV2D_BACKWARD_FILTER of convolutions over one input channel (a first
// layer over grayscale images), as a direct loop.
//
// oneDNN's AVX2 kernel computes the tutorial CNN's filter gradient (3x3x1x32
// over 256 images of 26x26: 100 MFLOP, a 22 MB output gradient) in 2.7-4.3
// ms on 2 cores, far from both the compute and the memory bound. Here the
// gradient of 32 filters (four vectors) for up to three taps (filter cells
// times input channels) is held in twelve vector registers while the output
// gradients of a block of images go past: per output cell, four loads (the
// cell's 128 bytes), and per tap one broadcast input pixel and four
// multiply-adds. A block of images stays in the second-level cache, so the
// passes for the other taps and filters read it from there, not from memory
// (2.7 ms against oneDNN's 4.2 in the same process, docs/PERFORMANCE.md).
//
// Deterministic whatever the thread count: each block of kImagesPerBlock
// images is summed in (image, row, column) order, and the blocks' sums are
// added in block order. The output gradient may also be made block by block
// just before it is summed (MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER), with
// the same bits.
#include "kernels.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

// Vectors are returned by value from always-inlined helpers (load_filters).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace accel::host_kernels::detail {
namespace {

constexpr int64_t kImagesPerBlock = 4;  // 4 x 26 x 26 x 32 floats of output gradient: 346 KB
constexpr int64_t kFiltersPerVector = 8;           // filters per vector
constexpr int kGroupVectors = 4;        // vectors of filters per pass: 32 filters, one 128-byte cell
constexpr int64_t kTapsPerPass = 3;     // most taps per pass (3 x 4 accumulators in registers)
typedef float Vector __attribute__((vector_size(kFiltersPerVector * sizeof(float))));

// Where each tap reads, relative to the window's top-left input cell.
struct Taps {
  std::vector<int64_t> row, column, channel, offset;
};

Taps taps_of(const ConvGeometry& g) {
  Taps taps;
  for (int64_t r = 0; r < g.filter_h; ++r)
    for (int64_t s = 0; s < g.filter_w; ++s)
      for (int64_t c = 0; c < g.channels; ++c) {
        taps.row.push_back(r * g.dilation_h);
        taps.column.push_back(s * g.dilation_w);
        taps.channel.push_back(c);
        taps.offset.push_back((r * g.dilation_h * g.width + s * g.dilation_w) * g.channels + c);
      }
  return taps;
}

// The output gradients of filters [k0, k0 + kFiltersPerVector) at one cell, or of the
// `lanes` left in a last, partial vector (the rest zeros). Returned by value
// and always inlined, so that the vector stays in a register (through a
// reference GCC kept it in memory: 1.8x slower). A vector result has another
// ABI in each clone, which GCC warns of (-Wpsabi, off in this file); inlined,
// no call crosses that ABI.
template <bool Whole>
__attribute__((always_inline)) inline Vector load_filters(const float* dy_cell, int64_t k0, int64_t lanes) {
  Vector v{};
  if constexpr (Whole) {
    std::memcpy(&v, dy_cell + k0, sizeof v);
  } else {
    for (int64_t lane = 0; lane < lanes; ++lane) v[lane] = dy_cell[k0 + lane];
  }
  return v;
}

// One pass: taps [t0, t0 + Count) for filters [k0, k0 + Vectors * kFiltersPerVector)
// (the last vector `last_lanes` wide) over the `images` images at x and dy,
// added into `gradient` ([taps][K]).
template <int Count, int Vectors, bool WholeLast>
ACCEL_VECTOR_CLONES void sum_pass(const ConvGeometry& g, const Taps& taps, const float* x, const float* dy,
                                  float* gradient, int64_t images, int64_t t0, int64_t k0, int64_t last_lanes) {
  Vector sums[Count][Vectors] = {};
  int64_t offset[Count];
  for (int t = 0; t < Count; ++t) offset[t] = taps.offset[t0 + t];
  const int64_t span_h = (g.filter_h - 1) * g.dilation_h, span_w = (g.filter_w - 1) * g.dilation_w;
  // Output columns [inside_begin, inside_end) have their whole window inside the image's columns.
  int64_t inside_begin = 0;
  while (inside_begin < g.out_w && inside_begin * g.stride_w - g.pad_left < 0) ++inside_begin;
  int64_t inside_end = inside_begin;
  while (inside_end < g.out_w && inside_end * g.stride_w - g.pad_left + span_w < g.width) ++inside_end;
  auto load_cell = [&](const float* dy_cell, Vector (&filters)[Vectors]) {
    for (int v = 0; v + 1 < Vectors; ++v) filters[v] = load_filters<true>(dy_cell, k0 + v * kFiltersPerVector, kFiltersPerVector);
    filters[Vectors - 1] = load_filters<WholeLast>(dy_cell, k0 + (Vectors - 1) * kFiltersPerVector, last_lanes);
  };
  for (int64_t n = 0; n < images; ++n) {
    const float* image = x + n * g.height * g.width * g.channels;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int64_t top = oh * g.stride_h - g.pad_top;
      const bool rows_inside = top >= 0 && top + span_h < g.height;
      const float* dy_row = dy + (n * g.out_h + oh) * g.out_w * g.filters;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        if (rows_inside && ow == inside_begin) {
          // The hot loop: every tap inside, read at a fixed offset from the window.
          for (; ow < inside_end; ++ow) {
            Vector filters[Vectors];
            load_cell(dy_row + ow * g.filters, filters);
            const float* window = image + (top * g.width + ow * g.stride_w - g.pad_left) * g.channels;
            for (int t = 0; t < Count; ++t) {
              const float pixel = window[offset[t]];
              for (int v = 0; v < Vectors; ++v) sums[t][v] += filters[v] * pixel;
            }
          }
          if (ow == g.out_w) break;
        }
        // A window over the padding: the taps outside add nothing.
        Vector filters[Vectors];
        load_cell(dy_row + ow * g.filters, filters);
        const int64_t left = ow * g.stride_w - g.pad_left;
        for (int t = 0; t < Count; ++t) {
          const int64_t ih = top + taps.row[t0 + t], iw = left + taps.column[t0 + t];
          if (ih < 0 || ih >= g.height || iw < 0 || iw >= g.width) continue;
          const float pixel = image[(ih * g.width + iw) * g.channels + taps.channel[t0 + t]];
          for (int v = 0; v < Vectors; ++v) sums[t][v] += filters[v] * pixel;
        }
      }
    }
  }
  for (int t = 0; t < Count; ++t) {
    for (int v = 0; v < Vectors; ++v) {
      const int64_t lanes = v + 1 < Vectors ? kFiltersPerVector : last_lanes;
      for (int64_t lane = 0; lane < lanes; ++lane) gradient[(t0 + t) * g.filters + k0 + v * kFiltersPerVector + lane] += sums[t][v][lane];
    }
  }
}

template <int Count, bool WholeLast, typename... Arguments>
void run_pass_of(int64_t vectors, Arguments... arguments) {
  switch (vectors) {
    case 1: return sum_pass<Count, 1, WholeLast>(arguments...);
    case 2: return sum_pass<Count, 2, WholeLast>(arguments...);
    case 3: return sum_pass<Count, 3, WholeLast>(arguments...);
    default: return sum_pass<Count, 4, WholeLast>(arguments...);
  }
}

template <bool WholeLast, typename... Arguments>
void run_pass(int64_t count, int64_t vectors, Arguments... arguments) {
  switch (count) {
    case 1: return run_pass_of<1, WholeLast>(vectors, arguments...);
    case 2: return run_pass_of<2, WholeLast>(vectors, arguments...);
    default: return run_pass_of<3, WholeLast>(vectors, arguments...);
  }
}

// The `images` images at x and dy, summed into `gradient`.
void sum_block(const ConvGeometry& g, const Taps& taps, const float* x, const float* dy, float* gradient,
               int64_t images) {
  // Taps split evenly over the fewest passes (each pass reads the block's
  // output gradient once more): 7 taps as 3 + 2 + 2, not 3 + 3 + 1.
  const int64_t tap_count = static_cast<int64_t>(taps.offset.size());
  const int64_t passes = (tap_count + kTapsPerPass - 1) / kTapsPerPass;
  const int64_t per_pass = (tap_count + passes - 1) / passes;
  constexpr int64_t kGroup = kGroupVectors * kFiltersPerVector;
  for (int64_t k0 = 0; k0 < g.filters; k0 += kGroup) {
    const int64_t group = std::min(kGroup, g.filters - k0);
    const int64_t vectors = (group + kFiltersPerVector - 1) / kFiltersPerVector, last_lanes = group - (vectors - 1) * kFiltersPerVector;
    for (int64_t t0 = 0; t0 < tap_count; t0 += per_pass) {
      const int64_t count = std::min(per_pass, tap_count - t0);
      if (last_lanes == kFiltersPerVector) {
        run_pass<true>(count, vectors, g, taps, x, dy, gradient, images, t0, k0, last_lanes);
      } else {
        run_pass<false>(count, vectors, g, taps, x, dy, gradient, images, t0, k0, last_lanes);
      }
    }
  }
}

// Blocks of kImagesPerBlock images spread over the threads, each summed on
// its own, then the blocks' sums added in block order. `dy_of_block(first,
// last)` gives the output gradient of images [first, last), on the calling
// thread.
template <typename BlockGradient>
void sum_blocks(const ConvGeometry& g, const float* x, float* gradient, const BlockGradient& dy_of_block) {
  const Taps taps = taps_of(g);
  const int64_t size = g.filter_h * g.filter_w * g.channels * g.filters;
  const int64_t blocks = (g.batch + kImagesPerBlock - 1) / kImagesPerBlock;
  const int64_t image = g.height * g.width * g.channels;
  std::vector<float> block_sums(static_cast<size_t>(blocks * size), 0.0f);
  const int64_t work_per_block = kImagesPerBlock * g.out_h * g.out_w * size;
  parallel_ranges(blocks, grain_for(work_per_block), [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t first = block * kImagesPerBlock, last = std::min(g.batch, first + kImagesPerBlock);
      sum_block(g, taps, x + first * image, dy_of_block(first, last), block_sums.data() + block * size,
                last - first);
    }
  });
  std::fill_n(gradient, size, 0.0f);
  for (int64_t block = 0; block < blocks; ++block) {
    const float* block_sum = block_sums.data() + block * size;
    for (int64_t i = 0; i < size; ++i) gradient[i] += block_sum[i];
  }
}

}  // namespace

void direct_filter_gradient(const ConvGeometry& g, const float* x, const float* dy, float* gradient) {
  const int64_t output_image = g.out_h * g.out_w * g.filters;
  sum_blocks(g, x, gradient, [&](int64_t first, int64_t) { return dy + first * output_image; });
}

void direct_filter_gradient(const ConvGeometry& g, const float* x, const OutputGradientMaker& make_dy,
                            float* gradient) {
  const int64_t output_image = g.out_h * g.out_w * g.filters;
  sum_blocks(g, x, gradient, [&](int64_t first, int64_t last) {
    // One block's worth (346 KB for the tutorial CNN): it stays in the
    // second-level cache. Kept by each thread from call to call: a range of
    // blocks is often one block, and a fresh buffer would be allocated and
    // zeroed for each.
    thread_local std::vector<float> scratch;
    if (scratch.size() < static_cast<size_t>(kImagesPerBlock * output_image)) {
      scratch.resize(static_cast<size_t>(kImagesPerBlock * output_image));
    }
    make_dy(first, last, scratch.data());
    return static_cast<const float*>(scratch.data());
  });
}

}  // namespace accel::host_kernels::detail
