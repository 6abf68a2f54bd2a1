// TF_CONFIG parsing: strict JSON first (no byte order mark, no duplicate
// key, every syntax error at its line and column), then the JSON shape, then
// the cluster rules TensorFlow enforces (known job types, at most one chief
// and one evaluator, unique addresses, the task inside the cluster). Every
// message starts with the variable's name and the position in its text.
#include <accel/distribute/tf_config_parser.hpp>

#include <accel/error.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <iterator>
#include <map>
#include <set>
#include <vector>

namespace accel::distribute {
namespace {

constexpr std::array<std::string_view, 4> kKnownJobs = {kChiefJob, kWorkerJob, kPsJob, kEvaluatorJob};

bool is_known_job(std::string_view job) {
  for (std::string_view known : kKnownJobs) {
    if (job == known) return true;
  }
  return false;
}

// "line 2, column 7" of a 0-based byte offset in `text`.
std::string line_and_column(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n');
  const size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return fmt::format("line {}, column {}", line, column);
}

// An input iterator over the text that records how far nlohmann's lexer has
// read, so the SAX events below can say where they are in the text.
class TrackedIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedIterator(const char* at, const char* begin, size_t* read_up_to)
      : at_(at), begin_(begin), read_up_to_(read_up_to) {}
  reference operator*() const { return *at_; }
  TrackedIterator& operator++() {
    ++at_;
    *read_up_to_ = static_cast<size_t>(at_ - begin_);
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedIterator& other) const { return at_ == other.at_; }
  bool operator!=(const TrackedIterator& other) const { return at_ != other.at_; }

 private:
  const char* at_;
  const char* begin_;
  size_t* read_up_to_;
};

// What the strict pass learned: where each field's value starts ("task.index"
// -> byte offset), or the first defect nlohmann would let through or report
// in its own words.
struct JsonMap {
  std::map<std::string, size_t> value_offsets;
  std::string defect;        // empty when the text is strict JSON
  size_t defect_offset = 0;
  bool defect_is_syntax = false;  // not JSON at all, rather than a key given twice
};

// SAX pass over the text: field paths as FieldErrors names them
// ("cluster.worker[1]"), value positions, and duplicate keys, which
// nlohmann's DOM parser would silently resolve to the last value.
class StrictJsonScan final : public nlohmann::json_sax<nlohmann::json> {
 public:
  StrictJsonScan(std::string_view text, const size_t& read_up_to, JsonMap& map)
      : text_(text), read_up_to_(read_up_to), map_(map) {}

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return scalar(); }
  bool number_unsigned(number_unsigned_t) override { return scalar(); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool string(string_t&) override { return value_at(string_start()); }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }

  bool key(string_t& name) override {
    Frame& frame = frames_.back();
    const size_t offset = string_start();
    auto [first, inserted] = frame.key_offsets.emplace(name, offset);
    frame.key = name;
    if (!inserted) {
      map_.defect = fmt::format("field '{}' appears twice in one object (first at {}); JSON keys must be unique",
                                path(), line_and_column(text_, first->second));
      map_.defect_offset = offset;
      return false;
    }
    return true;
  }

  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& error) override {
    // nlohmann's what() is "[json.exception.parse_error.101] parse error at
    // line 1, column 5: <why>" (or "[json.exception.out_of_range.406] <why>");
    // keep <why>, the position is ours.
    std::string_view why = error.what();
    if (const size_t tag_end = why.find("] "); why.starts_with('[') && tag_end != std::string_view::npos) {
      why.remove_prefix(tag_end + 2);
    }
    if (why.starts_with("parse error at line ")) {
      if (const size_t colon = why.find(": "); colon != std::string_view::npos) why.remove_prefix(colon + 2);
    }
    map_.defect = std::string(why);
    map_.defect_offset = byte == 0 ? 0 : byte - 1;
    map_.defect_is_syntax = true;
    return false;
  }

 private:
  struct Frame {
    bool is_object = false;
    std::map<std::string, size_t> key_offsets;
    std::string key;    // objects: the member being read
    size_t index = 0;   // arrays: the element being read
  };

  std::string path() const {
    std::string text;
    for (const Frame& frame : frames_) {
      if (frame.is_object) {
        text += (text.empty() ? "" : ".") + frame.key;
      } else {
        text += fmt::format("[{}]", frame.index);
      }
    }
    return text;
  }

  // The opening quote of the string the lexer just read (it stops at the closing one).
  size_t string_start() const {
    size_t at = read_up_to_ >= 2 ? read_up_to_ - 2 : 0;
    while (at > 0) {
      if (text_[at] == '"') {
        size_t backslashes = 0;
        while (backslashes < at && text_[at - 1 - backslashes] == '\\') ++backslashes;
        if (backslashes % 2 == 0) break;
      }
      --at;
    }
    return at;
  }

  // A number or literal: the lexer may have read one character past it.
  bool scalar() {
    auto is_token = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+'; };
    size_t at = std::min(read_up_to_, text_.size());
    while (at > 0 && !is_token(text_[at - 1])) --at;
    while (at > 0 && is_token(text_[at - 1])) --at;
    return value_at(at);
  }

  bool value_at(size_t offset) {
    map_.value_offsets.emplace(path(), offset);
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().index;
    return true;
  }

  bool open(bool is_object) {
    const size_t offset = read_up_to_ > 0 ? read_up_to_ - 1 : 0;
    map_.value_offsets.emplace(path(), offset);
    frames_.push_back(Frame{is_object, {}, {}, 0});
    return true;
  }

  bool close() {
    frames_.pop_back();
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().index;
    return true;
  }

  std::string_view text_;
  const size_t& read_up_to_;
  JsonMap& map_;
  std::vector<Frame> frames_;
};

