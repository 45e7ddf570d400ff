// Test-only helpers for the tests of parity-worker (header-only, included by
// *_test.cc alone): a worker process spoken to through pipes with the
// generated protocol classes, small models, values and requests.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/protocol/framing.h"
#include "harness/worker/protocol_codec.h"
#include "parity_worker.pb.h"

extern char** environ;

namespace parity::worker::test_util {

namespace fs = std::filesystem;
using protocol::Request;
using protocol::Response;

inline std::string BinaryDir() {
  if (const char* dir = std::getenv("PARITY_BINARY_DIR"); dir && *dir) return dir;
  return fs::read_symlink("/proc/self/exe").parent_path().string();
}

inline std::string AdapterPath(const std::string& name) {
  return BinaryDir() + "/adapters/libparity_adapter_" + name + ".so";
}

// One parity-worker process: requests go to its stdin, responses come from
// its stdout, and its stderr goes to a file the test can read.
class WorkerProcess {
 public:
  // `faults` becomes PARITY_FAULTS (unset when empty); `extra_env` adds
  // NAME=VALUE entries (PARITY_FAULTS_ABI is unset unless one names it).
  explicit WorkerProcess(const std::string& adapter, const std::string& faults = "",
                         const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "PARITY_FAULTS", 13) != 0) env.push_back(*e);
    }
    if (!faults.empty()) env.push_back("PARITY_FAULTS=" + faults);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string worker = BinaryDir() + "/parity-worker";
    std::string adapter_arg = adapter;
    char* argv[] = {worker.data(), adapter_arg.data(), nullptr};

    char stderr_template[] = "/tmp/parity_worker_test_stderr_XXXXXX";
    const int err_fd = mkstemp(stderr_template);
    stderr_path_ = stderr_template;
    int to_child[2];
    int from_child[2];
    if (err_fd < 0 || pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "cannot make pipes: " << std::strerror(errno);
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      // The child: only async-signal-safe calls until exec.
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      dup2(err_fd, 2);
      execve(argv[0], argv, envp.data());
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    close(err_fd);
    in_ = to_child[1];
    out_ = from_child[0];
  }

  ~WorkerProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    CloseStdin();
    if (out_ >= 0) close(out_);
    if (!stderr_path_.empty()) unlink(stderr_path_.c_str());
  }

  pid_t pid() const { return pid_; }

  Status Send(const Request& request) { return protocol::WriteFrame(in_, request); }
  Status Receive(Response* response, int64_t deadline_ms = 30000) {
    return protocol::ReadFrame(out_, response, deadline_ms);
  }
  // Sends one request and reads its answer; fails the test on a transport error.
  Response Call(const Request& request, int64_t deadline_ms = 30000) {
    Response response;
    const Status sent = Send(request);
    EXPECT_TRUE(sent.ok()) << sent.ToString() << "\nworker stderr:\n" << Stderr();
    const Status received = Receive(&response, deadline_ms);
    EXPECT_TRUE(received.ok()) << received.ToString() << "\nworker stderr:\n" << Stderr();
    return response;
  }
  Status SendBytes(const std::string& bytes) {
    return ::write(in_, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) ? Status::Ok()
                                                                                          : IoError("short write");
  }

  void CloseStdin() {
    if (in_ >= 0) close(in_);
    in_ = -1;
  }

  // The wait status, or -1 if the worker is still running after `timeout_ms`
  // (then it is killed).
  int Wait(int timeout_ms = 30000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }

  std::string Stderr() const {
    std::ifstream in(stderr_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  bool exited_ = false;
  std::string stderr_path_;
};

// --- Models, values and requests

inline onnx::ValueInfoProto FloatInfo(const std::string& name, int64_t size) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(size);
  return info;
}

// y = Relu(a + b) over float[3], or with `op` in place of Add.
inline std::string AddReluModel(const std::string& op = "Add") {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("add_relu");
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type(op);
  add->add_input("a");
  add->add_input("b");
  add->add_output("s");
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->set_name("the_relu");
  relu->add_input("s");
  relu->add_output("y");
  *graph->add_input() = FloatInfo("a", 3);
  *graph->add_input() = FloatInfo("b", 3);
  *graph->add_output() = FloatInfo("y", 3);
  return model.SerializeAsString();
}

// A node of a domain nobody implements: valid, but no backend can run it.
inline std::string CustomOpModel() {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  auto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("custom");
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("NoSuchOp");
  node->set_domain("com.example");
  node->add_input("a");
  node->add_output("y");
  *graph->add_input() = FloatInfo("a", 3);
  *graph->add_output() = FloatInfo("y", 3);
  return model.SerializeAsString();
}

