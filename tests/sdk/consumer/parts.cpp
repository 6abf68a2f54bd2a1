// The installed parts a Keras program does not link: accel::host_kernels (what
// a plugin keeping buffers in host memory runs: a matmul through oneDNN) and
// accel::experiment (the installed example configurations load and validate).
// Exit 0 when both work, else 1 with what was wrong.
#include <accel/experiment/experiment_loader.hpp>
#include <accel/plugin/host_kernels.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace {

bool host_matmul_works() {
  // [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]]
  float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, c[4] = {};
  auto matrix = [](float* data) {
    accel::host_kernels::HostTensor tensor;
    tensor.rank = 2;
    tensor.shape[0] = tensor.shape[1] = 2;
    tensor.data = data;
    return tensor;
  };
  const accel::host_kernels::HostTensor inputs[] = {matrix(a), matrix(b)};
  const accel::host_kernels::HostTensor outputs[] = {matrix(c)};
  AccelMatmulAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  accel::host_kernels::execute(ACCEL_OP_MATMUL, inputs, outputs, &attributes);
  const bool right = c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50;
  std::printf("host_kernels (%s): matmul gives [%g %g; %g %g]%s\n", accel::host_kernels::gemm_library(), c[0], c[1],
              c[2], c[3], right ? "" : ", expected [19 22; 43 50]");
  return right;
}

bool installed_experiment_loads() {
  const std::string path = std::string(ACCEL_CONFIG_DIR) + "/tutorial_mlp.yaml";
  const accel::experiment::Experiment experiment = accel::experiment::load_experiment(path);
  std::printf("experiment %s from %s: %zu run(s)\n", experiment.name.c_str(), path.c_str(), experiment.runs.size());
  return experiment.name == "tutorial_mlp" && !experiment.runs.empty();
}

}  // namespace

int main() {
  try {
    const bool kernels = host_matmul_works();
    const bool experiment = installed_experiment_loads();
    return kernels && experiment ? 0 : 1;
  } catch (const std::exception& error) {
    std::printf("FAILED: %s\n", error.what());
    return 1;
  }
}
