// Caching device-memory allocator (see caching_allocator.hpp).
#include "caching_allocator.hpp"

#include "cuda_check.hpp"

#include <limits>
#include <utility>
#include <string>

namespace accel::cuda {

CachingAllocator::CachingAllocator(Options options) : options_(std::move(options)) {
  if (!options_.growth) {
    options_.limit_bytes = options_.limit_bytes / kAlignment * kAlignment;
    if (options_.limit_bytes == 0) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                             options_.device_name + ": memory reservation of 0 bytes");
    }
    void* arena = nullptr;
    cudaError_t error = cudaMalloc(&arena, options_.limit_bytes);
    if (error != cudaSuccess) {
      (void)cudaGetLastError();
      throw sdk::PluginError(
          error == cudaErrorMemoryAllocation ? ACCEL_STATUS_RESOURCE_EXHAUSTED
                                             : status_code_for(error),
          options_.device_name + ": could not reserve " + std::to_string(options_.limit_bytes) +
              " bytes of device memory: " + cudaGetErrorString(error));
    }
    arena_ = static_cast<char*>(arena);
    chunks_[0] = Chunk{options_.limit_bytes, true};
    free_by_size_.insert({options_.limit_bytes, 0});
  }
}

CachingAllocator::~CachingAllocator() {
  // The device synchronized its stream before destroying the allocator.
  if (arena_ != nullptr) (void)cudaFree(arena_);
  for (auto& [size, pointer] : cached_) (void)cudaFree(pointer);
  for (auto& [pointer, size] : live_) (void)cudaFree(pointer);
  (void)cudaGetLastError();
}

uint64_t CachingAllocator::round_size(uint64_t bytes) {
  if (bytes == 0) bytes = 1;
  // Small blocks round to 512 B; large ones to 2 MiB so that blocks get reused.
  const uint64_t granule = bytes < (uint64_t{1} << 20) ? kAlignment : (uint64_t{2} << 20);
  if (bytes > std::numeric_limits<uint64_t>::max() - granule) return 0;  // overflow
  return (bytes + granule - 1) / granule * granule;
}

void CachingAllocator::throw_exhausted(uint64_t requested, const char* detail) const {
  throw sdk::PluginError(
      ACCEL_STATUS_RESOURCE_EXHAUSTED,
      "out of memory on CUDA device " + options_.device_name + ": requested " +
          std::to_string(requested) + " bytes, in use " + std::to_string(current_) +
          " bytes, limit " + std::to_string(options_.limit_bytes) + " bytes" + detail);
}

void* CachingAllocator::allocate(uint64_t bytes) {
  const uint64_t size = round_size(bytes);
  if (size == 0 || size > options_.limit_bytes) throw_exhausted(bytes, "");
  const Block block = options_.growth ? allocate_growth(size, bytes) : allocate_arena(size, bytes);
  current_ += block.size;
  if (current_ > peak_) peak_ = current_;
  return block.pointer;
}

CachingAllocator::Block CachingAllocator::allocate_growth(uint64_t size, uint64_t requested) {
  if (current_ + size > options_.limit_bytes) throw_exhausted(requested, "");
  // Reuse a cached block of at most twice the size that still fits under the limit.
  auto it = cached_.lower_bound(size);
  if (it != cached_.end() && it->first <= 2 * size &&
      current_ + it->first <= options_.limit_bytes) {
    const Block block{it->second, it->first};
    cached_.erase(it);
    live_[block.pointer] = block.size;
    return block;
  }
  if (reserved_ + size > options_.limit_bytes) release_cached();
  void* pointer = nullptr;
  cudaError_t error = cudaMalloc(&pointer, size);
  if (error == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    release_cached();
    error = cudaMalloc(&pointer, size);
  }
  if (error == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw_exhausted(requested, " (the GPU itself has no free memory left)");
  }
  check_cuda(error, "cudaMalloc");
  live_[pointer] = size;
  reserved_ += size;
  return Block{pointer, size};
}

void CachingAllocator::release_cached() {
  if (cached_.empty()) return;
  // Cached blocks may still be read by queued work: wait for the stream first.
  check_cuda(cudaStreamSynchronize(options_.stream), "cudaStreamSynchronize");
  for (auto& [size, pointer] : cached_) {
    (void)cudaFree(pointer);
    reserved_ -= size;
  }
  cached_.clear();
  (void)cudaGetLastError();
}

CachingAllocator::Block CachingAllocator::allocate_arena(uint64_t size, uint64_t requested) {
  auto it = free_by_size_.lower_bound({size, 0});
  if (it == free_by_size_.end()) {
    uint64_t largest = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
    throw_exhausted(requested,
                    (", largest free block " + std::to_string(largest) + " bytes").c_str());
  }
  const auto [chunk_size, offset] = *it;
  free_by_size_.erase(it);
  Chunk& chunk = chunks_[offset];
  chunk.free = false;
  if (chunk_size - size >= kAlignment) {  // split off the tail
    chunk.size = size;
    chunks_[offset + size] = Chunk{chunk_size - size, true};
    free_by_size_.insert({chunk_size - size, offset + size});
  }
  return Block{arena_ + offset, chunk.size};
}

void CachingAllocator::hold_frees() {
  holding_ = true;
  held_.clear();
}

std::vector<void*> CachingAllocator::held_frees() {
  holding_ = false;
  return std::exchange(held_, {});
}

void CachingAllocator::release_held(const std::vector<void*>& pointers) {
  for (void* pointer : pointers) deallocate(pointer);
}

void CachingAllocator::deallocate(void* pointer) {
  if (pointer == nullptr) return;
  if (holding_) {
    held_.push_back(pointer);
    return;
  }
  if (!options_.growth) {
    char* p = static_cast<char*>(pointer);
    if (arena_ == nullptr || p < arena_ || p >= arena_ + options_.limit_bytes) return;
    deallocate_arena(static_cast<uint64_t>(p - arena_));
    return;
  }
  auto it = live_.find(pointer);
  if (it == live_.end()) return;
  current_ -= it->second;
  cached_.insert({it->second, pointer});
  live_.erase(it);
}

void CachingAllocator::deallocate_arena(uint64_t offset) {
  auto it = chunks_.find(offset);
  if (it == chunks_.end() || it->second.free) return;
  current_ -= it->second.size;
  it->second.free = true;
  // Coalesce with the next chunk.
  auto next = std::next(it);
  if (next != chunks_.end() && next->second.free) {
    free_by_size_.erase({next->second.size, next->first});
    it->second.size += next->second.size;
    chunks_.erase(next);
  }
  // Coalesce with the previous chunk.
  if (it != chunks_.begin()) {
    auto previous = std::prev(it);
    if (previous->second.free) {
      free_by_size_.erase({previous->second.size, previous->first});
      previous->second.size += it->second.size;
      chunks_.erase(it);
      it = previous;
    }
  }
  free_by_size_.insert({it->second.size, it->first});
}

}  // namespace accel::cuda
