// read_csv: a header row, then numeric rows. Every field is parsed with
// std::from_chars; an error names file:line:column (both 1-based).
#include <accel/data/csv_reader.hpp>
#include <accel/data/data_error.hpp>
#include <accel/error.hpp>
#include <accel/input_file.hpp>

#include "host_tensor.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>

namespace accel::data {
namespace {

struct Field {
  std::string_view text;
  size_t column;  // 1-based character column where the field starts
};

std::string_view trim(std::string_view text, size_t& leading) {
  leading = 0;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
    ++leading;
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::vector<Field> split(std::string_view line, char delimiter) {
  std::vector<Field> fields;
  size_t start = 0;
  while (true) {
    size_t end = line.find(delimiter, start);
    std::string_view raw = line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    size_t leading = 0;
    std::string_view text = trim(raw, leading);
    fields.push_back(Field{text, start + leading + 1});
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return fields;
}

std::string unquote(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  return std::string(text);
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

CsvData read_csv(const std::string& path, const CsvOptions& options) {
  check_input_file(path, "read_csv: file", uint64_t{1} << 40);  // by kind first: a FIFO would block the open
  std::ifstream stream(path);
  if (!stream) throw NotFoundError("read_csv: cannot open '" + path + "'");
  auto fail = [&](size_t line, size_t column, const std::string& what) -> DataError {
    return DataError(path, std::to_string(line) + ":" + std::to_string(column), what);
  };

  std::string line;
  size_t line_number = 0;
  bool have_header = false;
  while (!have_header && std::getline(stream, line)) {
    ++line_number;
    have_header = !is_blank(line);
  }
  if (!have_header) throw fail(line_number + 1, 1, "no header row: the file is empty");

  std::vector<std::string> names;
  for (const Field& field : split(line, options.delimiter)) names.push_back(unquote(field.text));
  size_t column_count = names.size();
  std::optional<size_t> label_index;
  if (!options.label_column.empty()) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == options.label_column) label_index = i;
    }
    if (!label_index) {
      std::string known;
      for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
      throw NotFoundError("read_csv: '" + path + "' has no column '" + options.label_column + "'; its columns are: " + known);
    }
  }
  bool integer_labels = options.label_dtype == DType::kInt32 || options.label_dtype == DType::kInt64;
  if (label_index && !integer_labels && options.label_dtype != DType::kFloat32) {
    throw InvalidArgumentError("read_csv: label_dtype must be float32, int32 or int64");
  }

  CsvData data;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!label_index || i != *label_index) data.feature_names.push_back(names[i]);
  }
  std::vector<float> features;
  std::vector<double> labels;
  int64_t rows = 0;
  while (std::getline(stream, line)) {
    ++line_number;
    if (is_blank(line)) continue;
    std::vector<Field> fields = split(line, options.delimiter);
    if (fields.size() != column_count) {
      size_t column = fields.size() > column_count ? fields[column_count].column : line.size() + 1;
      throw fail(line_number, column, "expected " + std::to_string(column_count) + " fields (as the header), found " +
                                          std::to_string(fields.size()));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      const Field& field = fields[i];
      if (field.text.empty()) throw fail(line_number, field.column, "empty field in column '" + names[i] + "'");
      double value = 0.0;
      const char* end = field.text.data() + field.text.size();
      auto [stop, error] = std::from_chars(field.text.data(), end, value);
      if (error != std::errc() || stop != end) {
        throw fail(line_number, field.column, "'" + std::string(field.text) + "' in column '" + names[i] +
                                                  "' is not a number");
      }
      if (label_index && i == *label_index) {
        if (integer_labels && value != std::floor(value)) {
          throw fail(line_number, field.column, "label '" + std::string(field.text) + "' is not a whole number");
        }
        labels.push_back(value);
      } else {
        features.push_back(static_cast<float>(value));
      }
    }
    ++rows;
  }

  auto feature_count = static_cast<int64_t>(data.feature_names.size());
  data.features = detail::make_host_tensor(features.data(), Shape{rows, feature_count}, DType::kFloat32);
  if (label_index) {
    switch (options.label_dtype) {
      case DType::kInt32: {
        std::vector<int32_t> values(labels.begin(), labels.end());
        data.labels = detail::make_host_tensor(values.data(), Shape{rows}, DType::kInt32);
        break;
      }
      case DType::kInt64: {
        std::vector<int64_t> values(labels.begin(), labels.end());
        data.labels = detail::make_host_tensor(values.data(), Shape{rows}, DType::kInt64);
        break;
      }
      default: {
        std::vector<float> values(labels.begin(), labels.end());
        data.labels = detail::make_host_tensor(values.data(), Shape{rows}, DType::kFloat32);
      }
    }
  }
  return data;
}

}  // namespace accel::data
