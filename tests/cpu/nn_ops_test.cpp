// MATMUL, CONV2D and its gradients, pooling and its gradients, and the fused
// optimizer updates against naive loops; also the thread limit.
#include "test_tensor.hpp"

#include <bit>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <string>

namespace accel::test {
namespace {

struct MatmulCase {
  Shape a, b, y;
  bool transpose_a, transpose_b;
};

TEST(Matmul, TransposesBatchesAndBroadcasts) {
  const std::vector<MatmulCase> cases = {
      {{3, 5}, {5, 4}, {3, 4}, false, false},
      {{5, 3}, {5, 4}, {3, 4}, true, false},
      {{3, 5}, {4, 5}, {3, 4}, false, true},
      {{5, 3}, {4, 5}, {3, 4}, true, true},
      {{2, 3, 5}, {2, 5, 4}, {2, 3, 4}, false, false},  // batched
      {{2, 3, 5}, {5, 4}, {2, 3, 4}, false, false},     // shared right side: one tall GEMM
      {{2, 5, 3}, {4, 5}, {2, 3, 4}, true, true},       // shared right side, transposed left
      {{3, 5}, {2, 5, 4}, {2, 3, 4}, false, false},     // shared left side
      {{1, 1}, {1, 1}, {1, 1}, false, false},
      {{3, 0}, {0, 4}, {3, 4}, false, false},           // K = 0: zeros
      {{0, 5}, {5, 4}, {0, 4}, false, false},           // empty output
      {{67, 129}, {129, 33}, {67, 33}, false, false},   // odd sizes
  };
  for (AccelDType dtype : {ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16}) {
    for (const auto& c : cases) {
      Tensor a = random_tensor(dtype, c.a, -1, 1, 1), b = random_tensor(dtype, c.b, -1, 1, 2);
      Tensor y(dtype, c.y);
      AccelMatmulAttributes attributes{sizeof(AccelMatmulAttributes), c.transpose_a, c.transpose_b, 0, {}};
      run(ACCEL_OP_MATMUL, {&a, &b}, {&y}, &attributes);
      const int64_t m = c.y[c.y.size() - 2], n = c.y.back();
      const int64_t k = c.a[c.a.size() - (c.transpose_a ? 2 : 1)];
      const int64_t batch = y.count() / std::max<int64_t>(1, m * n);
      const bool a_batched = c.a.size() > 2, b_batched = c.b.size() > 2;
      std::vector<double> expected(static_cast<size_t>(y.count()));
      for (int64_t p = 0; p < batch; ++p) {
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t q = 0; q < k; ++q) {
              const int64_t ai = (a_batched ? p * m * k : 0) + (c.transpose_a ? q * m + i : i * k + q);
              const int64_t bi = (b_batched ? p * k * n : 0) + (c.transpose_b ? j * k + q : q * n + j);
              sum += a.value(ai) * b.value(bi);
            }
            expected[(p * m + i) * n + j] = sum;
          }
        }
      }
      SCOPED_TRACE(::testing::Message() << "case a rank " << c.a.size() << " ta " << c.transpose_a << " tb "
                                        << c.transpose_b << " " << sdk::dtype_name(dtype));
      expect_close(y, expected, dtype == ACCEL_DTYPE_BF16 ? 2e-2 : 1e-4);
    }
  }
  Tensor a(ACCEL_DTYPE_F32, {3, 5}), b(ACCEL_DTYPE_F32, {4, 4}), y(ACCEL_DTYPE_F32, {3, 4});
  AccelMatmulAttributes none{sizeof(AccelMatmulAttributes), 0, 0, 0, {}};
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_MATMUL, {&a, &b}, {&y}, &none); }), ACCEL_STATUS_INVALID_ARGUMENT);
  Tensor ints(ACCEL_DTYPE_I32, {3, 5});
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_MATMUL, {&ints, &ints}, {&y}, &none); }), ACCEL_STATUS_UNIMPLEMENTED);
}

struct ConvCase {
  int64_t n, h, w, c, r, s, k;
  AccelConv2dAttributes attributes;
};

