// Tests of parity-worker as the harness sees it: the built worker is spawned
// with a built adapter (PARITY_BINARY_DIR, else the test binary's folder),
// and spoken to through pipes with the generated protocol classes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

#include "harness/worker/worker_test_util.h"
#include "spec/abi/parity_adapter.h"

namespace parity::worker {
namespace {

using namespace test_util;  // NOLINT: the helpers are the vocabulary of these tests

// --- The worker with the reference adapter

TEST(WorkerTest, ServesTheReferenceAdapterFromHelloToShutdown) {
  WorkerProcess worker(AdapterPath("reference"));

  Response hello = worker.Call(Hello());
  ASSERT_FALSE(Failed(hello)) << hello.status().message();
  EXPECT_EQ(hello.info().protocol_version(), 1u);
  EXPECT_EQ(hello.info().name(), "reference");
  EXPECT_EQ(hello.info().abi_version(), static_cast<uint32_t>(PARITY_ABI_VERSION));
  EXPECT_EQ(hello.info().pid(), static_cast<uint64_t>(worker.pid()));
  ASSERT_EQ(hello.info().devices_size(), 1);
  EXPECT_EQ(hello.info().devices(0).name(), "cpu");
  EXPECT_EQ(hello.info().devices(0).kind(), "cpu");
  EXPECT_GT(hello.peak_rss_kb(), 0u);

  Request caps_request;
  caps_request.mutable_get_capabilities();
  Response caps = worker.Call(caps_request);
  ASSERT_FALSE(Failed(caps)) << caps.status().message();
  EXPECT_TRUE(caps.capabilities().declared());
  EXPECT_TRUE(caps.capabilities().can_forbid_fallback());
  // Every domain the reference registry has kernels in, the training preview included.
  const auto& operators = caps.capabilities().operators();
  for (const char* domain : {"ai.onnx:*", "ai.onnx.ml:*", "ai.onnx.preview.training:*"}) {
    EXPECT_NE(std::find(operators.begin(), operators.end(), domain), operators.end()) << domain;
  }

  Response created = worker.Call(Create(AddReluModel(), "test_add_relu", 2));
  ASSERT_FALSE(Failed(created)) << created.status().message();
  const uint64_t id = created.session().session_id();
  EXPECT_GT(created.session().load_ms_cold(), 0.0);
  ASSERT_EQ(created.session().load_ms_warm_size(), 2);
  EXPECT_GT(created.session().load_ms_warm(0), 0.0);
  ASSERT_EQ(created.session().placement_size(), 2);
  EXPECT_EQ(created.session().placement(0).node(), "Add#0");  // unnamed: op_type#index
  EXPECT_EQ(created.session().placement(1).node(), "the_relu");
  EXPECT_EQ(created.session().placement(1).device(), "cpu");

  for (int repeat = 0; repeat < 2; ++repeat) {
    Response ran = worker.Call(RunAddRelu(id));
    ASSERT_FALSE(Failed(ran)) << ran.status().message();
    ASSERT_EQ(ran.run().outputs_size(), 1);
    EXPECT_EQ(ran.run().outputs(0).name(), "y");
    ASSERT_TRUE(ran.run().outputs(0).has_tensor());
    EXPECT_EQ(ReadFloats(ran.run().outputs(0).tensor()), kAddReluExpected);
    EXPECT_GE(ran.run().run_ms(), 0.0);
  }

  // A second session gets its own id; both are open at once.
  Response second = worker.Call(Create(AddReluModel()));
  ASSERT_FALSE(Failed(second));
  EXPECT_NE(second.session().session_id(), id);

  EXPECT_FALSE(Failed(worker.Call(Release(id))));
  // Released: the id is unknown now.
  EXPECT_EQ(worker.Call(RunAddRelu(id)).status().code(), protocol::INVALID_ARGUMENT);
  Response bye = worker.Call(Shutdown());
  EXPECT_FALSE(Failed(bye));
  EXPECT_GT(bye.peak_rss_kb(), 0u);
  EXPECT_TRUE(ExitedWith(worker.Wait(), 0)) << worker.Stderr();
}

TEST(WorkerTest, UnknownSessionIdIsInvalidArgumentAndServingGoesOn) {
  WorkerProcess worker(AdapterPath("reference"));
  const Response run = worker.Call(RunAddRelu(77));
  EXPECT_EQ(run.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(run.status().message().find("77"), std::string::npos) << run.status().message();
  EXPECT_EQ(worker.Call(Release(78)).status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_FALSE(Failed(worker.Call(Hello())));
}

TEST(WorkerTest, HelloOfAnotherProtocolVersionIsInvalidArgument) {
  WorkerProcess worker(AdapterPath("reference"));
  const Response hello = worker.Call(Hello(2));
  EXPECT_EQ(hello.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(hello.status().message().find("version 2"), std::string::npos) << hello.status().message();
  EXPECT_FALSE(hello.has_info());
}

TEST(WorkerTest, ValueWithNoneOrSeveralPayloadsIsRefusedNamingTheInput) {
  WorkerProcess worker(AdapterPath("reference"));
  const Response created = worker.Call(Create(AddReluModel()));
  ASSERT_FALSE(Failed(created));
  Request none = RunAddRelu(created.session().session_id());
  none.mutable_run()->mutable_inputs(1)->clear_tensor();
  Response answer = worker.Call(none);
  EXPECT_EQ(answer.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(answer.status().message().find("'b'"), std::string::npos) << answer.status().message();

  Request several = RunAddRelu(created.session().session_id());
  several.mutable_run()->mutable_inputs(0)->mutable_optional();
  answer = worker.Call(several);
  EXPECT_EQ(answer.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(answer.status().message().find("'a'"), std::string::npos) << answer.status().message();
}

TEST(WorkerTest, RequestThatDoesNotParseIsAnsweredAndServingGoesOn) {
  WorkerProcess worker(AdapterPath("reference"));
  ASSERT_TRUE(worker.SendBytes(std::string("\x02\x00\x00\x00\x0b\x00", 6)).ok());  // a group: not ours
  Response answer;
  ASSERT_TRUE(worker.Receive(&answer).ok());
  EXPECT_EQ(answer.status().code(), protocol::INVALID_ARGUMENT);
  // An empty Request sets no kind.
  answer = worker.Call(Request());
  EXPECT_EQ(answer.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_FALSE(Failed(worker.Call(Hello())));
}

TEST(WorkerTest, EndOfInputReleasesEverythingAndExitsZero) {
  WorkerProcess worker(AdapterPath("reference"));
  ASSERT_FALSE(Failed(worker.Call(Create(AddReluModel()))));
  worker.CloseStdin();
  EXPECT_TRUE(ExitedWith(worker.Wait(), 0)) << worker.Stderr();
}

TEST(WorkerTest, CorruptLengthEndsTheWorkerWithStatusFour) {
  WorkerProcess worker(AdapterPath("reference"));
  ASSERT_TRUE(worker.SendBytes(std::string("\xff\xff\xff\xff", 4)).ok());
  EXPECT_TRUE(ExitedWith(worker.Wait(), 4)) << worker.Stderr();
  EXPECT_NE(worker.Stderr().find("corrupt"), std::string::npos) << worker.Stderr();
}

TEST(WorkerTest, LibraryThatDoesNotExistExitsThreeNamingIt) {
  const std::string missing = BinaryDir() + "/adapters/libparity_adapter_no_such_thing.so";
  WorkerProcess worker(missing);
  EXPECT_TRUE(ExitedWith(worker.Wait(), 3)) << worker.Stderr();
  EXPECT_NE(worker.Stderr().find(missing), std::string::npos) << worker.Stderr();
}

TEST(WorkerTest, LibraryWithoutTheQuerySymbolExitsThree) {
  WorkerProcess worker("libm.so.6");  // a real library, but no adapter
  EXPECT_TRUE(ExitedWith(worker.Wait(), 3)) << worker.Stderr();
  EXPECT_NE(worker.Stderr().find("libm.so.6"), std::string::npos) << worker.Stderr();
  EXPECT_NE(worker.Stderr().find("parity_adapter_query"), std::string::npos) << worker.Stderr();
}

// --- Adapters behind the worker

TEST(ReferenceAdapterTest, MapsReferenceErrorsToAbiCodes) {
  WorkerProcess worker(AdapterPath("reference"));
  const Response garbage = worker.Call(Create("this is not a model"));
  EXPECT_EQ(garbage.status().code(), protocol::INVALID_ARGUMENT) << garbage.status().message();

  const Response gpu = worker.Call(Create(AddReluModel(), "test_case", 0, "gpu"));
  EXPECT_EQ(gpu.status().code(), protocol::DEVICE_UNAVAILABLE) << gpu.status().message();

  // An operator with no kernel: UNSUPPORTED, at creation or at the run.
  const Response custom = worker.Call(Create(CustomOpModel()));
  protocol::StatusCode code = custom.status().code();
  std::string message = custom.status().message();
  if (!Failed(custom)) {
    Request run;
    run.mutable_run()->set_session_id(custom.session().session_id());
    protocol::Value* a = run.mutable_run()->add_inputs();
    a->set_name("a");
    *a->mutable_tensor() = Floats("a", {1, 2, 3});
    const Response ran = worker.Call(run);
    code = ran.status().code();
    message = ran.status().message();
  }
  EXPECT_EQ(code, protocol::UNSUPPORTED) << message;
  EXPECT_NE(message.find("NoSuchOp"), std::string::npos) << message;

  // An input the graph does not have.
  const Response created = worker.Call(Create(AddReluModel()));
  Request wrong = RunAddRelu(created.session().session_id());
  wrong.mutable_run()->mutable_inputs(1)->set_name("c");
  const Response ran = worker.Call(wrong);
  EXPECT_EQ(ran.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(ran.status().message().find("'c'"), std::string::npos) << ran.status().message();
}

TEST(TemplateAdapterTest, RunsReluAndAddAndDeclaresExactlyThose) {
  WorkerProcess worker(AdapterPath("template"));
  Request caps_request;
  caps_request.mutable_get_capabilities();
  const Response caps = worker.Call(caps_request);
  ASSERT_TRUE(caps.capabilities().declared());
  EXPECT_EQ(std::vector<std::string>(caps.capabilities().operators().begin(), caps.capabilities().operators().end()),
            (std::vector<std::string>{"ai.onnx:Relu", "ai.onnx:Add"}));
  ASSERT_EQ(caps.capabilities().data_types_size(), 1);
  EXPECT_EQ(caps.capabilities().data_types(0), onnx::TensorProto::FLOAT);

  const Response created = worker.Call(Create(AddReluModel()));
  ASSERT_FALSE(Failed(created)) << created.status().message();
  const Response ran = worker.Call(RunAddRelu(created.session().session_id()));
  ASSERT_FALSE(Failed(ran)) << ran.status().message();
  ASSERT_EQ(ran.run().outputs_size(), 1);
  EXPECT_EQ(ReadFloats(ran.run().outputs(0).tensor()), kAddReluExpected);

  const Response sub = worker.Call(Create(AddReluModel("Sub")));
  EXPECT_EQ(sub.status().code(), protocol::UNSUPPORTED);
  EXPECT_NE(sub.status().message().find("ai.onnx:Sub"), std::string::npos) << sub.status().message();
}

TEST(FaultAdapterTest, StdoutNoiseDoesNotBreakTheFrames) {
  WorkerProcess worker(AdapterPath("fault_injection"), "test_noisy*=stdout_noise");
  const Response created = worker.Call(Create(AddReluModel(), "test_noisy_add"));
  ASSERT_FALSE(Failed(created)) << created.status().message();
  const Response ran = worker.Call(RunAddRelu(created.session().session_id()));
  ASSERT_FALSE(Failed(ran)) << ran.status().message();
  EXPECT_EQ(ReadFloats(ran.run().outputs(0).tensor()), kAddReluExpected);
  EXPECT_FALSE(Failed(worker.Call(Shutdown())));
  EXPECT_TRUE(ExitedWith(worker.Wait(), 0));
  // The noise went to the log instead.
  EXPECT_NE(worker.Stderr().find("noise on stdout in run"), std::string::npos) << worker.Stderr();
}

TEST(FaultAdapterTest, StatusFaultsComeBackWithTheirCodes) {
  WorkerProcess worker(AdapterPath("fault_injection"), "test_err*=error, test_unsup*=unsupported");
  const Response unsupported = worker.Call(Create(AddReluModel(), "test_unsup_1"));
  EXPECT_EQ(unsupported.status().code(), protocol::UNSUPPORTED);
  const Response created = worker.Call(Create(AddReluModel(), "test_err_1"));
  ASSERT_FALSE(Failed(created));
  const Response ran = worker.Call(RunAddRelu(created.session().session_id()));
  EXPECT_EQ(ran.status().code(), protocol::INTERNAL);
  EXPECT_NE(ran.status().message().find("injected"), std::string::npos) << ran.status().message();
  // A case no entry matches runs normally.
  const Response clean = worker.Call(Create(AddReluModel(), "test_clean"));
  ASSERT_FALSE(Failed(clean));
  EXPECT_FALSE(Failed(worker.Call(RunAddRelu(clean.session().session_id()))));
}

TEST(FaultAdapterTest, UnknownFaultFailsEveryCreateNamingTheEntry) {
  WorkerProcess worker(AdapterPath("fault_injection"), "test_a=crash,test_b=explode");
  const Response created = worker.Call(Create(AddReluModel(), "test_unrelated"));
  EXPECT_EQ(created.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(created.status().message().find("test_b=explode"), std::string::npos) << created.status().message();
}

TEST(FaultAdapterTest, OutputFaultsChangeShapeOrValues) {
  WorkerProcess worker(AdapterPath("fault_injection"), "test_shape=wrong_shape,test_garbage=garbage");
  const Response shape_session = worker.Call(Create(AddReluModel(), "test_shape"));
  const Response shape = worker.Call(RunAddRelu(shape_session.session().session_id()));
  ASSERT_FALSE(Failed(shape)) << shape.status().message();
  ASSERT_EQ(shape.run().outputs(0).tensor().dims_size(), 1);
  EXPECT_EQ(shape.run().outputs(0).tensor().dims(0), 4);
  const std::vector<float> grown = ReadFloats(shape.run().outputs(0).tensor());
  EXPECT_EQ(std::vector<float>(grown.begin(), grown.begin() + 3), kAddReluExpected);

  const Response garbage_session = worker.Call(Create(AddReluModel(), "test_garbage"));
  const Response garbage = worker.Call(RunAddRelu(garbage_session.session().session_id()));
  ASSERT_FALSE(Failed(garbage)) << garbage.status().message();
  ASSERT_EQ(garbage.run().outputs(0).tensor().dims_size(), 1);
  EXPECT_EQ(garbage.run().outputs(0).tensor().dims(0), 3);
  EXPECT_NE(ReadFloats(garbage.run().outputs(0).tensor()), kAddReluExpected);
}

TEST(FaultAdapterTest, FellBackPlacesANodeElsewhere) {
  WorkerProcess worker(AdapterPath("fault_injection"), "*=fell_back");
  const Response created = worker.Call(Create(AddReluModel(), "test_any"));
  ASSERT_FALSE(Failed(created));
  ASSERT_EQ(created.session().placement_size(), 2);
  EXPECT_EQ(created.session().placement(0).device(), "cpu-fallback");
  EXPECT_EQ(created.session().placement(1).device(), "cpu");
}

TEST(FaultAdapterTest, LeakGrowsThePeakResidentSize) {
  if (kAddressSanitizer) {
    GTEST_SKIP() << "AddressSanitizer's allocator and shadow memory hide the leak from the peak resident size";
  }
  WorkerProcess worker(AdapterPath("fault_injection"), "test_leak=leak");
  const uint64_t before = worker.Call(Hello()).peak_rss_kb();
  const Response created = worker.Call(Create(AddReluModel(), "test_leak", 1));  // cold + 1 warm: 128 MiB
  ASSERT_FALSE(Failed(created));
  EXPECT_GE(created.peak_rss_kb(), before + 120 * 1024) << "before: " << before;
}

TEST(FaultAdapterTest, CrashExitAndAbortEndTheWorker) {
  {
    WorkerProcess worker(AdapterPath("fault_injection"), "test_crash=crash");
    const Response created = worker.Call(Create(AddReluModel(), "test_crash"));
    ASSERT_FALSE(Failed(created));
    ASSERT_TRUE(worker.Send(RunAddRelu(created.session().session_id())).ok());
    Response none;
    EXPECT_EQ(worker.Receive(&none).code(), StatusCode::kUnavailable);
    const int status = worker.Wait();
    // AddressSanitizer reports the SIGSEGV and exits with 1, or aborts under
    // ASAN_OPTIONS=abort_on_error=1 (as ci/test.sh sets it).
    const bool ended_as_due = kAddressSanitizer ? (ExitedWith(status, 1) || KilledBy(status, SIGABRT))
                                                : static_cast<bool>(KilledBy(status, SIGSEGV));
    EXPECT_TRUE(ended_as_due) << "wait status " << status << "; " << worker.Stderr();
  }
  {
    WorkerProcess worker(AdapterPath("fault_injection"), "test_exit=exit");
    const Response created = worker.Call(Create(AddReluModel(), "test_exit"));
    ASSERT_TRUE(worker.Send(RunAddRelu(created.session().session_id())).ok());
    EXPECT_TRUE(ExitedWith(worker.Wait(), 7));
  }
  {
    WorkerProcess worker(AdapterPath("fault_injection"), "test_abort=abort");
    ASSERT_TRUE(worker.Send(Create(AddReluModel(), "test_abort")).ok());
    EXPECT_TRUE(KilledBy(worker.Wait(), SIGABRT));
  }
}

TEST(FaultAdapterTest, HangsLeaveTheReaderAtItsDeadline) {
  WorkerProcess worker(AdapterPath("fault_injection"), "test_hang=hang,test_hang_create=hang_create");
  const Response created = worker.Call(Create(AddReluModel(), "test_hang"));
  ASSERT_FALSE(Failed(created));
  ASSERT_TRUE(worker.Send(RunAddRelu(created.session().session_id())).ok());
  Response none;
  EXPECT_EQ(worker.Receive(&none, 300).code(), StatusCode::kDeadlineExceeded);

  WorkerProcess create_hang(AdapterPath("fault_injection"), "test_hang=hang,test_hang_create=hang_create");
  ASSERT_TRUE(create_hang.Send(Create(AddReluModel(), "test_hang_create")).ok());
  EXPECT_EQ(create_hang.Receive(&none, 300).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(create_hang.Wait(10), -1);  // still there until killed
}

}  // namespace
}  // namespace parity::worker
