// Tests of the test NPU driver through the system's Level Zero loader, as
// the adapter reaches it: discovery, compiling and running an IR graph,
// the native blob, the layer query, the injected faults and bad input.
// The configuration is read once, at zeInit, so the tests that need one
// (names starting "Child") run in a child process of this binary with
// their variables set; run alone, they skip.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <level_zero/ze_api.h>
#include <openvino/op/add.hpp>
#include <openvino/op/constant.hpp>
#include <openvino/op/multiply.hpp>
#include <openvino/op/softmax.hpp>
#include <openvino/openvino.hpp>
#include <openvino/pass/manager.hpp>
#include <openvino/pass/serialize.hpp>

#include "adapters/level_zero/ir_buffer.h"
#include "adapters/level_zero/ze_graph_ext.h"

namespace {

using parity::adapters::level_zero::WriteIrBuffer;

constexpr pze_graph_compiler_version kCompiler = {1, 0};

// --- Running a child -----------------------------------------------------------------------

struct ChildResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// This test binary again, with `filter` and `variables` added to the
// environment (the driver reads its configuration at zeInit, once a process).
ChildResult RunChild(const std::string& filter, const std::vector<std::string>& variables) {
  std::vector<std::string> env_text(variables);
  env_text.push_back("PARITY_ZE_TEST_CHILD=1");
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "PARITY_ZE_TEST_", 15) != 0) env_text.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe";
  std::string filter_arg = "--gtest_filter=" + filter;
  char* argv[] = {self.data(), filter_arg.data(), nullptr};
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  ChildResult result;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) result.output.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

bool InChild() { return std::getenv("PARITY_ZE_TEST_CHILD") != nullptr; }

#define SKIP_UNLESS_CHILD() \
  if (!InChild()) GTEST_SKIP() << "runs as a child of the test that sets its configuration"

void ExpectChildPasses(const std::string& filter, const std::vector<std::string>& variables) {
  const ChildResult child = RunChild(filter, variables);
  EXPECT_EQ(child.exit_code, 0) << child.output;
  EXPECT_NE(child.output.find("[  PASSED  ]"), std::string::npos) << child.output;
  EXPECT_EQ(child.output.find("SKIPPED"), std::string::npos) << child.output;
}

// --- The driver, through the loader ------------------------------------------------------------

struct Npu {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  const pze_graph_ddi_1_4* ddi = nullptr;
};

ze_result_t InitLoader(ze_init_flags_t flags) {
  // The loader finds the driver by this path, unless one is given.
  setenv("ZE_ENABLE_ALT_DRIVERS", PARITY_ZE_TEST_DRIVER, 0);
  // The parent tests expect no configuration, whatever the caller's shell has.
  if (!InChild()) {
    unsetenv("PARITY_ZE_TEST_UNSUPPORTED");
    unsetenv("PARITY_ZE_TEST_FAULTS");
  }
  return zeInit(flags);
}

// The NPU, found once; a test fails (not crashes) without it.
const Npu& GetNpu() {
  static const Npu npu = [] {
    Npu n;
    if (InitLoader(ZE_INIT_FLAG_VPU_ONLY) != ZE_RESULT_SUCCESS) return n;
    uint32_t count = 1;
    if (zeDriverGet(&count, &n.driver) != ZE_RESULT_SUCCESS || count != 1) return n;
    count = 1;
    if (zeDeviceGet(n.driver, &count, &n.device) != ZE_RESULT_SUCCESS || count != 1) return n;
    void* table = nullptr;
    if (zeDriverGetExtensionFunctionAddress(n.driver, PZE_GRAPH_EXT_NAME_1_4, &table) == ZE_RESULT_SUCCESS) {
      n.ddi = static_cast<const pze_graph_ddi_1_4*>(table);
    }
    return n;
  }();
  return npu;
}

