// CONV2D, CONV2D_BACKWARD_INPUT and CONV2D_BACKWARD_FILTER of 3x3, stride-1
// convolutions as Winograd F(4x4, 3x3), for CPUs where oneDNN has no
// Winograd kernels (convolution.cpp asks winograd_convolution_chosen).
//
// Why: oneDNN 2.6's Winograd convolutions are AVX-512 only; without AVX-512
// these layers run its direct AVX2 kernels, which do 9 multiplications per
// output per input channel. F(4x4, 3x3) computes each 4x4 block of outputs
// from a 6x6 block of inputs with 36, 4x fewer, at the cost of adds that
// transform the blocks in and out (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016). The same algorithm as oneDNN's
// AVX-512 kernels, so results round alike on both kinds of CPU.
//
// How: the filter is transformed once per call, U[e] = G g G^T for each of
// the 36 positions e of a 6x6 block, as [in_channels, out_channels]
// matrices. A block of tiles (4x4 outputs each) is transformed into
// V[e] = B^T d B, [tiles, in_channels], in a per-thread buffer that stays
// near the core, 8 channels at a time (one AVX2 vector); 36 products
// M[e] = V[e] U[e] on dnnl_sgemm; and A^T M A writes each tile's outputs.
// Channel counts that are not a multiple of 8 are padded with zeros. The
// input gradient of a stride-1 convolution is the same computation over dy
// with the filter turned by 180 degrees and its channel axes swapped. The
// filter gradient is the forward pass transposed: dU[e] = sum over tiles of
// V[e]^T (A dy A^T)[e], then dW = G^T dU G.
//
// Threads: an OpenMP team shares the blocks of tiles, whose bounds depend on
// the shape alone; every output of the forward pass and input gradient is
// written by one tile, and the filter gradient is summed over a number of
// chunks of blocks that depends on the shape alone, so the bits are the same
// on any thread count.
#include "convolution_products.hpp"
#include "kernels.hpp"
#include "onednn_support.hpp"
#include "kernel_support.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

// A 3x3 stride-1 convolution as computed here: out[b, i, j, o] = sum over
// r, s, c of in[b, i - pad_top + r, j - pad_left + s, c] * tap(r, s, c, o),
// zero outside the input. The pads may be negative (an input gradient with
// pads larger than 2).
struct Problem {
  int64_t batch, in_h, in_w, in_channels;
  int64_t out_h, out_w, out_channels;
  int64_t pad_top, pad_left;
};

// Channels transformed side by side: one AVX2 vector. The transforms below
// work on [n][kLanes] arrays, loops of kLanes that the compiler turns into
// one vector instruction each.
constexpr int kLanes = 8;
using Lanes = float[kLanes];

#define ACCEL_LANES for (int l = 0; l < kLanes; ++l)

