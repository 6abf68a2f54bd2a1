// docs/keras.md against the code: each of its ```cpp examples, named by an
// `<!-- example: <name> -->` line above it, is the text of the example of that
// name that keras_doc_snippets_test.cpp compiles, and its tables
// of FitOptions' and CompileOptions' fields list them in the header's
// declaration order, with the header's types and defaults: the order
// designated initializers ({.epochs = 5, .validation_split = 0.1}) must follow.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The repository, from the golden folder tests/keras/golden.
const std::string kSourceDir = std::string(ACCEL_KERAS_GOLDEN_DIR) + "/../../..";

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Example {
  std::string name;
  std::string text;
};

// The doc's ```cpp blocks, each named by the `<!-- example: <name> -->` line
// right above it ("" when there is none).
std::vector<Example> documented_examples() {
  const std::regex label(R"(^<!-- example: (\w+) -->$)");
  std::vector<Example> blocks;
  std::string previous;
  bool inside = false;
  for (const std::string& line : lines_of(kSourceDir + "/docs/keras.md")) {
    std::smatch match;
    if (!inside && line == "```cpp") {
      inside = true;
      blocks.push_back({std::regex_match(previous, match, label) ? std::string(match[1]) : "", ""});
    } else if (inside && line == "```") {
      inside = false;
    } else if (inside) {
      blocks.back().text += line + "\n";
    }
    previous = line;
  }
  return blocks;
}

// One region's lines without their common indentation (blank lines aside).
std::string dedented(const std::vector<std::string>& lines) {
  size_t indent = std::string::npos;
  for (const std::string& line : lines) {
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos) indent = std::min(indent, first);
  }
  std::string text;
  for (const std::string& line : lines) text += (line.size() > indent ? line.substr(indent) : "") + "\n";
  return text;
}

// The snippets file's examples; a name's regions are joined in order.
std::vector<Example> compiled_examples() {
  const std::regex start(R"(^\s*// doc:(\w+)$)");
  const std::regex end(R"(^\s*// end doc$)");
  std::vector<Example> examples;
  std::map<std::string, size_t> index_of;
  std::vector<std::string> region;
  std::string name;
  for (const std::string& line : lines_of(kSourceDir + "/tests/keras/keras_doc_snippets_test.cpp")) {
    std::smatch match;
    if (name.empty() && std::regex_match(line, match, start)) {
      name = match[1];
      region.clear();
    } else if (!name.empty() && std::regex_match(line, end)) {
      if (!index_of.count(name)) {
        index_of[name] = examples.size();
        examples.push_back({name, ""});
      }
      examples[index_of[name]].text += dedented(region);
      name.clear();
    } else if (!name.empty()) {
      region.push_back(line);
    }
  }
  EXPECT_TRUE(name.empty()) << "the example '" << name << "' has no `// end doc`";
  return examples;
}

TEST(KerasDoc, EveryCppExampleIsOneTheTestsCompile) {
  std::map<std::string, std::string> compiled;
  for (const Example& example : compiled_examples()) compiled[example.name] = example.text;
  ASSERT_FALSE(compiled.empty());
  std::map<std::string, int> shown;
  for (const Example& block : documented_examples()) {
    if (block.name.empty()) {
      ADD_FAILURE() << "docs/keras.md has a ```cpp block without an `<!-- example: <name> -->` line above it:\n"
                    << block.text;
      continue;
    }
    ++shown[block.name];
    const auto found = compiled.find(block.name);
    if (found == compiled.end()) {
      ADD_FAILURE() << "docs/keras.md shows the example '" << block.name
                    << "', which tests/keras/keras_doc_snippets_test.cpp does not compile";
      continue;
    }
    EXPECT_EQ(block.text, found->second)
        << "docs/keras.md's example '" << block.name
        << "' differs from tests/keras/keras_doc_snippets_test.cpp's; copy it from there:\n"
        << found->second;
  }
  for (const auto& [name, text] : compiled) {
    EXPECT_EQ(shown[name], 1) << "docs/keras.md should show the example '" << name << "' once";
  }
}

struct Field {
  std::string type;
  std::string name;
  std::string default_value;  // "" when the declaration gives none
  bool operator==(const Field&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Field& field) {
  return out << field.type << " " << field.name << " = " << field.default_value;
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// The data members of `struct <name> {` in accel/keras/model.hpp, in order.
std::vector<Field> declared_fields(const std::string& name) {
  const std::regex member(R"(^\s*(.+?)\s+(\w+)\s*(=\s*(.+?))?\s*;.*$)");
  std::vector<Field> fields;
  bool inside = false;
  for (const std::string& line : lines_of(kSourceDir + "/core/include/accel/keras/model.hpp")) {
    if (line == "struct " + name + " {") {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line == "};") break;
    if (trimmed(line).rfind("//", 0) == 0 || trimmed(line).empty()) continue;
    std::smatch match;
    EXPECT_TRUE(std::regex_match(line, match, member)) << "not a one-line member of " << name << ": " << line;
    if (!match.empty()) fields.push_back({match[1], match[2], match[4]});
  }
  EXPECT_FALSE(fields.empty()) << "no struct " << name << " in accel/keras/model.hpp";
  return fields;
}

// The rows of the doc's table whose header row starts with "| `<name>` field |":
// field, type and default, each in backticks ("" for a default of "—").
std::vector<Field> documented_fields(const std::string& name) {
  const std::regex row(R"(^\| `(\w+)` \| `([^`]+)` \| (`([^`]*)`|—) \|.*\|$)");
  std::vector<Field> fields;
  bool inside = false;
  bool found = false;
  for (const std::string& line : lines_of(kSourceDir + "/docs/keras.md")) {
    if (!inside && line.rfind("| `" + name + "` field |", 0) == 0) {
      inside = found = true;
      continue;
    }
    if (!inside || line.rfind("|---", 0) == 0) continue;
    if (line.rfind("|", 0) != 0) break;
    std::smatch match;
    EXPECT_TRUE(std::regex_match(line, match, row)) << "a row of the " << name << " table: " << line;
    if (!match.empty()) fields.push_back({match[2], match[1], match[4]});
  }
  EXPECT_TRUE(found) << "docs/keras.md has no table headed | `" << name << "` field |";
  return fields;
}

TEST(KerasDoc, OptionsTablesListTheFieldsInDeclarationOrder) {
  for (const char* options : {"FitOptions", "CompileOptions"}) {
    EXPECT_EQ(documented_fields(options), declared_fields(options)) << options;
  }
}

}  // namespace