// A stateful model: sum = Add(acc, x), relu = Relu(sum), over float[3].
// Kept as sum -> acc, it accumulates x across runs. Only Add and Relu, so
// the template adapter runs it too. `alias`: an aliasing annotation for
// output 'sum' (its metadata value), none when empty.
inline std::string AccumulateModel(const std::string& alias = "") {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("accumulate");
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type("Add");
  add->add_input("acc");
  add->add_input("x");
  add->add_output("sum");
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->add_input("sum");
  relu->add_output("relu");
  *graph->add_input() = FloatInfo("acc", 3);
  *graph->add_input() = FloatInfo("x", 3);
  *graph->add_output() = FloatInfo("sum", 3);
  *graph->add_output() = FloatInfo("relu", 3);
  if (!alias.empty()) {
    onnx::StringStringEntryProto* entry = graph->add_metadata_props();
    entry->set_key("ai.onnx.alias.sum");
    entry->set_value(alias);
  }
  return model.SerializeAsString();
}

// A key/value-cache step: present = TensorScatter(past, update, index) on a
// cache float[1,4,2] (axis 1, linear), total = ReduceSum(present) over all
// elements. Annotated present -> past, region scatter, so an adapter that
// honours aliasing writes the one new row into the kept cache.
inline onnx::ModelProto ScatterCacheModel() {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(24);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("scatter_cache");
  onnx::NodeProto* scatter = graph->add_node();
  scatter->set_op_type("TensorScatter");
  scatter->add_input("past");
  scatter->add_input("update");
  scatter->add_input("index");
  scatter->add_output("present");
  onnx::NodeProto* sum = graph->add_node();
  sum->set_op_type("ReduceSum");
  sum->add_input("present");
  sum->add_output("total");
  onnx::AttributeProto* keepdims = sum->add_attribute();
  keepdims->set_name("keepdims");
  keepdims->set_type(onnx::AttributeProto::INT);
  keepdims->set_i(0);
  auto info = [](const std::string& name, onnx::TensorProto::DataType type, std::vector<int64_t> dims) {
    onnx::ValueInfoProto v;
    v.set_name(name);
    auto* tensor = v.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    auto* shape = tensor->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    return v;
  };
  *graph->add_input() = info("past", onnx::TensorProto::FLOAT, {1, 4, 2});
  *graph->add_input() = info("update", onnx::TensorProto::FLOAT, {1, 1, 2});
  *graph->add_input() = info("index", onnx::TensorProto::INT64, {1});
  *graph->add_output() = info("present", onnx::TensorProto::FLOAT, {1, 4, 2});
  *graph->add_output() = info("total", onnx::TensorProto::FLOAT, {});
  onnx::StringStringEntryProto* alias = graph->add_metadata_props();
  alias->set_key("ai.onnx.alias.present");
  alias->set_value("input=past;region=scatter");
  return model;
}

inline onnx::TensorProto Floats(const std::string& name, const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(values.size()));
  t.set_raw_data(values.data(), values.size() * sizeof(float));
  return t;
}

inline std::vector<float> ReadFloats(const onnx::TensorProto& t) {
  EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT);
  if (t.has_raw_data()) {
    std::vector<float> values(t.raw_data().size() / sizeof(float));
    std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(float));
    return values;
  }
  return {t.float_data().begin(), t.float_data().end()};
}

inline Request Hello(uint32_t version = 1) {
  Request r;
  r.mutable_hello()->set_protocol_version(version);
  return r;
}

inline Request Create(const std::string& model, const std::string& case_name = "test_case",
                      uint32_t warm_repeats = 0, const std::string& device = "") {
  Request r;
  r.mutable_create_session()->set_model(model);
  r.mutable_create_session()->set_warm_repeats(warm_repeats);
  r.mutable_create_session()->mutable_options()->set_case_name(case_name);
  if (!device.empty()) r.mutable_create_session()->mutable_options()->set_device(device);
  return r;
}

inline Request RunAddRelu(uint64_t session_id) {
  Request r;
  r.mutable_run()->set_session_id(session_id);
  protocol::Value* a = r.mutable_run()->add_inputs();
  a->set_name("a");
  *a->mutable_tensor() = Floats("a", {1, -5, 3});
  protocol::Value* b = r.mutable_run()->add_inputs();
  b->set_name("b");
  *b->mutable_tensor() = Floats("b", {1, 2, 0.5f});
  return r;
}
inline const std::vector<float> kAddReluExpected = {2, 0, 3.5f};

inline Request Release(uint64_t session_id) {
  Request r;
  r.mutable_release_session()->set_session_id(session_id);
  return r;
}

inline Request Shutdown() {
  Request r;
  r.mutable_shutdown();
  return r;
}

// AddressSanitizer catches SIGSEGV itself, reports it and exits with status 1.
// GCC defines __SANITIZE_ADDRESS__; clang (before 15) says so only through
// __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARITY_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(PARITY_ADDRESS_SANITIZER)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

inline bool Failed(const Response& r) { return r.has_status() && r.status().code() != protocol::OK; }

inline ::testing::AssertionResult ExitedWith(int wait_status, int code) {
  if (wait_status != -1 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == code) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "wait status " << wait_status << ", expected exit " << code;
}

inline ::testing::AssertionResult KilledBy(int wait_status, int signal) {
  if (wait_status != -1 && WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == signal) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "wait status " << wait_status << ", expected signal " << signal;
}

}  // namespace parity::worker::test_util
