// parity-worker ADAPTER.so: hosts one native adapter in its own process and
// speaks the worker protocol (spec/protocol/README.md) on stdin and stdout.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>

#include "harness/worker/adapter_host.h"

int main(int argc, char** argv) {
  using namespace parity::worker;
  if (argc != 2 || std::strncmp(argv[1], "-", 1) == 0) {
    std::fprintf(stderr,
                 "usage: parity-worker ADAPTER.so\n"
                 "Loads a native adapter (spec/abi/parity_adapter.h) and serves the worker protocol\n"
                 "(spec/protocol/README.md): requests on standard input, responses on standard output.\n");
    return kExitUsage;
  }
  // A harness that has gone away is a write error, not a SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  int protocol_in = -1;
  int protocol_out = -1;
  if (const parity::Status protect = ProtectStandardStreams(&protocol_in, &protocol_out); !protect.ok()) {
    std::fprintf(stderr, "parity-worker: %s\n", protect.ToString().c_str());
    return kExitProtocolBroken;
  }
  parity::StatusOr<std::unique_ptr<AdapterHost>> host = AdapterHost::Load(argv[1]);
  if (!host.ok()) {
    std::fprintf(stderr, "parity-worker: %s\n", host.status().ToString().c_str());
    std::fflush(stderr);
    _exit(kExitLoadFailed);
  }
  const int code = (*host)->Serve(protocol_in, protocol_out);
  // _exit, not exit: every session is released by now, and the adapter's
  // static destructors (GPU runtimes' in particular) must not turn a clean
  // shutdown into a crash after the answer was sent.
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}
