// Feeds the worker protocol (spec/protocol/parity_worker.proto) to both of
// its ends. The worker side decodes Requests with its own hand-written codec
// (harness/worker/protocol_codec.h), which no protobuf library guards; the
// harness side decodes Responses from a worker that may be a vendor's buggy
// backend, then turns their output values into reference values and
// compares them, as case_runner.cc does. A garbled frame on either side must
// be a status, never a crash.
//
// Input: one byte choosing the end (modulo 4), then the bytes:
//   0: a serialized Request, to ParseRequest;
//   1: a stream of length-prefixed frames, to ReadRawFrame then ParseRequest;
//   2: a serialized Response, to the harness's handling of a response;
//   3: a stream of frames, to protocol::ReadFrame then the same handling.
// Streams are read from a memfd, so that no pipe capacity bounds them.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_util.h"
#include "harness/compare.h"
#include "harness/protocol/framing.h"
#include "harness/run/case_runner.h"
#include "harness/run/variant_check.h"
#include "harness/worker/protocol_codec.h"
#include "parity_worker.pb.h"

namespace {

const parity::TolerancePolicy* Policy() {
  static const parity::TolerancePolicy* const policy = [] {
    parity::StatusOr<parity::TolerancePolicy> loaded =
        parity::TolerancePolicy::Load(std::string(PARITY_SOURCE_DIR) + "/spec/tolerance.json");
    if (!loaded.ok()) {
      std::fprintf(stderr, "protocol_fuzzer: %s\n", loaded.status().ToString().c_str());
      std::abort();
    }
    return new parity::TolerancePolicy(std::move(loaded).value());
  }();
  return policy;
}

// A file descriptor reading `bytes` from the start; -1 is never returned.
int StreamOf(std::string_view bytes) {
  const int fd = memfd_create("parity-fuzz-frames", 0);
  if (fd < 0) {
    std::perror("memfd_create");
    std::abort();
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      std::perror("write");
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

void WorkerReads(std::string_view bytes) {
  parity::worker::WireRequest request;
  if (!parity::worker::ParseRequest(bytes, &request).ok()) return;
  // The worker answers every request with a response it encodes itself.
  parity::worker::WireResponse response;
  response.status.emplace(parity::worker::WireCode::kInvalidArgument, request.model.substr(0, 16));
  (void)parity::worker::SerializeResponse(response);
}

void WorkerReadsFrames(std::string_view stream) {
  const int fd = StreamOf(stream);
  std::string payload;
  for (int frames = 0; frames < 16 && parity::worker::ReadRawFrame(fd, &payload).ok(); ++frames) {
    WorkerReads(payload);
  }
  close(fd);
}

// What case_runner.cc does with a worker's answer: a session's variant
// report checked against the model's entries, and run outputs turned into
// values and compared (here with one another) under the tolerance policy.
void HarnessHandles(const parity::protocol::Response& response) {
  if (response.has_session()) {
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : response.session().variants()) variants.push_back({{"entry", v.entry()}, {"chosen", v.chosen()}});
    parity::StatusOr<std::vector<std::string>> selected = parity::ReportedSelection(variants, {});
    if (selected.ok()) (void)parity::SelectionMismatch({"portable"}, *selected, {});
  }
  if (!response.has_run()) return;
  std::vector<parity::Value> outputs;
  for (const auto& v : response.run().outputs()) {
    parity::StatusOr<parity::Value> value = parity::ValueFromProtocol(v);
    if (value.ok()) outputs.push_back(std::move(value).value());
  }
  for (size_t i = 0; i + 1 < outputs.size(); ++i) {
    const parity::Value& expected = outputs[i];
    const parity::DataType type = expected.is_tensor() ? expected.tensor().dtype() : parity::DataType::kFloat;
    const parity::Tolerance tolerance = Policy()->For("Add", type, parity::ShapeFacts{});
    (void)parity::CompareValues(expected, outputs[i + 1], tolerance);
    (void)parity::CompareValues(expected, expected, tolerance);
  }
}

void HarnessReads(std::string_view bytes) {
  parity::protocol::Response response;
  if (!response.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  HarnessHandles(response);
}

void HarnessReadsFrames(std::string_view stream) {
  const int fd = StreamOf(stream);
  for (int frames = 0; frames < 16; ++frames) {
    parity::protocol::Response response;
    if (!parity::protocol::ReadFrame(fd, &response, 1000).ok()) break;
    HarnessHandles(response);
  }
  close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::InitializeTarget();
  (void)Policy();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: WorkerReads(bytes); break;
    case 1: WorkerReadsFrames(bytes); break;
    case 2: HarnessReads(bytes); break;
    default: HarnessReadsFrames(bytes); break;
  }
  return 0;
}
