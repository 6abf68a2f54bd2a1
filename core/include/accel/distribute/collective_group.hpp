// CollectiveGroup: the chief and workers of a cluster joined for collectives
// across processes, run by Gloo over TCP (all-reduce, all-gather of floats or
// bytes, broadcast, barrier). Ranks follow TensorFlow's order: the chief first, then
// workers by index. Rendezvous goes through a small key-value store served by
// rank 0 at its cluster address; data moves on Gloo's own TCP pairs.
// Addresses may be IPv4 or IPv6 ("[::1]:2222"); a host that does not
// resolve fails at once, naming the host and getaddrinfo's reason.
//
// Every call is bounded by the timeout: a task that never joins, or one that
// dies or stalls mid-collective, makes the others fail with an
// UnavailableError naming what went wrong, never hang. After such an error
// the group is broken and every later call fails at once.
#pragma once

#include <accel/distribute/cluster_resolver.hpp>
#include <accel/tensor.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gloo { class Context; }

namespace accel::distribute {

enum class ReduceOp { kSum, kMean, kMax, kMin };
const char* reduce_op_name(ReduceOp op) noexcept;

struct CollectiveOptions {
  // Bounds joining and each collective.
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

class CollectiveGroup {
 public:
  // Joins the group of the resolver's chief and workers; blocks until every
  // task has joined. InvalidArgumentError when this task is neither chief nor
  // worker; UnavailableError naming the tasks that did not join in time, or
  // at once naming the first task whose host does not resolve.
  explicit CollectiveGroup(const ClusterResolver& resolver, CollectiveOptions options = {});
  ~CollectiveGroup();
  CollectiveGroup(const CollectiveGroup&) = delete;
  CollectiveGroup& operator=(const CollectiveGroup&) = delete;

  int rank() const noexcept;
  int size() const noexcept;
  // "worker 2 (127.0.0.1:23457)" for a rank of this group.
  std::string task_name(int rank) const;

  // In place: every rank ends with the element-wise reduction of all ranks'
  // values. SUM and MEAN run Gloo's halving-doubling bound to a buffer of the
  // group per size (the values are copied through it unless they are that
  // buffer, see reusable_buffer); MAX and MIN run Gloo's bcube.
  void all_reduce(std::span<float> values, ReduceOp op);
  // A buffer of `count` floats owned by the group, the same on every call
  // with that count: all_reduce of all of it needs no copies. Every rank must
  // ask for the same counts in the same order (as for the collectives).
  std::span<float> reusable_buffer(size_t count);
  // A new float32 tensor on the input's device (copied through host memory).
  Tensor all_reduce(const Tensor& tensor, ReduceOp op);

  // Every rank's values, concatenated in rank order.
  std::vector<float> all_gather(std::span<const float> values);
  // Concatenated along the first axis (a scalar becomes a vector of size()).
  Tensor all_gather(const Tensor& tensor);

  // Every rank's bytes, in rank order; the ranks may send different sizes.
  std::vector<std::vector<std::byte>> all_gather_bytes(std::span<const std::byte> bytes);

  // In place: every rank ends with `root`'s values.
  void broadcast(std::span<float> values, int root);
  Tensor broadcast(const Tensor& tensor, int root);

  void barrier();

  // The Gloo context underneath, for algorithms accel does not wrap (and the
  // benchmark that compares against Gloo called directly). Null for a group of
  // one. Caution: Gloo's classic algorithm objects (AllreduceRing, ...) must
  // outlive their peers' last message; destroyed early, Gloo's TCP loop waits
  // for their slot forever and the whole context stalls.
  // accel's own collectives use only Gloo's unbound-buffer API.
  const std::shared_ptr<gloo::Context>& gloo_context() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace accel::distribute
