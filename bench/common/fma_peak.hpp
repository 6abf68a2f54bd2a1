// The machine's measured float32 FMA peak (FLOP/s) on a number of threads:
// each thread runs twelve independent chains of fused multiply-adds on the
// widest vectors the CPU has (AVX-512, else AVX2+FMA, else scalar), enough
// chains to cover the FMA latency, for about `seconds`. What a training step's
// "fraction of peak" is measured against.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace accel::bench {
namespace fma_peak_detail {

constexpr int kChains = 12;
constexpr int64_t kIterations = 1 << 20;

// Returns FLOPs done; the sum is returned so the chains are not optimized away.
__attribute__((target("avx512f"))) inline double run_avx512(float* sink) {
  __m512 chains[kChains];
  for (int c = 0; c < kChains; ++c) chains[c] = _mm512_set1_ps(1.0f + 1e-3f * c);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < kIterations; ++i) {
    for (int c = 0; c < kChains; ++c) chains[c] = _mm512_fmadd_ps(chains[c], a, b);
  }
  __m512 sum = chains[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, chains[c]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  for (float lane : lanes) *sink += lane;
  return 2.0 * 16 * kChains * static_cast<double>(kIterations);
}

__attribute__((target("avx2,fma"))) inline double run_avx2(float* sink) {
  __m256 chains[kChains];
  for (int c = 0; c < kChains; ++c) chains[c] = _mm256_set1_ps(1.0f + 1e-3f * c);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < kIterations; ++i) {
    for (int c = 0; c < kChains; ++c) chains[c] = _mm256_fmadd_ps(chains[c], a, b);
  }
  float lanes[8];
  __m256 sum = chains[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, chains[c]);
  _mm256_storeu_ps(lanes, sum);
  for (float lane : lanes) *sink += lane;
  return 2.0 * 8 * kChains * static_cast<double>(kIterations);
}

}  // namespace fma_peak_detail

// "avx512", "avx2" or "none": the vectors measure_fma_peak uses.
inline const char* fma_peak_isa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
  return "none";
}

// FLOP/s over all `threads` together (0 when the CPU has no FMA vectors).
inline double measure_fma_peak(int threads, double seconds = 0.3) {
  using Clock = std::chrono::steady_clock;
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return 0.0;
  std::vector<double> rates(static_cast<size_t>(std::max(threads, 1)), 0.0);
  std::vector<std::thread> workers;
  std::atomic<float> sink{0.0f};
  for (size_t t = 0; t < rates.size(); ++t) {
    workers.emplace_back([&, t] {
      float local = 0.0f;
      double best = 0.0;
      const Clock::time_point end =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
      while (Clock::now() < end) {
        const Clock::time_point start = Clock::now();
        const double flops = avx512 ? fma_peak_detail::run_avx512(&local) : fma_peak_detail::run_avx2(&local);
        best = std::max(best, flops / std::chrono::duration<double>(Clock::now() - start).count());
      }
      rates[t] = best;
      sink.store(sink.load() + local);
    });
  }
  for (std::thread& worker : workers) worker.join();
  double total = 0.0;
  for (double rate : rates) total += rate;
  return total;
}

}  // namespace accel::bench
