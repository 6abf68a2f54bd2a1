// CollectiveGroup: rendezvous through rank 0's store, then Gloo's TCP pairs
// and algorithms for every collective. Each Gloo failure (a closed pair, a
// timeout) becomes an UnavailableError and breaks the group.
#include <accel/distribute/collective_group.hpp>

#include "rendezvous_store.hpp"

#include <accel/distribute/tf_config_parser.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <csignal>
#include <cstring>
#include <map>

namespace accel::distribute {
namespace {

using Clock = std::chrono::steady_clock;

struct Member {
  std::string job;
  int index = 0;
  std::string address;
};

// The tasks that take part in collectives, in rank order: chief, then workers.
std::vector<Member> collective_members(const ClusterSpec& cluster) {
  std::vector<Member> members;
  for (std::string_view job : {kChiefJob, kWorkerJob}) {
    if (!cluster.has_job(job)) continue;
    const std::vector<std::string>& addresses = cluster.job_tasks(job);
    for (size_t index = 0; index < addresses.size(); ++index) {
      members.push_back({std::string(job), static_cast<int>(index), addresses[index]});
    }
  }
  return members;
}

std::string seconds_text(std::chrono::milliseconds duration) {
  return fmt::format("{:g} s", std::chrono::duration<double>(duration).count());
}

std::string joined_key(int rank) { return fmt::format("accel/joined/{}", rank); }

using ReduceFunction = void (*)(void*, const void*, const void*, size_t);
ReduceFunction gloo_reduce_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax: return &gloo::max<float>;
    case ReduceOp::kMin: return &gloo::min<float>;
    case ReduceOp::kSum:
    case ReduceOp::kMean: break;
  }
  return &gloo::sum<float>;
}

std::vector<float> float32_host_values(const Tensor& tensor, const char* collective) {
  if (tensor.dtype() != DType::kFloat32) {
    throw InvalidArgumentError(fmt::format("{}: only float32 tensors are supported, got {}", collective,
                                           dtype_name(tensor.dtype())));
  }
  return tensor.to_vector<float>();
}

// Gloo's TCP pairs write without MSG_NOSIGNAL, so writing to a peer that died
// would kill this process with SIGPIPE instead of raising the error the group
// reports. Ignored only while nobody installed a handler of their own.
void ignore_sigpipe_unless_handled() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    ::signal(SIGPIPE, SIG_IGN);
  }
}

}  // namespace

const char* reduce_op_name(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::kSum: return "SUM";
    case ReduceOp::kMean: return "MEAN";
    case ReduceOp::kMax: return "MAX";
    case ReduceOp::kMin: return "MIN";
  }
  return "?";
}

// A SUM all-reduce of one size: Gloo's recursive halving-doubling bound to
// a buffer of that size (classic Gloo algorithms bind their buffers when
// built). Measured on loopback it is the fastest of Gloo's all-reduces at
// every size and 2 to 4 processes, and Gloo's unbound-buffer ring stalls for
// minutes with 4 processes on 2 cores (docs/PERFORMANCE.md, "Distribution").
struct BoundAllReduce {
  std::vector<float> buffer;
  std::unique_ptr<gloo::AllreduceHalvingDoubling<float>> algorithm;
};

// Bound all-reduces are built per element count, on every rank at the same
// call (a classic algorithm takes the context's next slot, so all ranks must
// build them in the same order: the count is what they agree on, never a
// pointer). They live as long as the group: destroyed early, a peer's late
// message would wait forever for its slot. Past this many sizes, all-reduces
// run on Gloo's unbound-buffer bcube instead.
constexpr size_t kMaxBoundSizes = 32;

struct CollectiveGroup::State {
  std::vector<Member> members;
  int rank = 0;
  std::chrono::milliseconds timeout{};
  std::shared_ptr<gloo::Context> context;  // null for a group of one
  uint32_t next_tag = 1;
  std::string broken_because;  // set by the first failed collective
  std::map<size_t, BoundAllReduce> bound_all_reduces;  // by element count
  std::map<size_t, std::vector<float>> local_buffers;   // reusable buffers nothing is bound to