#define ASSERT_NPU()                                        \
  const Npu& npu = GetNpu();                                \
  ASSERT_NE(npu.ddi, nullptr) << "the test driver at " PARITY_ZE_TEST_DRIVER " was not found by the loader"

ze_context_handle_t NewContext(const Npu& npu) {
  ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t context = nullptr;
  EXPECT_EQ(zeContextCreate(npu.driver, &desc, &context), ZE_RESULT_SUCCESS);
  return context;
}

std::string BuildLog(const Npu& npu, pze_graph_handle_t graph) {
  uint32_t size = 0;
  if (npu.ddi->pfnBuildLogGetString(graph, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return "";
  std::string log(size, '\0');
  if (npu.ddi->pfnBuildLogGetString(graph, &size, log.data()) != ZE_RESULT_SUCCESS) return "";
  log.resize(std::strlen(log.c_str()));
  return log;
}

// --- The test model: softmax(2 * (x + y)) over the last axis of [2, 3] -----------------------

std::shared_ptr<ov::Model> TestModel(bool dynamic = false) {
  const ov::PartialShape shape = dynamic ? ov::PartialShape{ov::Dimension::dynamic(), 3} : ov::PartialShape{2, 3};
  auto x = std::make_shared<ov::op::v0::Parameter>(ov::element::f32, shape);
  x->set_friendly_name("x");
  x->output(0).set_names({"x"});
  auto y = std::make_shared<ov::op::v0::Parameter>(ov::element::f32, shape);
  y->set_friendly_name("y");
  y->output(0).set_names({"y"});
  auto add = std::make_shared<ov::op::v1::Add>(x, y);
  add->set_friendly_name("add");
  auto scale = ov::op::v0::Constant::create(ov::element::f32, ov::Shape{1}, {2.0f});
  scale->set_friendly_name("scale");
  auto mul = std::make_shared<ov::op::v1::Multiply>(add, scale);
  mul->set_friendly_name("mul");
  auto softmax = std::make_shared<ov::op::v8::Softmax>(mul, -1);
  softmax->set_friendly_name("softmax");
  softmax->output(0).set_names({"probabilities"});
  auto result = std::make_shared<ov::op::v0::Result>(softmax);
  result->set_friendly_name("result");
  return std::make_shared<ov::Model>(ov::ResultVector{result}, ov::ParameterVector{x, y}, "test_model");
}

std::string IrBuffer(const std::shared_ptr<ov::Model>& model, pze_graph_compiler_version compiler = kCompiler) {
  std::ostringstream xml, bin;
  ov::pass::Manager manager;
  manager.register_pass<ov::pass::Serialize>(xml, bin);
  manager.run_passes(model);
  return WriteIrBuffer(compiler, xml.str(), bin.str());
}

const std::vector<float> kX = {0.5f, -1.0f, 2.0f, 0.0f, 0.25f, -0.75f};
const std::vector<float> kY = {0.1f, 0.2f, 0.3f, -0.4f, 0.5f, 1.5f};

std::vector<double> Expected() {
  std::vector<double> out(6);
  for (int row = 0; row < 2; ++row) {
    double z[3], sum = 0;
    for (int c = 0; c < 3; ++c) {
      z[c] = std::exp(2.0 * (double(kX[row * 3 + c]) + double(kY[row * 3 + c])));
      sum += z[c];
    }
    for (int c = 0; c < 3; ++c) out[row * 3 + c] = z[c] / sum;
  }
  return out;
}

pze_graph_handle_t Create(const Npu& npu, ze_context_handle_t context, pze_graph_format format,
                          const std::string& bytes, const char* flags, ze_result_t* result) {
  pze_graph_desc desc{PZE_STRUCTURE_TYPE_GRAPH_DESC, nullptr, format, bytes.size(),
                      reinterpret_cast<const uint8_t*>(bytes.data()), flags};
  pze_graph_handle_t graph = nullptr;
  *result = npu.ddi->pfnCreate(context, npu.device, &desc, &graph);
  return graph;
}

pze_graph_handle_t CreateOk(const Npu& npu, ze_context_handle_t context, const std::string& name) {
  ze_result_t result;
  const std::string flags = "--config NPU_GRAPH_NAME=\"" + name + "\"";
  pze_graph_handle_t graph = Create(npu, context, PZE_GRAPH_FORMAT_IR, IrBuffer(TestModel()), flags.c_str(), &result);
  EXPECT_EQ(result, ZE_RESULT_SUCCESS) << BuildLog(npu, nullptr);
  return graph;
}

// One graph bound to host memory of the driver, in a closed command list,
// with a queue and fence to run it.
struct Runner {
  const Npu& npu;
  ze_context_handle_t context;
  pze_graph_handle_t graph;
  void* memory[3] = {};
  ze_command_queue_handle_t queue = nullptr;
  ze_command_list_handle_t list = nullptr;
  ze_fence_handle_t fence = nullptr;

  Runner(const Npu& n, ze_context_handle_t c, pze_graph_handle_t g) : npu(n), context(c), graph(g) {
    ze_host_mem_alloc_desc_t host{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    for (uint32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(zeMemAllocHost(context, &host, 6 * sizeof(float), 64, &memory[i]), ZE_RESULT_SUCCESS);
      EXPECT_EQ(npu.ddi->pfnSetArgumentValue(graph, i, memory[i]), ZE_RESULT_SUCCESS);
    }
    std::memcpy(memory[0], kX.data(), 6 * sizeof(float));
    std::memcpy(memory[1], kY.data(), 6 * sizeof(float));
    ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                                       ZE_COMMAND_QUEUE_MODE_DEFAULT, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    EXPECT_EQ(zeCommandQueueCreate(context, npu.device, &queue_desc, &queue), ZE_RESULT_SUCCESS);
    ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    EXPECT_EQ(zeCommandListCreate(context, npu.device, &list_desc, &list), ZE_RESULT_SUCCESS);
    EXPECT_EQ(npu.ddi->pfnAppendGraphInitialize(list, graph, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(npu.ddi->pfnAppendGraphExecute(list, graph, nullptr, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeCommandListClose(list), ZE_RESULT_SUCCESS);
    ze_fence_desc_t fence_desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
    EXPECT_EQ(zeFenceCreate(queue, &fence_desc, &fence), ZE_RESULT_SUCCESS);
  }
  ~Runner() {
    zeFenceDestroy(fence);
    zeCommandListDestroy(list);
    zeCommandQueueDestroy(queue);
    for (void* m : memory) zeMemFree(context, m);
  }
  ze_result_t Execute() { return zeCommandQueueExecuteCommandLists(queue, 1, &list, fence); }
  std::vector<float> Output() const {
    const float* out = static_cast<const float*>(memory[2]);
    return std::vector<float>(out, out + 6);
  }
  void RunAndCheck() {
    std::memset(memory[2], 0, 6 * sizeof(float));
    ASSERT_EQ(Execute(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zeFenceHostSynchronize(fence, UINT64_MAX), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zeFenceReset(fence), ZE_RESULT_SUCCESS);
    const std::vector<double> expected = Expected();
    const std::vector<float> got = Output();
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6) << "element " << i;
  }
};

// --- Without configuration ---------------------------------------------------------------------------------

TEST(TestNpuDriver, LoaderFindsOneVpuWithTheGraphExtension) {
  ASSERT_NPU();
  uint32_t count = 0;
  ASSERT_EQ(zeDriverGet(&count, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(count, 1u);
  ASSERT_EQ(zeDriverGetExtensionProperties(npu.driver, &count, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(count, 1u);
  ze_driver_extension_properties_t extension{};
  ASSERT_EQ(zeDriverGetExtensionProperties(npu.driver, &count, &extension), ZE_RESULT_SUCCESS);
  EXPECT_STREQ(extension.name, PZE_GRAPH_EXT_NAME_1_4);
  EXPECT_EQ(extension.version, PZE_GRAPH_EXT_VERSION_1_4);
  void* other = nullptr;
  EXPECT_EQ(zeDriverGetExtensionFunctionAddress(npu.driver, "ZE_extension_unknown", &other),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);

  ze_device_properties_t properties{};
  properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  ASSERT_EQ(zeDeviceGetProperties(npu.device, &properties), ZE_RESULT_SUCCESS);
  EXPECT_EQ(properties.type, ZE_DEVICE_TYPE_VPU);
  EXPECT_NE(properties.vendorId, 0x8086u);
  EXPECT_EQ(std::string(properties.name).rfind("ONNX Parity test NPU (OpenVINO ", 0), 0u) << properties.name;
  EXPECT_GT(properties.maxMemAllocSize, 0u);

  pze_device_graph_properties graph{};
  graph.stype = PZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES;
  ASSERT_EQ(npu.ddi->pfnDeviceGetGraphProperties(npu.device, &graph), ZE_RESULT_SUCCESS);
  EXPECT_EQ(graph.extension_version, PZE_GRAPH_EXT_VERSION_1_4);
  EXPECT_EQ(graph.compiler_version.major, kCompiler.major);
  EXPECT_EQ(graph.compiler_version.minor, kCompiler.minor);
  EXPECT_EQ(graph.formats_supported, uint32_t{PZE_GRAPH_FORMAT_NATIVE | PZE_GRAPH_FORMAT_IR});
}

TEST(TestNpuDriver, CompilesAndRunsAnIrGraph) {
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  pze_graph_handle_t graph = CreateOk(npu, context, "softmax_case");
  ASSERT_NE(graph, nullptr);
  pze_graph_properties properties{PZE_STRUCTURE_TYPE_GRAPH_PROPERTIES, nullptr, 0};
  ASSERT_EQ(npu.ddi->pfnGetProperties(graph, &properties), ZE_RESULT_SUCCESS);
  ASSERT_EQ(properties.argument_count, 3u);
  const char* names[] = {"x", "y", "probabilities"};
  for (uint32_t i = 0; i < 3; ++i) {
    pze_graph_argument_properties arg{};
    ASSERT_EQ(npu.ddi->pfnGetArgumentProperties(graph, i, &arg), ZE_RESULT_SUCCESS);
    EXPECT_STREQ(arg.name, names[i]);
    EXPECT_EQ(arg.kind, i < 2 ? PZE_GRAPH_ARGUMENT_INPUT : PZE_GRAPH_ARGUMENT_OUTPUT);
    EXPECT_EQ(arg.network_precision, PZE_PRECISION_FP32);
    const uint32_t dims[PZE_MAX_ARGUMENT_DIMS] = {2, 3, 1, 1, 1};
    for (int d = 0; d < PZE_MAX_ARGUMENT_DIMS; ++d) EXPECT_EQ(arg.dims[d], dims[d]) << "argument " << i;
  }
  pze_graph_argument_properties beyond{};
  EXPECT_EQ(npu.ddi->pfnGetArgumentProperties(graph, 3, &beyond), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  {
    Runner runner(npu, context, graph);
    runner.RunAndCheck();
    runner.RunAndCheck();  // the fence, reset, serves again
  }
  EXPECT_EQ(npu.ddi->pfnDestroy(graph), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_SUCCESS);
}

TEST(TestNpuDriver, NativeBlobRoundTrips) {
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  pze_graph_handle_t graph = CreateOk(npu, context, "blob_case");
  ASSERT_NE(graph, nullptr);
  size_t size = 0;
  ASSERT_EQ(npu.ddi->pfnGetNativeBinary(graph, &size, nullptr), ZE_RESULT_SUCCESS);
  std::string blob(size, '\0');
  size_t small = size - 1;
  EXPECT_EQ(npu.ddi->pfnGetNativeBinary(graph, &small, reinterpret_cast<uint8_t*>(blob.data())),
            ZE_RESULT_ERROR_INVALID_SIZE);
  ASSERT_EQ(npu.ddi->pfnGetNativeBinary(graph, &size, reinterpret_cast<uint8_t*>(blob.data())), ZE_RESULT_SUCCESS);
  EXPECT_EQ(blob.substr(0, 6), "PZENPU");
  EXPECT_NE(blob.find("blob_case"), std::string::npos);
  EXPECT_EQ(npu.ddi->pfnDestroy(graph), ZE_RESULT_SUCCESS);

  ze_result_t result;
  pze_graph_handle_t imported = Create(npu, context, PZE_GRAPH_FORMAT_NATIVE, blob, nullptr, &result);
  ASSERT_EQ(result, ZE_RESULT_SUCCESS) << BuildLog(npu, nullptr);
  EXPECT_NE(BuildLog(npu, imported).find("'blob_case'"), std::string::npos) << "the name travels in the blob";
  {
    Runner runner(npu, context, imported);
    runner.RunAndCheck();
  }
  EXPECT_EQ(npu.ddi->pfnDestroy(imported), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_SUCCESS);
}

TEST(TestNpuDriver, RefusesCorruptBlobsAndOtherCompilers) {
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  pze_graph_handle_t graph = CreateOk(npu, context, "refusal_case");
  ASSERT_NE(graph, nullptr);
  size_t size = 0;
  ASSERT_EQ(npu.ddi->pfnGetNativeBinary(graph, &size, nullptr), ZE_RESULT_SUCCESS);
  std::string blob(size, '\0');
  ASSERT_EQ(npu.ddi->pfnGetNativeBinary(graph, &size, reinterpret_cast<uint8_t*>(blob.data())), ZE_RESULT_SUCCESS);
  npu.ddi->pfnDestroy(graph);

  ze_result_t result;
  std::string bad_magic = blob;
  bad_magic[0] = 'X';
  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_NATIVE, bad_magic, nullptr, &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  EXPECT_NE(BuildLog(npu, nullptr).find("PZENPU"), std::string::npos) << BuildLog(npu, nullptr);

  std::string other_compiler = blob;
  other_compiler[8] = 7;  // compiler major
  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_NATIVE, other_compiler, nullptr, &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  EXPECT_NE(BuildLog(npu, nullptr).find("compiler 7.0"), std::string::npos) << BuildLog(npu, nullptr);

  std::string truncated = blob.substr(0, blob.size() - 10);
  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_NATIVE, truncated, nullptr, &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  EXPECT_NE(BuildLog(npu, nullptr).find("payload length"), std::string::npos) << BuildLog(npu, nullptr);

  std::string garbage_payload = blob;
  for (size_t i = blob.size() - 64; i < blob.size(); ++i) garbage_payload[i] = '\x5a';
  for (size_t i = 40; i < 200 && i < blob.size(); ++i) garbage_payload[i] = '\xff';
  pze_graph_handle_t survived = Create(npu, context, PZE_GRAPH_FORMAT_NATIVE, garbage_payload, nullptr, &result);
  if (survived) npu.ddi->pfnDestroy(survived);  // whatever OpenVINO makes of it, no crash and no leak

  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, IrBuffer(TestModel(), {9, 9}), nullptr, &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(BuildLog(npu, nullptr).find("compiler 9.9"), std::string::npos) << BuildLog(npu, nullptr);

  const std::string ir = IrBuffer(TestModel());
  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, ir.substr(0, ir.size() - 1), nullptr, &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_ARGUMENT);

  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, ir, "--config NPU_GRAPH_NAME=\"unterminated", &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(BuildLog(npu, nullptr).find("closing quote"), std::string::npos) << BuildLog(npu, nullptr);

  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, IrBuffer(TestModel(true)), nullptr, &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(BuildLog(npu, nullptr).find("parameter 'x'"), std::string::npos) << BuildLog(npu, nullptr);
  EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_SUCCESS);
}

// The layer query's answer for `ir`, and the query (to destroy), or "" on a failure the test reports.
std::string SupportedLayers(const Npu& npu, ze_context_handle_t context, const std::string& ir,
                            pze_graph_query_handle_t* query) {
  pze_graph_desc desc{PZE_STRUCTURE_TYPE_GRAPH_DESC, nullptr, PZE_GRAPH_FORMAT_IR, ir.size(),
                      reinterpret_cast<const uint8_t*>(ir.data()), nullptr};
  EXPECT_EQ(npu.ddi->pfnQueryNetworkCreate(context, npu.device, &desc, query), ZE_RESULT_SUCCESS);
  size_t size = 0;
  EXPECT_EQ(npu.ddi->pfnQueryNetworkGetSupportedLayers(*query, &size, nullptr), ZE_RESULT_SUCCESS);
  std::string layers(size, '\0');
  EXPECT_EQ(npu.ddi->pfnQueryNetworkGetSupportedLayers(*query, &size, layers.data()), ZE_RESULT_SUCCESS);
  layers.resize(std::strlen(layers.c_str()));
  return layers;
}

TEST(TestNpuDriver, QueryListsTheLayersItRuns) {
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  const std::string ir = IrBuffer(TestModel());
  pze_graph_query_handle_t query = nullptr;
  const std::string layers = SupportedLayers(npu, context, ir, &query);
  EXPECT_EQ(layers, "add;scale;mul;softmax");
  EXPECT_EQ(npu.ddi->pfnQueryNetworkDestroy(query), ZE_RESULT_SUCCESS);
  EXPECT_EQ(npu.ddi->pfnQueryNetworkDestroy(query), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_SUCCESS);
}

TEST(TestNpuDriver, BadHandlesAndMisuseGetErrors) {
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  int not_an_object = 0;
  auto* bogus = reinterpret_cast<pze_graph_handle_t>(&not_an_object);
  pze_graph_properties properties{};
  EXPECT_EQ(npu.ddi->pfnGetProperties(bogus, &properties), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(npu.ddi->pfnGetProperties(nullptr, &properties), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(npu.ddi->pfnDestroy(bogus), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(zeFenceHostSynchronize(reinterpret_cast<ze_fence_handle_t>(&not_an_object), 0),
            ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(zeMemFree(context, &not_an_object), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ze_result_t result;
  EXPECT_EQ(Create(npu, reinterpret_cast<ze_context_handle_t>(&not_an_object), PZE_GRAPH_FORMAT_IR,
                   IrBuffer(TestModel()), nullptr, &result),
            nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

  ze_host_mem_alloc_desc_t host{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void* memory = nullptr;
  EXPECT_EQ(zeMemAllocHost(context, &host, 64, 3, &memory), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
  ASSERT_EQ(zeMemAllocHost(context, &host, 64, 0, &memory), ZE_RESULT_SUCCESS);
  ze_memory_allocation_properties_t allocation{};
  allocation.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  EXPECT_EQ(zeMemGetAllocProperties(context, static_cast<char*>(memory) + 8, &allocation, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(allocation.type, ZE_MEMORY_TYPE_HOST);
  EXPECT_EQ(zeMemFree(context, memory), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeMemFree(context, memory), ZE_RESULT_ERROR_INVALID_ARGUMENT);

  // An open command list is not executed; an unbound argument is refused.
  pze_graph_handle_t graph = CreateOk(npu, context, "unbound_case");
  ASSERT_NE(graph, nullptr);
  ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                                     ZE_COMMAND_QUEUE_MODE_DEFAULT, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_queue_handle_t queue = nullptr;
  ASSERT_EQ(zeCommandQueueCreate(context, npu.device, &queue_desc, &queue), ZE_RESULT_SUCCESS);
  ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
  ze_command_list_handle_t list = nullptr;
  ASSERT_EQ(zeCommandListCreate(context, npu.device, &list_desc, &list), ZE_RESULT_SUCCESS);
  ASSERT_EQ(npu.ddi->pfnAppendGraphExecute(list, graph, nullptr, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue, 1, &list, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(zeCommandListClose(list), ZE_RESULT_SUCCESS);
  EXPECT_EQ(npu.ddi->pfnAppendGraphExecute(list, graph, nullptr, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue, 1, &list, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(BuildLog(npu, graph).find("is not bound"), std::string::npos) << BuildLog(npu, graph);
  EXPECT_EQ(npu.ddi->pfnSetArgumentValue(graph, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(npu.ddi->pfnSetArgumentValue(graph, 9, &not_an_object), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  // A destroyed graph left in a list is an error at execution, not a crash.
  ASSERT_EQ(npu.ddi->pfnDestroy(graph), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue, 1, &list, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  zeCommandListDestroy(list);
  zeCommandQueueDestroy(queue);
  EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

  // Parents destroyed before their children leave the children usable.
  ze_context_handle_t parent = NewContext(npu);
  ASSERT_EQ(zeCommandQueueCreate(parent, npu.device, &queue_desc, &queue), ZE_RESULT_SUCCESS);
  ze_fence_desc_t fence_desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ASSERT_EQ(zeFenceCreate(queue, &fence_desc, &fence), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeContextDestroy(parent), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandQueueDestroy(queue), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
  EXPECT_EQ(zeFenceDestroy(fence), ZE_RESULT_SUCCESS);
}

// --- With configuration, in children -------------------------------------------------------------------------

TEST(TestNpuDriver, UnsupportedTypesAreLeftOutAndRefused) {
  ExpectChildPasses("ChildUnsupported.*", {"PARITY_ZE_TEST_UNSUPPORTED=Softmax, Erf"});
}

TEST(ChildUnsupported, QueryAndCreate) {
  SKIP_UNLESS_CHILD();
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  const std::string ir = IrBuffer(TestModel());
  pze_graph_query_handle_t query = nullptr;
  const std::string layers = SupportedLayers(npu, context, ir, &query);
  EXPECT_EQ(layers, "add;scale;mul");
  npu.ddi->pfnQueryNetworkDestroy(query);

  ze_result_t result;
  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, ir, nullptr, &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
  EXPECT_NE(BuildLog(npu, nullptr).find("softmax (Softmax)"), std::string::npos) << BuildLog(npu, nullptr);
  zeContextDestroy(context);
}

TEST(TestNpuDriver, InjectedFaultsGiveTheirCodes) {
  ExpectChildPasses("ChildFaults.*",
                    {"PARITY_ZE_TEST_FAULTS=lost_*=device_lost, oom_*=out_of_memory,"
                     "broken_*=compile_failure,hang_*=hang"});
}

TEST(ChildFaults, OutOfMemoryAndCompileFailure) {
  SKIP_UNLESS_CHILD();
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  const std::string ir = IrBuffer(TestModel());
  ze_result_t result;
  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, ir, "--config NPU_GRAPH_NAME=\"oom_1\"", &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
  EXPECT_NE(BuildLog(npu, nullptr).find("out-of-memory for graph 'oom_1'"), std::string::npos);
  EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, ir, "--config NPU_GRAPH_NAME=\"broken_1\"", &result), nullptr);
  EXPECT_EQ(result, ZE_RESULT_ERROR_UNKNOWN);
  EXPECT_EQ(BuildLog(npu, nullptr), "injected compilation failure for graph 'broken_1'");
  zeContextDestroy(context);
}

TEST(ChildFaults, DeviceLostKeepsTheContextLost) {
  SKIP_UNLESS_CHILD();
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  pze_graph_handle_t lost = CreateOk(npu, context, "lost_1");
  pze_graph_handle_t fine = CreateOk(npu, context, "fine_1");
  ASSERT_NE(lost, nullptr);
  ASSERT_NE(fine, nullptr);
  {
    Runner lost_runner(npu, context, lost);
    Runner fine_runner(npu, context, fine);
    EXPECT_EQ(lost_runner.Execute(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(fine_runner.Execute(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(zeFenceHostSynchronize(fine_runner.fence, 0), ZE_RESULT_ERROR_DEVICE_LOST);
    ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t list = nullptr;
    EXPECT_EQ(zeCommandListCreate(context, npu.device, &list_desc, &list), ZE_RESULT_ERROR_DEVICE_LOST);
    ze_result_t result;
    EXPECT_EQ(Create(npu, context, PZE_GRAPH_FORMAT_IR, IrBuffer(TestModel()), nullptr, &result), nullptr);
    EXPECT_EQ(result, ZE_RESULT_ERROR_DEVICE_LOST);
  }
  npu.ddi->pfnDestroy(lost);
  npu.ddi->pfnDestroy(fine);
  EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_SUCCESS);

  ze_context_handle_t fresh = NewContext(npu);
  pze_graph_handle_t graph = CreateOk(npu, fresh, "fine_2");
  ASSERT_NE(graph, nullptr);
  {
    Runner runner(npu, fresh, graph);
    runner.RunAndCheck();
  }
  npu.ddi->pfnDestroy(graph);
  zeContextDestroy(fresh);
}

TEST(ChildFaults, HangNeverSignalsTheFence) {
  SKIP_UNLESS_CHILD();
  ASSERT_NPU();
  ze_context_handle_t context = NewContext(npu);
  pze_graph_handle_t graph = CreateOk(npu, context, "hang_1");
  ASSERT_NE(graph, nullptr);
  Runner runner(npu, context, graph);
  ASSERT_EQ(runner.Execute(), ZE_RESULT_SUCCESS);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(zeFenceHostSynchronize(runner.fence, 200'000'000), ZE_RESULT_NOT_READY);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_EQ(zeFenceQueryStatus(runner.fence), ZE_RESULT_NOT_READY);
  EXPECT_EQ(zeCommandQueueSynchronize(runner.queue, 1'000'000), ZE_RESULT_NOT_READY);
  // Without a time limit the wait never returns: a forked copy still waits
  // after half a second, and is killed.
  const pid_t waiter = fork();
  if (waiter == 0) {
    zeFenceHostSynchronize(runner.fence, UINT64_MAX);
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int status = 0;
  EXPECT_EQ(waitpid(waiter, &status, WNOHANG), 0) << "the unlimited wait returned";
  kill(waiter, SIGKILL);
  waitpid(waiter, &status, 0);
}

TEST(TestNpuDriver, MalformedFaultsFailInit) {
  for (const char* faults : {"x=explode", "no_equals_sign", "=hang"}) {
    const ChildResult child = RunChild("ChildInit.Refused", {std::string("PARITY_ZE_TEST_FAULTS=") + faults});
    EXPECT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(child.output.find(std::string("entry '") + faults + "'"), std::string::npos) << child.output;
  }
}

TEST(ChildInit, Refused) {
  SKIP_UNLESS_CHILD();
  EXPECT_NE(InitLoader(ZE_INIT_FLAG_VPU_ONLY), ZE_RESULT_SUCCESS);
}

TEST(TestNpuDriver, GpuOnlyInitFindsNothing) {
  const ChildResult child = RunChild("ChildInit.GpuOnly", {});
  EXPECT_EQ(child.exit_code, 0) << child.output;
  EXPECT_NE(child.output.find("[  PASSED  ] 1 test"), std::string::npos) << child.output;
}

TEST(ChildInit, GpuOnly) {
  SKIP_UNLESS_CHILD();
  EXPECT_NE(InitLoader(ZE_INIT_FLAG_GPU_ONLY), ZE_RESULT_SUCCESS);
}

}  // namespace