// Builds errors that start with the variable's name and the field's position,
// and name the field.
class FieldErrors {
 public:
  FieldErrors(std::string_view source, std::string_view text, const JsonMap& map)
      : source_(source), text_(text), map_(map) {}
  template <typename... Args>
  [[noreturn]] void fail(std::string_view field, fmt::format_string<Args...> format, Args&&... args) const {
    throw InvalidArgumentError(fmt::format("{} ({}): field '{}' {}", source_, position_of(field), field,
                                           fmt::format(format, std::forward<Args>(args)...)));
  }

 private:
  // The field's value, else the closest enclosing one that exists.
  std::string position_of(std::string_view field) const {
    std::string path(field);
    while (true) {
      auto found = map_.value_offsets.find(path);
      if (found != map_.value_offsets.end()) return line_and_column(text_, found->second);
      const size_t cut = path.find_last_of(".[");
      if (cut == std::string::npos) break;
      path.resize(cut);
    }
    auto root = map_.value_offsets.find("");
    return line_and_column(text_, root == map_.value_offsets.end() ? 0 : root->second);
  }

  std::string_view source_;
  std::string_view text_;
  const JsonMap& map_;
};

// The text as one JSON value, after refusing what TensorFlow's Python json
// reader would also refuse or what would silently lose data.
nlohmann::json parse_strict_json(std::string_view text, std::string_view source, JsonMap& map) {
  if (text.starts_with("\xEF\xBB\xBF")) {
    throw InvalidArgumentError(fmt::format(
        "{} (line 1, column 1) starts with a UTF-8 byte order mark (EF BB BF); JSON text must not have one",
        source));
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw InvalidArgumentError(fmt::format(
        "{} is set but {}; unset it to run outside a cluster, or give it the JSON "
        "{{\"cluster\": ..., \"task\": ...}}",
        source, text.empty() ? "empty" : "holds only whitespace"));
  }
  size_t read_up_to = 0;
  StrictJsonScan scan(text, read_up_to, map);
  const TrackedIterator begin(text.data(), text.data(), &read_up_to);
  const TrackedIterator end(text.data() + text.size(), text.data(), &read_up_to);
  if (!nlohmann::json::sax_parse(begin, end, &scan) || !map.defect.empty()) {
    const std::string position = line_and_column(text, map.defect_offset);
    if (map.defect_is_syntax) {
      throw InvalidArgumentError(fmt::format("{} is not valid JSON at {}: {}", source, position, map.defect));
    }
    throw InvalidArgumentError(fmt::format("{} ({}): {}", source, position, map.defect));
  }
  return nlohmann::json::parse(text);  // cannot fail: the scan accepted the same text
}

std::string known_jobs_text() { return fmt::format("{}", fmt::join(kKnownJobs, ", ")); }

