#!/usr/bin/env bash
# Measures cblas_dgemm of Debian's OpenBLAS (pthread build) and BLIS on this
# machine, 1 thread and all cores, 1024^3 and 2048^3: the measurement behind
# the choice of OpenBLAS in spec/reference.md. Needs libopenblas-dev and
# libblis-dev (BLIS is not installed by ci/setup.sh: apt-get install
# libblis-dev first). Not part of the tests.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/dgemm.cc" <<'CC'
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
extern "C" void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                            double*, int);
extern "C" void SET_THREADS(THREAD_ARG);
int main(int argc, char** argv) {
  const int n = std::atoi(argv[1]), threads = std::atoi(argv[2]);
  SET_THREADS(threads);
  std::vector<double> a(size_t(n) * n), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = (i % 97) * 0.01 - 0.3, b[i] = (i % 89) * 0.013 - 0.5;
  auto once = [&] { cblas_dgemm(101, 111, 111, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n); };
  once();
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%-8s n=%d threads=%d  %.1f GFLOP/s\n", LABEL, n, threads, 2.0 * n * n * n / best / 1e9);
}
CC
lib=/usr/lib/x86_64-linux-gnu
g++ -O2 -DLABEL='"OpenBLAS"' -DSET_THREADS=openblas_set_num_threads -DTHREAD_ARG=int "$work/dgemm.cc" \
  -o "$work/openblas" "$lib/openblas-pthread/libopenblas.so.0"
g++ -O2 -DLABEL='"BLIS"' -DSET_THREADS=bli_thread_set_num_threads -DTHREAD_ARG=long "$work/dgemm.cc" \
  -o "$work/blis" "$lib/blis-pthread/libblis.so.4"
cores=$(nproc)
for n in 1024 2048; do
  for t in 1 "$cores"; do
    "$work/openblas" "$n" "$t"
    "$work/blis" "$n" "$t"
  done
done
