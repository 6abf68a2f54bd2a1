// ProcessExchange: the graph layer's view of the other processes an SPMD
// program spans. Every process runs the same program on its own devices (a
// contiguous block of the mesh's devices, as many in each process); where
// its collectives need the other processes' operands, they are exchanged
// through this. The engine underneath (Gloo over TCP, core/distribute) is
// injected from above: the graph layer does not depend on it.
#pragma once

#include <cstddef>
#include <vector>

namespace accel::graph {

class ProcessExchange {
 public:
  virtual ~ProcessExchange() = default;

  // This process's index among num_processes(), from 0.
  virtual int process_id() const = 0;
  virtual int num_processes() const = 0;

  // Every process's `local` bytes, in process order (this process's own
  // included). A collective: every process calls it, in the same order.
  // Throws UnavailableError when a process failed or did not answer in time;
  // the exchange is unusable after that.
  virtual std::vector<std::vector<std::byte>> all_gather(const std::vector<std::byte>& local) = 0;
};

}  // namespace accel::graph