ClusterSpec parse_cluster(const nlohmann::json& cluster, const FieldErrors& errors) {
  if (!cluster.is_object()) errors.fail("cluster", "must be an object of job name -> address list");
  ClusterSpec::Jobs jobs;
  std::map<std::string, std::string> field_of_address;
  for (const auto& [job, tasks] : cluster.items()) {
    const std::string job_field = "cluster." + job;
    if (!is_known_job(job)) {
      errors.fail(job_field, "names unknown job type '{}'; expected one of {}", job, known_jobs_text());
    }
    if (!tasks.is_array()) errors.fail(job_field, "must be a list of \"host:port\" addresses");
    std::vector<std::string> addresses;
    for (size_t index = 0; index < tasks.size(); ++index) {
      const std::string task_field = fmt::format("{}[{}]", job_field, index);
      if (!tasks[index].is_string()) errors.fail(task_field, "must be a \"host:port\" string");
      const std::string address = tasks[index].get<std::string>();
      try {
        split_host_port(address);
      } catch (const InvalidArgumentError& error) {
        errors.fail(task_field, "{}", error.what());
      }
      auto [previous, inserted] = field_of_address.emplace(address, task_field);
      if (!inserted) {
        errors.fail(task_field, "repeats address '{}' already used by {}; every task needs its own",
                    address, previous->second);
      }
      addresses.push_back(address);
    }
    jobs.emplace(job, std::move(addresses));
  }
  for (std::string_view single : {kChiefJob, kEvaluatorJob}) {
    auto found = jobs.find(single);
    if (found != jobs.end() && found->second.size() > 1) {
      errors.fail(fmt::format("cluster.{}", single), "has {} tasks; at most one is allowed",
                  found->second.size());
    }
  }
  return ClusterSpec(std::move(jobs));
}

void parse_task(const nlohmann::json& task, TFConfig& config, const FieldErrors& errors) {
  if (!task.is_object()) errors.fail("task", "must be an object {{\"type\": ..., \"index\": ...}}");
  if (!task.contains("type")) errors.fail("task.type", "is missing; expected one of {}", known_jobs_text());
  if (!task["type"].is_string()) errors.fail("task.type", "must be a string");
  config.task_type = task["type"].get<std::string>();
  if (!is_known_job(config.task_type)) {
    errors.fail("task.type", "names unknown job type '{}'; expected one of {}", config.task_type,
                known_jobs_text());
  }
  if (task.contains("index")) {
    const nlohmann::json& index = task["index"];
    if (!index.is_number_integer()) errors.fail("task.index", "must be an integer, got {}", index.dump());
    // Unsigned values above INT64_MAX would wrap in get<int64_t>, so they are compared unsigned.
    const bool fits = index.is_number_unsigned() ? index.get<uint64_t>() <= uint64_t{INT_MAX}
                                                 : index.get<int64_t>() >= 0 && index.get<int64_t>() <= INT_MAX;
    if (!fits) errors.fail("task.index", "is {}, not a task index (0..{})", index.dump(), INT_MAX);
    config.task_index = static_cast<int>(index.get<int64_t>());
  }
  if (config.cluster.empty()) return;  // a task without a cluster: a single process
  if (!config.cluster.has_job(config.task_type)) {
    errors.fail("task.type", "is '{}' but cluster has no such job (jobs: {})", config.task_type,
                fmt::join(config.cluster.job_names(), ", "));
  }
  const int tasks = config.cluster.num_tasks(config.task_type);
  if (config.task_index < 0 || config.task_index >= tasks) {
    errors.fail("task.index", "is {} but cluster.{} has {} task(s) (valid: 0..{})", config.task_index,
                config.task_type, tasks, tasks - 1);
  }
}

std::string optional_string(const nlohmann::json& root, const char* field, const FieldErrors& errors) {
  if (!root.contains(field)) return {};
  if (!root[field].is_string()) errors.fail(field, "must be a string");
  return root[field].get<std::string>();
}

}  // namespace

TFConfig parse_tf_config(std::string_view json_text, std::string_view source) {
  JsonMap map;
  const nlohmann::json root = parse_strict_json(json_text, source, map);
  const FieldErrors errors(source, json_text, map);
  if (!root.is_object()) {
    throw InvalidArgumentError(fmt::format(
        "{} (line 1, column 1) must be a JSON object {{\"cluster\": ..., \"task\": ...}}, got: {}", source,
        root.dump()));
  }
  TFConfig config;
  try {
    if (root.contains("cluster")) config.cluster = parse_cluster(root["cluster"], errors);
    if (root.contains("task")) {
      parse_task(root["task"], config, errors);
    } else if (!config.cluster.empty()) {
      errors.fail("task", "is missing; a cluster needs {{\"task\": {{\"type\": ..., \"index\": ...}}}}");
    }
    config.rpc_layer = optional_string(root, "rpc_layer", errors);
    config.environment = optional_string(root, "environment", errors);
  } catch (const nlohmann::json::exception& error) {
    // The checks above test each type before reading it; this is the net under them.
    throw InvalidArgumentError(fmt::format("{}: unexpected JSON shape: {}", source, error.what()));
  }
  return config;
}

std::optional<TFConfig> read_tf_config(const EnvironmentLookup& environment) {
  for (const char* variable : {"ACCEL_CONFIG", "TF_CONFIG"}) {
    if (std::optional<std::string> text = environment(variable)) return parse_tf_config(*text, variable);
  }
  return std::nullopt;
}

}  // namespace accel::distribute
