#include "compare_runs.hpp"

#include <accel/experiment/schema.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace accel::experiment {
namespace {

const std::set<std::string>& experiment_only_keys() {
  static const std::set<std::string> keys{"name", "description", "compare", "sweep"};
  return keys;
}

SourceNodePtr merge_value(const SourceNodePtr& base, const SourceNodePtr& over, const ValueSpec* spec);

SourceNodePtr merge_map(const SourceNode& base, const SourceNode& over, const ValueSpec* spec) {
  auto out = std::make_shared<SourceNode>();
  out->kind = SourceNode::Kind::kMap;
  out->where = base.where;
  out->entries = base.entries;
  for (const auto& [key, value] : over.entries) {
    const Field* field = spec != nullptr ? spec->field(key->text) : nullptr;
    bool merged = false;
    for (auto& entry : out->entries) {
      if (entry.first->text != key->text) continue;
      entry.second = merge_value(entry.second, value, field != nullptr ? field->spec.get() : nullptr);
      merged = true;
    }
    if (!merged) out->entries.emplace_back(key, value);
  }
  // A key of a one_of group written over the base replaces the group's other
  // keys: a compare run's model.graph replaces the base's model.layers.
  if (spec != nullptr && !spec->one_of.empty()) {
    for (const auto& [key, value] : over.entries) {
      const auto& group = spec->one_of;
      if (std::find(group.begin(), group.end(), key->text) == group.end()) continue;
      for (const std::string& other : group) {
        if (other != key->text) out->erase(other);
      }
    }
  }
  return out;
}

// `tpu: tpu_v4` is short for `tpu: {preset: tpu_v4}`; merging needs the long form.
SourceNodePtr expand_shorthand(const SourceNodePtr& node, const ValueSpec& spec) {
  if (spec.form != ValueForm::kMap || spec.shorthand.empty() || !node->is_scalar()) return node;
  auto out = std::make_shared<SourceNode>();
  out->kind = SourceNode::Kind::kMap;
  out->where = node->where;
  out->set(spec.shorthand, node, node->where);
  return out;
}

SourceNodePtr merge_value(const SourceNodePtr& base_node, const SourceNodePtr& over_node, const ValueSpec* spec) {
  if (spec == nullptr) return over_node;
  const SourceNodePtr base = expand_shorthand(base_node, *spec);
  const SourceNodePtr over = expand_shorthand(over_node, *spec);
  if (!base->is_map() || !over->is_map()) return over_node;
  if (spec->form == ValueForm::kMap || spec->form == ValueForm::kFreeMap) return merge_map(*base, *over, spec);
  const bool names_an_object = spec->form == ValueForm::kCall || spec->form == ValueForm::kNumberOrCall;
  if (names_an_object && base->entries.size() == 1 && over->entries.size() == 1 &&
      base->entries.front().first->text == over->entries.front().first->text) {
    // Same Keras object: merge its arguments.
    const Call* call = spec->call(base->entries.front().first->text);
    const auto& base_arguments = base->entries.front().second;
    const auto& over_arguments = over->entries.front().second;
    if (call == nullptr || !base_arguments->is_map() || !over_arguments->is_map()) return over_node;
    ValueSpec arguments{.form = ValueForm::kMap, .fields = call->arguments};
    auto out = std::make_shared<SourceNode>(*over);
    out->entries.front().second = merge_map(*base_arguments, *over_arguments, &arguments);
    return out;
  }
  return over_node;
}

}  // namespace

SourceNodePtr merge_run(const SourceNode& base, const SourceNode& over) { return merge_map(base, over, &run_spec()); }

std::vector<RunTree> resolve_compare_runs(const SourceNode& document) {
  auto base = std::make_shared<SourceNode>();
  base->kind = SourceNode::Kind::kMap;
  base->where = document.where;
  for (const auto& entry : document.entries) {
    if (!experiment_only_keys().contains(entry.first->text)) base->entries.push_back(entry);
  }
  const SourceNode* compare = document.find("compare");
  if (compare == nullptr || !compare->is_list()) {
    return {RunTree{"default", "", base, document.where, std::nullopt}};
  }
  std::vector<RunTree> runs;
  std::set<std::string> names;
  for (const auto& entry : compare->items) {
    const SourceNode* name = entry->find("name");
    if (!names.insert(name->text).second) {
      fail_at(*name, fmt::format("two compare runs are named '{}'", name->text), "a unique name per run");
    }
    auto overrides = std::make_shared<SourceNode>(*entry);
    overrides->erase("name");
    overrides->erase("description");
    const SourceNode* description = entry->find("description");
    runs.push_back(RunTree{name->text, description != nullptr ? description->text : "", merge_run(*base, *overrides),
                           entry->where, std::nullopt});
  }
  return runs;
}

}  // namespace accel::experiment