// y[n,oh,ow,k] = sum x[n, oh*sh - pt + r*dh, ow*sw - pl + s*dw, c] * f[r,s,c,k]; the
// gradients are the same sum read the other way.
TEST(Conv2d, ForwardAndBothGradientsMatchTheDirectSum) {
  auto attrs = [](int32_t sh, int32_t sw, int32_t dh, int32_t dw, int32_t pt, int32_t pb, int32_t pl, int32_t pr) {
    return AccelConv2dAttributes{sizeof(AccelConv2dAttributes), sh, sw, dh, dw, pt, pb, pl, pr, 0, {}};
  };
  const std::vector<ConvCase> cases = {
      {2, 7, 6, 3, 3, 3, 4, attrs(1, 1, 1, 1, 0, 0, 0, 0)},   // valid
      {2, 7, 6, 3, 3, 3, 4, attrs(1, 1, 1, 1, 1, 1, 1, 1)},   // same
      {1, 9, 8, 2, 3, 2, 5, attrs(2, 3, 1, 1, 1, 2, 0, 1)},   // strides, uneven pads
      {1, 9, 9, 2, 3, 3, 2, attrs(1, 1, 2, 2, 2, 2, 2, 2)},   // dilation
      {3, 28, 28, 1, 3, 3, 32, attrs(1, 1, 1, 1, 0, 0, 0, 0)}, // the tutorial's first layer
      {1, 1, 1, 1, 1, 1, 1, attrs(1, 1, 1, 1, 0, 0, 0, 0)},   // one element
      {9, 7, 8, 1, 3, 2, 13, attrs(2, 1, 1, 2, 1, 2, 2, 0)},  // one channel: blocks of images, a partial vector
      {2, 6, 6, 1, 5, 5, 40, attrs(1, 1, 1, 1, 2, 2, 2, 2)},  // one channel: 25 taps, 32 + 8 filters, padding
      {3, 14, 13, 16, 3, 3, 9, attrs(2, 2, 1, 1, 0, 1, 0, 1)},  // same, strided: a ResNet downsampling
      {20, 16, 16, 17, 3, 3, 5, attrs(1, 1, 1, 1, 1, 1, 1, 1)},  // 5120 pixels: 20 tiles, 16 filter-gradient chunks
      {2, 10, 11, 16, 3, 2, 4, attrs(1, 2, 2, 1, 2, 0, 1, 1)},  // dilation and uneven pads with many channels
  };
  // The filter gradient over one input channel runs as a direct loop
  // (filter_gradient.cpp); ACCEL_CPU_DIRECT_FILTER_GRADIENT=0 sends it to
  // oneDNN, which must agree too. ACCEL_CPU_CONV_GEMM=all runs every
  // convolution as im2col tiles on sgemm (convolution_gemm.cpp), =0 none;
  // ACCEL_CPU_WINOGRAD=accel runs the 3x3 stride-1 forward passes and input
  // gradients as Winograd F(2x2, 3x3) (convolution_winograd.cpp).
  struct Path {
    const char* gemm;
    const char* winograd;  // nullptr: unset
  };
  for (const char* direct_filter_gradient : {"1", "0"})
  for (const Path path : {Path{"0", "onednn"}, Path{"all", nullptr}, Path{"0", "accel"}}) {
    const char* gemm = path.gemm;
    ::setenv("ACCEL_CPU_DIRECT_FILTER_GRADIENT", direct_filter_gradient, 1);
    ::setenv("ACCEL_CPU_CONV_GEMM", gemm, 1);
    if (path.winograd != nullptr) ::setenv("ACCEL_CPU_WINOGRAD", path.winograd, 1);
    else ::unsetenv("ACCEL_CPU_WINOGRAD");
    for (const auto& c : cases) {
      const auto& a = c.attributes;
      const int64_t oh = out_size(c.h, c.r, a.stride_h, a.dilation_h, a.pad_top, a.pad_bottom);
      const int64_t ow = out_size(c.w, c.s, a.stride_w, a.dilation_w, a.pad_left, a.pad_right);
      Tensor x = random_tensor(ACCEL_DTYPE_F32, {c.n, c.h, c.w, c.c}, -1, 1, 1);
      Tensor f = random_tensor(ACCEL_DTYPE_F32, {c.r, c.s, c.c, c.k}, -1, 1, 2);
      Tensor dy = random_tensor(ACCEL_DTYPE_F32, {c.n, oh, ow, c.k}, -1, 1, 3);
      Tensor y(ACCEL_DTYPE_F32, {c.n, oh, ow, c.k}), dx(ACCEL_DTYPE_F32, x.shape()), df(ACCEL_DTYPE_F32, f.shape());
      run(ACCEL_OP_CONV2D, {&x, &f}, {&y}, &a);
      run(ACCEL_OP_CONV2D_BACKWARD_INPUT, {&dy, &f}, {&dx}, &a);
      run(ACCEL_OP_CONV2D_BACKWARD_FILTER, {&x, &dy}, {&df}, &a);
      std::vector<double> ey(static_cast<size_t>(y.count()), 0.0), edx(static_cast<size_t>(x.count()), 0.0),
          edf(static_cast<size_t>(f.count()), 0.0);
      for (int64_t n = 0; n < c.n; ++n)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j)
            for (int64_t r = 0; r < c.r; ++r)
              for (int64_t s = 0; s < c.s; ++s) {
                const int64_t h = i * a.stride_h - a.pad_top + r * a.dilation_h;
                const int64_t w = j * a.stride_w - a.pad_left + s * a.dilation_w;
                if (h < 0 || h >= c.h || w < 0 || w >= c.w) continue;
                for (int64_t ch = 0; ch < c.c; ++ch)
                  for (int64_t k = 0; k < c.k; ++k) {
                    const int64_t xi = ((n * c.h + h) * c.w + w) * c.c + ch;
                    const int64_t fi = ((r * c.s + s) * c.c + ch) * c.k + k;
                    const int64_t yi = ((n * oh + i) * ow + j) * c.k + k;
                    ey[yi] += x.value(xi) * f.value(fi);
                    edx[xi] += dy.value(yi) * f.value(fi);
                    edf[fi] += x.value(xi) * dy.value(yi);
                  }
              }
      SCOPED_TRACE(::testing::Message() << "direct filter gradient " << direct_filter_gradient << ", GEMM "
                                        << gemm << ", Winograd " << (path.winograd ? path.winograd : "unset")
                                        << ", conv " << c.n
                                        << "x" << c.h << "x" << c.w << "x" << c.c << " filter " << c.r << "x"
                                        << c.s << "x" << c.k);
      expect_close(y, ey, 1e-4);
      expect_close(dx, edx, 1e-4);
      // The filter gradient sums over every output pixel: float rounding
      // grows with the square root of their count.
      expect_close(df, edf, 1e-4 * std::max(1.0, std::sqrt(static_cast<double>(c.n * oh * ow) / 100.0)));
    }
  }
  ::unsetenv("ACCEL_CPU_DIRECT_FILTER_GRADIENT");
  ::unsetenv("ACCEL_CPU_CONV_GEMM");
  ::unsetenv("ACCEL_CPU_WINOGRAD");
}

