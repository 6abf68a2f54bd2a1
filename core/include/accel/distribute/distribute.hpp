// accel::distribute: strategies (in-process replicas), cluster resolvers,
// cross-process collectives and the local launcher. One include for all of it.
#pragma once

#include <accel/distribute/cluster_resolver.hpp>
#include <accel/distribute/cluster_spec.hpp>
#include <accel/distribute/collective_group.hpp>
#include <accel/distribute/compute_average_loss.hpp>
#include <accel/distribute/cross_device_ops.hpp>
#include <accel/distribute/distributed_dataset.hpp>
#include <accel/distribute/initialize_distribution.hpp>
#include <accel/distribute/input_context.hpp>
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/mirrored_variable.hpp>
#include <accel/distribute/multi_worker_mirrored_strategy.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/distribute/per_replica.hpp>
#include <accel/distribute/replica_context.hpp>
#include <accel/distribute/strategy.hpp>
#include <accel/distribute/launch.hpp>
#include <accel/distribute/simple_cluster_resolver.hpp>
#include <accel/distribute/slurm_cluster_resolver.hpp>
#include <accel/distribute/slurm_hostlist.hpp>
#include <accel/distribute/tf_config_cluster_resolver.hpp>
#include <accel/distribute/tf_config_parser.hpp>
#include <accel/distribute/tpu_cluster_resolver.hpp>
#include <accel/distribute/tpu_strategy.hpp>
