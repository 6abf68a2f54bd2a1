// The checks yaml-cpp leaves out, run on a parsed hardware description
// before any field is read: a key written twice in one mapping (yaml-cpp
// keeps both and lookups see only the first), a key that is a mapping or a
// list, aliases that loop back into their own node or multiply the document
// (yaml-cpp shares aliased nodes, a walk would expand them), and nesting
// deeper than any preset needs. Errors are ConfigError at the offending node.
#pragma once

#include <string>

namespace YAML {
class Node;
}

namespace accel::tpu {

inline constexpr int kMaxYamlDepth = 16;        // a preset nests 3 levels
inline constexpr int kMaxYamlNodes = 10000;     // a preset has about 40 nodes

void check_yaml_structure(const YAML::Node& root, const std::string& file);

}  // namespace accel::tpu
