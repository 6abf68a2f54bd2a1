// accel's MATMUL on /GPU:0 beside cuBLAS called directly (issue 7's target:
// fp32, TF32 and bf16 square products at 4096 and 8192 reach at least 0.95x
// of cuBLAS). Prints one markdown table row per (precision, size) with the
// TFLOP/s of both and their ratio; without a GPU, "skipped: no GPU: <reason>".
//
//   bench_cuda_matmul [--sizes 4096,8192] [--precisions fp32,tf32,bf16]
//                     [--windows 11] [--window-ms 100] [--device /GPU:0]
//
// accel: y = accel::ops::matmul(a, b) under DeviceScope(/GPU:0), a and b
// uniform [0, 1) made on the GPU (bf16: cast there). cuBLAS: the same input
// bytes copied to its own buffers, cublasGemmEx on its own handle and stream
// with the compute type the plugin documents for the precision
// (docs/cuda-plugin.md, "Precision policy"): fp32 CUBLAS_COMPUTE_32F, TF32
// CUBLAS_COMPUTE_32F_FAST_TF32, bf16 in/out with CUBLAS_COMPUTE_32F; and the
// plugin's math mode (reduced-precision split-K reductions disallowed), so
// both sides are held to the same numerics.
//
// Timing: a window is N products issued back to back, then a synchronize
// (accel::runtime::synchronize / cudaStreamSynchronize), wall clock. N is
// calibrated so that a cuBLAS window takes about --window-ms. After two
// warm-up windows each, accel and cuBLAS windows alternate (a, b, a, b, ...)
// so clock boost and other load hit both alike; each reports its median
// window. FLOP count 2 n^3 per product. The accel window includes everything
// the user's call costs (dispatch, output allocation); for large products it
// overlaps the GPU's work.
//
// Check: 64 sampled elements of both results against a float64 product of the
// same inputs on the host (max relative error), which also shows the
// precision that ran: ~1e-6 exact fp32, ~1e-4 TF32, ~1e-3 bf16 output.
//
// TF32 is a device setting read when the runtime opens /GPU:0 (runtime
// setting cuda.allow_tf32, docs/cuda-plugin.md), so one process cannot run
// exact fp32 and TF32 products: the TF32 rows run first, in a child process
// of this program with the setting on, before this process opens the GPU.
#include "bench_timing.hpp"
#include "device_availability.hpp"

#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/runtime.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

enum class Precision { kFp32, kTf32, kBf16 };

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16: return "bf16";
  }
  return "?";
}

constexpr double kTargetRatio = 0.95;  // issue 7: at least 0.95x of cuBLAS

struct Args {
  std::vector<int64_t> sizes{4096, 8192};
  std::vector<Precision> precisions{Precision::kFp32, Precision::kTf32, Precision::kBf16};
  int windows = 11;
  double window_ms = 100;
  std::string device = "/GPU:0";
  bool rows_only = false;  // the TF32 child: table rows only, the parent prints the rest
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

[[noreturn]] void usage(const char* program) {
  std::cerr << "usage: " << program
            << " [--sizes 4096,8192] [--precisions fp32,tf32,bf16] [--windows W] [--window-ms MS]"
               " [--device /GPU:0]\n";
  std::exit(2);
}

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    if (flag == "--sizes") {
      args.sizes.clear();
      for (const std::string& size : split_commas(value())) args.sizes.push_back(std::stoll(size));
    } else if (flag == "--precisions") {
      args.precisions.clear();
      for (const std::string& name : split_commas(value())) {
        if (name == "fp32") args.precisions.push_back(Precision::kFp32);
        else if (name == "tf32") args.precisions.push_back(Precision::kTf32);
        else if (name == "bf16") args.precisions.push_back(Precision::kBf16);
        else usage(argv[0]);
      }
    } else if (flag == "--windows") {
      args.windows = std::stoi(value());
    } else if (flag == "--window-ms") {
      args.window_ms = std::stod(value());
    } else if (flag == "--device") {
      args.device = value();
    } else if (flag == "--rows-only") {
      args.rows_only = true;
    } else {
      usage(argv[0]);
    }
  }
  if (args.sizes.empty() || args.precisions.empty() || args.windows < 1 || args.window_ms <= 0) usage(argv[0]);
  for (int64_t size : args.sizes) {
    if (size < 1) usage(argv[0]);
  }
  return args;
}

