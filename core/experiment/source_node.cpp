// yaml_source: text -> SourceNode, with the checks yaml-cpp leaves out.
#include <accel/experiment/source_node.hpp>

#include <accel/error.hpp>
#include <accel/input_file.hpp>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace accel::experiment {

void fail_at(const SourceLocation& where, std::string problem, std::string expected) {
  throw ExperimentError(where, std::move(problem), std::move(expected));
}

const SourceNode* SourceNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k->text == key) return v.get();
  }
  return nullptr;
}

SourceNode* SourceNode::find(std::string_view key) {
  return const_cast<SourceNode*>(static_cast<const SourceNode*>(this)->find(key));
}

const SourceNode* SourceNode::find_key(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k->text == key) return k.get();
  }
  return nullptr;
}

void SourceNode::set(std::string_view key, std::shared_ptr<SourceNode> value, const SourceLocation& key_where) {
  for (auto& [k, v] : entries) {
    if (k->text == key) {
      v = std::move(value);
      return;
    }
  }
  auto key_node = std::make_shared<SourceNode>();
  key_node->kind = Kind::kScalar;
  key_node->text = std::string(key);
  key_node->where = key_where;
  entries.emplace_back(std::move(key_node), std::move(value));
}

void SourceNode::erase(std::string_view key) {
  std::erase_if(entries, [&](const Entry& entry) { return entry.first->text == key; });
}

std::string SourceNode::describe() const {
  switch (kind) {
    case Kind::kNull: return "empty";
    case Kind::kMap: return "a mapping";
    case Kind::kList: return "a list";
    case Kind::kScalar: break;
  }
  std::string shown = text.size() > 40 ? text.substr(0, 37) + "..." : text;
  return "'" + shown + "'";
}

std::shared_ptr<SourceNode> SourceNode::clone() const {
  auto copy = std::make_shared<SourceNode>(*this);
  for (auto& [k, v] : copy->entries) {
    k = k->clone();
    v = v->clone();
  }
  for (auto& item : copy->items) item = item->clone();
  return copy;
}

namespace {

// The first byte sequence that is not UTF-8 text (bad encoding, NUL or a
// control character other than tab, newline and carriage return).
bool find_bad_byte(std::string_view text, int& line, int& column, std::string& what) {
  line = 1;
  column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 1;
    if (byte == '\n') {
      ++line;
      column = 1;
      ++i;
      continue;
    }
    if (byte < 0x20 && byte != '\t' && byte != '\r') {
      what = fmt::format("control byte 0x{:02x} (binary data?)", byte);
      return true;
    }
    if (byte == 0x7f) {
      what = "control byte 0x7f (binary data?)";
      return true;
    }
    if (byte >= 0x80) {
      if (byte >= 0xc2 && byte <= 0xdf) length = 2;
      else if (byte >= 0xe0 && byte <= 0xef) length = 3;
      else if (byte >= 0xf0 && byte <= 0xf4) length = 4;
      else length = 0;
      bool valid = length != 0 && i + length <= text.size();
      for (std::size_t k = 1; valid && k < length; ++k) {
        valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      }
      if (valid && length == 3) {  // overlong and surrogate forms
        const auto next = static_cast<unsigned char>(text[i + 1]);
        valid = !(byte == 0xe0 && next < 0xa0) && !(byte == 0xed && next >= 0xa0);
      }
      if (valid && length == 4) {
        const auto next = static_cast<unsigned char>(text[i + 1]);
        valid = !(byte == 0xf0 && next < 0x90) && !(byte == 0xf4 && next >= 0x90);
      }
      if (!valid) {
        what = fmt::format("invalid UTF-8 byte 0x{:02x}", byte);
        return true;
      }
    }
    i += length;
    ++column;
  }
  return false;
}

class TreeBuilder {
 public:
  TreeBuilder(const std::string& file, const SourceLimits& limits, int column_offset)
      : file_(file), limits_(limits), column_offset_(column_offset) {}

