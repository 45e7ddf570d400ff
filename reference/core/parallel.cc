// The compute pool behind ParallelFor: ThreadCount() - 1 workers that take
// task indices from the calls in progress, which the calling threads also
// work through.
#include "reference/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace parity {
namespace {

// One ParallelFor call: its indices are handed out through `next`.
struct Call {
  const std::function<void(int64_t)>* task = nullptr;
  int64_t count = 0;
  std::atomic<int64_t> next{0};
  int64_t finished = 0;           // guarded by Pool::mutex
  int workers = 0;                // workers holding a pointer to it; guarded by Pool::mutex
  std::exception_ptr error;       // the first exception of a task; guarded by Pool::mutex
  std::condition_variable done;   // signalled when finished reaches count
};

int CoreCount() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

class Pool {
 public:
  ~Pool() { Stop(); }

  void Resize(int threads) {
    std::unique_lock<std::mutex> resize_lock(resize_mutex_);
    const int wanted = threads > 0 ? threads : CoreCount();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wanted == threads_ && static_cast<int>(workers_.size()) == wanted - 1) return;
    }
    Stop();
    std::unique_lock<std::mutex> lock(mutex_);
    threads_ = wanted;
    stopping_ = false;
    for (int i = 1; i < wanted; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }

  int threads() {
    std::unique_lock<std::mutex> lock(mutex_);
    return threads_;
  }

  void Run(int64_t count, const std::function<void(int64_t)>& task) {
    EnsureStarted();
    Call call;
    call.task = &task;
    call.count = count;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      calls_.push_back(&call);
    }
    work_ready_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    Work(call, lock);
    // A worker that picked the call may still be inside Work, even with no
    // index left for it: `call` must outlive every such worker.
    call.done.wait(lock, [&] { return call.finished == call.count && call.workers == 0; });
    calls_.erase(std::remove(calls_.begin(), calls_.end(), &call), calls_.end());
    if (call.error) std::rethrow_exception(call.error);
  }

 private:
  void EnsureStarted() {
    std::call_once(started_, [this] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (threads_ == 0) {
        threads_ = CoreCount();
        for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
      }
    });
  }

  // Runs indices of `call` until none is left to hand out; `lock` holds
  // mutex_ on entry and on return, not while tasks run.
  void Work(Call& call, std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    int64_t ran = 0;
    std::exception_ptr error;
    for (int64_t i = call.next.fetch_add(1); i < call.count; i = call.next.fetch_add(1)) {
      try {
        (*call.task)(i);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
      ++ran;
    }
    lock.lock();
    if (error && !call.error) call.error = error;
    call.finished += ran;
  }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      Call* call = nullptr;
      work_ready_.wait(lock, [&] {
        if (stopping_) return true;
        for (Call* c : calls_) {
          if (c->next.load() < c->count) {
            call = c;
            return true;
          }
        }
        return false;
      });
      if (stopping_) return;
      ++call->workers;
      Work(*call, lock);
      --call->workers;
      if (call->finished == call->count && call->workers == 0) call->done.notify_all();
    }
  }

  void Stop() {
    std::vector<std::thread> workers;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      stopping_ = true;
      workers.swap(workers_);
    }
    work_ready_.notify_all();
    for (std::thread& w : workers) w.join();
  }

  std::mutex resize_mutex_;  // one resize at a time
  std::once_flag started_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<Call*> calls_;  // calls in progress; guarded by mutex_
  std::vector<std::thread> workers_;
  int threads_ = 0;  // 0: not sized yet (one per core on first use)
  bool stopping_ = false;
};

Pool& ComputePool() {
  static Pool* pool = new Pool();  // never destroyed: workers may outlive static destructors
  return *pool;
}

}  // namespace

void ParallelFor(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  if (count == 1 || ComputePool().threads() == 1) {
    for (int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  ComputePool().Run(count, task);
}

void SetThreadCount(int threads) { ComputePool().Resize(threads); }

int ThreadCount() {
  const int threads = ComputePool().threads();
  return threads > 0 ? threads : CoreCount();
}

}  // namespace parity
