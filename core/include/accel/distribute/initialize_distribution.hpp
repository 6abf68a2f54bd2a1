// initialize_distribution: joins this process to the cluster's other
// processes for keras.distribution (as Keras 3's
// keras.distribution.initialize does for JAX): a CollectiveGroup over Gloo
// becomes the exchange that a sharded model's collectives cross processes
// through. After it, keras::distribution::list_devices() names every
// process's devices, and a DataParallel or ModelParallel mesh over them
// trains with each process running its own devices (docs/sharding.md,
// "Across processes").
//
//   const TFConfigClusterResolver resolver;            // TF_CONFIG, as MultiWorkerMirroredStrategy
//   distribute::initialize_distribution(resolver);
//   keras::distribution::DeviceMesh mesh({2, 2}, {"data", "model"}, keras::distribution::list_devices());
#pragma once

#include <accel/distribute/cluster_resolver.hpp>
#include <accel/distribute/collective_group.hpp>

namespace accel::distribute {

// Blocks until every chief and worker of the cluster joined (errors as
// CollectiveGroup's constructor). The process ids are the group's ranks: the
// chief first, then the workers by index. Until shutdown_distribution, each
// collective is bounded by `options.timeout`.
void initialize_distribution(const ClusterResolver& resolver, CollectiveOptions options = {});
// One process again; the group is closed once no sharded model holds it.
void shutdown_distribution();

}  // namespace accel::distribute
