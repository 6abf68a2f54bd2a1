// MAX_POOL, AVG_POOL and their gradients over NHWC tensors with explicit pads.
//
// Written as loops rather than oneDNN primitives because the semantics are
// TensorFlow's, not oneDNN's: the max gradient goes to the first maximum of
// the window (oneDNN would need a forward workspace), and the average divides
// by the count of window cells inside the input, padding excluded. The
// innermost loop runs over channels, which are contiguous in NHWC, so it
// vectorizes; batches (or output rows) are spread over oneTBB. MAX_POOL
// reads and writes BF16 itself; the others see F32 only.
#include "element_conversions.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

struct PoolGeometry {
  int64_t batch, height, width, channels, out_h, out_w;
  int64_t window_h, window_w, stride_h, stride_w, pad_top, pad_left;

  // The window of output (oh, ow) clipped to the input: rows [h0, h1), cols [w0, w1).
  void window(int64_t oh, int64_t ow, int64_t& h0, int64_t& h1, int64_t& w0, int64_t& w1) const {
    const int64_t top = oh * stride_h - pad_top, left = ow * stride_w - pad_left;
    h0 = std::max<int64_t>(top, 0);
    h1 = std::min(top + window_h, height);
    w0 = std::max<int64_t>(left, 0);
    w1 = std::min(left + window_w, width);
  }
};

PoolGeometry geometry_of(const HostTensor& x, const HostTensor& y, const AccelPoolAttributes& a) {
  if (x.rank != 4 || y.rank != 4) invalid("pooling tensors must be NHWC (rank 4)");
  if (a.window_h < 1 || a.window_w < 1 || a.stride_h < 1 || a.stride_w < 1) {
    invalid("pool window and strides must be >= 1");
  }
  if (a.pad_top < 0 || a.pad_bottom < 0 || a.pad_left < 0 || a.pad_right < 0) invalid("pads must be >= 0");
  PoolGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[1], y.shape[2],
                 a.window_h, a.window_w, a.stride_h, a.stride_w, a.pad_top, a.pad_left};
  const int64_t expected_h = sdk::window_positions(g.height + a.pad_top + a.pad_bottom, g.window_h, g.stride_h);
  const int64_t expected_w = sdk::window_positions(g.width + a.pad_left + a.pad_right, g.window_w, g.stride_w);
  if (y.shape[0] != g.batch || y.shape[3] != g.channels || g.out_h != expected_h || g.out_w != expected_w) {
    invalid("output must be [N, " + std::to_string(expected_h) + ", " + std::to_string(expected_w) + ", C]");
  }
  return g;
}

}  // namespace

namespace {

// Output rows [begin, end) (batch * out_h of them) of MAX_POOL. S is the
// storage type, float or bf16_t: a maximum is one of its inputs, so a bf16
// one compared in float is stored back exactly.
template <typename S>
ACCEL_VECTOR_CLONES void max_pool_rows(const PoolGeometry& g, const S* x_data, S* y_data, int64_t begin,
                                       int64_t end) {
  const int64_t c_count = g.channels;
  std::vector<float> best_storage(static_cast<size_t>(c_count));
  float* __restrict best = best_storage.data();
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / g.out_h, oh = row % g.out_h;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      S* __restrict out = y_data + ((n * g.out_h + oh) * g.out_w + ow) * c_count;
      std::fill_n(best, c_count, -std::numeric_limits<float>::infinity());
      int64_t h0, h1, w0, w1;
      g.window(oh, ow, h0, h1, w0, w1);
      for (int64_t h = h0; h < h1; ++h) {
        for (int64_t w = w0; w < w1; ++w) {
          const S* __restrict in = x_data + ((n * g.height + h) * g.width + w) * c_count;
          for (int64_t c = 0; c < c_count; ++c) {
            const float value = widen(in[c]);
            best[c] = value > best[c] ? value : best[c];
          }
        }
      }
      for (int64_t c = 0; c < c_count; ++c) out[c] = narrow_exact<S>(best[c]);
    }
  }
}

