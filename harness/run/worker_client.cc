// Starting, calling and stopping worker processes.
#include "harness/run/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/protocol/framing.h"

extern char** environ;

namespace parity {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// PATH lookup done before fork: the child may only make async-signal-safe calls.
std::string ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return program;
}

// How often a call waiting for its answer looks at the worker's memory.
constexpr int64_t kMemoryPollMs = 100;
// How long a worker whose output reached end of file may take to exit by
// itself before the harness kills it.
constexpr int64_t kExitGraceMs = 500;
// How much of the end of a worker's log a CRASH message quotes.
constexpr int64_t kLogTailBytes = 1500;

// Every worker, whatever language it is written in, starts with glibc's
// per-thread cache of freed blocks holding up to 1,024 blocks of each size
// class instead of 7: a run of a small model allocates and frees a few
// hundred tensors and buffers of a few sizes, and past 7 each free and
// malloc took glibc's locked bins and consolidation (a fifth of a 73-node
// decoder's step; with this setting its step took 0.19 ms instead of 0.26).
// Only blocks up to 1,032 bytes are cached: at the very most 1,024 of each
// of the 64 sizes, about 34 MB per thread, where a run that frees a few
// hundred small blocks keeps a few hundred KB. A GLIBC_TUNABLES already in
// the environment is left as it is.
constexpr const char* kMallocTunables = "GLIBC_TUNABLES";
constexpr const char* kWorkerMallocTunables = "glibc.malloc.tcache_count=1024";

std::string SignalName(int signal) {
  const char* text = strsignal(signal);
  return StrCat("signal ", signal, " (", text ? text : "unknown", ")");
}

}  // namespace

StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(const WorkerLaunch& launch) {
  if (launch.argv.empty()) return InvalidArgument("adapter '", launch.adapter, "': no worker command");
  std::unique_ptr<WorkerProcess> worker(new WorkerProcess());
  worker->launch_ = launch;

  // Everything the child needs is prepared here, before fork.
  const std::string program = ResolveProgram(launch.argv[0]);
  if (::access(program.c_str(), X_OK) != 0) {
    return NotFound("adapter '", launch.adapter, "': cannot run '", launch.argv[0], "': ", std::strerror(errno));
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool overridden = false;
    for (const auto& [key, value] : launch.env) overridden |= entry.rfind(key + "=", 0) == 0;
    if (!overridden) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : launch.env) env_strings.push_back(key + "=" + value);
  const bool tunables_set = std::any_of(env_strings.begin(), env_strings.end(), [](const std::string& e) {
    return e.rfind(std::string(kMallocTunables) + "=", 0) == 0;
  });
  if (!tunables_set) env_strings.push_back(StrCat(kMallocTunables, "=", kWorkerMallocTunables));
  std::vector<char*> envp, argv;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = launch.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const int log_fd = ::open(launch.log_path.empty() ? "/dev/null" : launch.log_path.c_str(),
                            O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return IoError("cannot open the worker log '", launch.log_path, "': ", std::strerror(errno));
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], log_fd}) {
      if (fd >= 0) ::close(fd);
    }
  };
  // A worker that dies between two calls must show up as a write error, not
  // as a SIGPIPE that ends the harness (and every result it holds) with it.
  // Process-wide, once, for every user of WorkerProcess (tests included).
  static const bool sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipe_ignored;
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    close_all();
    return IoError("pipe: ", std::strerror(error));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    close_all();
    return IoError("fork: ", std::strerror(error));
  }
  if (pid == 0) {
    // A worker must not outlive the harness (a harness killed with SIGKILL
    // would otherwise leave hung workers behind). The signal follows the
    // thread that forks, so the run shuts each worker down in the thread
    // that started it (run_command.cc).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(log_fd, 2);
    ::signal(SIGPIPE, SIG_DFL);
    if (!launch.cwd.empty() && ::chdir(launch.cwd.c_str()) != 0) ::_exit(126);
    ::execve(program.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(log_fd);
  worker->pid_ = pid;
  worker->to_worker_ = in_pipe[1];
  worker->from_worker_ = out_pipe[0];
  return worker;
}

WorkerProcess::~WorkerProcess() {
  Kill();
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
}

int64_t WorkerProcess::ResidentKb() const {
  if (pid_ <= 0) return 0;
  std::ifstream statm("/proc/" + std::to_string(pid_) + "/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

void WorkerProcess::Reap(bool wait) {
  if (pid_ <= 0 || reaped_) return;
  const pid_t r = ::waitpid(pid_, &wait_status_, wait ? 0 : WNOHANG);
  if (r == pid_) reaped_ = true;
}

void WorkerProcess::ReapWithin(int64_t ms) {
  const auto until = Clock::now() + std::chrono::milliseconds(ms);
  while (pid_ > 0 && !reaped_ && Clock::now() < until) {
    Reap(false);
    if (!reaped_) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void WorkerProcess::Kill() {
  if (pid_ <= 0) return;
  // A worker that already ended (killed from outside, crashed) is reaped
  // first, so that its own end is what gets reported, not our SIGKILL.
  Reap(false);
  if (!reaped_) {
    killed_by_harness_ = true;
    ::kill(-pid_, SIGKILL);  // the worker's process group: it and anything it started
    ::kill(pid_, SIGKILL);
    Reap(true);
  }
  pid_ = -1;
}

StatusOr<protocol::Response> WorkerProcess::Call(const protocol::Request& request, int64_t deadline_ms) {
  if (pid_ <= 0) return Status(StatusCode::kUnavailable, "the worker is not running");
  if (Status sent = protocol::WriteFrame(to_worker_, request); !sent.ok()) {
    // Too large to send: nothing was written, the worker is untouched.
    if (sent.code() == StatusCode::kResourceExhausted) return sent;
    Kill();
    return Status(StatusCode::kUnavailable, StrCat("the worker stopped reading: ", sent.message()));
  }
  // Wait for the first byte of the answer in short slices, watching the
  // worker's memory, then read the whole frame.
  const auto start = Clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  };
  for (;;) {
    int64_t slice = kMemoryPollMs;
    if (deadline_ms >= 0) {
      const int64_t left = deadline_ms - elapsed_ms();
      if (left <= 0) {
        Kill();
        return Status(StatusCode::kDeadlineExceeded, StrCat("no answer within ", deadline_ms / 1000.0, " s"));
      }
      slice = std::min(slice, left);
    }
    pollfd p{from_worker_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(slice));
    if (ready > 0) break;
    if (ready < 0 && errno != EINTR) return IoError("poll: ", std::strerror(errno));
    if (launch_.memory_limit_kb > 0) {
      const int64_t resident = ResidentKb();
      if (resident > launch_.memory_limit_kb) {
        Kill();
        return Status(StatusCode::kResourceExhausted,
                      StrCat("the worker's resident memory reached ", resident / 1024, " MiB, over the limit of ",
                             launch_.memory_limit_kb / 1024, " MiB"));
      }
    }
  }
  protocol::Response response;
  const int64_t left = deadline_ms >= 0 ? std::max<int64_t>(deadline_ms - elapsed_ms(), 1) : -1;
  Status read = protocol::ReadFrame(from_worker_, &response, left);
  if (!read.ok()) {
    // End of file usually means the worker is ending: give it a moment to
    // become reapable, so that a worker killed from outside is reported by
    // its own signal. Kill then collects the wait status of a worker that
    // ended, and ends one that closed its output but lives on.
    if (read.code() == StatusCode::kUnavailable) ReapWithin(kExitGraceMs);
    Kill();
    if (read.code() == StatusCode::kUnavailable) return Status(StatusCode::kUnavailable, "the worker ended");
    if (read.code() == StatusCode::kDeadlineExceeded) return read;
    return IoError("the worker broke the protocol: ", read.message());
  }
  // What the worker logs from here on belongs to whatever comes next: the
  // next call, or its end while idle, which a later description must show.
  std::error_code ec;
  const uintmax_t log_size = launch_.log_path.empty() ? 0 : fs::file_size(launch_.log_path, ec);
  if (!ec) log_offset_ = static_cast<int64_t>(log_size);
  return response;
}

std::string WorkerProcess::EndDescription() {
  std::string how;
  if (reaped_) {
    if (WIFSIGNALED(wait_status_) && WTERMSIG(wait_status_) == SIGKILL && killed_by_harness_) how = "killed by the harness";
    else if (WIFSIGNALED(wait_status_)) how = "killed by " + SignalName(WTERMSIG(wait_status_));
    else if (WIFEXITED(wait_status_)) how = StrCat("exited with status ", WEXITSTATUS(wait_status_));
  }
  if (how.empty()) how = "stopped";
  std::string tail;
  if (!launch_.log_path.empty()) {
    std::ifstream log(launch_.log_path, std::ios::binary);
    log.seekg(0, std::ios::end);
    const int64_t size = log.tellg();
    const int64_t from = std::max(log_offset_, size - kLogTailBytes);
    if (size > from) {
      log.seekg(from);
      tail.assign(static_cast<size_t>(size - from), '\0');
      log.read(tail.data(), static_cast<std::streamsize>(tail.size()));
      while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    }
  }
  return tail.empty() ? how : how + "; its log ends: " + tail;
}

bool WorkerProcess::CheckAlive() {
  if (pid_ <= 0) return false;
  Reap(false);
  if (reaped_) pid_ = -1;
  return pid_ > 0;
}

void WorkerProcess::Shutdown(int64_t grace_ms) {
  if (pid_ <= 0) return;
  protocol::Request request;
  request.mutable_shutdown();
  if (protocol::WriteFrame(to_worker_, request).ok()) {
    protocol::Response ignored;
    (void)protocol::ReadFrame(from_worker_, &ignored, grace_ms);
  }
  ReapWithin(grace_ms);
  Kill();
}

}  // namespace parity
