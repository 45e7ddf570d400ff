// Threads inside one operator: ParallelFor runs the tasks of a kernel on the
// calling thread and the process's compute pool (spec/reference.md,
// "Threads").
//
// Determinism: a kernel splits its work into tasks by the problem's shape
// only (never by the thread count), and each task writes output elements no
// other task writes, summing in an order fixed by the task alone. Which
// thread runs a task then changes nothing, so results are bit-identical for
// every thread count and every run.
//
// Thread safety: ParallelFor may be called from several threads at once
// (cases run side by side) and from inside a task (a nested call lends the
// calling thread to its own tasks, so it always progresses).
#pragma once

#include <cstdint>
#include <functional>

namespace parity {

// Runs task(i) for every i in [0, count), each exactly once, and returns when
// all have finished. An exception thrown by a task (std::bad_alloc) is
// rethrown here after the other tasks have finished.
void ParallelFor(int64_t count, const std::function<void(int64_t)>& task);

// The number of threads a ParallelFor may use, the caller's included
// (`--threads`). 0 or less: one per core (std::thread::hardware_concurrency).
// Resizing waits for the calls in progress to finish.
void SetThreadCount(int threads);
int ThreadCount();

}  // namespace parity
