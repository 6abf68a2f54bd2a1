#include "timing/systolic_array.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "timing/bf16.hpp"

namespace accel::tpu {
namespace {

constexpr std::int64_t kNotYet = -1;
constexpr std::int32_t kBubble = -1;  // register holds no data

std::vector<float> rounded(std::span<const float> values) {
  std::vector<float> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), round_to_bf16);
  return out;
}

// One register per PE, for the current and the next cycle.
template <typename T>
struct RegisterPlane {
  std::vector<T> now;
  std::vector<T> next;
  RegisterPlane(std::size_t size, T value) : now(size, value), next(size, value) {}
  void advance() { now.swap(next); }
};

}  // namespace

SystolicArray::SystolicArray(int rows, int columns, Dataflow dataflow, TimingConvention convention)
    : rows_(rows), columns_(columns), dataflow_(dataflow), convention_(convention) {
  if (rows <= 0 || columns <= 0) throw std::invalid_argument("systolic array size must be positive");
}

SystolicRun SystolicArray::multiply(std::span<const float> a, std::span<const float> b, const GemmShape& gemm) const {
  check_gemm(gemm);
  const std::int64_t m = gemm.m, n = gemm.n, k = gemm.k;
  if (static_cast<std::int64_t>(a.size()) != m * k || static_cast<std::int64_t>(b.size()) != k * n) {
    throw std::invalid_argument("operand sizes do not match the GEMM shape");
  }
  const std::vector<float> a16 = rounded(a);
  const std::vector<float> b16 = rounded(b);
  if (dataflow_ == Dataflow::kOutputStationary) return run_output_stationary(a16, b16, m, n, k);
  if (dataflow_ == Dataflow::kWeightStationary) return run_stationary(b16, a16, k, n, m);

  // Input stationary: W = A^T (K x M) stays, X = B^T (N x K) streams, Y = OUT^T.
  std::vector<float> a_t(k * m), b_t(n * k);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) a_t[j * m + i] = a16[i * k + j];
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < n; ++j) b_t[j * k + i] = b16[i * n + j];
  SystolicRun run = run_stationary(a_t, b_t, k, m, n);
  std::vector<float> out(m * n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) out[j * n + i] = run.output[i * m + j];
  run.output = std::move(out);
  std::swap(run.ifmap_reads, run.filter_reads);  // the stationary operand is the ifmap here
  return run;
}