// The tile: its 1-d transforms G g (filter taps to the input tile's
// positions), B^T d (input) and A^T m (output), from the interpolation
// points 0, 1, -1, 2, -2 and infinity; the 2-d transforms apply them along
// columns, then rows. Written out as sums: a product with a zero or one
// coefficient would cost as much as any other (no fast-math here). F(2x2,
// 3x3) (16 products per 4 outputs) measured 1.1-1.8x slower on the small
// ResNet's layers: its products are fewer per tile but 1.8x more per output.
struct F4x3 {  // F(4x4, 3x3): 6x6 input tiles, 36 products per 16 outputs (points 0, +-1, +-2)
  static constexpr int kOut = 4, kIn = 6;
  static void filter(const float g[3], float u[6]) {
    u[0] = g[0] / 4.0f;
    u[1] = -(g[0] + g[1] + g[2]) / 6.0f;
    u[2] = -(g[0] - g[1] + g[2]) / 6.0f;
    u[3] = g[0] / 24.0f + g[1] / 12.0f + g[2] / 6.0f;
    u[4] = g[0] / 24.0f - g[1] / 12.0f + g[2] / 6.0f;
    u[5] = g[2];
  }
  [[gnu::always_inline]] static void input(const Lanes d[6], Lanes v[6]) {
    ACCEL_LANES {
      v[0][l] = 4.0f * d[0][l] - 5.0f * d[2][l] + d[4][l];
      v[1][l] = d[3][l] + d[4][l] - 4.0f * (d[1][l] + d[2][l]);
      v[2][l] = d[4][l] - d[3][l] + 4.0f * (d[1][l] - d[2][l]);
      v[3][l] = d[4][l] - d[2][l] + 2.0f * (d[3][l] - d[1][l]);
      v[4][l] = d[4][l] - d[2][l] + 2.0f * (d[1][l] - d[3][l]);
      v[5][l] = 4.0f * d[1][l] - 5.0f * d[3][l] + d[5][l];
    }
  }
  // The transposes, for the filter gradient: G^T u (6 -> 3) and A y (4 -> 6).
  static void filter_transposed(const float u[6], float g[3]) {
    g[0] = u[0] / 4.0f - (u[1] + u[2]) / 6.0f + (u[3] + u[4]) / 24.0f;
    g[1] = (u[2] - u[1]) / 6.0f + (u[3] - u[4]) / 12.0f;
    g[2] = (u[3] + u[4] - u[1] - u[2]) / 6.0f + u[5];
  }
  [[gnu::always_inline]] static void output_transposed(const Lanes y[4], Lanes m[6]) {
    ACCEL_LANES {
      const float even = y[0][l] + y[2][l], odd = y[1][l] + y[3][l];
      const float even4 = y[0][l] + 4.0f * y[2][l], odd2 = 2.0f * y[1][l] + 8.0f * y[3][l];
      m[0][l] = y[0][l];
      m[1][l] = even + odd;
      m[2][l] = even - odd;
      m[3][l] = even4 + odd2;
      m[4][l] = even4 - odd2;
      m[5][l] = y[3][l];
    }
  }
  [[gnu::always_inline]] static void output(const Lanes m[6], Lanes y[4]) {
    ACCEL_LANES {
      const float sum12 = m[1][l] + m[2][l], difference12 = m[1][l] - m[2][l];
      const float sum34 = m[3][l] + m[4][l], difference34 = m[3][l] - m[4][l];
      y[0][l] = m[0][l] + sum12 + sum34;
      y[1][l] = difference12 + 2.0f * difference34;
      y[2][l] = sum12 + 4.0f * sum34;
      y[3][l] = difference12 + 8.0f * difference34 + m[5][l];
    }
  }
};

// Tiles per block: V and M of a block, positions x tiles x (in + out
// channels) floats, within about 1 MB, so that the products have rows
// enough (measured on the small ResNet's layers against 0.25, 0.5 and 2 MB).
template <typename Tile>
int64_t tiles_per_block(const Problem& p) {
  constexpr int64_t positions = Tile::kIn * Tile::kIn;
  return std::clamp(int64_t{262144} / (positions * (p.in_channels + p.out_channels)), int64_t{16}, int64_t{512});
}

// The filter gradient's blocks: its products sum over the block's tiles,
// so it takes at least kLeastGradientTiles (with 128 channels the 1 MB above
// gave 16-tile sums, 3.6x slower on the small ResNet's 7x7x128 layer).
constexpr int64_t kLeastGradientTiles = 64;

template <typename Tile>
int64_t gradient_tiles_per_block(const Problem& p) {
  return std::max(tiles_per_block<Tile>(p), kLeastGradientTiles);
}

// The outputs of one tile: from (row, column) of `image`, `rows` x
// `columns` of them (fewer than kOut at the output's far edges).
struct TileOutputs {
  int64_t image, row, column, rows, columns;
};

// Tiles numbered image by image, row by row.
template <typename Tile>
struct TileGrid {
  int64_t rows, columns;  // tiles per image
  explicit TileGrid(const Problem& p)
      : rows((p.out_h + Tile::kOut - 1) / Tile::kOut), columns((p.out_w + Tile::kOut - 1) / Tile::kOut) {}
  int64_t count(const Problem& p) const { return p.batch * rows * columns; }
  TileOutputs outputs_of(const Problem& p, int64_t tile) const {
    const int64_t row = Tile::kOut * ((tile / columns) % rows), column = Tile::kOut * (tile % columns);
    return {tile / (columns * rows), row, column, std::min<int64_t>(Tile::kOut, p.out_h - row),
            std::min<int64_t>(Tile::kOut, p.out_w - column)};
  }
};

