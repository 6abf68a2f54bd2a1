#include "schema_check.hpp"

#include <accel/device.hpp>
#include <accel/error.hpp>
#include <accel/plugin/edit_distance.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

namespace accel::experiment {
namespace {

using sdk::edit_distance;

enum class IntegerParse { kOk, kNotInteger, kTooLarge };

IntegerParse parse_integer(std::string_view text, std::int64_t& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return IntegerParse::kNotInteger;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (error == std::errc::result_out_of_range) return IntegerParse::kTooLarge;
  if (error != std::errc() || end != text.data() + text.size()) return IntegerParse::kNotInteger;
  return IntegerParse::kOk;
}

enum class NumberParse { kOk, kNotNumber, kTooLarge };

NumberParse parse_number(std::string_view text, double& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return NumberParse::kNotNumber;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (error == std::errc::result_out_of_range) return NumberParse::kTooLarge;
  if (error != std::errc() || end != text.data() + text.size()) return NumberParse::kNotNumber;
  if (!std::isfinite(out)) return NumberParse::kNotNumber;  // "inf", "nan"
  return NumberParse::kOk;
}

bool parse_bool(const SourceNode& node, bool& out) {
  if (!node.is_scalar() || node.quoted) return false;
  static const std::map<std::string, bool, std::less<>> kWords{
      {"true", true}, {"True", true}, {"TRUE", true}, {"yes", true}, {"on", true},
      {"false", false}, {"False", false}, {"FALSE", false}, {"no", false}, {"off", false}};
  const auto it = kWords.find(node.text);
  if (it == kWords.end()) return false;
  out = it->second;
  return true;
}

bool in_range(const ValueSpec& spec, double value) {
  if (spec.min_exclusive ? !(value > spec.min) : !(value >= spec.min)) return false;
  return value <= spec.max;
}

std::string shown(const SourceNode& node) { return node.describe(); }

std::string article(const std::string& noun) {
  return !noun.empty() && std::string("aeiou").find(noun.front()) != std::string::npos ? "an" : "a";
}

[[noreturn]] void wrong(const SourceNode& node, const std::string& path, const std::string& what,
                        const ValueSpec& spec) {
  fail_at(node, fmt::format("'{}' is {}", path, what), describe_expected(spec));
}

void check_integer(const SourceNode& node, const ValueSpec& spec, const std::string& path) {
  if (!node.is_scalar() || node.quoted) wrong(node, path, node.quoted ? "the text " + shown(node) : shown(node), spec);
  std::int64_t value = 0;
  switch (parse_integer(node.text, value)) {
    case IntegerParse::kTooLarge: wrong(node, path, "too large (" + shown(node) + ")", spec);
    case IntegerParse::kNotInteger: {
      double real = 0;
      if (parse_number(node.text, real) == NumberParse::kOk) wrong(node, path, shown(node) + ", not an integer", spec);
      wrong(node, path, shown(node), spec);
    }
    case IntegerParse::kOk: break;
  }
  if (!in_range(spec, static_cast<double>(value))) wrong(node, path, std::to_string(value) + ", out of range", spec);
}

// `spec` gives the range (and, for kNumberOrCall, the objects the message lists).
void check_number(const SourceNode& node, const ValueSpec& spec, const std::string& path) {
  if (!node.is_scalar() || node.quoted) wrong(node, path, node.quoted ? "the text " + shown(node) : shown(node), spec);
  double value = 0;
  switch (parse_number(node.text, value)) {
    case NumberParse::kTooLarge: wrong(node, path, "too large (" + shown(node) + ")", spec);
    case NumberParse::kNotNumber: wrong(node, path, shown(node), spec);
    case NumberParse::kOk: break;
  }
  if (!in_range(spec, value)) wrong(node, path, shown(node) + ", out of range", spec);
}

void check_scalar_text(const SourceNode& node, const ValueSpec& spec, const std::string& path) {
  if (!node.is_scalar()) wrong(node, path, shown(node), spec);
}

// A name that becomes a path component must stay one: "../../x" or "/etc"
// as a name would write outside the results folder.
void check_file_name(const SourceNode& node, const ValueSpec& spec, const std::string& path) {
  check_scalar_text(node, spec, path);
  const std::string& name = node.text;
  if (name.empty()) wrong(node, path, "empty", spec);
  if (name.size() > kMaxFileNameBytes) wrong(node, path, fmt::format("{} bytes long", name.size()), spec);
  if (name == "." || name == "..") wrong(node, path, shown(node) + ", a folder reference", spec);
  if (name.find('/') != std::string::npos) wrong(node, path, shown(node) + ", which holds a '/'", spec);
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) wrong(node, path, "a name with a control character", spec);
  }
}