// The GEMM path's filter gradient is summed over a fixed number of chunks
// whatever the thread count, and its other passes write disjoint rows; the
// Winograd path's blocks of tiles depend on the shape alone: the same bits
// on 1 and 2 threads.
class ConvPathBits : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvPathBits, AreTheSameOnAnyThreadCount) {
  const bool winograd = std::string(GetParam()) == "winograd";
  ::setenv("ACCEL_CPU_CONV_GEMM", winograd ? "0" : "all", 1);
  ::setenv("ACCEL_CPU_WINOGRAD", winograd ? "accel" : "onednn", 1);
  const AccelConv2dAttributes same{sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 1, 1, 1, 1, 0, {}};
  Tensor x = random_tensor(ACCEL_DTYPE_F32, {24, 12, 12, 16}, -1, 1, 4);
  Tensor f = random_tensor(ACCEL_DTYPE_F32, {3, 3, 16, 8}, -1, 1, 5);
  Tensor dy = random_tensor(ACCEL_DTYPE_F32, {24, 12, 12, 8}, -1, 1, 6);
  std::vector<Tensor> results;
  for (int threads : {1, 2}) {
    host_kernels::set_max_threads(threads);
    Tensor y(ACCEL_DTYPE_F32, dy.shape()), dx(ACCEL_DTYPE_F32, x.shape()), df(ACCEL_DTYPE_F32, f.shape());
    run(ACCEL_OP_CONV2D, {&x, &f}, {&y}, &same);
    run(ACCEL_OP_CONV2D_BACKWARD_INPUT, {&dy, &f}, {&dx}, &same);
    run(ACCEL_OP_CONV2D_BACKWARD_FILTER, {&x, &dy}, {&df}, &same);
    results.push_back(std::move(y));
    results.push_back(std::move(dx));
    results.push_back(std::move(df));
  }
  host_kernels::set_max_threads(0);
  ::unsetenv("ACCEL_CPU_CONV_GEMM");
  ::unsetenv("ACCEL_CPU_WINOGRAD");
  for (size_t pass = 0; pass < 3; ++pass) {
    const Tensor &one = results[pass], &two = results[pass + 3];
    EXPECT_EQ(std::memcmp(one.data<float>(), two.data<float>(), static_cast<size_t>(one.count()) * sizeof(float)), 0)
        << "pass " << pass;
  }
}

