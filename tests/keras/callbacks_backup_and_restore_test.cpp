// BackupAndRestore: resume after a failure in-process, and the check:
// a training process SIGKILLed mid-epoch and restarted ends with bitwise the
// weights of an uninterrupted run (tests/keras/workers/backup_and_restore_worker.cpp).
#include <accel/error.hpp>
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/saving/checkpoint.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "saving_test_support.hpp"

namespace accel::keras {
namespace {

using testing::read_text;
using testing::TemporaryFolder;

// Fails fit (as a crash would) at `epoch`, `batch`.
class FailAt final : public Callback {
 public:
  FailAt(int epoch, int64_t batch) : epoch_(epoch), batch_(batch) {}
  void on_epoch_begin(int epoch, const Logs&) override { current_epoch_ = epoch; }
  void on_train_batch_begin(int64_t batch, const Logs&) override {
    if (current_epoch_ == epoch_ && batch == batch_) throw InternalError("simulated crash");
  }

 private:
  int epoch_;
  int64_t batch_;
  int current_epoch_ = 0;
};

// Records (epoch, batch) of every trained batch.
class BatchRecorder final : public Callback {
 public:
  void on_epoch_begin(int epoch, const Logs&) override { epoch_ = epoch; }
  void on_train_batch_begin(int64_t batch, const Logs&) override { batches.emplace_back(epoch_, batch); }
  std::vector<std::pair<int, int64_t>> batches;

 private:
  int epoch_ = 0;
};

FitOptions options_with(std::vector<CallbackPointer> callbacks) {
  return {.epochs = 3, .batch_size = 8, .verbose = 0, .callbacks = std::move(callbacks), .shuffle = true, .seed = 99};
}

std::vector<std::vector<float>> uninterrupted_weights() {
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  model->fit(data.x, data.y, options_with({}));
  return testing::weight_values(*model);
}

TEST(BackupAndRestore, DeletesTheBackupWhenTrainingEndsNormally) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  auto backup = std::make_shared<BackupAndRestore>(folder.file("backup"), BackupAndRestoreOptions{.save_freq = 2});
  model->fit(data.x, data.y, options_with({backup}));
  EXPECT_FALSE(std::filesystem::exists(backup->checkpoint_path()));
  EXPECT_FALSE(std::filesystem::exists(folder.file("backup")));
  EXPECT_EQ(testing::weight_values(*model), uninterrupted_weights()) << "backups must not change training";
}

TEST(BackupAndRestore, KeepsTheBackupWhenAskedTo) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  auto backup = std::make_shared<BackupAndRestore>(folder.file("backup"), BackupAndRestoreOptions{.delete_checkpoint = false});
  model->fit(data.x, data.y, options_with({backup}));
  const auto metadata = saving::read_safetensors_file(backup->checkpoint_path()).metadata;
  EXPECT_EQ(metadata.at("resume_epoch"), "3");
  EXPECT_EQ(metadata.at("resume_step"), "0");
}

// Fails at (fail_epoch, fail_batch), then fits again with a fresh model.
struct ResumedRun {
  std::vector<std::vector<float>> weights;
  std::vector<std::pair<int, int64_t>> resumed_batches;
  std::vector<int> history_epochs;
};
ResumedRun fail_then_resume(const std::string& backup_dir, BackupAndRestoreOptions backup_options, int fail_epoch,
                            int64_t fail_batch) {
  const auto data = testing::toy_data();
  {
    auto model = testing::toy_classifier();
    auto backup = std::make_shared<BackupAndRestore>(backup_dir, backup_options);
    EXPECT_THROW(model->fit(data.x, data.y, options_with({backup, std::make_shared<FailAt>(fail_epoch, fail_batch)})),
                 InternalError);
  }
  auto model = testing::toy_classifier();
  auto recorder = std::make_shared<BatchRecorder>();
  const History history =
      model->fit(data.x, data.y, options_with({std::make_shared<BackupAndRestore>(backup_dir, backup_options), recorder}));
  return {testing::weight_values(*model), recorder->batches, history.epoch};
}

TEST(BackupAndRestore, ResumesAtTheEpochAfterTheLastEpochBackup) {
  TemporaryFolder folder;
  // 48 samples / 8 = 6 batches per epoch; the crash at epoch 1, batch 3.
  const ResumedRun run = fail_then_resume(folder.file("backup"), {}, 1, 3);
  EXPECT_EQ(run.resumed_batches.front(), (std::pair<int, int64_t>{1, 0}));
  EXPECT_EQ(run.resumed_batches.size(), 12u);
  EXPECT_EQ(run.history_epochs, (std::vector<int>{1, 2}));
  EXPECT_EQ(run.weights, uninterrupted_weights());
}

