// Caching device-memory allocator of one logical CUDA device.
//
// Two modes, as TensorFlow's GPU allocator:
//  - growth (memory_growth = 1): blocks are cudaMalloc'ed on demand and, when
//    freed, kept in size-bucketed free lists for reuse; cached blocks are
//    released (after a stream synchronize) when a new block would pass the
//    limit or cudaMalloc runs out.
//  - reserve (memory_growth = 0): one arena of `limit` bytes is cudaMalloc'ed
//    up front and sub-allocated best-fit with splitting and coalescing.
// Reuse is stream-ordered: every user of the memory runs on the device's one
// stream, so a block freed on the host may be handed out again at once.
// An allocation past the limit throws RESOURCE_EXHAUSTED (requested bytes,
// in use, limit) and leaves the allocator usable. Not thread-safe: the device
// serialises calls.
// While a CUDA graph is captured, memory freed is held instead (hold_frees):
// the graph's kernels use it again at every replay, so it must not go to
// another user until the graph is destroyed (then release_held).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace accel::cuda {

class CachingAllocator {
 public:
  struct Options {
    int ordinal = 0;
    uint64_t limit_bytes = 0;  // growth: cap on reserved bytes; reserve: arena size
    bool growth = true;
    cudaStream_t stream = nullptr;
    std::string device_name;  // for messages, e.g. "GPU:0"
  };

  explicit CachingAllocator(Options options);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(uint64_t bytes);
  void deallocate(void* pointer);  // ignores pointers it does not own; held while holding

  // From hold_frees() to held_frees(), deallocate() keeps what it is given;
  // held_frees() returns it, for release_held() once nothing reads it again.
  void hold_frees();
  std::vector<void*> held_frees();
  void release_held(const std::vector<void*>& pointers);

  uint64_t current_bytes() const { return current_; }
  uint64_t peak_bytes() const { return peak_; }
  uint64_t limit_bytes() const { return options_.limit_bytes; }

  static constexpr uint64_t kAlignment = 512;

 private:
  static uint64_t round_size(uint64_t bytes);
  [[noreturn]] void throw_exhausted(uint64_t requested, const char* detail) const;
  struct Block {
    void* pointer = nullptr;
    uint64_t size = 0;  // the whole block, counted as in use
  };
  Block allocate_growth(uint64_t size, uint64_t requested);
  Block allocate_arena(uint64_t size, uint64_t requested);
  void deallocate_arena(uint64_t offset);
  void release_cached();  // synchronizes the stream, cudaFree's every cached block

  Options options_;
  bool holding_ = false;
  std::vector<void*> held_;
  uint64_t current_ = 0;  // bytes handed out (rounded block sizes)
  uint64_t peak_ = 0;

  // growth mode
  uint64_t reserved_ = 0;                           // live + cached block bytes
  std::multimap<uint64_t, void*> cached_;           // size -> free block
  std::unordered_map<void*, uint64_t> live_;        // block -> size

  // reserve mode
  char* arena_ = nullptr;
  struct Chunk {
    uint64_t size = 0;
    bool free = true;
  };
  std::map<uint64_t, Chunk> chunks_;                   // offset -> chunk
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;  // (size, offset)
};

}  // namespace accel::cuda
