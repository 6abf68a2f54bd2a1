#include "zoo_goldens.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace accel::model_zoo::testing {
namespace {

std::vector<std::string> data_lines(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read the golden file " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

}  // namespace

std::string golden_path(const std::string& file) { return std::string(ACCEL_ZOO_GOLDEN_DIR) + "/" + file; }

std::map<std::string, ParameterCounts> read_parameter_counts() {
  std::map<std::string, ParameterCounts> counts;
  for (const std::string& line : data_lines(golden_path("zoo_parameter_counts.txt"))) {
    std::istringstream fields(line);
    std::string name;
    ParameterCounts count;
    if (!(fields >> name >> count.total >> count.trainable >> count.non_trainable)) {
      throw std::runtime_error("malformed parameter-count line: " + line);
    }
    counts[name] = count;
  }
  return counts;
}

std::vector<LayerRow> read_layer_table(const std::string& configuration) {
  std::vector<LayerRow> rows;
  for (const std::string& line : data_lines(golden_path("zoo_" + configuration + "_layers.txt"))) {
    std::istringstream fields(line);
    LayerRow row;
    std::string inbound;
    if (!(fields >> row.name >> row.class_name >> row.output_shape >> row.parameters >> inbound)) {
      throw std::runtime_error("malformed layer line: " + line);
    }
    if (inbound != "-") row.inbound = split(inbound, ',');
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace accel::model_zoo::testing