// The maximum of a 2x2 window's cells in reading order, with the general
// loop's comparisons in its order: NaN is never a maximum, and a window of
// only NaN and -inf gives -inf.
inline float max_of_four(float a, float b, float d, float e) {
  float best = -std::numeric_limits<float>::infinity();
  best = a > best ? a : best;
  best = b > best ? b : best;
  best = d > best ? d : best;
  return e > best ? e : best;
}

// The maximum of one 2x2 window, all channels: the four cells read in one
// pass with no window arithmetic per cell.
template <typename S>
inline void max_of_window_2x2(const S* __restrict x_top, const S* __restrict x_bottom, S* __restrict out,
                              int64_t c_count) {
  for (int64_t c = 0; c < c_count; ++c) {
    out[c] = narrow_exact<S>(
        max_of_four(widen(x_top[c]), widen(x_top[c_count + c]), widen(x_bottom[c]), widen(x_bottom[c_count + c])));
  }
}

// Calls visit(top, bottom, window) for each 2x2 window of output rows
// [begin, end) when such windows tile the image: `top` and `bottom` are the
// offsets of its two rows' first cells in x, `window` its index in y.
template <typename Visit>
inline void for_each_window_2x2(const PoolGeometry& g, int64_t begin, int64_t end, const Visit& visit) {
  const int64_t row_stride = g.width * g.channels;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / g.out_h, oh = row % g.out_h;
    const int64_t first = ((n * g.height + 2 * oh) * g.width) * g.channels;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const int64_t top = first + 2 * ow * g.channels;
      visit(top, top + row_stride, row * g.out_w + ow);
    }
  }
}

// MAX_POOL rows when 2x2 windows tile the image (the usual pooling, the
// tutorial CNN's).
template <typename S>
ACCEL_VECTOR_CLONES void max_pool_rows_2x2(const PoolGeometry& g, const S* x_data, S* y_data, int64_t begin,
                                           int64_t end) {
  for_each_window_2x2(g, begin, end, [&](int64_t top, int64_t bottom, int64_t window) {
    max_of_window_2x2(x_data + top, x_data + bottom, y_data + window * g.channels, g.channels);
  });
}

bool windows_tile_the_image(const PoolGeometry& g, const AccelPoolAttributes& attributes) {
  return g.stride_h == g.window_h && g.stride_w == g.window_w && attributes.pad_top == 0 &&
         attributes.pad_bottom == 0 && attributes.pad_left == 0 && attributes.pad_right == 0 &&
         g.out_h * g.window_h == g.height && g.out_w * g.window_w == g.width;
}

bool windows_are_tiling_2x2(const PoolGeometry& g, const AccelPoolAttributes& attributes) {
  return g.window_h == 2 && g.window_w == 2 && windows_tile_the_image(g, attributes);
}

}  // namespace

namespace {

template <typename S>
void max_pool_of(const PoolGeometry& g, const HostTensor& x, const HostTensor& y, bool tiling_2x2) {
  const S* x_data = data_of<const S>(x);
  S* y_data = data_of<S>(y);
  const int64_t work_per_row = g.out_w * g.window_h * g.window_w * g.channels;
  parallel_ranges(g.batch * g.out_h, grain_for(work_per_row), [&](int64_t begin, int64_t end) {
    if (tiling_2x2) {
      max_pool_rows_2x2(g, x_data, y_data, begin, end);
    } else {
      max_pool_rows(g, x_data, y_data, begin, end);
    }
  });
}

}  // namespace

void max_pool(const HostTensor& x, const HostTensor& y, const AccelPoolAttributes& attributes) {
  const PoolGeometry g = geometry_of(x, y, attributes);
  const bool tiling_2x2 = windows_are_tiling_2x2(g, attributes);
  switch (x.dtype) {
    case ACCEL_DTYPE_F32: return max_pool_of<float>(g, x, y, tiling_2x2);
    case ACCEL_DTYPE_BF16: return max_pool_of<bf16_t>(g, x, y, tiling_2x2);  // half the bytes to read (execute())
    default: invalid("max pooling takes F32 or BF16 here");
  }
}