void check_map_fields(const SourceNode& node, const std::vector<Field>& fields, const std::string& path,
                      const std::string& owner, RequiredKeys required) {
  std::vector<std::string> known;
  for (const Field& f : fields) known.push_back(f.key);
  for (const auto& entry : node.entries) {
    const SourceNodePtr& key = entry.first;
    const SourceNodePtr& value = entry.second;
    const auto field = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.key == key->text; });
    const std::string full = path.empty() ? key->text : path + "." + key->text;
    if (field == fields.end()) {
      fail_at(*key, fmt::format("unknown key '{}'{}", full, did_you_mean(key->text, known)),
              known.empty() ? owner + " takes no arguments" : "one of " + quoted_names(known));
    }
    check_value(*value, *field->spec, full, required);
  }
  for (const Field& f : fields) {
    if (required == RequiredKeys::kIgnore || !f.required || node.find(f.key) != nullptr) continue;
    const std::string full = path.empty() ? f.key : path + "." + f.key;
    fail_at(node, fmt::format("missing key '{}'", full), fmt::format("'{}: {}' ({})", f.key, f.example, f.doc));
  }
}

// `one_of`: two written is an error at the second; none only when required keys are enforced.
void check_one_of(const SourceNode& node, const std::vector<std::string>& one_of, const std::string& path,
                  RequiredKeys required) {
  if (one_of.empty()) return;
  const SourceNode* first = nullptr;
  for (const auto& entry : node.entries) {
    if (std::find(one_of.begin(), one_of.end(), entry.first->text) == one_of.end()) continue;
    if (first != nullptr) {
      fail_at(*entry.first, fmt::format("'{}' has both '{}' and '{}'", path, first->text, entry.first->text),
              "exactly one of " + quoted_names(one_of));
    }
    first = entry.first.get();
  }
  if (first == nullptr && required == RequiredKeys::kEnforce) {
    fail_at(node, fmt::format("'{}' has none of {}", path, quoted_names(one_of)), "exactly one of them");
  }
}

void check_names(const SourceNode& node, const ValueSpec& spec, const std::string& path) {
  if (node.is_scalar()) {
    if (node.text.empty()) wrong(node, path, "an empty name", spec);
    if (spec.min_items > 1) wrong(node, path, "one name", spec);
    return;
  }
  if (!node.is_list()) wrong(node, path, shown(node), spec);
  if (node.items.size() < spec.min_items || node.items.size() > spec.max_items) {
    wrong(node, path, fmt::format("a list of {} names", node.items.size()), spec);
  }
  for (std::size_t i = 0; i < node.items.size(); ++i) {
    const SourceNode& item = *node.items[i];
    if (!item.is_scalar() || item.text.empty()) {
      fail_at(item, fmt::format("'{}[{}]' is {}", path, i, shown(item)), "a layer or input name");
    }
  }
}

void check_named_map(const SourceNode& node, const ValueSpec& spec, const std::string& path, RequiredKeys required) {
  if (!node.is_map()) wrong(node, path, shown(node), spec);
  if (node.entries.size() < spec.min_items) wrong(node, path, "an empty mapping", spec);
  for (const auto& [key, value] : node.entries) check_value(*value, *spec.item, path + "." + key->text, required);
}