  // The bound all-reduce for `count` floats, built on first use; null once
  // kMaxBoundSizes sizes are bound.
  BoundAllReduce* bound_all_reduce(size_t count) {
    auto found = bound_all_reduces.find(count);
    if (found != bound_all_reduces.end()) return &found->second;
    if (bound_all_reduces.size() >= kMaxBoundSizes || !context) return nullptr;
    BoundAllReduce& created = bound_all_reduces[count];
    created.buffer.resize(count);
    created.algorithm = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(
        context, std::vector<float*>{created.buffer.data()}, static_cast<int>(count));
    return &created;
  }

  std::string task_name(int of_rank) const {
    const Member& member = members.at(static_cast<size_t>(of_rank));
    return fmt::format("{} {} ({})", member.job, member.index, member.address);
  }

  // Runs one Gloo collective; any Gloo error breaks the group.
  template <typename Collective>
  void run(const char* what, Collective&& collective) {
    if (!broken_because.empty()) {
      throw FailedPreconditionError(fmt::format("{} on {}: the group is broken since an earlier failure: {}",
                                                what, task_name(rank), broken_because));
    }
    if (!context) return;  // a group of one: nothing to exchange
    try {
      collective(next_tag++);
    } catch (const std::exception& error) {
      broken_because = error.what();
      throw UnavailableError(fmt::format(
          "{} failed on {}: a peer left or did not answer within {} ({}); this group can no longer be used",
          what, task_name(rank), seconds_text(timeout), error.what()));
    }
  }

  void join(RendezvousClient& store) {
    store.set(joined_key(rank), std::vector<char>(members[rank].address.begin(), members[rank].address.end()));
    std::vector<std::string> missing;
    for (int other = 0; other < static_cast<int>(members.size()); ++other) missing.push_back(joined_key(other));
    std::string store_lost;
    try {
      store.wait_until(missing, Clock::now() + timeout);
    } catch (const gloo::IoException& error) {
      // Rank 0 gave up (its own wait ran out first) or died: report what we saw.
      store_lost = fmt::format(" ({} closed the rendezvous first)", task_name(0));
    }
    if (missing.empty()) return;
    std::vector<std::string> missing_tasks;
    for (int other = 0; other < static_cast<int>(members.size()); ++other) {
      if (std::find(missing.begin(), missing.end(), joined_key(other)) != missing.end()) {
        missing_tasks.push_back(task_name(other));
      }
    }
    throw UnavailableError(fmt::format("{} did not join within {}{}", fmt::join(missing_tasks, ", "),
                                       seconds_text(timeout), store_lost));
  }
};