// U[e][c][o] for the taps tap(r, s, c, o) = filter[((r * 3 + s) * C + c) * O + o]
// (HWIO, forward) or filter[(((2 - r) * 3 + (2 - s)) * O + o) * C + c] (the
// input gradient: turned, channel axes swapped; C and O are then the
// forward's filters and channels).
template <typename Tile>
void transform_filter(const float* filter, bool turned, int64_t in_channels, int64_t out_channels, int64_t in_padded,
                      int64_t out_padded, float* u) {
  constexpr int n = Tile::kIn;
  const int64_t matrix = in_padded * out_padded;
  for (int64_t c = 0; c < in_channels; ++c) {
    for (int64_t o = 0; o < out_channels; ++o) {
      float g[3][3];
      for (int r = 0; r < 3; ++r) {
        for (int s = 0; s < 3; ++s) {
          g[r][s] = turned ? filter[(((2 - r) * 3 + (2 - s)) * out_channels + o) * in_channels + c]
                           : filter[((r * 3 + s) * in_channels + c) * out_channels + o];
        }
      }
      float columns[n][3];  // G g, column by column
      for (int s = 0; s < 3; ++s) {
        const float column[3] = {g[0][s], g[1][s], g[2][s]};
        float transformed[n];
        Tile::filter(column, transformed);
        for (int x = 0; x < n; ++x) columns[x][s] = transformed[x];
      }
      for (int x = 0; x < n; ++x) {  // (G g) G^T
        float row[n];
        Tile::filter(columns[x], row);
        for (int y = 0; y < n; ++y) u[(x * n + y) * matrix + c * out_padded + o] = row[y];
      }
    }
  }
}

// The 2-d input transform of one chunk of kLanes channels: d[r][s] points
// at the channels of the tile's position (r, s).
template <typename Tile>
[[gnu::always_inline]] inline void transform_input_chunk(const float* const (&d)[Tile::kIn][Tile::kIn], int64_t c,
                                                         float* out, int64_t stride) {
  constexpr int n = Tile::kIn;
  Lanes rows[n][n];  // B^T d, rows[x][s]
  for (int s = 0; s < n; ++s) {
    Lanes column[n], transformed[n];
    for (int r = 0; r < n; ++r) ACCEL_LANES column[r][l] = d[r][s][c + l];
    Tile::input(column, transformed);
    for (int x = 0; x < n; ++x) ACCEL_LANES rows[x][s][l] = transformed[x][l];
  }
  for (int x = 0; x < n; ++x) {  // (B^T d) B
    Lanes transformed[n];
    Tile::input(rows[x], transformed);
    for (int y = 0; y < n; ++y) ACCEL_LANES out[(x * n + y) * stride + c + l] = transformed[y][l];
  }
}

// V[e][tile - first][c] = (B^T d B)[e] for the tiles [first, last), over
// channels padded to whole chunks: `in` has `padded` floats per pixel,
// `zeros` as many zeros (the positions outside the input read them), and v
// is laid out with `padded` channels too.
template <typename Tile>
ACCEL_VECTOR_CLONES void transform_input(const Problem& p, const float* in, int64_t padded, const float* zeros,
                                         int64_t first, int64_t last, float* v) {
  constexpr int n = Tile::kIn;
  const TileGrid<Tile> grid(p);
  const int64_t stride = (last - first) * padded;  // between positions in v
  for (int64_t tile = first; tile < last; ++tile) {
    const TileOutputs outputs = grid.outputs_of(p, tile);
    const int64_t top = outputs.row - p.pad_top, left = outputs.column - p.pad_left;
    const float* d[n][n];
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t s = 0; s < n; ++s) {
        const int64_t row = top + r, column = left + s;
        const bool inside = row >= 0 && row < p.in_h && column >= 0 && column < p.in_w;
        d[r][s] = inside ? in + ((outputs.image * p.in_h + row) * p.in_w + column) * padded : zeros;
      }
    }
    float* out = v + (tile - first) * padded;
    for (int64_t c = 0; c < padded; c += kLanes) transform_input_chunk<Tile>(d, c, out, stride);
  }
}

