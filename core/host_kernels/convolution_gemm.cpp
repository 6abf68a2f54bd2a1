// CONV2D, CONV2D_BACKWARD_INPUT and CONV2D_BACKWARD_FILTER as matrix
// products over im2col tiles, for the shapes where that beats oneDNN's
// direct convolution kernels (convolution.cpp asks gemm_convolution_chosen).
//
// Why: on a CPU without AVX-512, oneDNN 2.6 has neither its brgemm nor its
// Winograd convolutions, only direct AVX2 kernels, and those reach 45-60 % of
// the FMA peak on the small ResNet's layers (docs/PERFORMANCE.md). Its
// dnnl_sgemm reaches more, and in NHWC an im2col row is r runs of s x c
// contiguous floats, so building a tile of rows is a few memcpys. A tile of
// kTileRows output pixels (fewer for very long rows) is built in a
// per-thread buffer (it stays in the second-level cache) and multiplied
// right away, so the 9x larger column matrix never goes to memory whole.
// The measurements that decide which shapes go here are
// bench/cpu/bench_cpu_conv_resnet.cpp's.
//
// Threads: an OpenMP team (oneDNN's runtime, threading.cpp) shares the
// tiles; dnnl_sgemm called inside the team runs on its caller's thread.
// Every result is the same bits on any thread count: the forward pass and
// the input gradient write disjoint rows, and the filter gradient is summed
// over a number of chunks of tiles that depends on the shape alone (at most
// 16, fewer for huge filters: filter_gradient_chunks in
// convolution_products.hpp), each in tile order, whose sums are then added in
// chunk order.
#include "convolution_products.hpp"
#include "kernels.hpp"
#include "onednn_support.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

// Output pixels per tile: 256 rows of the small ResNet's 288-1152 taps are
// 0.3-1.2 MB of columns (measured against 128 and 1024 rows in the bench).
constexpr int64_t kTileRows = 256;

// Longer rows (hundreds of thousands of taps, only possible with few filters
// or ACCEL_CPU_CONV_GEMM=all) get fewer per tile, so that a thread's columns
// never take more than this.
constexpr int64_t kMostColumnBytes = int64_t{4} << 20;

// Larger filters stay on oneDNN: the filter gradient's partial sums would
// take up to 16 x 4 bytes per element (filter_gradient_chunks).
constexpr int64_t kMostFilterElements = int64_t{1} << 18;

// Fewer input channels make im2col runs too short to pay (a first layer over
// one channel: 2.9x slower forward; its filter gradient has its own direct
// loop, filter_gradient.cpp).
constexpr int64_t kLeastChannels = 16;

// Forward passes with output rows this narrow or narrower: oneDNN's direct
// kernel blocks its registers over the output row, which short rows fill
// badly (the small ResNet's 14x14x64 and 7x7x128 layers: 1.33x and 1.22x
// faster here; at 28 wide oneDNN is 0-10 % ahead and keeps the layer).
constexpr int64_t kNarrowOutput = 14;

// ACCEL_CPU_CONV_GEMM: unset, the measured choice below; "0", never (every
// convolution on oneDNN); "all", every convolution this file can run (tests
// and the benchmark compare the two paths on any CPU). Read at each call,
// like ACCEL_CPU_WINOGRAD, so that a process may switch it.
enum class GemmSetting { kMeasured, kNever, kAll };

GemmSetting gemm_setting() {
  const char* setting = std::getenv("ACCEL_CPU_CONV_GEMM");
  if (setting == nullptr) return GemmSetting::kMeasured;
  if (std::strcmp(setting, "0") == 0) return GemmSetting::kNever;
  if (std::strcmp(setting, "all") == 0) return GemmSetting::kAll;
  return GemmSetting::kMeasured;
}

int64_t tap_count(const ConvGeometry& g) { return g.filter_h * g.filter_w * g.channels; }

// The calling thread's column buffer, grown as needed and kept.
float* thread_columns(int64_t floats) {
  thread_local std::vector<float> columns;
  if (static_cast<int64_t>(columns.size()) < floats) columns.resize(static_cast<size_t>(floats));
  return columns.data();
}

