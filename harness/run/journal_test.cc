// The run folder's lock and journal: a folder another command is writing is
// refused before anything in it is read or removed.
#include "harness/run/journal.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace parity {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(FolderLockTest, ASecondHolderIsRefusedWithTheFirstOnesPid) {
  const fs::path dir = FreshDir("parity_lock");
  StatusOr<std::unique_ptr<FolderLock>> first = FolderLock::Acquire(dir.string(), "parity run");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  StatusOr<std::unique_ptr<FolderLock>> second = FolderLock::Acquire(dir.string(), "parity eval");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use by another command writing it (pid " + std::to_string(::getpid()) +
                                           ", parity run)"),
            std::string::npos)
      << second.status().message();
  first->reset();
  EXPECT_TRUE(FolderLock::Acquire(dir.string(), "parity eval").ok());
}

TEST(JournalTest, FreshOnABusyFolderRemovesNothing) {
  const fs::path dir = FreshDir("parity_journal_busy");
  const nlohmann::json settings = {{"adapter", "reference"}};
  StatusOr<std::unique_ptr<Journal>> first = Journal::Open(dir.string(), settings, /*fresh=*/false);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE((*first)->WritePlan(nlohmann::json::array({{{"case", "a"}, {"suite", "s"}, {"dir", "/s/a"}}})).ok());
  CaseResult r;
  r.name = "a", r.suite = "s", r.dir = "/s/a", r.state = CaseState::kPass;
  ASSERT_TRUE((*first)->Append(r).ok());
  StatusOr<std::unique_ptr<Journal>> second = Journal::Open(dir.string(), settings, /*fresh=*/true);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(fs::exists(dir / "run.json"));
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_NE(line.find("\"a\""), std::string::npos);
}

}  // namespace
}  // namespace parity