// n, [rows, columns] or [[top, bottom], [left, right]].
void check_margins(const SourceNode& node, const ValueSpec& spec, const std::string& path) {
  const auto check_count = [&](const SourceNode& value, const std::string& at) {
    std::int64_t count = 0;
    if (!value.is_scalar() || value.quoted || parse_integer(value.text, count) != IntegerParse::kOk || count < 0 ||
        count > (1LL << 30)) {
      fail_at(value, fmt::format("'{}' is {}", at, shown(value)), describe_expected(spec));
    }
  };
  if (node.is_scalar()) return check_count(node, path);
  if (!node.is_list() || node.items.size() != 2) wrong(node, path, shown(node), spec);
  const bool nested = node.items[0]->is_list();
  for (std::size_t i = 0; i < 2; ++i) {
    const SourceNode& side = *node.items[i];
    const std::string at = fmt::format("{}[{}]", path, i);
    if (!nested) {
      check_count(side, at);
      continue;
    }
    if (!side.is_list() || side.items.size() != 2) wrong(side, at, shown(side) + ", not a pair", spec);
    check_count(*side.items[0], at + "[0]");
    check_count(*side.items[1], at + "[1]");
  }
}

void check_call(const SourceNode& node, const ValueSpec& spec, const std::string& path, RequiredKeys required) {
  std::vector<std::string> names;
  for (const Call& c : spec.calls) names.push_back(c.name);
  const SourceNode* name_node = &node;
  const SourceNode* arguments = nullptr;
  if (node.is_map()) {
    if (node.entries.size() != 1) {
      fail_at(node, fmt::format("'{}' has {} keys", path, node.entries.size()),
              fmt::format("one {} name with its arguments, e.g. {{{}: {{...}}}}", spec.call_kind, names.front()));
    }
    name_node = node.entries.front().first.get();
    arguments = node.entries.front().second.get();
  } else if (!node.is_scalar()) {
    wrong(node, path, shown(node), spec);
  }
  const Call* call = spec.call(name_node->text);
  if (call == nullptr) {
    fail_at(*name_node, fmt::format("unknown {} '{}'{}", spec.call_kind, name_node->text, did_you_mean(name_node->text, names)),
            article(spec.call_kind) + " " + spec.call_kind + ": " + quoted_names(names));
  }
  const std::string call_path = path + "." + call->name;
  if (arguments == nullptr || arguments->is_null()) {
    SourceNode empty;
    empty.kind = SourceNode::Kind::kMap;
    empty.where = name_node->where;
    check_map_fields(empty, call->arguments, call_path, "'" + call->name + "'", required);
    return;
  }
  if (!arguments->is_map()) {
    fail_at(*arguments, fmt::format("the arguments of '{}' are {}", call_path, shown(*arguments)),
            fmt::format("a mapping of keyword arguments, e.g. {{{}: {{...}}}}", call->name));
  }
  check_map_fields(*arguments, call->arguments, call_path, "'" + call->name + "'", required);
}

}  // namespace

std::string quoted_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : known) {  // a prefix counts: early_stop -> early_stopping
    if (word.size() >= 4 && candidate.starts_with(word)) return " (did you mean '" + candidate + "'?)";
  }
  for (const auto& candidate : known) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

bool parse_byte_size(std::string_view text, double& bytes) {
  const auto space = text.find_first_not_of("0123456789.eE+-");
  if (space == 0 || space == std::string_view::npos) return false;
  double value = 0;
  if (parse_number(text.substr(0, space), value) != NumberParse::kOk || value < 0) return false;
  std::string_view unit = text.substr(space);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  static const std::map<std::string, double, std::less<>> kUnits{
      {"B", 1.0},    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3},   {"MB", 1e6},     {"GB", 1e9},        {"TB", 1e12}};
  const auto it = kUnits.find(unit);
  if (it == kUnits.end()) return false;
  bytes = value * it->second;
  return bytes < 1.8e19;
}