SystolicRun SystolicArray::run_stationary(const std::vector<float>& w, const std::vector<float>& x,
                                          std::int64_t sr, std::int64_t sc, std::int64_t t_dim) const {
  const int R = rows_, C = columns_;
  const std::size_t pes = static_cast<std::size_t>(R) * C;
  const std::int64_t row_folds = ceil_div(sr, R), column_folds = ceil_div(sc, C);
  const std::int64_t folds = row_folds * column_folds;
  const bool scalesim = convention_ == TimingConvention::kScaleSim;
  // Fold f covers rows [row_base, +R) and columns [col_base, +C) of W;
  // row folds of one column fold are consecutive so their sums accumulate in order.
  auto row_base = [&](std::int64_t f) { return (f % row_folds) * R; };
  auto col_base = [&](std::int64_t f) { return (f / row_folds) * C; };

  RegisterPlane<float> input(pes, 0.0f);          // moves right
  RegisterPlane<std::int32_t> tag(pes, kBubble);  // fold of the input beside it
  RegisterPlane<float> psum(pes, 0.0f);           // moves down
  std::vector<float> bank0(pes, 0.0f), bank1(pes, 0.0f);  // double-buffered weights
  std::vector<float> chain(pes, 0.0f);            // weight load path, shifts down a column

  std::vector<std::int64_t> load_start(folds, kNotYet), stream_start(folds, kNotYet), captured(folds, 0);
  std::int64_t next_load = 0, next_stream = 0, folds_done = 0;
  std::int64_t first_streaming = 0, first_loading = 0;  // oldest folds still injecting / loading
  std::int64_t chain_free_at = 0, port_free_at = 0;
  const std::int64_t outputs_per_fold = t_dim * C;

  SystolicRun run;
  run.folds = folds;
  run.output.assign(t_dim * sc, 0.0f);
  std::vector<float> injected(R);
  std::vector<std::int32_t> injected_tag(R);

  std::int64_t t = 0;
  while (folds_done < folds) {
    // Controller: start the next load and the next stream when allowed.
    if (next_load < folds) {
      const std::int64_t f = next_load;
      bool may_load = t >= chain_free_at;
      if (scalesim) {
        may_load = may_load && folds_done == f;  // one fold at a time, array empty
      } else if (f >= 2) {
        // Bank f%2 must be done with fold f-2 by the time column c latches
        // (end of cycle L+c+R-1): the last input of f-2 leaves row R-1 of
        // column c at S(f-2)+T+R+c-2.
        may_load = may_load && stream_start[f - 2] != kNotYet && t >= stream_start[f - 2] + t_dim - 1;
      }
      if (may_load) {
        load_start[f] = t;
        chain_free_at = t + R;
        ++next_load;
      }
    }
    if (next_stream < next_load) {
      const std::int64_t f = next_stream;
      if (t >= load_start[f] + R && t >= port_free_at) {
        stream_start[f] = t;
        port_free_at = t + t_dim;
        ++next_stream;
      }
    }

    // Left edge: the element of X each row takes in this cycle (skewed by row).
    while (first_streaming < next_stream && t >= stream_start[first_streaming] + t_dim + R - 1) ++first_streaming;
    for (int r = 0; r < R; ++r) {
      injected[r] = 0.0f;
      injected_tag[r] = kBubble;
      for (std::int64_t f = first_streaming; f < next_stream; ++f) {
        const std::int64_t m = t - stream_start[f] - r;
        if (m < 0 || m >= t_dim) continue;
        injected_tag[r] = static_cast<std::int32_t>(f);
        const std::int64_t row = row_base(f) + r;
        if (row < sr) {
          injected[r] = x[m * sr + row];
          ++run.ifmap_reads;
        }
      }
    }

    // Every PE: take the input from the left and the partial sum from above,
    // multiply by the weight of the input's fold, pass both on.
    for (int r = 0; r < R; ++r) {
      float* in_next = input.next.data() + static_cast<std::size_t>(r) * C;
      const float* in_now = input.now.data() + static_cast<std::size_t>(r) * C;
      std::int32_t* tag_next = tag.next.data() + static_cast<std::size_t>(r) * C;
      const std::int32_t* tag_now = tag.now.data() + static_cast<std::size_t>(r) * C;
      float* sum_next = psum.next.data() + static_cast<std::size_t>(r) * C;
      const float* sum_above = r > 0 ? psum.now.data() + static_cast<std::size_t>(r - 1) * C : nullptr;
      const float* w0 = bank0.data() + static_cast<std::size_t>(r) * C;
      const float* w1 = bank1.data() + static_cast<std::size_t>(r) * C;
      in_next[0] = injected[r];
      tag_next[0] = injected_tag[r];
      for (int c = 1; c < C; ++c) {
        in_next[c] = in_now[c - 1];
        tag_next[c] = tag_now[c - 1];
      }
      if (sum_above != nullptr) {
        for (int c = 0; c < C; ++c) sum_next[c] = sum_above[c] + ((tag_next[c] & 1) ? w1[c] : w0[c]) * in_next[c];
      } else {
        for (int c = 0; c < C; ++c) sum_next[c] = ((tag_next[c] & 1) ? w1[c] : w0[c]) * in_next[c];
      }
    }

    // Bottom edge: finished sums go to the output accumulators.
    const std::size_t bottom = static_cast<std::size_t>(R - 1) * C;
    for (int c = 0; c < C; ++c) {
      const std::int32_t f = tag.next[bottom + c];
      if (f == kBubble) continue;
      const std::int64_t m = t - c - stream_start[f] - (R - 1);
      const std::int64_t column = col_base(f) + c;
      if (column < sc) {
        run.output[m * sc + column] += psum.next[bottom + c];
        ++run.ofmap_writes;
      }
      if (++captured[f] == outputs_per_fold) ++folds_done;
    }

    // Weight load chains: column c of fold f shifts during [L+c, L+c+R) and
    // latches into bank f%2 at the end of its last shift.
    while (first_loading < next_load && t >= load_start[first_loading] + C + R - 1) ++first_loading;
    for (std::int64_t f = first_loading; f < next_load; ++f) {
      const std::int64_t first = std::max<std::int64_t>(0, t - load_start[f] - R + 1);
      const std::int64_t last = std::min<std::int64_t>(C - 1, t - load_start[f]);
      for (std::int64_t c = first; c <= last; ++c) {
        const std::int64_t step = t - load_start[f] - c;  // 0 .. R-1
        for (int r = R - 1; r > 0; --r) chain[r * C + c] = chain[(r - 1) * C + c];
        const std::int64_t row = row_base(f) + (R - 1 - step);
        const std::int64_t column = col_base(f) + c;
        const bool real = row < sr && column < sc;
        chain[c] = real ? w[row * sc + column] : 0.0f;
        run.filter_reads += real ? 1 : 0;
        if (step == R - 1) {
          std::vector<float>& bank = (f & 1) ? bank1 : bank0;
          for (int r = 0; r < R; ++r) bank[r * C + c] = chain[r * C + c];
        }
      }
    }

    input.advance();
    tag.advance();
    psum.advance();
    ++t;
  }
  run.cycles = t;
  run.pe_cycles = t * static_cast<std::int64_t>(pes);
  run.useful_macs = sr * sc * t_dim;
  return run;
}