namespace {

// The first maximum of each window and channel, branch-free so the channel
// loop vectorizes (a compare-and-branch per element mispredicts on real
// activations, and relu's zeros tie often): 3x faster on the tutorial CNN's
// 26x26x32 pooling gradient. Offsets within an image are `Index`: int32_t
// when the image fits, so the offsets pack as densely as the floats.
template <typename Index>
void max_pool_backward_images(const PoolGeometry& g, const float* x_data, const float* dy_data, float* dx_data,
                              int64_t begin, int64_t end) {
  const int64_t c_count = g.channels, image = g.height * g.width * c_count;
  std::vector<float> best_storage(static_cast<size_t>(c_count));
  std::vector<Index> where_storage(static_cast<size_t>(c_count));
  float* __restrict best = best_storage.data();
  Index* __restrict where = where_storage.data();
  for (int64_t n = begin; n < end; ++n) {
    const float* x_image = x_data + n * image;
    float* dx_image = dx_data + n * image;
    std::fill_n(dx_image, image, 0.0f);
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int64_t h0, h1, w0, w1;
        g.window(oh, ow, h0, h1, w0, w1);
        if (h0 >= h1 || w0 >= w1) continue;
        std::fill_n(best, c_count, -std::numeric_limits<float>::infinity());
        std::fill_n(where, c_count, static_cast<Index>((h0 * g.width + w0) * c_count));
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const Index offset = static_cast<Index>((h * g.width + w) * c_count);
            const float* __restrict in = x_image + offset;
            for (int64_t c = 0; c < c_count; ++c) {
              const float value = in[c], current = best[c];
              const Index mask = -static_cast<Index>(value > current);  // strict: first max wins
              best[c] = value > current ? value : current;
              where[c] = static_cast<Index>((where[c] & ~mask) | (offset & mask));
            }
          }
        }
        const float* __restrict grad = dy_data + ((n * g.out_h + oh) * g.out_w + ow) * c_count;
        for (int64_t c = 0; c < c_count; ++c) dx_image[where[c] + c] += grad[c];
      }
    }
  }
}

// The same gradient when the windows tile the image exactly (stride equal to
// the window, no padding, no cell left over: the usual 2x2 pooling): every
// cell of dx belongs to one window, so it is written once, gradient or zero,
// with no zero-fill first and no scatter. Per window, one pass finds the
// maximum and one writes the cells: `remaining` holds the gradient until the
// first cell equal to the maximum takes it (later ties get zero, as in the
// general loop). All in float selects, which vectorize.
ACCEL_VECTOR_CLONES void max_pool_backward_tiled(const PoolGeometry& g, const float* x_data, const float* dy_data,
                                                 float* dx_data, int64_t begin, int64_t end) {
  const int64_t c_count = g.channels;
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  std::vector<float> best_storage(static_cast<size_t>(c_count)), remaining_storage(static_cast<size_t>(c_count));
  float* __restrict best = best_storage.data();
  float* __restrict remaining = remaining_storage.data();
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / g.out_h, oh = row % g.out_h;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const int64_t h0 = oh * g.window_h, w0 = ow * g.window_w;
      const int64_t first_cell = ((n * g.height + h0) * g.width + w0) * c_count;
      std::fill_n(best, c_count, kLowest);
      for (int64_t h = h0; h < h0 + g.window_h; ++h) {
        for (int64_t w = w0; w < w0 + g.window_w; ++w) {
          const float* __restrict in = x_data + ((n * g.height + h) * g.width + w) * c_count;
          for (int64_t c = 0; c < c_count; ++c) best[c] = in[c] > best[c] ? in[c] : best[c];
        }
      }
      std::copy_n(dy_data + ((n * g.out_h + oh) * g.out_w + ow) * c_count, c_count, remaining);
      for (int64_t h = h0; h < h0 + g.window_h; ++h) {
        for (int64_t w = w0; w < w0 + g.window_w; ++w) {
          const int64_t cell = ((n * g.height + h) * g.width + w) * c_count;
          const float* __restrict in = x_data + cell;
          float* __restrict out = dx_data + cell;
          if (cell == first_cell) {
            // A window of only NaN and -inf has no maximum to match: its first cell takes the gradient.
            for (int64_t c = 0; c < c_count; ++c) {
              const bool takes = in[c] == best[c] || !(best[c] > kLowest);
              out[c] = takes ? remaining[c] : 0.0f;
              remaining[c] = takes ? 0.0f : remaining[c];
            }
          } else {
            for (int64_t c = 0; c < c_count; ++c) {
              const bool takes = in[c] == best[c];
              out[c] = takes ? remaining[c] : 0.0f;
              remaining[c] = takes ? 0.0f : remaining[c];
            }
          }
        }
      }
    }
  }
}