INSTANTIATE_TEST_SUITE_P(Conv2d, ConvPathBits, ::testing::Values("gemm", "winograd"));

TEST(Conv2d, InconsistentOutputShapeIsInvalidArgument) {
  Tensor x(ACCEL_DTYPE_F32, {1, 5, 5, 1}), f(ACCEL_DTYPE_F32, {3, 3, 1, 2}), y(ACCEL_DTYPE_F32, {1, 5, 5, 2});
  AccelConv2dAttributes a{sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 0, 0, 0, 0, 0, {}};
  std::string message;
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_CONV2D, {&x, &f}, {&y}, &a); }, &message), ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("CONV2D(float32[1,5,5,1], float32[3,3,1,2] -> float32[1,5,5,2])"), std::string::npos)
      << message;
}

TEST(Pooling, MaxAndAvgWithPaddingAndTheirGradients) {
  struct PoolCase { int64_t n, h, w, c; AccelPoolAttributes a; };
  const std::vector<PoolCase> cases = {
      {2, 6, 6, 3, {sizeof(AccelPoolAttributes), 2, 2, 2, 2, 0, 0, 0, 0}},
      {1, 5, 7, 2, {sizeof(AccelPoolAttributes), 3, 3, 2, 2, 1, 1, 1, 1}},  // 'same'-style pads
      {2, 4, 4, 1, {sizeof(AccelPoolAttributes), 3, 2, 1, 1, 0, 2, 1, 0}},  // overlapping windows
  };
  for (const auto& c : cases) {
    const auto& a = c.a;
    const int64_t oh = (c.h + a.pad_top + a.pad_bottom - a.window_h) / a.stride_h + 1;
    const int64_t ow = (c.w + a.pad_left + a.pad_right - a.window_w) / a.stride_w + 1;
    Tensor x = random_tensor(ACCEL_DTYPE_F32, {c.n, c.h, c.w, c.c}, -1, 1, 5);
    x.set(0, x.value(c.c));  // a tie: the gradient must go to the first of the two
    Tensor dy = random_tensor(ACCEL_DTYPE_F32, {c.n, oh, ow, c.c}, -1, 1, 6);
    Tensor max_y(ACCEL_DTYPE_F32, dy.shape()), avg_y(ACCEL_DTYPE_F32, dy.shape());
    Tensor max_dx(ACCEL_DTYPE_F32, x.shape()), avg_dx(ACCEL_DTYPE_F32, x.shape());
    run(ACCEL_OP_MAX_POOL, {&x}, {&max_y}, &a);
    run(ACCEL_OP_AVG_POOL, {&x}, {&avg_y}, &a);
    run(ACCEL_OP_MAX_POOL_BACKWARD, {&x, &dy}, {&max_dx}, &a);
    run(ACCEL_OP_AVG_POOL_BACKWARD, {&dy}, {&avg_dx}, &a);
    std::vector<double> e_max(static_cast<size_t>(dy.count())), e_avg(e_max.size()),
        e_max_dx(static_cast<size_t>(x.count()), 0.0), e_avg_dx(e_max_dx.size(), 0.0);
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j)
          for (int64_t ch = 0; ch < c.c; ++ch) {
            double best = -INFINITY, sum = 0;
            int64_t best_at = -1, cells = 0;
            for (int64_t r = 0; r < a.window_h; ++r)
              for (int64_t s = 0; s < a.window_w; ++s) {
                const int64_t h = i * a.stride_h - a.pad_top + r, w = j * a.stride_w - a.pad_left + s;
                if (h < 0 || h >= c.h || w < 0 || w >= c.w) continue;
                const int64_t xi = ((n * c.h + h) * c.w + w) * c.c + ch;
                if (x.value(xi) > best) { best = x.value(xi); best_at = xi; }
                sum += x.value(xi);
                ++cells;
              }
            const int64_t yi = ((n * oh + i) * ow + j) * c.c + ch;
            e_max[yi] = best;
            e_avg[yi] = sum / static_cast<double>(cells);
            e_max_dx[best_at] += dy.value(yi);
            for (int64_t r = 0; r < a.window_h; ++r)
              for (int64_t s = 0; s < a.window_w; ++s) {
                const int64_t h = i * a.stride_h - a.pad_top + r, w = j * a.stride_w - a.pad_left + s;
                if (h < 0 || h >= c.h || w < 0 || w >= c.w) continue;
                e_avg_dx[((n * c.h + h) * c.w + w) * c.c + ch] += dy.value(yi) / static_cast<double>(cells);
              }
          }
    expect_close(max_y, e_max);
    expect_close(avg_y, e_avg);
    expect_close(max_dx, e_max_dx);
    expect_close(avg_dx, e_avg_dx);
  }
}

