#include <accel/autodiff/variable_mirroring.hpp>

#include <mutex>

namespace accel {
namespace {

std::mutex mirroring_mutex;
std::vector<Device> mirroring_devices;  // guarded by mirroring_mutex
InitialValueSource initial_value_source;  // guarded by mirroring_mutex
thread_local int replica_index = 0;
thread_local int replica_scope_depth = 0;

}  // namespace

VariableMirroringScope::VariableMirroringScope(std::vector<Device> devices, InitialValueSource source) {
  std::lock_guard lock(mirroring_mutex);
  previous_devices_ = std::move(mirroring_devices);
  previous_source_ = std::move(initial_value_source);
  mirroring_devices = std::move(devices);
  initial_value_source = std::move(source);
}

VariableMirroringScope::~VariableMirroringScope() {
  std::lock_guard lock(mirroring_mutex);
  mirroring_devices = std::move(previous_devices_);
  initial_value_source = std::move(previous_source_);
}

std::vector<Device> variable_mirroring_devices() {
  std::lock_guard lock(mirroring_mutex);
  return mirroring_devices;
}

InitialValueSource variable_initial_value_source() {
  std::lock_guard lock(mirroring_mutex);
  return initial_value_source;
}

ReplicaIndexScope::ReplicaIndexScope(int index) : previous_(replica_index) {
  replica_index = index;
  ++replica_scope_depth;
}
ReplicaIndexScope::~ReplicaIndexScope() {
  replica_index = previous_;
  --replica_scope_depth;
}

int current_replica_index() noexcept { return replica_index; }
bool inside_replica() noexcept { return replica_scope_depth > 0; }

}  // namespace accel