// The tiled gradient of one 2x2 window, all channels: the four cells and the
// window's gradient are read once and the four dx cells written once, with
// the maximum and the hand-over of the gradient in registers. The same rules,
// in the same order, as the general loops: the first cell equal to the
// maximum takes the gradient, and a window of only NaN and -inf gives it to
// its first cell. (A function of its own so that its pointers are restrict:
// written inline in the loop below, GCC could not tell the rows apart and
// left the channel loop scalar, 4x slower than the general tiled loop.)
// S: the storage type of x and the gradient (float or bf16_t, widened as
// read); the gradient cells are written as floats (each one of the given
// gradients or zero, so a bf16 gradient's values are kept exactly).
template <typename S>
inline void max_pool_gradient_of_window_2x2(const S* __restrict x_top, const S* __restrict x_bottom,
                                            const S* __restrict grad, float* __restrict dx_top,
                                            float* __restrict dx_bottom, int64_t c_count) {
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  for (int64_t c = 0; c < c_count; ++c) {
    const float a = widen(x_top[c]), b = widen(x_top[c_count + c]), d = widen(x_bottom[c]),
                e = widen(x_bottom[c_count + c]);
    const float best = max_of_four(a, b, d, e);
    // `remaining` holds the gradient until the first cell equal to the maximum takes it.
    const bool a_takes = (a == best) | !(best > kLowest);
    float remaining = widen(grad[c]);
    dx_top[c] = a_takes ? remaining : 0.0f;
    remaining = a_takes ? 0.0f : remaining;
    const bool b_takes = b == best;
    dx_top[c_count + c] = b_takes ? remaining : 0.0f;
    remaining = b_takes ? 0.0f : remaining;
    const bool d_takes = d == best;
    dx_bottom[c] = d_takes ? remaining : 0.0f;
    remaining = d_takes ? 0.0f : remaining;
    dx_bottom[c_count + c] = e == best ? remaining : 0.0f;
  }
}

template <typename S>
ACCEL_VECTOR_CLONES void max_pool_backward_tiled_2x2(const PoolGeometry& g, const S* x_data, const S* dy_data,
                                                     float* dx_data, int64_t begin, int64_t end) {
  for_each_window_2x2(g, begin, end, [&](int64_t top, int64_t bottom, int64_t window) {
    max_pool_gradient_of_window_2x2(x_data + top, x_data + bottom, dy_data + window * g.channels, dx_data + top,
                                    dx_data + bottom, g.channels);
  });
}

}  // namespace

namespace {

// MAX_POOL_BACKWARD with its rows or images handed out by
// `split(count, grain, body)`: over the threads, or all on this one.
template <typename Split>
void max_pool_backward_split(const HostTensor& x, const HostTensor& dy, const HostTensor& dx,
                             const AccelPoolAttributes& attributes, const Split& split) {
  const PoolGeometry g = geometry_of(x, dy, attributes);
  if (!same_shape(x, dx)) invalid("dx must have the shape of x");
  const float* x_data = data_of<const float>(x);
  const float* dy_data = data_of<const float>(dy);
  float* dx_data = data_of<float>(dx);
  const int64_t image = g.height * g.width * g.channels;
  const int64_t work_per_image = g.out_h * g.out_w * g.window_h * g.window_w * g.channels;
  if (windows_tile_the_image(g, attributes)) {
    const int64_t work_per_row = g.out_w * g.window_h * g.window_w * g.channels;
    const bool tiling_2x2 = windows_are_tiling_2x2(g, attributes);
    split(g.batch * g.out_h, grain_for(work_per_row), [&](int64_t begin, int64_t end) {
      if (tiling_2x2) {
        max_pool_backward_tiled_2x2(g, x_data, dy_data, dx_data, begin, end);
      } else {
        max_pool_backward_tiled(g, x_data, dy_data, dx_data, begin, end);
      }
    });
    return;
  }
  const bool small_images = image <= std::numeric_limits<int32_t>::max();
  // Windows may overlap within an image, so each task owns whole images.
  split(g.batch, grain_for(work_per_image), [&](int64_t begin, int64_t end) {
    if (small_images) {
      max_pool_backward_images<int32_t>(g, x_data, dy_data, dx_data, begin, end);
    } else {
      max_pool_backward_images<int64_t>(g, x_data, dy_data, dx_data, begin, end);
    }
  });
}

}  // namespace