// Windows that tile the image take faster paths (each dx cell written once;
// 2x2 windows, the usual pooling, in one pass over the channels, forward and
// backward); they must give what the general loops give on the same windows:
// the maximum with NaN never taken, the gradient at the first maximum, ties
// to the first, and a window of only NaN or -inf giving its first cell the
// gradient. The general loops run on the same image with one more row, which
// no window covers (so the windows no longer tile it).
TEST(Pooling, TiledMaxPoolEqualsTheGeneralLoop) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int32_t window : {2, 3}) {
    SCOPED_TRACE("window " + std::to_string(window));
    const AccelPoolAttributes a{sizeof(AccelPoolAttributes), window, window, window, window, 0, 0, 0, 0};
    const int64_t n = 2, h = 2 * window, w = 3 * window, c = 37;  // 37: a vector's worth and a remainder
    Tensor tiled_x = random_tensor(ACCEL_DTYPE_F32, {n, h, w, c}, -1, 1, 11);
    for (int64_t i = 0; i < tiled_x.count(); i += 3) tiled_x.set(i, 0.0);  // relu's ties
    auto at = [&](int64_t image, int64_t row, int64_t col, int64_t channel) {
      return ((image * h + row) * w + col) * c + channel;
    };
    for (int64_t row = 0; row < window; ++row)
      for (int64_t col = 0; col < window; ++col) {
        tiled_x.at<float>(at(0, row, col, 0)) = 0.5f;                             // all-way tie
        tiled_x.at<float>(at(0, row, col, 1)) = (row + col == 0) ? nan : -2.0f;  // NaN first, then ties
        tiled_x.at<float>(at(0, row, col, 2)) = -inf;                             // no maximum
        tiled_x.at<float>(at(0, row, col, 3)) = (row == 1) ? nan : -inf;          // only NaN and -inf
        tiled_x.at<float>(at(0, row, col, 4)) = (row == window - 1 && col == window - 1) ? 3.0f : 0.0f;  // last
      }
    Tensor untiled_x(ACCEL_DTYPE_F32, {n, h + 1, w, c});
    for (int64_t image = 0; image < n; ++image) {
      std::copy_n(tiled_x.data<float>() + image * h * w * c, h * w * c,
                  untiled_x.data<float>() + image * (h + 1) * w * c);
      std::fill_n(untiled_x.data<float>() + (image * (h + 1) + h) * w * c, w * c, 9.0f);  // covered by no window
    }
    Tensor dy = random_tensor(ACCEL_DTYPE_F32, {n, h / window, w / window, c}, -1, 1, 12);
    Tensor tiled_y(ACCEL_DTYPE_F32, dy.shape()), untiled_y(ACCEL_DTYPE_F32, dy.shape());
    run(ACCEL_OP_MAX_POOL, {&tiled_x}, {&tiled_y}, &a);
    run(ACCEL_OP_MAX_POOL, {&untiled_x}, {&untiled_y}, &a);
    for (int64_t i = 0; i < dy.count(); ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(tiled_y.at<float>(i)), std::bit_cast<uint32_t>(untiled_y.at<float>(i)))
          << "output " << i;
    }
    EXPECT_EQ(tiled_y.at<float>(2), -inf);
    EXPECT_EQ(tiled_y.at<float>(4), 3.0f);

    Tensor tiled_dx(ACCEL_DTYPE_F32, tiled_x.shape()), untiled_dx(ACCEL_DTYPE_F32, untiled_x.shape());
    std::fill_n(tiled_dx.data<float>(), tiled_dx.count(), 7.0f);  // every cell must be written
    run(ACCEL_OP_MAX_POOL_BACKWARD, {&tiled_x, &dy}, {&tiled_dx}, &a);
    run(ACCEL_OP_MAX_POOL_BACKWARD, {&untiled_x, &dy}, {&untiled_dx}, &a);
    for (int64_t image = 0; image < n; ++image) {
      for (int64_t i = 0; i < h * w * c; ++i) {
        ASSERT_EQ(tiled_dx.at<float>(image * h * w * c + i), untiled_dx.at<float>(image * (h + 1) * w * c + i))
            << "image " << image << " element " << i;
      }
      for (int64_t i = 0; i < w * c; ++i) EXPECT_EQ(untiled_dx.at<float>((image * (h + 1) + h) * w * c + i), 0.0f);
    }
    EXPECT_EQ(tiled_dx.at<float>(at(0, 0, 0, 0)), dy.at<float>(0));  // the tie goes to the first cell
    EXPECT_EQ(tiled_dx.at<float>(at(0, 0, 1, 1)), dy.at<float>(1));  // NaN skipped: the first -2
    EXPECT_EQ(tiled_dx.at<float>(at(0, 0, 0, 2)), dy.at<float>(2));  // all -inf: the first cell
    EXPECT_EQ(tiled_dx.at<float>(at(0, 0, 0, 3)), dy.at<float>(3));
    EXPECT_EQ(tiled_dx.at<float>(at(0, window - 1, window - 1, 4)), dy.at<float>(4));  // the last cell's maximum
    EXPECT_EQ(tiled_dx.at<float>(at(0, 0, 0, 4)), 0.0f);
  }
}

