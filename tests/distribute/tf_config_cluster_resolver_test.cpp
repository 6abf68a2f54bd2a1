// TF_CONFIG / ACCEL_CONFIG: the good shapes, every bad one naming its field
// and its position, and the strict JSON rules (no BOM, no duplicate key, no
// empty value, numbers that fit).
#include <accel/distribute/tf_config_cluster_resolver.hpp>
#include <accel/error.hpp>

#include <gtest/gtest.h>

#include <map>

namespace accel::distribute {
namespace {

EnvironmentLookup fake_environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

constexpr const char* kChiefAndWorkers = R"({
  "cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"], "ps": ["host3:2222"]},
  "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"})";

TEST(TFConfigClusterResolver, ReadsClusterTaskAndRpcLayer) {
  const TFConfigClusterResolver resolver(fake_environment({{"TF_CONFIG", kChiefAndWorkers}}));
  EXPECT_EQ(resolver.cluster_spec().job_tasks("worker"), (std::vector<std::string>{"host1:2222", "host2:2222"}));
  EXPECT_EQ(resolver.task_type(), "worker");
  EXPECT_EQ(resolver.task_id(), 1);
  EXPECT_EQ(resolver.master(), "grpc://host2:2222");
  EXPECT_EQ(resolver.master("chief", 0, ""), "host0:2222");
}

