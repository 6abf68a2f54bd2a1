// initialize_distribution: a CollectiveGroup seen by the graph layer as its
// ProcessExchange, handed to keras::distribution.
#include <accel/distribute/initialize_distribution.hpp>

#include <accel/keras/distribution/processes.hpp>

#include "graph/process_exchange.hpp"

#include <memory>
#include <span>

namespace accel::distribute {
namespace {

class GlooProcessExchange final : public graph::ProcessExchange {
 public:
  GlooProcessExchange(const ClusterResolver& resolver, CollectiveOptions options) : group_(resolver, options) {}

  int process_id() const override { return group_.rank(); }
  int num_processes() const override { return group_.size(); }
  std::vector<std::vector<std::byte>> all_gather(const std::vector<std::byte>& local) override {
    return group_.all_gather_bytes(std::span<const std::byte>(local));
  }

 private:
  CollectiveGroup group_;
};

}  // namespace

void initialize_distribution(const ClusterResolver& resolver, CollectiveOptions options) {
  keras::distribution::initialize(std::make_shared<GlooProcessExchange>(resolver, options));
}

void shutdown_distribution() { keras::distribution::initialize(nullptr); }

}  // namespace accel::distribute