// The 2-d output transform of one chunk of kLanes channels of a tile:
// y[x][z] for its first `rows` x `columns` outputs.
template <typename Tile>
[[gnu::always_inline]] inline void transform_output_chunk(const float* m, int64_t stride, Lanes (&y)[Tile::kOut][Tile::kOut]) {
  constexpr int n = Tile::kIn, k = Tile::kOut;
  Lanes partial[k][n];  // A^T M, partial[x][column]
  for (int column = 0; column < n; ++column) {
    Lanes values[n], transformed[k];
    for (int x = 0; x < n; ++x) ACCEL_LANES values[x][l] = m[(x * n + column) * stride + l];
    Tile::output(values, transformed);
    for (int x = 0; x < k; ++x) ACCEL_LANES partial[x][column][l] = transformed[x][l];
  }
  for (int x = 0; x < k; ++x) Tile::output(partial[x], y[x]);  // (A^T M) A
}

// The tiles' outputs, A^T M A, from M[e][tile - first][o] (`padded`
// channels, whole chunks); the parts of edge tiles past the output, and
// the padding channels, are dropped.
template <typename Tile>
ACCEL_VECTOR_CLONES void transform_output(const Problem& p, const float* m, int64_t padded, int64_t first,
                                          int64_t last, float* out) {
  constexpr int k = Tile::kOut;
  const TileGrid<Tile> grid(p);
  const int64_t channels = p.out_channels, stride = (last - first) * padded;
  for (int64_t tile = first; tile < last; ++tile) {
    const TileOutputs outputs = grid.outputs_of(p, tile);
    const int64_t rows = outputs.rows, columns = outputs.columns;
    float* y = out + ((outputs.image * p.out_h + outputs.row) * p.out_w + outputs.column) * channels;
    const float* mt = m + (tile - first) * padded;
    for (int64_t o = 0; o < padded; o += kLanes) {
      Lanes values[k][k];
      transform_output_chunk<Tile>(mt + o, stride, values);
      const int64_t width = std::min<int64_t>(kLanes, channels - o);
      for (int x = 0; x < rows; ++x) {
        for (int z = 0; z < columns; ++z) {
          float* target = y + (x * p.out_w + z) * channels + o;
          if (width == kLanes) {
            ACCEL_LANES target[l] = values[x][z][l];
          } else {
            for (int64_t l = 0; l < width; ++l) target[l] = values[x][z][l];
          }
        }
      }
    }
  }
}

// The calling thread's buffer number `which`, grown as needed and kept.
float* thread_buffer(int which, int64_t floats) {
  thread_local std::vector<float> buffers[2];
  std::vector<float>& buffer = buffers[which];
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

// Channels rounded up to whole chunks of kLanes.
int64_t padded_channels(int64_t channels) { return (channels + kLanes - 1) / kLanes * kLanes; }

// `in` itself when its channels fill whole chunks, else a copy in `copy`
// with zero channels after them, `padded` per pixel (never on the small
// ResNet's layers: 32 to 128 channels).
const float* with_padded_channels(const Problem& p, const float* in, int64_t padded, std::vector<float>& copy) {
  if (padded == p.in_channels) return in;
  const int64_t pixels = p.batch * p.in_h * p.in_w;
  copy.assign(static_cast<size_t>(pixels * padded), 0.0f);
  for (int64_t pixel = 0; pixel < pixels; ++pixel) {
    std::copy_n(in + pixel * p.in_channels, p.in_channels, copy.data() + pixel * padded);
  }
  return copy.data();
}

template <typename Tile>
void run(const Problem& p, const float* in, const float* filter, bool turned, float* out) {
  constexpr int64_t positions = Tile::kIn * Tile::kIn;
  const int64_t in_padded = padded_channels(p.in_channels), out_padded = padded_channels(p.out_channels);
  const int64_t matrix = in_padded * out_padded;
  std::vector<float> u(static_cast<size_t>(positions * matrix), 0.0f);
  transform_filter<Tile>(filter, turned, p.in_channels, p.out_channels, in_padded, out_padded, u.data());
  std::vector<float> padded_input;
  in = with_padded_channels(p, in, in_padded, padded_input);
  const std::vector<float> zeros(static_cast<size_t>(in_padded), 0.0f);
  const int64_t tiles = TileGrid<Tile>(p).count(p), per_block = tiles_per_block<Tile>(p);
  const int64_t blocks = (tiles + per_block - 1) / per_block;
  SgemmFailures failures;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t first = b * per_block, last = std::min(tiles, first + per_block), count = last - first;
    float* v = thread_buffer(0, positions * per_block * in_padded);
    float* m = thread_buffer(1, positions * per_block * out_padded);
    transform_input<Tile>(p, in, in_padded, zeros.data(), first, last, v);
    for (int64_t e = 0; e < positions; ++e) {
      sgemm(failures, 'N', 'N', count, out_padded, in_padded, v + e * count * in_padded, in_padded,
            u.data() + e * matrix, out_padded, false, m + e * count * out_padded, out_padded);
    }
    transform_output<Tile>(p, m, out_padded, first, last, out);
  }
  failures.throw_if_any("a Winograd convolution");
}

