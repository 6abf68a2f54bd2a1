// Parsing and validation of TF_CONFIG (and ACCEL_CONFIG, the same JSON):
//   {"cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"]},
//    "task": {"type": "worker", "index": 0}, "rpc_layer": "grpc"}
// Every defect is an InvalidArgumentError that starts with the variable's name
// and the position in its text ("TF_CONFIG (line 1, column 58): field
// 'task.index' ..."): invalid JSON, a byte order mark, a key given twice, an
// index that is not an int, an address without a valid port, and each
// cluster rule TensorFlow enforces.
#pragma once

#include <accel/distribute/cluster_resolver.hpp>
#include <accel/distribute/cluster_spec.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace accel::distribute {

struct TFConfig {
  ClusterSpec cluster;
  std::string task_type;  // "" when the config names no task
  int task_index = 0;
  std::string rpc_layer;
  std::string environment;
};

// The job types TF_CONFIG may use.
inline constexpr std::string_view kChiefJob = "chief";
inline constexpr std::string_view kWorkerJob = "worker";
inline constexpr std::string_view kPsJob = "ps";
inline constexpr std::string_view kEvaluatorJob = "evaluator";

// `source` names the text in errors ("TF_CONFIG", "ACCEL_CONFIG"). An empty
// or whitespace-only text is an error: a variable that is set must say
// something (unset means "no cluster", as in TensorFlow).
TFConfig parse_tf_config(std::string_view json_text, std::string_view source = "TF_CONFIG");

// ACCEL_CONFIG when set, else TF_CONFIG; nullopt when neither is. A set but
// empty variable is an InvalidArgumentError naming it, not "unset".
std::optional<TFConfig> read_tf_config(const EnvironmentLookup& environment = process_environment());

}  // namespace accel::distribute