bool parse_array_size(std::string_view text, int& rows, int& columns) {
  const auto x = text.find_first_of("xX");
  if (x == std::string_view::npos) return false;
  std::int64_t r = 0;
  std::int64_t c = 0;
  if (parse_integer(text.substr(0, x), r) != IntegerParse::kOk) return false;
  if (parse_integer(text.substr(x + 1), c) != IntegerParse::kOk) return false;
  if (r < 1 || c < 1 || r > 4096 || c > 4096) return false;
  rows = static_cast<int>(r);
  columns = static_cast<int>(c);
  return true;
}

void check_value(const SourceNode& node, const ValueSpec& spec, const std::string& path, RequiredKeys required) {
  switch (spec.form) {
    case ValueForm::kText:
    case ValueForm::kBoolOrText: check_scalar_text(node, spec, path); return;
    case ValueForm::kFileName: check_file_name(node, spec, path); return;
    case ValueForm::kChoice:
      check_scalar_text(node, spec, path);
      if (std::find(spec.choices.begin(), spec.choices.end(), node.text) == spec.choices.end()) {
        wrong(node, path, shown(node) + did_you_mean(node.text, spec.choices), spec);
      }
      return;
    case ValueForm::kBool: {
      bool value = false;
      if (!parse_bool(node, value)) wrong(node, path, node.quoted ? "the text " + shown(node) : shown(node), spec);
      return;
    }
    case ValueForm::kInteger: check_integer(node, spec, path); return;
    case ValueForm::kNumber: check_number(node, spec, path); return;
    case ValueForm::kNumberOrCall:
      if (node.is_map()) {
        check_call(node, spec, path, required);
        return;
      }
      check_number(node, spec, path);
      return;
    case ValueForm::kByteSize: {
      double bytes = 0;
      if (!node.is_scalar() || !parse_byte_size(node.text, bytes)) wrong(node, path, shown(node), spec);
      return;
    }
    case ValueForm::kIntOrShape:
    case ValueForm::kShape: {
      if (node.is_scalar() && spec.form == ValueForm::kIntOrShape) {
        check_integer(node, spec, path);
        return;
      }
      if (!node.is_list()) wrong(node, path, shown(node), spec);
      if (node.items.size() < spec.min_items || node.items.size() > spec.max_items) {
        wrong(node, path, fmt::format("a list of {} values", node.items.size()), spec);
      }
      for (std::size_t i = 0; i < node.items.size(); ++i) {
        const SourceNode& item = *node.items[i];
        std::int64_t value = 0;
        // Shapes hold sizes >= 1 (reshape's target_shape also -1); kIntOrShape's spec.min may be 0 (output_padding).
        const double min = std::isinf(spec.min) ? 1 : spec.min;
        if (!item.is_scalar() || item.quoted || parse_integer(item.text, value) != IntegerParse::kOk ||
            static_cast<double>(value) < min || (value == 0 && spec.form == ValueForm::kShape) || value > (1LL << 40)) {
          fail_at(item, fmt::format("'{}[{}]' is {}", path, i, shown(item)), describe_expected(spec));
        }
      }
      return;
    }
    case ValueForm::kDeviceName: {
      check_scalar_text(node, spec, path);
      if (node.text.find(':') == std::string::npos) {
        const bool letters = !node.text.empty() && std::all_of(node.text.begin(), node.text.end(), [](char c) {
          return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
        });
        if (!letters) wrong(node, path, shown(node), spec);
        return;
      }
      try {
        (void)DeviceName::parse(node.text);
      } catch (const accel::Error& error) {
        const std::string message = error.what();
        const auto expected_at = message.find("; expected ");
        fail_at(node, fmt::format("'{}' is not a device name: {}", path, message.substr(0, expected_at)),
                expected_at == std::string::npos ? describe_expected(spec) : message.substr(expected_at + 11));
      }
      return;
    }
    case ValueForm::kArraySize: {
      int rows = 0;
      int columns = 0;
      if (!node.is_scalar() || !parse_array_size(node.text, rows, columns)) wrong(node, path, shown(node), spec);
      return;
    }
    case ValueForm::kIntOrChoice:
      check_scalar_text(node, spec, path);
      if (std::find(spec.choices.begin(), spec.choices.end(), node.text) != spec.choices.end()) return;
      check_integer(node, spec, path);
      return;
    case ValueForm::kMap:
      if (node.is_scalar() && !spec.shorthand.empty()) {
        check_value(node, *spec.field(spec.shorthand)->spec, path, required);
        return;
      }
      if (node.is_null()) {
        const bool any_required =
            std::any_of(spec.fields.begin(), spec.fields.end(), [](const Field& f) { return f.required; });
        if (!any_required) return;
      }
      if (!node.is_map()) wrong(node, path, shown(node), spec);
      check_map_fields(node, spec.fields, path, "'" + path + "'", required);
      check_one_of(node, spec.one_of, path, required);
      return;
    case ValueForm::kList:
      if (!node.is_list()) wrong(node, path, shown(node) + ", not a list", spec);
      if (node.items.size() < spec.min_items) wrong(node, path, "an empty list", spec);
      for (std::size_t i = 0; i < node.items.size(); ++i) {
        check_value(*node.items[i], *spec.item, fmt::format("{}[{}]", path, i), required);
      }
      return;
    case ValueForm::kCall: check_call(node, spec, path, required); return;
    case ValueForm::kFreeMap:
      if (!node.is_map()) wrong(node, path, shown(node), spec);
      return;
    case ValueForm::kNames: check_names(node, spec, path); return;
    case ValueForm::kNamedMap: check_named_map(node, spec, path, required); return;
    case ValueForm::kMargins2D: check_margins(node, spec, path); return;
    case ValueForm::kScalarList:
      if (!node.is_list() || node.items.empty()) wrong(node, path, shown(node), ValueSpec{.form = ValueForm::kScalarList});
      for (const auto& item : node.items) {
        if (!item->is_scalar()) fail_at(*item, fmt::format("a value of '{}' is {}", path, shown(*item)), "plain values");
      }
      return;
  }
}