TEST(Optimizers, SgdPlainMomentumAndNesterov) {
  for (double momentum : {0.0, 0.9}) {
    for (int nesterov : {0, 1}) {
      Tensor var = random_tensor(ACCEL_DTYPE_F32, {37}, -1, 1, 1), grad = random_tensor(ACCEL_DTYPE_F32, {37}, -1, 1, 2);
      Tensor velocity = random_tensor(ACCEL_DTYPE_F32, {37}, -1, 1, 3);
      std::vector<double> e_var, e_vel;
      for (int64_t i = 0; i < 37; ++i) {
        const double g = grad.value(i), lr = 0.1;
        if (momentum == 0) {
          e_var.push_back(var.value(i) - lr * g);
          e_vel.push_back(velocity.value(i));
        } else {
          const double v = momentum * velocity.value(i) - lr * g;
          e_vel.push_back(v);
          e_var.push_back(var.value(i) + (nesterov ? momentum * v - lr * g : v));
        }
      }
      AccelSgdAttributes a{sizeof(AccelSgdAttributes), 0.1, momentum, nesterov};
      if (momentum == 0) run(ACCEL_OP_SGD_UPDATE, {&var, &grad}, {}, &a);
      else run(ACCEL_OP_SGD_UPDATE, {&var, &grad, &velocity}, {}, &a);
      expect_close(var, e_var);
      expect_close(velocity, e_vel);
    }
  }
}

