// Progress bar and plain progress lines.
#include "harness/run/progress.h"

#include <cstdio>

namespace parity {
namespace {
using Clock = std::chrono::steady_clock;
constexpr size_t kMessageWidth = 200;
}  // namespace

Progress::Progress(Mode mode, size_t total, size_t already_done)
    : mode_(mode), total_(total), done_(already_done), start_(Clock::now()), last_print_(Clock::now()) {}

std::string Progress::Counts() const {
  std::string counts;
  for (const auto& [state, n] : by_state_) counts += StrCat(" ", state, "=", n);
  return counts;
}

void Progress::DrawBar() {
  constexpr int kWidth = 30;
  const int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : kWidth;
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  std::printf("\r\033[K[%s%s] %zu/%zu%s %.0f s", std::string(filled, '#').c_str(),
              std::string(kWidth - filled, '.').c_str(), done_, total_, Counts().c_str(), seconds);
  std::fflush(stdout);
}

void Progress::Done(const CaseResult& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  ++by_state_[CaseStateName(r.state)];
  if (mode_ == Mode::kQuiet) return;
  const bool noteworthy = r.state != CaseState::kPass;
  std::string line;
  if (noteworthy) {
    std::string message = r.message.substr(0, kMessageWidth);
    for (char& c : message) c = c == '\n' ? ' ' : c;
    line = StrCat(CaseStateName(r.state), " ", r.name, message.empty() ? "" : ": ", message);
  }
  const auto now = Clock::now();
  if (mode_ == Mode::kBar) {
    if (noteworthy) std::printf("\r\033[K%s\n", line.c_str());
    if (noteworthy || now - last_print_ > std::chrono::milliseconds(100) || done_ == total_) {
      DrawBar();
      last_print_ = now;
    }
    return;
  }
  if (noteworthy) std::printf("[%5zu/%zu] %s\n", done_, total_, line.c_str());
  if (now - last_print_ > std::chrono::seconds(10)) {
    std::printf("progress: %zu/%zu cases (%.0f%%),%s, %.0f s\n", done_, total_, 100.0 * done_ / total_,
                Counts().c_str(), std::chrono::duration<double>(now - start_).count());
    last_print_ = now;
  }
  std::fflush(stdout);
}

void Progress::Note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (mode_ == Mode::kQuiet) return;
  std::printf(mode_ == Mode::kBar ? "\r\033[K%s\n" : "%s\n", line.c_str());
  if (mode_ == Mode::kBar) DrawBar();
  std::fflush(stdout);
}

void Progress::Finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (mode_ == Mode::kBar) {
    DrawBar();
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace parity
