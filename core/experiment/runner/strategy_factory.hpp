// The tf.distribute strategy a run asks for (`strategy:` of the experiment
// file), built once the run's device settings are applied:
//   one_device             OneDeviceStrategy(device)
//   mirrored               MirroredStrategy(devices, cross_device_ops)
//   tpu                    TPUStrategy on the emulated slice `tpu` names
//                          (initialize_tpu_system first)
//   multi_worker_mirrored  MultiWorkerMirroredStrategy joining the cluster its
//                          resolver (tf_config, slurm, simple) describes
// None: the run trains on its device without a strategy.
#pragma once

#include <accel/distribute/cluster_resolver.hpp>
#include <accel/distribute/strategy.hpp>
#include <accel/distribute/tpu_cluster_resolver.hpp>
#include <accel/experiment/experiment.hpp>
#include <accel/experiment/run_results.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::experiment {

// Null without a strategy. Limitations that apply (NCCL asked for but not
// available, ...) are appended to `notes`.
std::unique_ptr<distribute::Strategy> make_strategy(const RunConfig& run, std::vector<std::string>& notes);

// The TPU cluster resolver a tpu strategy names (`strategy.tpu.tpu`).
distribute::TPUClusterResolver make_tpu_resolver(const KerasObject& strategy);

// The cluster resolver a multi_worker_mirrored run names.
std::unique_ptr<distribute::ClusterResolver> make_cluster_resolver(const KerasObject& resolver);

// False only for a multi-worker run in which this process is not the chief:
// such a worker trains, and the chief writes the results.
bool runs_as_chief(const RunConfig& run);

// What results.json records about the strategy.
DistributionResult describe_strategy(const distribute::Strategy& strategy);

}  // namespace accel::experiment