SystolicRun SystolicArray::run_output_stationary(const std::vector<float>& a, const std::vector<float>& b,
                                                 std::int64_t m_dim, std::int64_t n_dim, std::int64_t k_dim) const {
  const int R = rows_, C = columns_;
  const std::size_t pes = static_cast<std::size_t>(R) * C;
  const std::int64_t row_folds = ceil_div(m_dim, R), column_folds = ceil_div(n_dim, C);
  const std::int64_t folds = row_folds * column_folds;
  const bool scalesim = convention_ == TimingConvention::kScaleSim;
  auto row_base = [&](std::int64_t f) { return (f / column_folds) * R; };
  auto col_base = [&](std::int64_t f) { return (f % column_folds) * C; };

  RegisterPlane<float> left(pes, 0.0f);           // A values, move right
  RegisterPlane<std::int32_t> tag(pes, kBubble);  // fold of those values
  RegisterPlane<float> top(pes, 0.0f);            // B values, move down
  std::vector<float> acc0(pes, 0.0f), acc1(pes, 0.0f);  // double-buffered accumulators
  std::vector<float> drain(pes, 0.0f);            // output path, shifts down a column
  std::vector<std::int64_t> drain_fold(C, kNotYet), drain_latched_at(C, kNotYet);

  std::vector<std::int64_t> stream_start(folds, kNotYet);
  std::int64_t next_stream = 0, folds_done = 0, columns_drained = 0;
  std::int64_t first_live = 0;  // oldest fold still streaming or finishing
  std::int64_t stream_free_at = 0;

  SystolicRun run;
  run.folds = folds;
  run.output.assign(m_dim * n_dim, 0.0f);
  std::vector<float> from_left(R), from_top(C);
  std::vector<std::int32_t> left_tag(R);

  auto write_output = [&](std::int64_t f, std::int64_t r, std::int64_t c, float value) {
    const std::int64_t row = row_base(f) + r, column = col_base(f) + c;
    if (row < m_dim && column < n_dim) {
      run.output[row * n_dim + column] = value;
      ++run.ofmap_writes;
    }
  };

  std::int64_t t = 0;
  const std::int64_t drains_needed = scalesim ? 0 : folds * C;
  while (folds_done < folds || columns_drained < drains_needed) {
    if (next_stream < folds && t >= stream_free_at) {
      stream_start[next_stream] = t;
      // kTpu: inputs stream back to back, but a column's drain path takes R
      // cycles per fold. kScaleSim: the next fold waits for this one to end.
      stream_free_at = scalesim ? std::numeric_limits<std::int64_t>::max() : t + std::max<std::int64_t>(k_dim, R);
      ++next_stream;
    }
    for (int r = 0; r < R; ++r) {
      from_left[r] = 0.0f;
      left_tag[r] = kBubble;
    }
    std::fill(from_top.begin(), from_top.end(), 0.0f);
    while (first_live < next_stream && t > stream_start[first_live] + k_dim + R + C) ++first_live;
    for (std::int64_t f = first_live; f < next_stream; ++f) {
      for (int r = 0; r < R; ++r) {
        const std::int64_t k = t - stream_start[f] - r;
        if (k < 0 || k >= k_dim) continue;
        left_tag[r] = static_cast<std::int32_t>(f);
        const std::int64_t row = row_base(f) + r;
        if (row < m_dim) {
          from_left[r] = a[row * k_dim + k];
          ++run.ifmap_reads;
        }
      }
      for (int c = 0; c < C; ++c) {
        const std::int64_t k = t - stream_start[f] - c;
        if (k < 0 || k >= k_dim) continue;
        const std::int64_t column = col_base(f) + c;
        if (column < n_dim) {
          from_top[c] = b[k * n_dim + column];
          ++run.filter_reads;
        }
      }
    }

    // Every PE: A from the left, B from above, multiply-accumulate into the
    // accumulator of the fold, pass both on.
    for (int r = 0; r < R; ++r) {
      const std::size_t row = static_cast<std::size_t>(r) * C;
      float* a_next = left.next.data() + row;
      const float* a_now = left.now.data() + row;
      std::int32_t* tag_next = tag.next.data() + row;
      const std::int32_t* tag_now = tag.now.data() + row;
      float* b_next = top.next.data() + row;
      const float* b_above = r > 0 ? top.now.data() + row - C : from_top.data();
      a_next[0] = from_left[r];
      tag_next[0] = left_tag[r];
      for (int c = 1; c < C; ++c) {
        a_next[c] = a_now[c - 1];
        tag_next[c] = tag_now[c - 1];
      }
      float* s0 = acc0.data() + row;
      float* s1 = acc1.data() + row;
      for (int c = 0; c < C; ++c) {
        b_next[c] = b_above[c];
        const float product = a_next[c] * b_next[c];
        const bool odd = (tag_next[c] & 1) != 0;
        s0[c] += odd ? 0.0f : product;
        s1[c] += odd ? product : 0.0f;
      }
    }

    if (scalesim) {
      // The fold ends with the last MAC of the bottom-right PE; SCALE-Sim
      // reads the outputs out at no cost and starts the next fold.
      const std::int64_t f = folds_done;
      if (f < next_stream && t == stream_start[f] + k_dim + R + C - 3) {
        std::vector<float>& acc = (f & 1) ? acc1 : acc0;
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) write_output(f, r, c, acc[r * C + c]);
        std::fill(acc.begin(), acc.end(), 0.0f);
        ++folds_done;
        stream_free_at = t + 1;
      }
    } else {
      // Drain paths: one output leaves the bottom of each draining column per cycle.
      for (int c = 0; c < C; ++c) {
        if (drain_fold[c] == kNotYet || t <= drain_latched_at[c]) continue;
        const std::int64_t step = t - drain_latched_at[c] - 1;  // 0 .. R-1
        write_output(drain_fold[c], R - 1 - step, c, drain[(R - 1) * C + c]);
        for (int r = R - 1; r > 0; --r) drain[r * C + c] = drain[(r - 1) * C + c];
        if (step == R - 1) {
          drain_fold[c] = kNotYet;
          ++columns_drained;
        }
      }
      // Column c of fold f is complete when its bottom PE did its last MAC;
      // its accumulators move to the drain path and are cleared for fold f+2.
      for (std::int64_t f = first_live; f < next_stream; ++f) {
        const std::int64_t c = t - (stream_start[f] + k_dim + R - 2);
        if (c < 0 || c >= C) continue;
        if (drain_fold[c] != kNotYet) throw std::logic_error("systolic array: drain path still busy");
        std::vector<float>& acc = (f & 1) ? acc1 : acc0;
        for (int r = 0; r < R; ++r) {
          drain[r * C + c] = acc[r * C + c];
          acc[r * C + c] = 0.0f;
        }
        drain_fold[c] = f;
        drain_latched_at[c] = t;
        if (c == C - 1) ++folds_done;
      }
    }

    left.advance();
    tag.advance();
    top.advance();
    ++t;
  }
  run.cycles = t;
  run.pe_cycles = t * static_cast<std::int64_t>(pes);
  run.useful_macs = m_dim * n_dim * k_dim;
  return run;
}

}  // namespace accel::tpu
