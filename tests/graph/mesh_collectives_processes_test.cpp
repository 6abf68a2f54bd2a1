// MeshCollectives across processes: a 2 x 2 mesh held by two MeshCollectives
// of 2 devices each (two "processes" in one test, their devices on threads),
// joined by an in-memory ProcessExchange, gives every device the bits the
// same collectives give on one MeshCollectives of 4 devices, exchanging only
// for the collectives whose groups cross the processes; an exchange that
// breaks fails every waiting device instead of leaving it waiting; a mesh that
// is not processes x local devices is refused. (The exchange over Gloo
// between real processes: tests/distribute/sharded_multiprocess_test.cpp.)
#include "graph/mesh_collectives.hpp"
#include "graph/process_exchange.hpp"

#include <accel/error.hpp>

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace accel::graph {
namespace {

// The processes of one test, exchanging through shared memory. Any process
// may leave(): every all_gather waiting then, or called later, fails.
class InMemoryProcesses {
 public:
  explicit InMemoryProcesses(int count) : count_(count), deposits_(static_cast<size_t>(count)) {}

  std::vector<std::vector<std::byte>> all_gather(int process, const std::vector<std::byte>& local) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (left_) throw UnavailableError("a process left the exchange");
    const uint64_t round = round_;
    deposits_[static_cast<size_t>(process)] = local;
    if (++arrived_ == count_) {
      gathered_ = deposits_;
      arrived_ = 0;
      ++round_;
      changed_.notify_all();
    }
    changed_.wait(lock, [&] { return round_ != round || left_; });
    if (round_ == round) throw UnavailableError("a process left the exchange");
    return gathered_;
  }

  void leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    left_ = true;
    changed_.notify_all();
  }

  int count() const { return count_; }
  // How many all-gathers completed.
  uint64_t rounds() {
    std::lock_guard<std::mutex> lock(mutex_);
    return round_;
  }

 private:
  int count_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<std::byte>> deposits_, gathered_;
  int arrived_ = 0;
  uint64_t round_ = 0;
  bool left_ = false;
};

class InMemoryExchange final : public ProcessExchange {
 public:
  InMemoryExchange(InMemoryProcesses& processes, int process) : processes_(processes), process_(process) {}
  int process_id() const override { return process_; }
  int num_processes() const override { return processes_.count(); }
  std::vector<std::vector<std::byte>> all_gather(const std::vector<std::byte>& local) override {
    return processes_.all_gather(process_, local);
  }

 private:
  InMemoryProcesses& processes_;
  int process_;
};

const MeshShape kMesh{{"data", "model"}, {2, 2}};
const Shape kOperandShape{4, 8};

// Device `device`'s operand: values whose sums round differently in another order.
std::vector<std::byte> operand_of(size_t device) {
  std::vector<float> values(static_cast<size_t>(kOperandShape.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0f / static_cast<float>(3 + 7 * device + i) * (i % 2 ? 1e4f : 1);
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

struct Collective {
  CollectiveAttributes attributes;
  Shape output_shape;
};

// Every kind once, over one axis or both.
std::vector<Collective> collectives() {
  return {
      {{CollectiveKind::kAllReduce, 0b11, -1, -1, PartialReduction::kSum}, Shape{4, 8}},
      {{CollectiveKind::kAllGather, 0b10, 0, -1, PartialReduction::kNone}, Shape{8, 8}},
      {{CollectiveKind::kReduceScatter, 0b01, 1, -1, PartialReduction::kSum}, Shape{4, 4}},
      {{CollectiveKind::kAllToAll, 0b11, 1, 0, PartialReduction::kNone}, Shape{16, 2}},
      {{CollectiveKind::kAllReduce, 0b01, -1, -1, PartialReduction::kMax}, Shape{4, 8}},
  };
}

// [device][collective] outputs of running every collective on `mesh_collectives`' devices, a thread each.
void run_devices(MeshCollectives& mesh_collectives, std::vector<std::vector<std::vector<std::byte>>>& outputs,
                 std::vector<std::string>& errors) {
  std::vector<std::thread> threads;
  for (size_t local = 0; local < mesh_collectives.local_device_count(); ++local) {
    const size_t device = mesh_collectives.first_local_device() + local;
    threads.emplace_back([&, device] {
      try {
        const std::vector<Collective> all = collectives();
        for (size_t key = 0; key < all.size(); ++key) {
          outputs[device].push_back(mesh_collectives.run(key, device, all[key].attributes, DType::kFloat32,
                                                         kOperandShape, all[key].output_shape, operand_of(device)));
        }
      } catch (const std::exception& error) {
        errors[device] = error.what();
        mesh_collectives.abort(error.what());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(MeshCollectivesAcrossProcesses, TwoProcessesOfTwoDevicesGiveTheBitsOfOneProcessOfFour) {
  std::vector<std::vector<std::vector<std::byte>>> one_process(4), two_processes(4);
  std::vector<std::string> errors(4);
  {
    MeshCollectives all_devices(kMesh);
    run_devices(all_devices, one_process, errors);
  }
  InMemoryProcesses processes(2);
  InMemoryExchange first(processes, 0), second(processes, 1);
  MeshCollectives process_0(kMesh, 2, &first), process_1(kMesh, 2, &second);
  EXPECT_EQ(process_1.first_local_device(), 2u);
  std::thread other([&] { run_devices(process_1, two_processes, errors); });
  run_devices(process_0, two_processes, errors);
  other.join();
  EXPECT_EQ(processes.rounds(), collectives().size() - 1) << "the all-gather over 'model' stays within each process";
  for (size_t device = 0; device < 4; ++device) {
    ASSERT_EQ(errors[device], "") << "device " << device;
    ASSERT_EQ(two_processes[device].size(), collectives().size());
    for (size_t key = 0; key < collectives().size(); ++key) {
      EXPECT_EQ(two_processes[device][key], one_process[device][key]) << "device " << device << " collective " << key;
    }
  }
}

TEST(MeshCollectivesAcrossProcesses, ABrokenExchangeFailsEveryWaitingDevice) {
  InMemoryProcesses processes(2);
  InMemoryExchange first(processes, 0);
  MeshCollectives process_0(kMesh, 2, &first);
  std::vector<std::vector<std::vector<std::byte>>> outputs(4);
  std::vector<std::string> errors(4);
  // Process 1 never comes; it leaves once process 0's devices are waiting for it.
  std::thread leaver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    processes.leave();
  });
  run_devices(process_0, outputs, errors);
  leaver.join();
  for (size_t device : {0u, 1u}) {
    EXPECT_NE(errors[device].find("a process left the exchange"), std::string::npos) << errors[device];
    EXPECT_TRUE(outputs[device].empty());
  }
}

TEST(MeshCollectivesAcrossProcesses, AMeshThatIsNotProcessesTimesLocalDevicesIsRefused) {
  InMemoryProcesses processes(2);
  InMemoryExchange first(processes, 0);
  try {
    MeshCollectives refused(kMesh, 3, &first);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("a mesh of 4 devices cannot be 2 processes x 3 devices each"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace accel::graph
