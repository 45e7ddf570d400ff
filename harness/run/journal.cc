// The append-only results journal and the run folder's plan.
#include "harness/run/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

namespace parity {
namespace {
namespace fs = std::filesystem;
}

StatusOr<std::unique_ptr<FolderLock>> FolderLock::Acquire(const std::string& dir, const std::string& command) {
  const fs::path path = fs::path(dir) / ".parity.lock";
  std::unique_ptr<FolderLock> lock(new FolderLock());
  lock->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock->fd_ < 0) return IoError("cannot open the lock file '", path.string(), "': ", std::strerror(errno));
  if (::flock(lock->fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error != EWOULDBLOCK) return IoError("cannot lock '", path.string(), "': ", std::strerror(error));
    char holder[256] = {};
    const ssize_t n = ::pread(lock->fd_, holder, sizeof holder - 1, 0);
    std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    return Status(StatusCode::kUnavailable,
                  StrCat("'", dir, "' is in use by another command writing it (", who.empty() ? "holder unknown" : who,
                         "); wait for it to end, or use another --out"));
  }
  const std::string holder = StrCat("pid ", ::getpid(), ", ", command, "\n");
  if (::ftruncate(lock->fd_, 0) != 0 || ::pwrite(lock->fd_, holder.data(), holder.size(), 0) < 0) {
    return IoError("cannot write the lock file '", path.string(), "': ", std::strerror(errno));
  }
  return lock;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the flock
}

StatusOr<std::unique_ptr<Journal>> Journal::Open(const std::string& dir, const nlohmann::json& settings, bool fresh) {
  std::unique_ptr<Journal> journal(new Journal());
  journal->dir_ = dir;
  journal->settings_ = settings;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create the output folder '", dir, "': ", ec.message());
  // Before anything is read or removed: a second run on a busy folder,
  // --fresh or not, must not touch the first one's journal.
  PARITY_ASSIGN_OR_RETURN(journal->lock_, FolderLock::Acquire(dir, "parity run"));
  const fs::path run_json = fs::path(dir) / "run.json", results = fs::path(dir) / "results.jsonl";
  if (fresh) {
    for (const char* name : {"run.json", "results.jsonl", "summary.json", "junit.xml", "report.md", "report.html"}) {
      fs::remove(fs::path(dir) / name, ec);
    }
  }
  if (fs::exists(run_json, ec)) {
    nlohmann::json previous;
    try {
      std::ifstream in(run_json);
      previous = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      return InvalidArgument(run_json.string(), ": not valid JSON (", e.what(), "); use --fresh to start over");
    }
    std::string differing;
    for (const auto& [key, value] : settings.items()) {
      if (!previous.contains("settings") || previous["settings"].value(key, nlohmann::json()) != value) {
        differing += (differing.empty() ? "" : ", ") + key;
      }
    }
    if (!differing.empty()) {
      return InvalidArgument(dir, " holds a run with other settings (", differing,
                             "); resume it with the same options, use another --out, or add --fresh");
    }
    journal->previous_plan_ = previous.value("planned", nlohmann::json::array());
    PARITY_ASSIGN_OR_RETURN(ResultsJournal journal_file, ReadResultsJournal(results.string(), /*drop_partial_tail=*/true));
    journal->previous_ = std::move(journal_file.results);
  } else if (fs::exists(results, ec) && fs::file_size(results, ec) > 0) {
    return InvalidArgument(dir, " holds results.jsonl but no run.json: not a folder parity run wrote; "
                           "use another --out, or add --fresh");
  }
  return journal;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

Status Journal::WritePlan(const nlohmann::json& planned) {
  nlohmann::json run = {{"settings", settings_}, {"planned", planned}};
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((fs::path(dir_) / "run.json").string(), DumpJson(run, 1) + "\n"));
  // The journal opens only once run.json is there, so a run killed before
  // its first case leaves a folder that resumes.
  if (fd_ < 0) {
    const fs::path results = fs::path(dir_) / "results.jsonl";
    fd_ = ::open(results.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) return IoError("cannot open '", results.string(), "': ", std::strerror(errno));
  }
  return Status::Ok();
}

Status Journal::Append(const CaseResult& result) {
  if (fd_ < 0) return Status(StatusCode::kInternal, "the journal is appended to before its plan was written");
  const std::string line = ResultLine(result);
  std::lock_guard<std::mutex> lock(mutex_);
  // One write per line: O_APPEND makes it land whole after every earlier one.
  const ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    return IoError("cannot append to ", dir_, "/results.jsonl: ", n < 0 ? std::strerror(errno) : "short write");
  }
  return Status::Ok();
}

}  // namespace parity
