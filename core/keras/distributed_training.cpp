// The current strategy as Keras sees it: process-wide, like the strategy
// scopes that set it (a strategy's replica threads see it too).
#include <accel/keras/distributed_training.hpp>

#include <atomic>

namespace accel::keras {
namespace {

std::atomic<DistributedTraining*> current{nullptr};

}  // namespace

DistributedTraining* current_distributed_training() noexcept { return current.load(); }

DistributedTrainingScope::DistributedTrainingScope(DistributedTraining* training) : previous_(current.exchange(training)) {}

DistributedTrainingScope::~DistributedTrainingScope() { current.store(previous_); }

}  // namespace accel::keras