  SourceNodePtr build(const YAML::Node& node, const YAML::Mark& parent_mark, int depth) {
    const SourceLocation where = locate(node.Mark().is_null() ? parent_mark : node.Mark());
    if (++nodes_ > limits_.max_nodes) {
      fail_at(where, fmt::format("the document expands to more than {} nodes (an alias bomb?)", limits_.max_nodes),
              "a document without nested aliases that multiply its size");
    }
    if (depth > limits_.max_depth) {
      fail_at(where, fmt::format("nesting deeper than {} levels", limits_.max_depth),
              fmt::format("at most {} nested mappings and lists", limits_.max_depth));
    }
    for (const YAML::Node& ancestor : ancestors_) {
      if (ancestor.is(node)) {
        fail_at(where, "an alias refers to a node that contains it (anchor loop)", "aliases to finished nodes only");
      }
    }
    auto out = std::make_shared<SourceNode>();
    out->where = where;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: out->kind = SourceNode::Kind::kNull; return out;
      case YAML::NodeType::Scalar:
        out->kind = SourceNode::Kind::kScalar;
        out->text = node.Scalar();
        out->quoted = node.Tag() == "!";
        if (!node.Tag().empty() && node.Tag() != "!" && node.Tag() != "?") {
          fail_at(where, fmt::format("YAML tag '{}' is not supported", node.Tag()), "plain values without tags");
        }
        return out;
      case YAML::NodeType::Sequence:
        out->kind = SourceNode::Kind::kList;
        ancestors_.push_back(node);
        for (const YAML::Node& item : node) out->items.push_back(build(item, node.Mark(), depth + 1));
        ancestors_.pop_back();
        return out;
      case YAML::NodeType::Map:
        out->kind = SourceNode::Kind::kMap;
        ancestors_.push_back(node);
        build_map(node, *out, depth);
        ancestors_.pop_back();
        return out;
    }
    return out;
  }

 private:
  void build_map(const YAML::Node& node, SourceNode& out, int depth) {
    std::vector<SourceNode::Entry> merged;  // from `<<: *anchor`, lower priority
    for (const auto& entry : node) {
      const SourceLocation key_where = locate(entry.first.Mark());
      if (!entry.first.IsScalar()) {
        fail_at(key_where, "a key that is a mapping or list", "plain text keys");
      }
      SourceNodePtr value = build(entry.second, entry.first.Mark(), depth + 1);
      if (entry.first.Scalar() == "<<" && entry.first.Tag() != "!") {
        add_merge(*value, merged);
        continue;
      }
      if (const SourceNode* first = out.find_key(entry.first.Scalar())) {
        fail_at(key_where,
                fmt::format("duplicate key '{}' (first at line {})", entry.first.Scalar(), first->where.line),
                "each key once per mapping");
      }
      auto key = std::make_shared<SourceNode>();
      key->kind = SourceNode::Kind::kScalar;
      key->text = entry.first.Scalar();
      key->where = key_where;
      out.entries.emplace_back(std::move(key), std::move(value));
    }
    for (auto& entry : merged) {
      if (out.find(entry.first->text) == nullptr) out.entries.push_back(std::move(entry));
    }
  }

  static void add_merge(const SourceNode& value, std::vector<SourceNode::Entry>& merged) {
    auto add_map = [&](const SourceNode& map) {
      if (!map.is_map()) fail_at(map, "'<<' merges " + map.describe(), "an alias of a mapping, e.g. <<: *defaults");
      for (const auto& entry : map.entries) {
        bool present = false;
        for (const auto& existing : merged) present = present || existing.first->text == entry.first->text;
        if (!present) merged.push_back(entry);
      }
    };
    if (value.is_list()) {
      for (const auto& item : value.items) add_map(*item);
    } else {
      add_map(value);
    }
  }

  SourceLocation locate(const YAML::Mark& mark) const {
    if (mark.is_null()) return {file_, 0, 0};
    return {file_, mark.line + 1, mark.column + 1 + column_offset_};
  }

  const std::string& file_;
  const SourceLimits& limits_;
  int column_offset_;
  std::size_t nodes_ = 0;
  std::vector<YAML::Node> ancestors_;
};

}  // namespace

SourceNodePtr parse_yaml_source(std::string_view text, const std::string& file, const SourceLimits& limits,
                                int column_offset) {
  if (text.size() > limits.max_bytes) {
    fail_at({file, 1, 1}, fmt::format("the file has {} bytes", text.size()),
            fmt::format("at most {} bytes", limits.max_bytes));
  }
  int line = 0;
  int column = 0;
  std::string what;
  if (find_bad_byte(text, line, column, what)) {
    fail_at({file, line, column + column_offset}, what, "UTF-8 text");
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& error) {
    fail_at({file, error.mark.line + 1, error.mark.column + 1 + column_offset},
            fmt::format("nesting deeper than {} levels", limits.max_depth),
            fmt::format("at most {} nested mappings and lists", limits.max_depth));
  } catch (const YAML::Exception& error) {
    fail_at({file, error.mark.line + 1, error.mark.column + 1 + column_offset}, "YAML syntax error: " + error.msg,
            "valid YAML");
  }
  TreeBuilder builder(file, limits, column_offset);
  try {
    return builder.build(root, YAML::Mark(), 0);
  } catch (const YAML::Exception& error) {
    fail_at({file, error.mark.line + 1, error.mark.column + 1 + column_offset}, "YAML error: " + error.msg,
            "valid YAML");
  }
}

SourceNodePtr load_yaml_file(const std::string& path, const SourceLimits& limits) {
  std::string text;
  try {
    // By kind first: a FIFO would block the open, /dev/zero never ends, a folder is no file.
    text = read_input_file(path, "the experiment file", limits.max_bytes);
  } catch (const NotFoundError&) {
    fail_at({path, 0, 0}, "cannot open the file: no such file", "a readable experiment file");
  } catch (const Error& error) {
    fail_at({path, 1, 1}, error.what(), fmt::format("a regular YAML file of at most {} bytes", limits.max_bytes));
  }
  return parse_yaml_source(text, path, limits);
}

}  // namespace accel::experiment
