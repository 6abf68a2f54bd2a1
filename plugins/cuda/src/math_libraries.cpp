// Loading cuBLAS, cuDNN and NCCL on first use (see math_libraries.hpp).
#include "math_libraries.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <dlfcn.h>

#include <string>

namespace accel::cuda {
namespace {

#define ACCEL_STRINGIFY_(x) #x
#define ACCEL_STRINGIFY(x) ACCEL_STRINGIFY_(x)

// The major version the plugin was compiled against: its ABI.
constexpr const char* kCublasSoname = "libcublas.so." ACCEL_STRINGIFY(CUBLAS_VER_MAJOR);
constexpr const char* kCudnnSoname = "libcudnn.so." ACCEL_STRINGIFY(CUDNN_MAJOR);
constexpr const char* kNcclSoname = "libnccl.so." ACCEL_STRINGIFY(NCCL_MAJOR);

// A loaded table, or why it could not be loaded.
template <typename Table> struct Loaded {
  Table table;
  std::string error;  // empty when every entry point was resolved
};

std::string dl_error_text() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlerror";
}

// dlopen from this library's code: the search uses the plugin's RUNPATH (the
// toolkit's, cuDNN's and NCCL's folders), then LD_LIBRARY_PATH and the system's.
void* open_library(const char* library, const char* soname, std::string& error) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    error = std::string(library) + " is unavailable: dlopen(\"" + soname +
            "\") failed: " + dl_error_text();
  }
  return handle;
}

template <typename Function>
void resolve(void* handle, const char* library, const char* soname, const char* symbol,
             Function& entry, std::string& error) {
  if (!error.empty()) return;
  (void)dlerror();
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    error = std::string(library) + " is unavailable: " + soname + " has no " + symbol + " (" +
            dl_error_text() + ")";
    return;
  }
  entry = reinterpret_cast<Function>(address);
}

// The file the entry point at `address` came from.
std::string file_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "?";
}

void log(const AccelHostApi* host, AccelLogLevel level, const std::string& message) {
  if (host != nullptr && host->log != nullptr) host->log(level, "cuda", message.c_str());
}

template <typename Table>
const Table& checked(const Loaded<Table>& loaded) {
  if (!loaded.error.empty()) throw sdk::PluginError(ACCEL_STATUS_UNAVAILABLE, loaded.error);
  return loaded.table;
}

Loaded<CublasLibrary> load_cublas(const AccelHostApi* host) {
  Loaded<CublasLibrary> loaded;
  void* handle = open_library("cuBLAS", kCublasSoname, loaded.error);
  if (handle != nullptr) {
#define ACCEL_RESOLVE(name) \
  resolve(handle, "cuBLAS", kCublasSoname, ACCEL_STRINGIFY(name), loaded.table.name, loaded.error);
#define ACCEL_RESOLVE_OVERLOADED(name, type) ACCEL_RESOLVE(name)
    ACCEL_CUBLAS_FUNCTIONS(ACCEL_RESOLVE, ACCEL_RESOLVE_OVERLOADED)
#undef ACCEL_RESOLVE
#undef ACCEL_RESOLVE_OVERLOADED
  }
  if (!loaded.error.empty()) {
    log(host, ACCEL_LOG_WARNING, loaded.error);
    return loaded;
  }
  int major = 0, minor = 0, patch = 0;
  (void)loaded.table.cublasGetProperty(MAJOR_VERSION, &major);
  (void)loaded.table.cublasGetProperty(MINOR_VERSION, &minor);
  (void)loaded.table.cublasGetProperty(PATCH_LEVEL, &patch);
  log(host, ACCEL_LOG_INFO,
      "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." +
          std::to_string(patch) + " loaded on first use from " +
          file_of(reinterpret_cast<const void*>(loaded.table.cublasCreate_v2)));
  return loaded;
}

Loaded<CudnnLibrary> load_cudnn(const AccelHostApi* host) {
  Loaded<CudnnLibrary> loaded;
  void* handle = open_library("cuDNN", kCudnnSoname, loaded.error);
  if (handle != nullptr) {
#define ACCEL_RESOLVE(name) \
  resolve(handle, "cuDNN", kCudnnSoname, ACCEL_STRINGIFY(name), loaded.table.name, loaded.error);
#define ACCEL_RESOLVE_OVERLOADED(name, type) ACCEL_RESOLVE(name)
    ACCEL_CUDNN_FUNCTIONS(ACCEL_RESOLVE, ACCEL_RESOLVE_OVERLOADED)
#undef ACCEL_RESOLVE
#undef ACCEL_RESOLVE_OVERLOADED
  }
  if (!loaded.error.empty()) {
    log(host, ACCEL_LOG_WARNING, loaded.error);
    return loaded;
  }
  const size_t version = loaded.table.cudnnGetVersion();  // major * 10000 + minor * 100 + patch
  log(host, ACCEL_LOG_INFO,
      "cuDNN " + std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) +
          "." + std::to_string(version % 100) + " loaded on first use from " +
          file_of(reinterpret_cast<const void*>(loaded.table.cudnnCreate)));
  return loaded;
}

Loaded<NcclLibrary> load_nccl(const AccelHostApi* host) {
  Loaded<NcclLibrary> loaded;
  void* handle = open_library("NCCL", kNcclSoname, loaded.error);
  if (handle != nullptr) {
#define ACCEL_RESOLVE(name) \
  resolve(handle, "NCCL", kNcclSoname, ACCEL_STRINGIFY(name), loaded.table.name, loaded.error);
#define ACCEL_RESOLVE_OVERLOADED(name, type) ACCEL_RESOLVE(name)
    ACCEL_NCCL_FUNCTIONS(ACCEL_RESOLVE, ACCEL_RESOLVE_OVERLOADED)
#undef ACCEL_RESOLVE
#undef ACCEL_RESOLVE_OVERLOADED
  }
  if (!loaded.error.empty()) {
    log(host, ACCEL_LOG_WARNING, loaded.error);
    return loaded;
  }
  int version = 0;  // major * 10000 + minor * 100 + patch (NCCL >= 2.9)
  (void)loaded.table.ncclGetVersion(&version);
  log(host, ACCEL_LOG_INFO,
      "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
          std::to_string(version % 100) + " loaded on first use from " +
          file_of(reinterpret_cast<const void*>(loaded.table.ncclGetVersion)));
  return loaded;
}

}  // namespace

const CublasLibrary& cublas_library(const AccelHostApi* host) {
  static const Loaded<CublasLibrary> loaded = load_cublas(host);  // once, thread-safe
  return checked(loaded);
}

const CudnnLibrary& cudnn_library(const AccelHostApi* host) {
  static const Loaded<CudnnLibrary> loaded = load_cudnn(host);
  return checked(loaded);
}

const NcclLibrary& nccl_library(const AccelHostApi* host) {
  static const Loaded<NcclLibrary> loaded = load_nccl(host);
  return checked(loaded);
}

}  // namespace accel::cuda