bool wants(const Args& args, Precision precision) {
  return std::find(args.precisions.begin(), args.precisions.end(), precision) != args.precisions.end();
}

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
  }
}

// Square C = A x B through cuBLAS on its own handle, stream and buffers.
// Row-major A x B is issued as column-major B^T x A^T, the call the plugin makes.
class CublasPeer {
 public:
  CublasPeer(int ordinal, Precision precision, int n, const void* a_host, const void* b_host, size_t bytes)
      : precision_(precision), n_(n), bytes_(bytes) {
    check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    check_cublas(cublasSetStream(handle_, stream_), "cublasSetStream");
    check_cublas(cublasSetMathMode(handle_, static_cast<cublasMath_t>(
                                                CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
                 "cublasSetMathMode");
    for (void** buffer : {&a_, &b_, &c_}) check_cuda(cudaMalloc(buffer, bytes_), "cudaMalloc");
    check_cuda(cudaMemcpy(a_, a_host, bytes_, cudaMemcpyHostToDevice), "cudaMemcpy A");
    check_cuda(cudaMemcpy(b_, b_host, bytes_, cudaMemcpyHostToDevice), "cudaMemcpy B");
  }
  ~CublasPeer() {
    for (void* buffer : {a_, b_, c_}) cudaFree(buffer);
    if (handle_ != nullptr) cublasDestroy(handle_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  CublasPeer(const CublasPeer&) = delete;
  CublasPeer& operator=(const CublasPeer&) = delete;

  void multiply() {
    const cudaDataType_t type = precision_ == Precision::kBf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute =
        precision_ == Precision::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float alpha = 1.0f, beta = 0.0f;
    check_cublas(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &alpha, b_, type, n_, a_, type, n_,
                              &beta, c_, type, n_, compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  }
  void synchronize() { check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  std::vector<uint8_t> result() const {
    std::vector<uint8_t> host(bytes_);
    check_cuda(cudaMemcpy(host.data(), c_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy C");
    return host;
  }
 private:
  Precision precision_;
  int n_;
  size_t bytes_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* c_ = nullptr;
};

// Element `index` of a row-major matrix of float32 or bfloat16 as a double.
double element(const std::vector<uint8_t>& matrix, Precision precision, size_t index) {
  if (precision == Precision::kBf16) {
    uint16_t bits = 0;
    std::memcpy(&bits, matrix.data() + 2 * index, 2);
    const uint32_t widened = static_cast<uint32_t>(bits) << 16;  // bf16 is the top half of a float32
    float value = 0;
    std::memcpy(&value, &widened, 4);
    return value;
  }
  float value = 0;
  std::memcpy(&value, matrix.data() + 4 * index, 4);
  return value;
}

// Largest relative error of `c` (n x n) against a float64 A x B over 64 sampled elements.
double max_relative_error(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                          const std::vector<uint8_t>& c, Precision precision, int64_t n) {
  double worst = 0;
  uint64_t state = 12345;
  for (int sample = 0; sample < 64; ++sample) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's LCG: fixed, spread positions
    const int64_t row = static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
    const int64_t column = static_cast<int64_t>((state >> 13) % static_cast<uint64_t>(n));
    double exact = 0;
    for (int64_t k = 0; k < n; ++k) {
      exact += element(a, precision, static_cast<size_t>(row * n + k)) *
               element(b, precision, static_cast<size_t>(k * n + column));
    }
    const double got = element(c, precision, static_cast<size_t>(row * n + column));
    worst = std::max(worst, std::abs(got - exact) / std::max(std::abs(exact), 1e-30));
  }
  return worst;
}

std::vector<uint8_t> host_bytes(const accel::Tensor& tensor) {
  std::vector<uint8_t> bytes(tensor.byte_size());
  tensor.copy_to_host(bytes.data());
  return bytes;
}

// One table row: accel and cuBLAS on the same n x n inputs, interleaved windows.
void run_row(const Args& args, int ordinal, Precision precision, int64_t n) {
  using Clock = std::chrono::steady_clock;
  accel::DeviceScope scope(args.device);
  accel::Tensor a = accel::ops::random_uniform(accel::Shape{n, n}, /*seed=*/1);
  accel::Tensor b = accel::ops::random_uniform(accel::Shape{n, n}, /*seed=*/2);
  if (precision == Precision::kBf16) {
    a = accel::ops::cast(a, accel::DType::kBFloat16);
    b = accel::ops::cast(b, accel::DType::kBFloat16);
  }
  const std::vector<uint8_t> a_host = host_bytes(a), b_host = host_bytes(b);
  CublasPeer peer(ordinal, precision, static_cast<int>(n), a_host.data(), b_host.data(), a_host.size());

  // One product first: it loads cuBLAS into the plugin, and a product that did
  // not run on the GPU (a CPU fallback) stops here, not after minutes of windows.
  accel::Tensor y = accel::ops::matmul(a, b);
  if (y.device().type() != "GPU") {
    throw std::runtime_error("accel's matmul ran on " + y.device().short_name() + ", not on the GPU");
  }

  // Products per window: enough for about --window-ms of cuBLAS work.
  peer.multiply();
  peer.synchronize();
  const auto calibration_start = Clock::now();
  for (int i = 0; i < 3; ++i) peer.multiply();
  peer.synchronize();
  const double per_product = std::chrono::duration<double>(Clock::now() - calibration_start).count() / 3;
  const int products = std::max(1, static_cast<int>(std::ceil(args.window_ms * 1e-3 / per_product)));

  auto accel_window = [&] {
    for (int i = 0; i < products; ++i) y = accel::ops::matmul(a, b);
    accel::runtime::synchronize();
  };
  auto cublas_window = [&] {
    for (int i = 0; i < products; ++i) peer.multiply();
    peer.synchronize();
  };
  const std::vector<double> seconds =
      accel::bench::interleaved_median_seconds({accel_window, cublas_window}, args.windows, /*repeats=*/1);
  const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * products;
  const double accel_tflops = flop / seconds[0] * 1e-12, cublas_tflops = flop / seconds[1] * 1e-12;
  const double ratio = accel_tflops / cublas_tflops;
  const double accel_error = max_relative_error(a_host, b_host, host_bytes(y), precision, n);
  const double cublas_error = max_relative_error(a_host, b_host, peer.result(), precision, n);
  std::printf("| %s | %lld | %d | %.1f | %.1f | %.3f | >= %.2f | %s | %.1e | %.1e |\n", precision_name(precision),
              static_cast<long long>(n), products, accel_tflops, cublas_tflops, ratio, kTargetRatio,
              ratio >= kTargetRatio ? "yes" : "NO", accel_error, cublas_error);
  std::fflush(stdout);
}

// Runs this program again for the TF32 rows (cuda.allow_tf32=1 there) and
// returns its table rows; throws when it fails.
std::string run_tf32_child(const Args& args) {
  std::vector<char> self(4096, '\0');
  const ssize_t length = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (length <= 0) throw std::runtime_error("cannot find this program's path (/proc/self/exe)");
  std::string sizes;
  for (int64_t size : args.sizes) {
    if (!sizes.empty()) sizes += ',';
    sizes += std::to_string(size);
  }
  auto quoted = [](const std::string& text) {  // for /bin/sh: '...' with ' as '\''
    std::string out = "'";
    for (char c : text) {
      if (c == '\'') out += "'\\''";
      else out += c;
    }
    out += '\'';
    return out;
  };
  const std::string command = quoted(std::string(self.data(), static_cast<size_t>(length))) +
                              " --rows-only --precisions tf32 --sizes " + sizes + " --windows " +
                              std::to_string(args.windows) + " --window-ms " + std::to_string(args.window_ms) +
                              " --device " + quoted(args.device);
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) throw std::runtime_error("cannot start " + command);
  std::string rows;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), child) != nullptr) rows += buffer;
  if (const int status = pclose(child); status != 0) {
    throw std::runtime_error("the TF32 child process failed (status " + std::to_string(status) + "): " + command);
  }
  return rows;
}

int run(const Args& args) {
  if (const auto reason = accel::bench::missing_device_reason(args.device)) {
    std::printf("skipped: %s\n", reason->c_str());
    return 0;
  }
  const accel::config::PhysicalDevice gpu = accel::bench::physical_device(args.device);
  auto property = [&](const std::string& key) {
    const auto found = gpu.properties.find(key);
    return found == gpu.properties.end() ? std::string("?") : found->second;
  };
  // The CUDA device the plugin opened for it (CUDA_VISIBLE_DEVICES applies to both).
  const int ordinal = property("cuda_ordinal") == "?" ? std::max(accel::DeviceName::parse(args.device).index, 0)
                                                       : std::stoi(property("cuda_ordinal"));

  // This process runs either the TF32 rows or the others (see the header).
  const bool tf32_here = wants(args, Precision::kTf32) && args.precisions.size() == 1;
  const bool tf32_in_child = wants(args, Precision::kTf32) && !tf32_here;
  std::string tf32_rows;
  if (tf32_in_child) tf32_rows = run_tf32_child(args);  // before this process opens the GPU
  accel::config::set_setting("cuda.allow_tf32", tf32_here ? "1" : "0");

  if (!args.rows_only) {
    std::printf("device: %s %s (%s, compute capability %s, CUDA runtime %s, driver %s)\n", args.device.c_str(),
                gpu.description.c_str(), gpu.name.c_str(), property("compute_capability").c_str(),
                property("runtime_version").c_str(), property("driver_version").c_str());
    std::printf("method: per row, windows of N products then synchronize, N sized to ~%.0f ms of cuBLAS; "
                "2 warm-up + %d timed windows each, accel and cuBLAS alternating; median window; "
                "errors: max relative error of 64 sampled elements against float64\n\n",
                args.window_ms, args.windows);
    std::printf("| precision | n | products/window | accel TFLOP/s | cuBLAS TFLOP/s | accel / cuBLAS | target | met "
                "| accel max rel err | cuBLAS max rel err |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    std::fflush(stdout);
  }
  for (Precision precision : {Precision::kFp32, Precision::kTf32, Precision::kBf16}) {
    if (!wants(args, precision)) continue;
    if (precision == Precision::kTf32 && tf32_in_child) {
      std::fputs(tf32_rows.c_str(), stdout);
      continue;
    }
    for (int64_t n : args.sizes) run_row(args, ordinal, precision, n);
  }
  if (!args.rows_only) {
    int major = 0, minor = 0, patch = 0;
    check_cublas(cublasGetProperty(MAJOR_VERSION, &major), "cublasGetProperty");
    check_cublas(cublasGetProperty(MINOR_VERSION, &minor), "cublasGetProperty");
    check_cublas(cublasGetProperty(PATCH_LEVEL, &patch), "cublasGetProperty");
    std::printf("\ncuBLAS %d.%d.%d, loaded once in this process: the peer's calls and the plugin's "
                "(which dlopens libcublas.so.%d on its first matmul) use the same library\n",
                major, minor, patch, major);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_cuda_matmul: %s\n", error.what());
    return 1;
  }
}