TEST(BackupAndRestore, ResumesMidEpochAtTheStepAfterTheLastStepBackup) {
  TemporaryFolder folder;
  // save_freq 2: backups after batches 2 and 4 of each epoch (+ epoch ends);
  // the crash before epoch 1's batch 5 resumes after 4 batches of epoch 1.
  const ResumedRun run = fail_then_resume(folder.file("backup"), {.save_freq = 2}, 1, 5);
  EXPECT_EQ(run.resumed_batches.front(), (std::pair<int, int64_t>{1, 4}));
  EXPECT_EQ(run.resumed_batches.size(), 2u + 6u);
  EXPECT_EQ(run.weights, uninterrupted_weights()) << "the same batches in the same order, bitwise";
}

TEST(BackupAndRestore, ABackupOfAnotherModelIsAnError) {
  TemporaryFolder folder;
  const auto data = testing::toy_data();
  {
    auto model = testing::toy_classifier();
    auto backup = std::make_shared<BackupAndRestore>(folder.file("backup"));
    EXPECT_THROW(model->fit(data.x, data.y, options_with({backup, std::make_shared<FailAt>(1, 0)})), InternalError);
  }
  clear_session();
  Sequential other({std::make_shared<Dense>(5)});
  other.build({kUnknownDim, testing::kToyFeatures});
  other.compile("adam", "mse");
  EXPECT_THROW(other.fit(data.x, data.x, options_with({std::make_shared<BackupAndRestore>(folder.file("backup"))})),
               InvalidArgumentError);
}

// --- Backups that do not fit this fit, and a folder in use.

// A backup in `backup_dir` that says to resume at (epoch, step), as a damaged
// file or one from another fit would.
void write_backup_at(const std::string& backup_dir, const std::string& epoch, const std::string& step) {
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  model->fit(data.x, data.y, {.epochs = 1, .batch_size = 8, .verbose = 0});
  std::filesystem::create_directories(backup_dir);
  saving::save_checkpoint(*model, backup_dir + "/checkpoint.safetensors",
                          {.include_optimizer = true, .metadata = {{"resume_epoch", epoch}, {"resume_step", step}}});
}

// The message fit's error gives for a backup at (epoch, step); "" when fit ran.
std::string resume_error(const std::string& epoch, const std::string& step) {
  TemporaryFolder folder;
  const std::string backup_dir = folder.file("backup");
  write_backup_at(backup_dir, epoch, step);
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  const auto started = std::chrono::steady_clock::now();
  try {
    model->fit(data.x, data.y, options_with({std::make_shared<BackupAndRestore>(backup_dir)}));
  } catch (const InvalidArgumentError& error) {
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10)) << "refused, but only after replaying";
    EXPECT_NE(std::string(error.what()).find(backup_dir + "/checkpoint.safetensors"), std::string::npos)
        << "the message must name the file: " << error.what();
    EXPECT_TRUE(std::filesystem::exists(backup_dir + "/checkpoint.safetensors")) << "a refused backup must be kept";
    return error.what();
  }
  return "";
}

TEST(BackupAndRestore, AResumeEpochPastThisFitsEpochsIsRefused) {
  // 3 epochs of 6 steps (options_with): epoch 3 step 0 (training finished) is the last valid position.
  EXPECT_NE(resume_error("4", "0").find("past this fit's 3 epochs"), std::string::npos);
  EXPECT_NE(resume_error("100000000000", "0").find("past this fit's 3 epochs"), std::string::npos);
  EXPECT_NE(resume_error("2147483648", "0").find("2147483648"), std::string::npos) << "must not wrap to a negative epoch";
  EXPECT_NE(resume_error("3", "1").find("no epoch 4"), std::string::npos);
}

TEST(BackupAndRestore, AResumeStepPastTheEpochsLengthIsRefused) {
  EXPECT_NE(resume_error("1", "6").find("past the 6 steps of an epoch (expected 0..5)"), std::string::npos);
  EXPECT_NE(resume_error("0", "1000000000000").find("past the 6 steps"), std::string::npos);
}

TEST(BackupAndRestore, MalformedCountersAreRefusedWithTheFileNamed) {
  for (const char* bad : {"-1", "1e11", "", " 1", "0x10", "99999999999999999999"}) {
    EXPECT_NE(resume_error(bad, "0").find("no valid \"resume_epoch\""), std::string::npos) << bad;
    EXPECT_NE(resume_error("0", bad).find("no valid \"resume_step\""), std::string::npos) << bad;
  }
}