CollectiveGroup::CollectiveGroup(const ClusterResolver& resolver, CollectiveOptions options)
    : state_(std::make_unique<State>()) {
  State& state = *state_;
  state.timeout = options.timeout;
  state.members = collective_members(resolver.cluster_spec());
  if (state.members.empty()) {
    state.members.push_back({std::string(kWorkerJob), 0, "localhost:0"});  // outside any cluster
    return;
  }
  auto self = std::find_if(state.members.begin(), state.members.end(), [&](const Member& member) {
    return member.job == resolver.task_type() && member.index == resolver.task_id();
  });
  if (self == state.members.end()) {
    throw InvalidArgumentError(fmt::format(
        "CollectiveGroup: task {} {} is not a chief or worker of the cluster {}; only those take part in collectives",
        resolver.task_type().empty() ? "(none)" : resolver.task_type(), resolver.task_id(),
        resolver.cluster_spec().to_json()));
  }
  state.rank = static_cast<int>(self - state.members.begin());
  if (state.members.size() == 1) return;
  ignore_sigpipe_unless_handled();

  // Every task checks every host, so a mistyped one stops the whole group at
  // once instead of leaving the others to wait out the join timeout.
  for (int member = 0; member < static_cast<int>(state.members.size()); ++member) {
    require_resolvable_host(split_host_port(state.members[member].address).host, state.task_name(member));
  }
  const HostPort store_address = split_host_port(state.members[0].address);
  const HostPort own_address = split_host_port(state.members[state.rank].address);

  const Clock::time_point deadline = Clock::now() + state.timeout;
  std::unique_ptr<RendezvousServer> server;
  if (state.rank == 0) server = std::make_unique<RendezvousServer>(store_address.port);
  std::unique_ptr<RendezvousClient> store =
      RendezvousClient::connect(store_address.host, store_address.port, deadline, state.timeout);
  if (!store) {
    throw UnavailableError(fmt::format("{} did not join within {}: its rendezvous store never answered",
                                       state.task_name(0), seconds_text(state.timeout)));
  }
  try {
    state.join(*store);
    gloo::transport::tcp::attr device_attributes;
    device_attributes.hostname = own_address.host;  // an IPv6 host binds an IPv6 device
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(device_attributes);
    auto context = std::make_shared<gloo::rendezvous::Context>(state.rank, static_cast<int>(state.members.size()));
    context->setTimeout(state.timeout);
    context->connectFullMesh(*store, device);
    state.context = std::move(context);
  } catch (const gloo::Exception& error) {
    throw UnavailableError(fmt::format("{} could not connect to the group: {}", state.task_name(state.rank),
                                       error.what()));
  }
  // Everyone is connected once this passes, so rank 0 may stop serving the store.
  barrier();
}

CollectiveGroup::~CollectiveGroup() = default;

int CollectiveGroup::rank() const noexcept { return state_->rank; }
int CollectiveGroup::size() const noexcept { return static_cast<int>(state_->members.size()); }
std::string CollectiveGroup::task_name(int rank) const { return state_->task_name(rank); }
const std::shared_ptr<gloo::Context>& CollectiveGroup::gloo_context() const { return state_->context; }

std::span<float> CollectiveGroup::reusable_buffer(size_t count) {
  // A group of one, or past kMaxBoundSizes: a plain buffer of the group's.
  if (BoundAllReduce* bound = count > 0 ? state_->bound_all_reduce(count) : nullptr) return bound->buffer;
  std::vector<float>& local = state_->local_buffers[count];
  local.resize(count);
  return local;
}

void CollectiveGroup::all_reduce(std::span<float> values, ReduceOp op) {
  if (values.empty()) return;
  BoundAllReduce* bound = nullptr;
  if ((op == ReduceOp::kSum || op == ReduceOp::kMean) && state_->broken_because.empty()) {
    bound = state_->bound_all_reduce(values.size());
  }
  state_->run("all_reduce", [&](uint32_t tag) {
    if (bound != nullptr) {
      const bool staged = values.data() != bound->buffer.data();
      if (staged) std::memcpy(bound->buffer.data(), values.data(), values.size_bytes());
      bound->algorithm->run();
      if (staged) std::memcpy(values.data(), bound->buffer.data(), values.size_bytes());
      return;
    }
    gloo::AllreduceOptions options(state_->context);
    options.setOutput(values.data(), values.size());
    options.setReduceFunction(gloo_reduce_function(op));
    options.setAlgorithm(gloo::AllreduceOptions::Algorithm::BCUBE);
    options.setTag(tag);
    options.setTimeout(state_->timeout);
    gloo::allreduce(options);
  });
  if (op == ReduceOp::kMean) {
    const float count = static_cast<float>(size());
    for (float& value : values) value /= count;
  }
}

Tensor CollectiveGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
  std::vector<float> values = float32_host_values(tensor, "all_reduce");
  all_reduce(std::span<float>(values), op);
  return Tensor::from_host(values.data(), tensor.shape(), DType::kFloat32, tensor.device());
}