TEST(TFConfigClusterResolver, AccelConfigTakesPrecedenceOverTfConfig) {
  const TFConfigClusterResolver resolver(fake_environment(
      {{"TF_CONFIG", kChiefAndWorkers},
       {"ACCEL_CONFIG", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}})"}}));
  EXPECT_EQ(resolver.cluster_spec().num_tasks("worker"), 1);
  EXPECT_EQ(resolver.master(), "a:1");
}

TEST(TFConfigClusterResolver, WithoutConfigIsASingleTaskOutsideAnyCluster) {
  const TFConfigClusterResolver resolver(fake_environment({}));
  EXPECT_TRUE(resolver.cluster_spec().empty());
  EXPECT_EQ(resolver.task_type(), "");
  EXPECT_EQ(resolver.master(), "");
}

TEST(TFConfigClusterResolver, ASetButEmptyVariableIsAnErrorNotUnset) {
  for (const char* text : {"", "  ", "\n\t "}) {
    try {
      TFConfigClusterResolver resolver(fake_environment({{"TF_CONFIG", text}}));
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const InvalidArgumentError& error) {
      EXPECT_NE(std::string(error.what()).find("TF_CONFIG is set but"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("unset it"), std::string::npos) << error.what();
    }
  }
}

TEST(TFConfigClusterResolver, AnEmptyAccelConfigDoesNotFallBackToTfConfig) {
  EXPECT_THROW(TFConfigClusterResolver(fake_environment({{"TF_CONFIG", kChiefAndWorkers}, {"ACCEL_CONFIG", ""}})),
               InvalidArgumentError);
}

TEST(TFConfigClusterResolver, IPv6AddressesInBracketsAreAccepted) {
  const TFConfig config = parse_tf_config(
      R"({"cluster": {"worker": ["[::1]:2222", "[::1]:2223"]}, "task": {"type": "worker", "index": 1}})");
  EXPECT_EQ(config.cluster.task_address("worker", 1), "[::1]:2223");
}

struct BadConfig {
  const char* name;
  const char* json;
  const char* expected_in_message;  // the field, and what was wrong
};
void PrintTo(const BadConfig& bad, std::ostream* out) { *out << bad.name; }

class TFConfigErrors : public testing::TestWithParam<BadConfig> {};

TEST_P(TFConfigErrors, AreInvalidArgumentNamingTheField) {
  const BadConfig& bad = GetParam();
  try {
    parse_tf_config(bad.json, "TF_CONFIG");
    FAIL() << "accepted: " << bad.json;
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find(bad.expected_in_message), std::string::npos)
        << "message: " << error.what();
    EXPECT_NE(std::string(error.what()).find("TF_CONFIG"), std::string::npos) << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryDefect, TFConfigErrors,
    testing::Values(
        BadConfig{"InvalidJson", R"({"cluster": {"worker": ["a:1"]},)", "not valid JSON"},
        BadConfig{"InvalidJsonAtItsPosition", "{\n  \"task\": {\"type\": \"worker\",, \"index\": 0}}",
                  "TF_CONFIG is not valid JSON at line 2, column 29: syntax error"},
        BadConfig{"UnparseableNumber", R"({"task": {"type": "worker", "index": -}})",
                  "TF_CONFIG is not valid JSON at line 1, column 39: syntax error while parsing value - invalid number"},
        BadConfig{"RawNlohmannPrefixIsGone", R"({"task": 1.})", "TF_CONFIG is not valid JSON at line 1, column 12: syntax error"},
        BadConfig{"ByteOrderMark", "\xEF\xBB\xBF{}", "starts with a UTF-8 byte order mark"},
        BadConfig{"DuplicateKey",
                  R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0, "index": 1}})",
                  "TF_CONFIG (line 1, column 73): field 'task.index' appears twice in one object (first at line 1, column 61)"},
        BadConfig{"DuplicateJob",
                  R"({"cluster": {"worker": ["a:1"], "worker": ["b:1"]}, "task": {"type": "worker", "index": 0}})",
                  "field 'cluster.worker' appears twice"},
        BadConfig{"DuplicateTopLevelKey", R"({"task": {"type": "worker"}, "task": {"type": "chief"}})",
                  "field 'task' appears twice"},
        BadConfig{"IndexTooLarge", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 4294967296}})",
                  "field 'task.index' is 4294967296, not a task index (0..2147483647)"},
        BadConfig{"IndexAboveInt64", R"({"task": {"type": "worker", "index": 18446744073709551615}})",
                  "field 'task.index' is 18446744073709551615, not a task index"},
        BadConfig{"IndexFloat", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1.0}})",
                  "TF_CONFIG (line 1, column 70): field 'task.index' must be an integer, got 1.0"},
        BadConfig{"IndexHuge", R"({"task": {"type": "worker", "index": 1e400}})",
                  "TF_CONFIG is not valid JSON at line 1, column 42: number overflow parsing '1e400'"},
        BadConfig{"NegativeIndexWithoutCluster", R"({"task": {"type": "worker", "index": -3}})",
                  "field 'task.index' is -3, not a task index"},
        BadConfig{"AddressBadPortAtItsPosition", R"({"cluster": {"worker": ["a:1", "b:0"]}, "task": {"type": "worker", "index": 0}})",
                  "TF_CONFIG (line 1, column 32): field 'cluster.worker[1]'"},
        BadConfig{"AddressIPv6WithoutBrackets", R"({"cluster": {"worker": ["::1:2222"]}, "task": {"type": "worker", "index": 0}})",
                  "an IPv6 address needs brackets"},
        BadConfig{"NotAnObject", R"(["a:1"])", "must be a JSON object"},
        BadConfig{"MissingTask", R"({"cluster": {"worker": ["a:1"]}})", "field 'task' is missing"},
        BadConfig{"MissingTaskType", R"({"cluster": {"worker": ["a:1"]}, "task": {"index": 0}})",
                  "field 'task.type' is missing"},
        BadConfig{"TaskIndexNotInteger", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}})",
                  "field 'task.index' must be an integer"},
        BadConfig{"IndexOutOfRange", R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 2}})",
                  "field 'task.index' is 2 but cluster.worker has 2 task(s)"},
        BadConfig{"NegativeIndex", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": -1}})",
                  "field 'task.index' is -1"},
        BadConfig{"TaskJobNotInCluster", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "ps", "index": 0}})",
                  "field 'task.type' is 'ps' but cluster has no such job"},
        BadConfig{"UnknownTaskType", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "master", "index": 0}})",
                  "field 'task.type' names unknown job type 'master'"},
        BadConfig{"UnknownClusterJob", R"({"cluster": {"trainer": ["a:1"]}, "task": {"type": "worker", "index": 0}})",
                  "field 'cluster.trainer' names unknown job type 'trainer'; expected one of chief, worker, ps, evaluator"},
        BadConfig{"DuplicateAddress",
                  R"({"cluster": {"chief": ["a:1"], "worker": ["b:1", "a:1"]}, "task": {"type": "worker", "index": 0}})",
                  "field 'cluster.worker[1]' repeats address 'a:1' already used by cluster.chief[0]"},
        BadConfig{"AddressWithoutPort", R"({"cluster": {"worker": ["a"]}, "task": {"type": "worker", "index": 0}})",
                  "field 'cluster.worker[0]'"},
        BadConfig{"AddressNotString", R"({"cluster": {"worker": [1]}, "task": {"type": "worker", "index": 0}})",
                  "field 'cluster.worker[0]' must be a \"host:port\" string"},
        BadConfig{"JobNotAList", R"({"cluster": {"worker": "a:1"}, "task": {"type": "worker", "index": 0}})",
                  "field 'cluster.worker' must be a list"},
        BadConfig{"TwoChiefs", R"({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}})",
                  "field 'cluster.chief' has 2 tasks; at most one"},
        BadConfig{"RpcLayerNotString", R"({"rpc_layer": 3})", "field 'rpc_layer' must be a string"}),
    [](const testing::TestParamInfo<BadConfig>& info) { return info.param.name; });

TEST(TFConfigClusterResolver, ErrorsNameTheVariableTheyCameFrom) {
  try {
    TFConfigClusterResolver resolver(fake_environment({{"ACCEL_CONFIG", "{"}}));
    FAIL();
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("ACCEL_CONFIG is not valid JSON at line 1, column 2"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace accel::distribute