TEST(Optimizers, AdamFollowsKerasRule) {
  Tensor var = random_tensor(ACCEL_DTYPE_F32, {19}, -1, 1, 1), m = random_tensor(ACCEL_DTYPE_F32, {19}, -1, 1, 2);
  Tensor v = random_tensor(ACCEL_DTYPE_F32, {19}, 0, 1, 3), grad = random_tensor(ACCEL_DTYPE_F32, {19}, -1, 1, 4);
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-7;
  const int64_t t = 3;
  std::vector<double> e_var, e_m, e_v;
  const double lr_t = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
  for (int64_t i = 0; i < 19; ++i) {
    const double g = grad.value(i);
    e_m.push_back(b1 * m.value(i) + (1 - b1) * g);
    e_v.push_back(b2 * v.value(i) + (1 - b2) * g * g);
    e_var.push_back(var.value(i) - lr_t * e_m.back() / (std::sqrt(e_v.back()) + eps));
  }
  AccelAdamAttributes a{sizeof(AccelAdamAttributes), lr, b1, b2, eps, t};
  run(ACCEL_OP_ADAM_UPDATE, {&var, &m, &v, &grad}, {}, &a);
  expect_close(var, e_var);
  expect_close(m, e_m);
  expect_close(v, e_v);
}

TEST(Optimizers, RmspropAllFourVariants) {
  for (double momentum : {0.0, 0.5}) {
    for (int centered : {0, 1}) {
      Tensor var = random_tensor(ACCEL_DTYPE_F32, {23}, -1, 1, 1), ms = random_tensor(ACCEL_DTYPE_F32, {23}, 0.5, 1, 2);
      Tensor mom = random_tensor(ACCEL_DTYPE_F32, {23}, -1, 1, 3), mg = random_tensor(ACCEL_DTYPE_F32, {23}, -0.1, 0.1, 4);
      Tensor grad = random_tensor(ACCEL_DTYPE_F32, {23}, -1, 1, 5);
      const double lr = 0.01, rho = 0.9, eps = 1e-7;
      std::vector<double> e_var, e_ms, e_mom, e_mg;
      for (int64_t i = 0; i < 23; ++i) {
        const double g = grad.value(i);
        const double ms_t = rho * ms.value(i) + (1 - rho) * g * g;
        const double mg_t = centered ? rho * mg.value(i) + (1 - rho) * g : mg.value(i);
        const double denom = centered ? ms_t - mg_t * mg_t : ms_t;
        double mom_t = mom.value(i), var_t;
        if (momentum > 0) {
          mom_t = momentum * mom_t + lr * g / std::sqrt(denom + eps);
          var_t = var.value(i) - mom_t;
        } else {
          var_t = var.value(i) - lr * g / (std::sqrt(denom) + eps);
        }
        e_var.push_back(var_t); e_ms.push_back(ms_t); e_mom.push_back(mom_t); e_mg.push_back(mg_t);
      }
      AccelRmspropAttributes a{sizeof(AccelRmspropAttributes), lr, rho, momentum, eps, centered};
      run(ACCEL_OP_RMSPROP_UPDATE, {&var, &ms, &mom, &mg, &grad}, {}, &a);
      expect_close(var, e_var); expect_close(ms, e_ms); expect_close(mom, e_mom); expect_close(mg, e_mg);
    }
  }
}