TEST(BackupAndRestore, TheLastValidPositionsResume) {
  EXPECT_EQ(resume_error("3", "0"), "") << "a finished fit's backup: nothing left to train";
  EXPECT_EQ(resume_error("2", "5"), "") << "the last step of the last epoch";
}

TEST(BackupAndRestore, AFolderInUseByAnotherRunFailsAtOnceAndIsLeftAlone) {
  TemporaryFolder folder;
  const std::string backup_dir = folder.file("backup");
  write_backup_at(backup_dir, "1", "2");
  const std::string before = read_text(backup_dir + "/checkpoint.safetensors");
  // Another run's lock (another open file description conflicts as another process's would).
  const int other = ::open(backup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(other, 0);
  ASSERT_EQ(::flock(other, LOCK_EX | LOCK_NB), 0);
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  try {
    model->fit(data.x, data.y, options_with({std::make_shared<BackupAndRestore>(backup_dir)}));
    ADD_FAILURE() << "fit ran on a folder another run holds";
  } catch (const FailedPreconditionError& error) {
    EXPECT_NE(std::string(error.what()).find("'" + backup_dir + "' is in use by another run"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(read_text(backup_dir + "/checkpoint.safetensors"), before) << "the other run's backup was touched";
  ::close(other);
  // Once the other run is gone, this one resumes from its backup.
  auto recorder = std::make_shared<BatchRecorder>();
  model->fit(data.x, data.y, options_with({std::make_shared<BackupAndRestore>(backup_dir), recorder}));
  EXPECT_EQ(recorder->batches.front(), (std::pair<int, int64_t>{1, 2}));
}

TEST(BackupAndRestore, TheLockIsHeldOnlyWhileFitRuns) {
  TemporaryFolder folder;
  const std::string backup_dir = folder.file("backup");
  const auto data = testing::toy_data();
  auto backup = std::make_shared<BackupAndRestore>(backup_dir, BackupAndRestoreOptions{.delete_checkpoint = false});
  auto model = testing::toy_classifier();
  // A failed fit keeps the backup; the same callback fits again (it holds the lock already).
  EXPECT_THROW(model->fit(data.x, data.y, options_with({backup, std::make_shared<FailAt>(1, 3)})), InternalError);
  EXPECT_TRUE(std::filesystem::exists(backup->checkpoint_path())) << "a failed fit must keep its backup";
  model->fit(data.x, data.y, options_with({backup}));
  // After a normal end the folder is free for anyone.
  const int other = ::open(backup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(other, 0);
  EXPECT_EQ(::flock(other, LOCK_EX | LOCK_NB), 0) << "fit ended but the folder is still locked";
  ::close(other);
}

// --- The kill-and-resume check with a separate process.

// How the worker trains: eagerly or with compiled steps (whose first step
// after every start traces), on which device.
struct WorkerMode {
  const char* steps;   // "eager" or "compiled"
  const char* device;  // "/CPU:0", "/TPU:0"
};
thread_local WorkerMode worker_mode{"eager", "/CPU:0"};

void PrintTo(const WorkerMode& mode, std::ostream* out) { *out << mode.steps << " on " << mode.device; }

// Starts the worker in worker_mode; returns its pid.
pid_t start_worker(const std::string& backup_dir, const std::string& weights_path, int step_delay_ms) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string delay = std::to_string(step_delay_ms);
    ::execl(ACCEL_BACKUP_AND_RESTORE_WORKER, ACCEL_BACKUP_AND_RESTORE_WORKER, backup_dir.c_str(), weights_path.c_str(),
            delay.c_str(), worker_mode.steps, worker_mode.device, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// The kill tests below, eager and compiled, on the CPU and the emulated TPU.
class KilledAndResumed : public ::testing::TestWithParam<WorkerMode> {
 protected:
  void SetUp() override { worker_mode = GetParam(); }
  void TearDown() override { worker_mode = {"eager", "/CPU:0"}; }
};

int wait_for_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// The backup's position, or nullopt while there is none.
std::optional<std::pair<std::string, std::string>> backup_position(const std::string& path) {
  try {
    const auto metadata = saving::read_safetensors_file(path).metadata;
    return std::pair{metadata.at("resume_epoch"), metadata.at("resume_step")};
  } catch (const NotFoundError&) {
    return std::nullopt;
  }
}

TEST_P(KilledAndResumed, ProcessKilledMidEpochResumesToBitwiseTheSameWeights) {
  TemporaryFolder folder;
  // Uninterrupted.
  const int clean_status = wait_for_exit(start_worker(folder.file("backup_a"), folder.file("a.safetensors"), 0));
  ASSERT_TRUE(WIFEXITED(clean_status) && WEXITSTATUS(clean_status) == 0) << "worker failed: " << clean_status;
  ASSERT_EQ(read_text(folder.file("a.safetensors.start")), "0 0\n");

  // Killed once a mid-epoch backup of the second epoch exists (12 batches
  // per epoch, backups after batches 5 and 10 and at epoch ends).
  const std::string backup_dir = folder.file("backup_b");
  const pid_t victim = start_worker(backup_dir, folder.file("b.safetensors"), 20);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::optional<std::pair<std::string, std::string>> position;
  while (std::chrono::steady_clock::now() < deadline) {
    position = backup_position(backup_dir + "/checkpoint.safetensors");
    if (position && position->first == "1" && position->second != "0") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(victim, SIGKILL);
  const int killed_status = wait_for_exit(victim);
  ASSERT_TRUE(WIFSIGNALED(killed_status)) << "the worker finished before it could be killed";
  ASSERT_TRUE(position && position->first == "1" && position->second != "0");
  EXPECT_FALSE(std::filesystem::exists(folder.file("b.safetensors")));

  // Restarted: resumes from the backup and finishes.
  const int resumed_status = wait_for_exit(start_worker(backup_dir, folder.file("b.safetensors"), 0));
  ASSERT_TRUE(WIFEXITED(resumed_status) && WEXITSTATUS(resumed_status) == 0) << "worker failed: " << resumed_status;
  const std::string start = read_text(folder.file("b.safetensors.start"));
  EXPECT_NE(start, "0 0\n") << "the restarted run trained from scratch";
  EXPECT_EQ(start.substr(0, 2), "1 ") << start;
  EXPECT_EQ(read_text(folder.file("a.safetensors")), read_text(folder.file("b.safetensors")))
      << "final weights differ between the uninterrupted and the killed-and-resumed run";
  EXPECT_FALSE(std::filesystem::exists(backup_dir + "/checkpoint.safetensors"));
}

// SIGKILL at random moments, several times in a row, each restart resuming
// from whatever backup the last one left (or none, when the kill came before
// the first save): the weights at the end are bitwise those of an
// uninterrupted run. The seed is printed so that a failure can be replayed.
TEST_P(KilledAndResumed, KilledAtRandomMomentsAndResumedEndsWithTheSameWeights) {
  TemporaryFolder folder;
  const int clean_status = wait_for_exit(start_worker(folder.file("backup_a"), folder.file("a.safetensors"), 0));
  ASSERT_TRUE(WIFEXITED(clean_status) && WEXITSTATUS(clean_status) == 0) << "worker failed: " << clean_status;

  const unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  SCOPED_TRACE("kill moments from seed " + std::to_string(seed));
  // A run is 3 epochs x 12 batches at 10 ms each, plus the process's start.
  std::uniform_int_distribution<int> kill_after_ms(20, 350);
  const std::string backup_dir = folder.file("backup_b");
  int kills = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const pid_t victim = start_worker(backup_dir, folder.file("b.safetensors"), 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms(random)));
    ::kill(victim, SIGKILL);
    const int status = wait_for_exit(victim);
    kills += WIFSIGNALED(status) ? 1 : 0;
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << "worker failed: " << status;
  }
  // The last run is left to finish.
  const int final_status = wait_for_exit(start_worker(backup_dir, folder.file("b.safetensors"), 0));
  ASSERT_TRUE(WIFEXITED(final_status) && WEXITSTATUS(final_status) == 0) << "worker failed: " << final_status;
  EXPECT_GT(kills, 0) << "no kill landed while a worker was training";
  EXPECT_EQ(read_text(folder.file("a.safetensors")), read_text(folder.file("b.safetensors")))
      << "final weights differ after " << kills << " kills";
  EXPECT_FALSE(std::filesystem::exists(backup_dir + "/checkpoint.safetensors"));
}

// Compiled: the restarted run's first step traces mid-epoch, where the
// uninterrupted run replayed; both must compute with the one program.
INSTANTIATE_TEST_SUITE_P(Modes, KilledAndResumed,
                         ::testing::Values(WorkerMode{"eager", "/CPU:0"}, WorkerMode{"compiled", "/CPU:0"},
                                           WorkerMode{"compiled", "/TPU:0"}),
                         [](const ::testing::TestParamInfo<WorkerMode>& info) {
                           return std::string(info.param.steps) + (std::string(info.param.device) == "/TPU:0" ? "Tpu" : "Cpu");
                         });

}  // namespace
}  // namespace accel::keras
