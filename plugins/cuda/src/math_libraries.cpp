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

// Opens `soname` and resolves every entry point of Table; `resolve_all(handle,
// loaded)` names them (the library's X-macro list). A failure is logged once.
template <typename Table, typename ResolveAll>
Loaded<Table> load_table(const AccelHostApi* host, const char* library, const char* soname,
                         ResolveAll&& resolve_all) {
  Loaded<Table> loaded;
  if (void* handle = open_library(library, soname, loaded.error); handle != nullptr) {
    resolve_all(handle, loaded);
  }
  if (!loaded.error.empty()) log(host, ACCEL_LOG_WARNING, loaded.error);
  return loaded;
}

void log_loaded(const AccelHostApi* host, const char* library, int major, int minor, int patch,
                const void* entry) {
  log(host, ACCEL_LOG_INFO,
      std::string(library) + " " + std::to_string(major) + "." + std::to_string(minor) + "." +
          std::to_string(patch) + " loaded on first use from " + file_of(entry));
}

// Inside a resolve_all lambda: resolve(...) one entry point by its exported name.
#define ACCEL_RESOLVE(name) \
  resolve(handle, library, soname, ACCEL_STRINGIFY(name), loaded.table.name, loaded.error);
#define ACCEL_RESOLVE_OVERLOADED(name, type) ACCEL_RESOLVE(name)

Loaded<CublasLibrary> load_cublas(const AccelHostApi* host) {
  constexpr const char* library = "cuBLAS";
  constexpr const char* soname = kCublasSoname;
  auto loaded = load_table<CublasLibrary>(host, library, soname, [&](void* handle, Loaded<CublasLibrary>& loaded) {
    ACCEL_CUBLAS_FUNCTIONS(ACCEL_RESOLVE, ACCEL_RESOLVE_OVERLOADED)
  });
  if (!loaded.error.empty()) return loaded;
  int major = 0, minor = 0, patch = 0;
  (void)loaded.table.cublasGetProperty(MAJOR_VERSION, &major);
  (void)loaded.table.cublasGetProperty(MINOR_VERSION, &minor);
  (void)loaded.table.cublasGetProperty(PATCH_LEVEL, &patch);
  log_loaded(host, library, major, minor, patch, reinterpret_cast<const void*>(loaded.table.cublasCreate_v2));
  return loaded;
}

Loaded<CudnnLibrary> load_cudnn(const AccelHostApi* host) {
  constexpr const char* library = "cuDNN";
  constexpr const char* soname = kCudnnSoname;
  auto loaded = load_table<CudnnLibrary>(host, library, soname, [&](void* handle, Loaded<CudnnLibrary>& loaded) {
    ACCEL_CUDNN_FUNCTIONS(ACCEL_RESOLVE, ACCEL_RESOLVE_OVERLOADED)
  });
  if (!loaded.error.empty()) return loaded;
  const int version = static_cast<int>(loaded.table.cudnnGetVersion());  // major * 10000 + minor * 100 + patch
  log_loaded(host, library, version / 10000, version % 10000 / 100, version % 100,
             reinterpret_cast<const void*>(loaded.table.cudnnCreate));
  return loaded;
}

Loaded<NcclLibrary> load_nccl(const AccelHostApi* host) {
  constexpr const char* library = "NCCL";
  constexpr const char* soname = kNcclSoname;
  auto loaded = load_table<NcclLibrary>(host, library, soname, [&](void* handle, Loaded<NcclLibrary>& loaded) {
    ACCEL_NCCL_FUNCTIONS(ACCEL_RESOLVE, ACCEL_RESOLVE_OVERLOADED)
  });
  if (!loaded.error.empty()) return loaded;
  int version = 0;  // major * 10000 + minor * 100 + patch (NCCL >= 2.9)
  (void)loaded.table.ncclGetVersion(&version);
  log_loaded(host, library, version / 10000, version % 10000 / 100, version % 100,
             reinterpret_cast<const void*>(loaded.table.ncclGetVersion));
  return loaded;
}

#undef ACCEL_RESOLVE
#undef ACCEL_RESOLVE_OVERLOADED

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