// dM[e][tile - first][o] = (A dy A^T)[e] for the tiles [first, last): the
// transpose of transform_output, over dy [batch, out_h, out_w, out_channels]
// (zero past the output's edge), `padded` channels (whole chunks; the
// padding channels are zero).
template <typename Tile>
ACCEL_VECTOR_CLONES void transform_gradient(const Problem& p, const float* dy, int64_t padded, int64_t first,
                                            int64_t last, float* dm) {
  constexpr int n = Tile::kIn, k = Tile::kOut;
  const TileGrid<Tile> grid(p);
  const int64_t channels = p.out_channels, stride = (last - first) * padded;
  for (int64_t tile = first; tile < last; ++tile) {
    const TileOutputs outputs = grid.outputs_of(p, tile);
    const int64_t rows = outputs.rows, columns = outputs.columns;
    const float* y = dy + ((outputs.image * p.out_h + outputs.row) * p.out_w + outputs.column) * channels;
    float* out = dm + (tile - first) * padded;
    for (int64_t o = 0; o < padded; o += kLanes) {
      const int64_t width = std::min<int64_t>(kLanes, channels - o);
      Lanes by_column[k][k];  // by_column[z][x]: dy's column z
      for (int x = 0; x < k; ++x) {
        for (int z = 0; z < k; ++z) {
          const float* source = y + (x * p.out_w + z) * channels + o;
          if (x < rows && z < columns && width == kLanes) {
            ACCEL_LANES by_column[z][x][l] = source[l];
          } else {
            ACCEL_LANES by_column[z][x][l] = x < rows && z < columns && l < width ? source[l] : 0.0f;
          }
        }
      }
      Lanes partial[n][k];  // A dy, partial[x][z]
      for (int z = 0; z < k; ++z) {
        Lanes transformed[n];
        Tile::output_transposed(by_column[z], transformed);
        for (int x = 0; x < n; ++x) ACCEL_LANES partial[x][z][l] = transformed[x][l];
      }
      for (int x = 0; x < n; ++x) {  // (A dy) A^T
        Lanes transformed[n];
        Tile::output_transposed(partial[x], transformed);
        for (int e = 0; e < n; ++e) ACCEL_LANES out[(x * n + e) * stride + o + l] = transformed[e][l];
      }
    }
  }
}

// The filter gradient of the forward problem p (x -> dy): dU[e] = sum over
// tiles of V[e]^T dM[e], then dW = G^T dU G. The tiles' blocks are summed in
// a number of chunks that depends on the shape alone
// (filter_gradient_chunks), each in block order; the chunks' sums are added
// in chunk order: the same bits on any thread count.