Value to_value(const SourceNode& node, const ValueSpec& spec) {
  Value out;
  out.where = node.where;
  switch (spec.form) {
    case ValueForm::kText:
    case ValueForm::kFileName:
    case ValueForm::kChoice:
    case ValueForm::kDeviceName:
    case ValueForm::kArraySize: out.data = node.text; break;
    case ValueForm::kBoolOrText: {
      bool flag = false;
      if (parse_bool(node, flag)) out.data = flag;
      else out.data = node.text;
      break;
    }
    case ValueForm::kBool: {
      bool flag = false;
      parse_bool(node, flag);
      out.data = flag;
      break;
    }
    case ValueForm::kInteger: {
      std::int64_t value = 0;
      parse_integer(node.text, value);
      out.data = value;
      break;
    }
    case ValueForm::kNumber: {
      double value = 0;
      parse_number(node.text, value);
      out.data = value;
      break;
    }
    case ValueForm::kNumberOrCall: {
      if (node.is_map()) {
        out.data = std::make_shared<const KerasObject>(read_call(node, spec));
        break;
      }
      double value = 0;
      parse_number(node.text, value);
      out.data = value;
      break;
    }
    case ValueForm::kByteSize: {
      double bytes = 0;
      parse_byte_size(node.text, bytes);
      out.data = static_cast<std::int64_t>(std::llround(bytes));
      break;
    }
    case ValueForm::kIntOrChoice: {
      std::int64_t value = 0;
      if (parse_integer(node.text, value) == IntegerParse::kOk) out.data = value;
      else out.data = node.text;
      break;
    }
    case ValueForm::kIntOrShape:
    case ValueForm::kShape: {
      std::vector<std::int64_t> values;
      if (node.is_scalar()) {
        std::int64_t value = 0;
        parse_integer(node.text, value);
        out.data = value;
        break;
      }
      for (const auto& item : node.items) {
        std::int64_t value = 0;
        parse_integer(item->text, value);
        values.push_back(value);
      }
      out.data = std::move(values);
      break;
    }
    case ValueForm::kNames:
      if (node.is_scalar()) {
        out.data = std::vector<std::string>{node.text};
        break;
      }
      [[fallthrough]];
    case ValueForm::kList:
    case ValueForm::kScalarList: {
      std::vector<std::string> texts;
      for (const auto& item : node.items) texts.push_back(item->text);
      out.data = std::move(texts);
      break;
    }
    case ValueForm::kMargins2D: {
      // n; [rows, columns]; [[top, bottom], [left, right]] as [top, bottom, left, right].
      std::vector<std::int64_t> values;
      const auto add = [&values](const SourceNode& count) {
        std::int64_t value = 0;
        parse_integer(count.text, value);
        values.push_back(value);
      };
      if (node.is_scalar()) {
        add(node);
      } else {
        for (const auto& side : node.items) {
          if (side->is_list()) {
            for (const auto& count : side->items) add(*count);
          } else {
            add(*side);
          }
        }
      }
      out.data = std::move(values);
      break;
    }
    case ValueForm::kMap:
    case ValueForm::kCall:
    case ValueForm::kNamedMap:
    case ValueForm::kFreeMap: break;  // read with read_fields / read_call
  }
  return out;
}