void max_pool_backward(const HostTensor& x, const HostTensor& dy, const HostTensor& dx,
                       const AccelPoolAttributes& attributes) {
  max_pool_backward_split(x, dy, dx, attributes, [](int64_t count, int64_t grain, const auto& body) {
    parallel_ranges(count, grain, body);
  });
}

void max_pool_backward_on_this_thread(const HostTensor& x, const HostTensor& dy, const HostTensor& dx,
                                      const AccelPoolAttributes& attributes) {
  max_pool_backward_split(x, dy, dx, attributes,
                          [](int64_t count, int64_t, const auto& body) { body(int64_t{0}, count); });
}

bool max_pool_backward_bf16_on_this_thread(const HostTensor& x, const HostTensor& dy, float* dx,
                                           const AccelPoolAttributes& attributes) {
  const PoolGeometry g = geometry_of(x, dy, attributes);
  if (x.dtype != ACCEL_DTYPE_BF16 || dy.dtype != ACCEL_DTYPE_BF16 || !windows_are_tiling_2x2(g, attributes)) {
    return false;
  }
  max_pool_backward_tiled_2x2(g, data_of<const bf16_t>(x), data_of<const bf16_t>(dy), dx, 0, g.batch * g.out_h);
  return true;
}


void avg_pool(const HostTensor& x, const HostTensor& y, const AccelPoolAttributes& attributes) {
  const PoolGeometry g = geometry_of(x, y, attributes);
  const float* x_data = data_of<const float>(x);
  float* y_data = data_of<float>(y);
  const int64_t c_count = g.channels;
  const int64_t work_per_row = g.out_w * g.window_h * g.window_w * c_count;
  parallel_ranges(g.batch * g.out_h, grain_for(work_per_row), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / g.out_h, oh = row % g.out_h;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        float* __restrict out = y_data + ((n * g.out_h + oh) * g.out_w + ow) * c_count;
        std::fill_n(out, c_count, 0.0f);
        int64_t h0, h1, w0, w1;
        g.window(oh, ow, h0, h1, w0, w1);
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const float* __restrict in = x_data + ((n * g.height + h) * g.width + w) * c_count;
            for (int64_t c = 0; c < c_count; ++c) out[c] += in[c];
          }
        }
        const int64_t cells = std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0);
        const float scale = cells > 0 ? 1.0f / static_cast<float>(cells) : 0.0f;
        for (int64_t c = 0; c < c_count; ++c) out[c] *= scale;
      }
    }
  });
}

void avg_pool_backward(const HostTensor& dy, const HostTensor& dx, const AccelPoolAttributes& attributes) {
  const PoolGeometry g = geometry_of(dx, dy, attributes);
  const float* dy_data = data_of<const float>(dy);
  float* dx_data = data_of<float>(dx);
  const int64_t c_count = g.channels, image = g.height * g.width * c_count;
  const int64_t work_per_image = g.out_h * g.out_w * g.window_h * g.window_w * c_count;
  parallel_ranges(g.batch, grain_for(work_per_image), [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      float* dx_image = dx_data + n * image;
      std::fill_n(dx_image, image, 0.0f);
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          int64_t h0, h1, w0, w1;
          g.window(oh, ow, h0, h1, w0, w1);
          const int64_t cells = std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0);
          if (cells == 0) continue;
          const float scale = 1.0f / static_cast<float>(cells);
          const float* __restrict grad = dy_data + ((n * g.out_h + oh) * g.out_w + ow) * c_count;
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) {
              float* __restrict out = dx_image + (h * g.width + w) * c_count;
              for (int64_t c = 0; c < c_count; ++c) out[c] += grad[c] * scale;
            }
          }
        }
      }
    }
  });
}

}  // namespace accel::host_kernels::detail