template <typename Tile>
void run_filter_gradient(const Problem& p, const float* x, const float* dy, float* gradient) {
  constexpr int n = Tile::kIn;
  constexpr int64_t positions = n * n;
  const int64_t in_padded = padded_channels(p.in_channels), out_padded = padded_channels(p.out_channels);
  const int64_t matrix = in_padded * out_padded, size = positions * matrix;
  std::vector<float> padded_input;
  x = with_padded_channels(p, x, in_padded, padded_input);
  const std::vector<float> zeros(static_cast<size_t>(in_padded), 0.0f);
  const int64_t tiles = TileGrid<Tile>(p).count(p), per_block = gradient_tiles_per_block<Tile>(p);
  const int64_t blocks = (tiles + per_block - 1) / per_block;
  const int64_t chunks = filter_gradient_chunks(size, blocks);
  std::vector<float> sums(static_cast<size_t>(chunks * size));
  SgemmFailures failures;
#pragma omp parallel for schedule(static)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    float* sum = sums.data() + chunk * size;
    float* v = thread_buffer(0, positions * per_block * in_padded);
    float* dm = thread_buffer(1, positions * per_block * out_padded);
    const int64_t first_block = chunk * blocks / chunks, last_block = (chunk + 1) * blocks / chunks;
    for (int64_t b = first_block; b < last_block; ++b) {
      const int64_t first = b * per_block, last = std::min(tiles, first + per_block), count = last - first;
      transform_input<Tile>(p, x, in_padded, zeros.data(), first, last, v);
      transform_gradient<Tile>(p, dy, out_padded, first, last, dm);
      for (int64_t e = 0; e < positions; ++e) {
        sgemm(failures, 'T', 'N', in_padded, out_padded, count, v + e * count * in_padded, in_padded,
              dm + e * count * out_padded, out_padded, b != first_block, sum + e * matrix, out_padded);
      }
    }
  }
  failures.throw_if_any("a Winograd filter gradient");
  add_chunk_sums(sums.data(), sums.data() + size, chunks - 1, size);
  // dW[r][s][c][o] = (G^T dU[c][o] G)[r][s].
  const float* du = sums.data();
  for (int64_t c = 0; c < p.in_channels; ++c) {
    for (int64_t o = 0; o < p.out_channels; ++o) {
      float columns[3][n];  // G^T dU, column by column
      for (int y = 0; y < n; ++y) {
        float column[n], transformed[3];
        for (int e = 0; e < n; ++e) column[e] = du[(e * n + y) * matrix + c * out_padded + o];
        Tile::filter_transposed(column, transformed);
        for (int r = 0; r < 3; ++r) columns[r][y] = transformed[r];
      }
      for (int r = 0; r < 3; ++r) {  // (G^T dU) G
        float row[3];
        Tile::filter_transposed(columns[r], row);
        for (int s = 0; s < 3; ++s) gradient[((r * 3 + s) * p.in_channels + c) * p.out_channels + o] = row[s];
      }
    }
  }
}

// ACCEL_CPU_WINOGRAD: unset or "1", the measured choice below; "0", no
// Winograd convolution at all (neither oneDNN's nor these); "onednn", only
// oneDNN's (on AVX-512), never these; "accel", these kernels wherever they
// apply (tests compare them on any CPU). Read at each call, as
// convolution.cpp reads it.
enum class WinogradSetting { kMeasured, kNever, kAlways };

WinogradSetting winograd_setting() {
  const char* setting = std::getenv("ACCEL_CPU_WINOGRAD");
  if (setting == nullptr) return WinogradSetting::kMeasured;
  if (std::strcmp(setting, "0") == 0 || std::strcmp(setting, "onednn") == 0) return WinogradSetting::kNever;
  if (std::strcmp(setting, "accel") == 0) return WinogradSetting::kAlways;
  return WinogradSetting::kMeasured;
}

// Every pass of a 3x3, stride-1, undilated convolution.
bool winograd_convolution_applies(const ConvGeometry& g) {
  return g.filter_h == 3 && g.filter_w == 3 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1;
}

}  // namespace

bool winograd_convolution_chosen(AccelOp, const ConvGeometry& g) {
  if (!winograd_convolution_applies(g)) return false;
  const WinogradSetting setting = winograd_setting();
  if (setting != WinogradSetting::kMeasured) return setting == WinogradSetting::kAlways;
  if (onednn_has_avx512()) return false;  // oneDNN's own Winograd kernels run there
  return g.channels >= 16 && g.filters >= 16;
}

void winograd_convolution(AccelOp op, const ConvGeometry& g, const float* first, const float* second, float* out) {
  limit_openmp_threads_on_this_thread();
  const bool forward = op == ACCEL_OP_CONV2D;
  Problem p;
  if (op == ACCEL_OP_CONV2D_BACKWARD_FILTER) {  // first: x, second: dy
    p = {g.batch, g.height, g.width, g.channels, g.out_h, g.out_w, g.filters, g.pad_top, g.pad_left};
    run_filter_gradient<F4x3>(p, first, second, out);
    return;
  }
  if (forward) {
    p = {g.batch, g.height, g.width, g.channels, g.out_h, g.out_w, g.filters, g.pad_top, g.pad_left};
  } else {  // dx [N, H, W, C] from dy [N, OH, OW, K]
    p = {g.batch, g.out_h, g.out_w, g.filters, g.height, g.width, g.channels, 2 - g.pad_top, 2 - g.pad_left};
  }
  run<F4x3>(p, first, second, !forward, out);
}

}  // namespace accel::host_kernels::detail