// Where output pixel `p` (flat over N, OH, OW) reads its window from.
struct Window {
  int64_t image, top, left;  // the window's first input row and column (may be outside)
};

Window window_of(const ConvGeometry& g, int64_t p) {
  const int64_t j = p % g.out_w, i = (p / g.out_w) % g.out_h;
  return {p / (g.out_w * g.out_h), i * g.stride_h - g.pad_top, j * g.stride_w - g.pad_left};
}

// columns[p - first][r, s, c] = x at the window of p (zero in the padding),
// for the output pixels [first, last).
void im2col(const ConvGeometry& g, const float* x, int64_t first, int64_t last, float* columns) {
  const int64_t taps = tap_count(g), run = g.filter_w * g.channels;
  const size_t channel_bytes = static_cast<size_t>(g.channels) * sizeof(float);
  for (int64_t p = first; p < last; ++p) {
    const Window window = window_of(g, p);
    float* row = columns + (p - first) * taps;
    for (int64_t r = 0; r < g.filter_h; ++r) {
      float* out = row + r * run;
      const int64_t ih = window.top + r * g.dilation_h;
      if (ih < 0 || ih >= g.height) {
        std::memset(out, 0, static_cast<size_t>(run) * sizeof(float));
        continue;
      }
      const float* in = x + (window.image * g.height + ih) * g.width * g.channels;
      const bool inside = window.left >= 0 && window.left + (g.filter_w - 1) * g.dilation_w < g.width;
      if (inside && g.dilation_w == 1) {  // one contiguous run of s x c floats
        std::memcpy(out, in + window.left * g.channels, static_cast<size_t>(run) * sizeof(float));
        continue;
      }
      for (int64_t s = 0; s < g.filter_w; ++s) {
        const int64_t iw = window.left + s * g.dilation_w;
        if (iw < 0 || iw >= g.width) std::memset(out + s * g.channels, 0, channel_bytes);
        else std::memcpy(out + s * g.channels, in + iw * g.channels, channel_bytes);
      }
    }
  }
}

// The transpose of im2col, accumulating: dx at the window of p += its row.
void col2im_add(const ConvGeometry& g, const float* columns, int64_t first, int64_t last, float* dx) {
  const int64_t taps = tap_count(g), run = g.filter_w * g.channels;
  for (int64_t p = first; p < last; ++p) {
    const Window window = window_of(g, p);
    const float* row = columns + (p - first) * taps;
    for (int64_t r = 0; r < g.filter_h; ++r) {
      const int64_t ih = window.top + r * g.dilation_h;
      if (ih < 0 || ih >= g.height) continue;
      float* out = dx + (window.image * g.height + ih) * g.width * g.channels;
      for (int64_t s = 0; s < g.filter_w; ++s) {
        const int64_t iw = window.left + s * g.dilation_w;
        if (iw < 0 || iw >= g.width) continue;
        float* __restrict target = out + iw * g.channels;
        const float* __restrict source = row + r * run + s * g.channels;
        for (int64_t c = 0; c < g.channels; ++c) target[c] += source[c];
      }
    }
  }
}

// Output pixels per tile for g: kTileRows, or fewer under kMostColumnBytes.
int64_t tile_rows_of(const ConvGeometry& g) {
  return std::clamp(kMostColumnBytes / (tap_count(g) * static_cast<int64_t>(sizeof(float))), int64_t{1}, kTileRows);
}

// y = im2col(x) . filter, tile by tile.
void forward(const ConvGeometry& g, const float* x, const float* filter, float* y, SgemmFailures& failures) {
  const int64_t pixels = g.batch * g.out_h * g.out_w, taps = tap_count(g), rows = tile_rows_of(g);
  const int64_t tiles = (pixels + rows - 1) / rows;
#pragma omp parallel for schedule(static)
  for (int64_t tile = 0; tile < tiles; ++tile) {
    const int64_t first = tile * rows, last = std::min(pixels, first + rows);
    float* columns = thread_columns(rows * taps);
    im2col(g, x, first, last, columns);
    sgemm(failures, 'N', 'N', last - first, g.filters, taps, columns, taps, filter, g.filters, false, y + first * g.filters,
          g.filters);
  }
}