TEST(Optimizers, HalfPrecisionVariablesAreUpdatedInPlace) {
  Tensor var = tensor_of(ACCEL_DTYPE_BF16, {2}, {1.0, -2.0}), grad = tensor_of(ACCEL_DTYPE_BF16, {2}, {0.5, 0.5});
  AccelSgdAttributes a{sizeof(AccelSgdAttributes), 1.0, 0.0, 0};
  run(ACCEL_OP_SGD_UPDATE, {&var, &grad}, {}, &a);
  expect_close(var, {0.5, -2.5}, 0);
}

TEST(Threads, LimitIsSettableAndResettable) {
  host_kernels::set_max_threads(1);
  EXPECT_EQ(host_kernels::max_threads(), 1);
  Tensor a = random_tensor(ACCEL_DTYPE_F32, {64, 64}), y(ACCEL_DTYPE_F32, {64, 64});
  AccelMatmulAttributes none{sizeof(AccelMatmulAttributes), 0, 0, 0, {}};
  run(ACCEL_OP_MATMUL, {&a, &a}, {&y}, &none);  // oneDNN runs under the limit
  host_kernels::set_max_threads(0);
  EXPECT_GE(host_kernels::max_threads(), 1);
}

TEST(Supports, IsTruthfulForEveryOpAndDtype) {
  // Every supported (op, dtype) must at least get past dtype checks on a trivial call
  // where one can be built generically; here we check the documented classes.
  EXPECT_TRUE(host_kernels::supports(ACCEL_OP_MATMUL, ACCEL_DTYPE_F16));
  EXPECT_FALSE(host_kernels::supports(ACCEL_OP_MATMUL, ACCEL_DTYPE_I32));
  EXPECT_TRUE(host_kernels::supports(ACCEL_OP_ADD, ACCEL_DTYPE_I64));
  EXPECT_FALSE(host_kernels::supports(ACCEL_OP_ADD, ACCEL_DTYPE_U8));
  EXPECT_TRUE(host_kernels::supports(ACCEL_OP_GATHER, ACCEL_DTYPE_BOOL));
  EXPECT_TRUE(host_kernels::supports(ACCEL_OP_CAST, ACCEL_DTYPE_U8));
  EXPECT_FALSE(host_kernels::supports(ACCEL_OP_RANDOM_NORMAL, ACCEL_DTYPE_I32));
  EXPECT_FALSE(host_kernels::supports(ACCEL_OP_COUNT, ACCEL_DTYPE_F32));
  EXPECT_FALSE(host_kernels::supports(ACCEL_OP_ADD, ACCEL_DTYPE_COUNT));
  // Unary and binary ops: supports() agrees with what execute() accepts.
  std::vector<int> elementwise_ops;
  for (int op = ACCEL_OP_NEG; op <= ACCEL_OP_TANH_BACKWARD; ++op) elementwise_ops.push_back(op);
  elementwise_ops.push_back(ACCEL_OP_ERF);
  for (int op : elementwise_ops) {
    for (int d = 0; d < ACCEL_DTYPE_COUNT; ++d) {
      const auto dtype = static_cast<AccelDType>(d);
      const bool binary = op >= ACCEL_OP_ADD && op <= ACCEL_OP_TANH_BACKWARD;
      const bool comparison = op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL;
      Tensor a = tensor_of(dtype, {2}, {1, 1}), b = tensor_of(dtype, {2}, {1, 1});
      Tensor y(comparison ? ACCEL_DTYPE_BOOL : dtype, {2});
      const AccelStatusCode code = error_code_of([&] {
        if (binary) run(static_cast<AccelOp>(op), {&a, &b}, {&y});
        else run(static_cast<AccelOp>(op), {&a}, {&y});
      });
      EXPECT_EQ(code == ACCEL_STATUS_OK, host_kernels::supports(static_cast<AccelOp>(op), dtype))
          << host_kernels::op_name(static_cast<AccelOp>(op)) << " " << sdk::dtype_name(dtype);
    }
  }
}

}  // namespace
}  // namespace accel::test
