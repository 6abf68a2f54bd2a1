#include "active_tapes.hpp"

#include <algorithm>
#include <vector>

namespace accel::autodiff::detail {
namespace {

thread_local std::vector<VariableReadListener*> active_tapes;
thread_local int suspension_depth = 0;

}  // namespace

void add_active_tape(VariableReadListener* tape) { active_tapes.push_back(tape); }

void remove_active_tape(VariableReadListener* tape) {
  active_tapes.erase(std::remove(active_tapes.begin(), active_tapes.end(), tape),
                     active_tapes.end());
}

void announce_variable_read(const Variable& variable) {
  // A copy: a listener may not add or remove tapes, but be safe if it does.
  const std::vector<VariableReadListener*> tapes = active_tapes;
  for (VariableReadListener* tape : tapes) tape->on_variable_read(variable);
}

bool any_active_tape() { return !active_tapes.empty(); }

RecordingSuspension::RecordingSuspension() { ++suspension_depth; }
RecordingSuspension::~RecordingSuspension() { --suspension_depth; }
bool recording_suspended() { return suspension_depth > 0; }

}  // namespace accel::autodiff::detail