namespace {

// Documented defaults such as "the default device" or "runs/<name>" are
// descriptions, not values; a text default is a value only when it is one word.
bool default_is_literal(const Field& field) {
  if (field.default_text.empty()) return false;
  const auto form = field.spec->form;
  if (form == ValueForm::kNames) return false;  // names are the file's own: no default names one
  if (form == ValueForm::kText || form == ValueForm::kBoolOrText || form == ValueForm::kDeviceName) {
    return field.default_text.find_first_of(" <$") == std::string::npos;
  }
  return true;
}

}  // namespace

Arguments read_fields(const SourceNode* map, const std::vector<Field>& fields, const SourceLocation& where) {
  Arguments out;
  for (const Field& field : fields) {
    const SourceNode* node = map != nullptr && map->is_map() ? map->find(field.key) : nullptr;
    if (node != nullptr) {
      out[field.key] = to_value(*node, *field.spec);
      continue;
    }
    if (!default_is_literal(field)) continue;
    SourceNode fallback;
    fallback.kind = SourceNode::Kind::kScalar;
    fallback.text = field.default_text;
    fallback.where = where;
    try {
      check_value(fallback, *field.spec, field.key);
    } catch (const ExperimentError&) {
      continue;  // a description such as "none" or "pool_size"
    }
    Value value = to_value(fallback, *field.spec);
    value.defaulted = true;
    out[field.key] = std::move(value);
  }
  return out;
}

KerasObject read_call(const SourceNode& node, const ValueSpec& spec) {
  KerasObject out;
  const SourceNode* name_node = node.is_map() ? node.entries.front().first.get() : &node;
  const SourceNode* arguments = node.is_map() ? node.entries.front().second.get() : nullptr;
  out.name = name_node->text;
  out.where = name_node->where;
  out.arguments = read_fields(arguments, spec.call(out.name)->arguments, name_node->where);
  // Keras's rule for the names of layers (and of everything named here):
  // '/' separates a weight's scopes ("conv1/kernel:0"), so a name may not hold one.
  if (const Value* name = out.argument("name"); name != nullptr && name->is_set() && !name->defaulted &&
                                                 std::holds_alternative<std::string>(name->data) &&
                                                 name->as_text().find('/') != std::string::npos) {
    fail_at(name->where, fmt::format("the name '{}' contains '/', which Keras refuses in a name", name->as_text()),
            "a name without '/' ('/' separates a weight's scopes, as in 'conv1/kernel:0')");
  }
  return out;
}

double Value::as_number() const {
  if (const auto* integer = std::get_if<std::int64_t>(&data)) return static_cast<double>(*integer);
  return std::get<double>(data);
}

std::vector<std::int64_t> Value::as_ints() const {
  if (const auto* integer = std::get_if<std::int64_t>(&data)) return {*integer};
  return std::get<std::vector<std::int64_t>>(data);
}

const Value* KerasObject::argument(const std::string& key) const {
  const auto it = arguments.find(key);
  return it == arguments.end() ? nullptr : &it->second;
}

}  // namespace accel::experiment
