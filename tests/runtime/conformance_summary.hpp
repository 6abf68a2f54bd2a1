// The conformance suite's closing report. Each case records which primitive ops
// it ran on the device under test and whether each ran there natively or fell
// back to the CPU plugin; at the end the suite prints one table per device:
// ops run natively, ops that fell back to the CPU, ops that failed (an op of a
// case that failed on that device). A plugin author reads it to see what the
// backend really covers, not only that the suite passed.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/op_observer.hpp"

namespace accel::conformance {

struct OpRun {
  int32_t op;         // an AccelOp
  AccelDType dtype;   // the dtype the device was asked to support (the op's principal dtype)
  bool fell_back;     // ran on the CPU plugin because the device lacks it
};

// Records the ops run on this thread while it lives (the device-side half of a
// case). Fallback is told by the runtime's fallback counter moving across the op.
class OpRecorder : public detail::OpObserver {
 public:
  OpRecorder();
  ~OpRecorder() override;
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  void on_op_executed(const detail::ExecutedOp& op) override;
  // Stops recording (the destructor does too): the comparison that follows runs ops of its own.
  void stop();
  const std::vector<OpRun>& runs() const { return runs_; }

 private:
  std::vector<OpRun> runs_;
  uint64_t fallbacks_seen_;
  bool recording_ = true;
};

enum class CaseResult { kPassed, kFailed, kSkipped };

struct CaseOutcome {
  std::string device;  // full logical device name
  std::string case_name;
  std::vector<OpRun> runs;
  CaseResult result = CaseResult::kPassed;
};

void record_case(CaseOutcome outcome);

// The tables for every device with a recorded case, in the order devices were
// first seen; empty when no case ran (e.g. --gtest_list_tests).
std::string summary_tables();

}  // namespace accel::conformance
