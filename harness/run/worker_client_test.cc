// The harness's worker client against fake workers that misbehave on
// purpose: each way a worker can fail must become the status the run maps
// to CRASH or TIMEOUT, promptly, with the worker gone.
#include "harness/run/worker_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace parity {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class WorkerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = (fs::temp_directory_path() / ("parity_worker_client_" + std::to_string(::getpid()) + ".log")).string();
    fs::remove(log_);
  }
  void TearDown() override { fs::remove(log_); }

  std::unique_ptr<WorkerProcess> StartShell(const std::string& script, int64_t memory_limit_kb = 0) {
    WorkerLaunch launch;
    launch.adapter = "fake";
    launch.argv = {"/bin/sh", "-c", script};
    launch.log_path = log_;
    launch.memory_limit_kb = memory_limit_kb;
    StatusOr<std::unique_ptr<WorkerProcess>> worker = WorkerProcess::Start(launch);
    EXPECT_TRUE(worker.ok()) << worker.status().ToString();
    return worker.ok() ? std::move(worker).value() : nullptr;
  }

  static protocol::Request Hello() {
    protocol::Request request;
    request.mutable_hello()->set_protocol_version(1);
    return request;
  }

  std::string log_;
};

TEST_F(WorkerClientTest, AWorkerThatExitsIsUnavailableWithItsStatusAndLog) {
  auto worker = StartShell("echo 'adapter: cannot open the device' >&2; exit 5");
  ASSERT_NE(worker, nullptr);
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 5000);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(worker->alive());
  const std::string end = worker->EndDescription();
  EXPECT_NE(end.find("exited with status 5"), std::string::npos) << end;
  EXPECT_NE(end.find("cannot open the device"), std::string::npos) << end;
}

// The request is written after the worker is gone: the write fails with
// EPIPE, which must be an answer, not a SIGPIPE that ends the test (and a
// harness) with it.
TEST_F(WorkerClientTest, AWorkerGoneBeforeTheRequestIsUnavailableNotASignal) {
  auto worker = StartShell("exec 0<&-; echo 'adapter: gone early' >&2; exit 6");
  ASSERT_NE(worker, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 5000);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  const std::string end = worker->EndDescription();
  EXPECT_NE(end.find("exited with status 6"), std::string::npos) << end;
  // Written before the call began, and still the reason it ended.
  EXPECT_NE(end.find("gone early"), std::string::npos) << end;
}

// A worker killed with SIGKILL by someone else (the OOM killer, a user) is
// reported with that signal, never as killed by the harness.
TEST_F(WorkerClientTest, AWorkerKilledFromOutsideIsNotBlamedOnTheHarness) {
  auto worker = StartShell("kill -KILL $$");
  ASSERT_NE(worker, nullptr);
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 5000);
  ASSERT_FALSE(answer.ok());
  const std::string end = worker->EndDescription();
  EXPECT_NE(end.find("killed by signal 9"), std::string::npos) << end;
  EXPECT_EQ(end.find("killed by the harness"), std::string::npos) << end;
}

TEST_F(WorkerClientTest, AWorkerKilledByASignalIsNamed) {
  auto worker = StartShell("kill -SEGV $$");
  ASSERT_NE(worker, nullptr);
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 5000);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(worker->EndDescription().find("signal 11"), std::string::npos) << worker->EndDescription();
}

TEST_F(WorkerClientTest, AHangIsADeadlineAndTheWorkerIsKilled) {
  auto worker = StartShell("exec sleep 30");
  ASSERT_NE(worker, nullptr);
  const auto start = Clock::now();
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 300);
  EXPECT_EQ(answer.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_FALSE(worker->alive());
}

TEST_F(WorkerClientTest, AFrameThatStopsHalfWayIsAProtocolBreachNotAHang) {
  // Announces 0x3fffffff bytes (under the frame limit), sends three, stops.
  auto worker = StartShell("printf '\\377\\377\\377\\077abc'; exec sleep 30");
  ASSERT_NE(worker, nullptr);
  const auto start = Clock::now();
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 500);
  EXPECT_EQ(answer.status().code(), StatusCode::kIoError) << answer.status().ToString();
  EXPECT_NE(answer.status().message().find("stopped short"), std::string::npos) << answer.status().message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_FALSE(worker->alive());
}