// dx = col2im(dy . filter^T), image by image (an image's windows overlap).
void backward_input(const ConvGeometry& g, const float* dy, const float* filter, float* dx, SgemmFailures& failures) {
  const int64_t per_image = g.out_h * g.out_w, image_size = g.height * g.width * g.channels, taps = tap_count(g);
  const int64_t rows = tile_rows_of(g);
#pragma omp parallel for schedule(static)
  for (int64_t image = 0; image < g.batch; ++image) {
    float* columns = thread_columns(rows * taps);
    std::fill_n(dx + image * image_size, image_size, 0.0f);
    for (int64_t first = image * per_image; first < (image + 1) * per_image; first += rows) {
      const int64_t last = std::min((image + 1) * per_image, first + rows);
      sgemm(failures, 'N', 'T', last - first, taps, g.filters, dy + first * g.filters, g.filters, filter, g.filters, false,
            columns, taps);
      col2im_add(g, columns, first, last, dx);
    }
  }
}

// dfilter = im2col(x)^T . dy, summed over fixed chunks of tiles.
void backward_filter(const ConvGeometry& g, const float* x, const float* dy, float* dfilter, SgemmFailures& failures) {
  const int64_t pixels = g.batch * g.out_h * g.out_w, taps = tap_count(g), rows = tile_rows_of(g);
  const int64_t tiles = (pixels + rows - 1) / rows, size = taps * g.filters;
  const int64_t chunks = filter_gradient_chunks(size, tiles);
  thread_local std::vector<float> partial_sums;  // chunks 1..: the calling thread's, kept
  if (static_cast<int64_t>(partial_sums.size()) < (chunks - 1) * size) {
    partial_sums.resize(static_cast<size_t>((chunks - 1) * size));
  }
  float* partials = partial_sums.data();
#pragma omp parallel for schedule(static)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    float* sum = chunk == 0 ? dfilter : partials + (chunk - 1) * size;
    float* columns = thread_columns(rows * taps);
    for (int64_t tile = chunk * tiles / chunks; tile < (chunk + 1) * tiles / chunks; ++tile) {
      const int64_t first = tile * rows, last = std::min(pixels, first + rows);
      im2col(g, x, first, last, columns);
      sgemm(failures, 'T', 'N', taps, g.filters, last - first, columns, taps, dy + first * g.filters, g.filters,
            tile != chunk * tiles / chunks, sum, g.filters);
    }
  }
  add_chunk_sums(dfilter, partials, chunks - 1, size);
}

}  // namespace

bool gemm_convolution_forced() { return gemm_setting() == GemmSetting::kAll; }

bool gemm_convolution_chosen(AccelOp op, const ConvGeometry& g) {
  const GemmSetting setting = gemm_setting();
  if (setting != GemmSetting::kMeasured) return setting == GemmSetting::kAll;
  if (onednn_has_avx512()) return false;  // oneDNN's brgemm and Winograd kernels run there
  if (g.channels < kLeastChannels || tap_count(g) * g.filters > kMostFilterElements) return false;
  if (op == ACCEL_OP_CONV2D_BACKWARD_FILTER) return true;
  // A 1x1 forward pass or input gradient is one plain product either way:
  // the two paths measured within 10 % forward, oneDNN 1.3x ahead on the
  // input gradient (col2im of a strided 1x1 writes a sparse result).
  if (g.filter_h * g.filter_w == 1) return false;
  const bool strided = g.stride_h > 1 || g.stride_w > 1;
  return strided || (op == ACCEL_OP_CONV2D && g.out_w <= kNarrowOutput);
}

void gemm_convolution(AccelOp op, const ConvGeometry& g, const float* first, const float* second, float* out) {
  limit_openmp_threads_on_this_thread();
  SgemmFailures failures;
  switch (op) {
    case ACCEL_OP_CONV2D: forward(g, first, second, out, failures); break;
    case ACCEL_OP_CONV2D_BACKWARD_INPUT: backward_input(g, first, second, out, failures); break;
    default: backward_filter(g, first, second, out, failures); break;
  }
  failures.throw_if_any("a convolution");
}

}  // namespace accel::host_kernels::detail
