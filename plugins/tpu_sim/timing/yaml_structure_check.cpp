#include "timing/yaml_structure_check.hpp"

#include <yaml-cpp/yaml.h>

#include <map>
#include <vector>

#include <fmt/format.h>

#include "timing/config_error.hpp"

namespace accel::tpu {
namespace {

class StructureWalk {
 public:
  explicit StructureWalk(const std::string& file) : file_(file) {}

  void visit(const YAML::Node& node, const std::string& path, int depth) {
    if (++nodes_ > kMaxYamlNodes) {
      fail(node, path, fmt::format("the document expands to more than {} nodes (an alias bomb?)", kMaxYamlNodes),
           "a hardware description without aliases that multiply its size");
    }
    if (depth > kMaxYamlDepth) {
      fail(node, path, fmt::format("nesting deeper than {} levels", kMaxYamlDepth),
           "the preset schema's nesting (docs/tpu-emulator.md)");
    }
    for (const YAML::Node& ancestor : ancestors_) {
      if (ancestor.is(node)) fail(node, path, "an alias refers to a node that contains it (anchor loop)", "no loops");
    }
    if (node.IsSequence()) {
      ancestors_.push_back(node);
      for (const YAML::Node& item : node) visit(item, path, depth + 1);
      ancestors_.pop_back();
    } else if (node.IsMap()) {
      ancestors_.push_back(node);
      visit_map(node, path, depth);
      ancestors_.pop_back();
    }
  }

 private:
  void visit_map(const YAML::Node& node, const std::string& path, int depth) {
    std::map<std::string, int> first_line;  // key -> 1-based line of its first occurrence
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      if (!key.IsScalar()) {
        fail(key, path, fmt::format("a key of '{}' is a mapping or a list", path.empty() ? "the document" : path),
             "plain text keys");
      }
      const std::string full = path.empty() ? key.Scalar() : path + "." + key.Scalar();
      const auto [first, inserted] = first_line.emplace(key.Scalar(), key.Mark().line + 1);
      if (!inserted) {
        fail(key, full, fmt::format("duplicate key '{}' (first at line {})", full, first->second),
             "each key once per mapping");
      }
      visit(entry.second, full, depth + 1);
    }
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& problem,
                         const std::string& expected) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) throw ConfigError(file_, 0, 0, key, problem, expected);
    throw ConfigError(file_, mark.line + 1, mark.column + 1, key, problem, expected);
  }

  const std::string& file_;
  int nodes_ = 0;
  std::vector<YAML::Node> ancestors_;
};

}  // namespace

void check_yaml_structure(const YAML::Node& root, const std::string& file) {
  StructureWalk(file).visit(root, "", 0);
}

}  // namespace accel::tpu