std::vector<float> CollectiveGroup::all_gather(std::span<const float> values) {
  std::vector<float> gathered(values.size() * static_cast<size_t>(size()));
  std::copy(values.begin(), values.end(), gathered.begin() + static_cast<ptrdiff_t>(values.size() * rank()));
  if (values.empty()) return gathered;
  state_->run("all_gather", [&](uint32_t tag) {
    gloo::AllgatherOptions options(state_->context);
    options.setInput(const_cast<float*>(values.data()), values.size());
    options.setOutput(gathered.data(), gathered.size());
    options.setTag(tag);
    options.setTimeout(state_->timeout);
    gloo::allgather(options);
  });
  return gathered;
}

Tensor CollectiveGroup::all_gather(const Tensor& tensor) {
  const std::vector<float> values = float32_host_values(tensor, "all_gather");
  const std::vector<float> gathered = all_gather(std::span<const float>(values));
  std::vector<int64_t> dims = tensor.shape().dims();
  if (dims.empty()) dims.push_back(1);
  dims[0] *= size();
  return Tensor::from_host(gathered.data(), Shape(std::move(dims)), DType::kFloat32, tensor.device());
}

std::vector<std::vector<std::byte>> CollectiveGroup::all_gather_bytes(std::span<const std::byte> bytes) {
  std::vector<std::vector<std::byte>> gathered(static_cast<size_t>(size()));
  gathered[static_cast<size_t>(rank())].assign(bytes.begin(), bytes.end());
  if (size() == 1) return gathered;
  // The sizes first, so that each rank may send its own; then the bytes.
  std::vector<uint64_t> sizes(static_cast<size_t>(size()), 0);
  uint64_t own_size = bytes.size();
  state_->run("all_gather_bytes", [&](uint32_t tag) {
    gloo::AllgatherOptions options(state_->context);
    options.setInput(&own_size, 1);
    options.setOutput(sizes.data(), sizes.size());
    options.setTag(tag);
    options.setTimeout(state_->timeout);
    gloo::allgather(options);
  });
  std::vector<size_t> elements(sizes.begin(), sizes.end());
  size_t total = 0;
  for (size_t count : elements) total += count;
  if (total == 0) return gathered;
  std::vector<char> output(total);
  state_->run("all_gather_bytes", [&](uint32_t tag) {
    gloo::AllgathervOptions options(state_->context);
    options.setInput(reinterpret_cast<char*>(const_cast<std::byte*>(bytes.data())), bytes.size());
    options.setOutput(output.data(), elements);
    options.setTag(tag);
    options.setTimeout(state_->timeout);
    gloo::allgatherv(options);
  });
  size_t at = 0;
  for (size_t member = 0; member < elements.size(); ++member) {
    const std::byte* from = reinterpret_cast<const std::byte*>(output.data()) + at;
    gathered[member].assign(from, from + elements[member]);
    at += elements[member];
  }
  return gathered;
}

void CollectiveGroup::broadcast(std::span<float> values, int root) {
  if (root < 0 || root >= size()) {
    throw InvalidArgumentError(fmt::format("broadcast: root {} is not a rank of this group of {}", root, size()));
  }
  if (values.empty()) return;
  state_->run("broadcast", [&](uint32_t tag) {
    gloo::BroadcastOptions options(state_->context);
    options.setOutput(values.data(), values.size());
    options.setRoot(root);
    options.setTag(tag);
    options.setTimeout(state_->timeout);
    gloo::broadcast(options);
  });
}

Tensor CollectiveGroup::broadcast(const Tensor& tensor, int root) {
  std::vector<float> values = float32_host_values(tensor, "broadcast");
  broadcast(std::span<float>(values), root);
  return Tensor::from_host(values.data(), tensor.shape(), DType::kFloat32, tensor.device());
}

void CollectiveGroup::barrier() {
  state_->run("barrier", [&](uint32_t tag) {
    gloo::BarrierOptions options(state_->context);
    options.setTag(tag);
    options.setTimeout(state_->timeout);
    gloo::barrier(options);
  });
}

}  // namespace accel::distribute