TEST_F(WorkerClientTest, BytesThatAreNotAResponseAreAProtocolBreach) {
  auto worker = StartShell("printf '\\003\\000\\000\\000\\377\\377\\377'; exec sleep 30");
  ASSERT_NE(worker, nullptr);
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 2000);
  EXPECT_EQ(answer.status().code(), StatusCode::kIoError) << answer.status().ToString();
  EXPECT_FALSE(worker->alive());
}

TEST_F(WorkerClientTest, AnOversizedLengthIsRefusedWithoutAllocating) {
  auto worker = StartShell("printf '\\377\\377\\377\\377'; exec sleep 30");
  ASSERT_NE(worker, nullptr);
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 2000);
  EXPECT_EQ(answer.status().code(), StatusCode::kIoError);
  EXPECT_NE(answer.status().message().find("corrupt"), std::string::npos) << answer.status().message();
}

TEST_F(WorkerClientTest, PassingTheMemoryLimitDuringACallEndsIt) {
  const char* python = std::getenv("PARITY_PYTHON");
  const std::string interpreter = python && *python ? python : "python3";
  // The shell replaces itself with Python, which holds 300 MiB and never answers.
  auto worker = StartShell("exec " + interpreter +
                               " -c 'import time; x = bytearray(300 << 20); x[::4096] = b\"1\" * len(x[::4096]); "
                               "time.sleep(30)'",
                           /*memory_limit_kb=*/100 * 1024);
  ASSERT_NE(worker, nullptr);
  StatusOr<protocol::Response> answer = worker->Call(Hello(), 20000);
  EXPECT_EQ(answer.status().code(), StatusCode::kResourceExhausted) << answer.status().ToString();
  EXPECT_NE(answer.status().message().find("over the limit of 100 MiB"), std::string::npos);
  EXPECT_FALSE(worker->alive());
}

TEST_F(WorkerClientTest, AWorkerThatDiedWhileIdleIsSeenBeforeTheNextCall) {
  auto worker = StartShell("exit 0");
  ASSERT_NE(worker, nullptr);
  for (int i = 0; i < 100 && worker->CheckAlive(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(worker->CheckAlive());
}

// Every worker gets the larger per-thread malloc cache (spec/protocol/README.md,
// "Timings"); a GLIBC_TUNABLES the harness's environment sets is kept.
TEST_F(WorkerClientTest, AWorkerStartsWithTheMallocCacheSettingUnlessTheEnvironmentHasOne) {
  // The harness's own GLIBC_TUNABLES comes back however the test ends.
  struct Restore {
    const char* before = std::getenv("GLIBC_TUNABLES");
    std::string saved = before ? before : "";
    ~Restore() {
      if (before) {
        ::setenv("GLIBC_TUNABLES", saved.c_str(), 1);
      } else {
        ::unsetenv("GLIBC_TUNABLES");
      }
    }
  } restore;
  for (const char* harness_value : {static_cast<const char*>(nullptr), "glibc.malloc.tcache_count=3"}) {
    if (harness_value) {
      ::setenv("GLIBC_TUNABLES", harness_value, 1);
    } else {
      ::unsetenv("GLIBC_TUNABLES");
    }
    fs::remove(log_);
    auto worker = StartShell("echo \"tunables=[$GLIBC_TUNABLES]\" >&2; exit 3");
    ASSERT_NE(worker, nullptr);
    EXPECT_FALSE(worker->Call(Hello(), 5000).ok());
    const std::string end = worker->EndDescription();
    const std::string want = harness_value ? "tunables=[glibc.malloc.tcache_count=3]"
                                           : "tunables=[glibc.malloc.tcache_count=1024]";
    EXPECT_NE(end.find(want), std::string::npos) << end;
  }
}

TEST_F(WorkerClientTest, AProgramThatDoesNotExistIsRefusedAtStart) {
  WorkerLaunch launch;
  launch.adapter = "fake";
  launch.argv = {"/no/such/worker"};
  StatusOr<std::unique_ptr<WorkerProcess>> worker = WorkerProcess::Start(launch);
  ASSERT_FALSE(worker.ok());
  EXPECT_NE(worker.status().message().find("/no/such/worker"), std::string::npos);
}

}  // namespace
}  // namespace parity
