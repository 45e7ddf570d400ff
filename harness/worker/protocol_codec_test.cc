// Tests that parity-worker's hand-written codec agrees with the classes
// protoc generates from spec/protocol/parity_worker.proto, field by field.
#include "harness/worker/protocol_codec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "harness/protocol/framing.h"
#include "parity_worker.pb.h"

namespace parity::worker {
namespace {

using Kind = WireRequest::Kind;

onnx::TensorProto FloatTensor(const std::string& name, std::vector<float> values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t.add_float_data(v);
  return t;
}

WireRequest Parse(const protocol::Request& request) {
  WireRequest parsed;
  const Status status = ParseRequest(request.SerializeAsString(), &parsed);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return parsed;
}

TEST(WorkerCodecTest, ParsesHelloAndCapabilities) {
  protocol::Request hello;
  hello.mutable_hello()->set_protocol_version(1);
  WireRequest parsed = Parse(hello);
  EXPECT_EQ(parsed.kind, Kind::kHello);
  EXPECT_EQ(parsed.protocol_version, 1u);

  protocol::Request caps;
  caps.mutable_get_capabilities()->set_device("cuda:1");
  parsed = Parse(caps);
  EXPECT_EQ(parsed.kind, Kind::kGetCapabilities);
  EXPECT_EQ(parsed.device, "cuda:1");
}

TEST(WorkerCodecTest, ParsesCreateSessionWithOptionsAndDefaults) {
  protocol::Request request;
  protocol::CreateSession* create = request.mutable_create_session();
  create->set_model(std::string("\x08\x07\x00model", 8));
  create->set_warm_repeats(5);
  create->mutable_options()->set_device("npu");
  create->mutable_options()->add_variant_targets("com.example.npu");
  create->mutable_options()->add_variant_targets("com.example.gpu");
  create->mutable_options()->set_case_name("test_relu");
  WireRequest parsed = Parse(request);
  EXPECT_EQ(parsed.kind, Kind::kCreateSession);
  EXPECT_EQ(parsed.model, create->model());
  EXPECT_EQ(parsed.warm_repeats, 5u);
  EXPECT_EQ(parsed.options.device, "npu");
  EXPECT_TRUE(parsed.options.allow_fallback);  // the .proto's default when absent
  EXPECT_EQ(parsed.options.variant_targets, (std::vector<std::string>{"com.example.npu", "com.example.gpu"}));
  EXPECT_EQ(parsed.options.case_name, "test_relu");
  EXPECT_EQ(parsed.model_dir, "");  // absent: no folder, external data refused

  create->mutable_options()->set_allow_fallback(false);
  EXPECT_FALSE(Parse(request).options.allow_fallback);
}

TEST(WorkerCodecTest, ParsesCreateSessionModelDir) {
  protocol::Request request;
  protocol::CreateSession* create = request.mutable_create_session();
  create->set_model("m");
  create->set_model_dir("/cases/suite/test_with_weights");
  create->mutable_options()->set_case_name("test_with_weights");
  const WireRequest parsed = Parse(request);
  EXPECT_EQ(parsed.kind, Kind::kCreateSession);
  EXPECT_EQ(parsed.model_dir, create->model_dir());
  EXPECT_EQ(parsed.model, "m");
  EXPECT_EQ(parsed.options.case_name, "test_with_weights");

  // Fields may come in any order on the wire: model_dir (4) before model (1).
  const std::string body = std::string("\x22\x06/first", 8) + std::string("\x0a\x01m", 3);
  const std::string bytes = std::string("\x1a") + static_cast<char>(body.size()) + body;
  protocol::Request generated;
  ASSERT_TRUE(generated.ParseFromString(bytes));
  ASSERT_EQ(generated.create_session().model_dir(), "/first");
  WireRequest reordered;
  ASSERT_TRUE(ParseRequest(bytes, &reordered).ok());
  EXPECT_EQ(reordered.model_dir, generated.create_session().model_dir());
  EXPECT_EQ(reordered.model, generated.create_session().model());
}

TEST(WorkerCodecTest, ParsesRunWithEachKindOfValue) {
  protocol::Request request;
  protocol::Run* run = request.mutable_run();
  run->set_session_id(uint64_t{1} << 40);
  protocol::Value* a = run->add_inputs();
  a->set_name("a");
  *a->mutable_tensor() = FloatTensor("a", {1, 2, 3});
  protocol::Value* s = run->add_inputs();
  s->set_name("s");
  s->mutable_sequence()->set_elem_type(onnx::SequenceProto::TENSOR);
  *s->mutable_sequence()->add_tensor_values() = FloatTensor("", {4});
  protocol::Value* o = run->add_inputs();
  o->set_name("o");
  o->mutable_optional()->set_elem_type(onnx::OptionalProto::UNDEFINED);
  run->add_inputs()->set_name("empty");

  const WireRequest parsed = Parse(request);
  EXPECT_EQ(parsed.kind, Kind::kRun);
  EXPECT_EQ(parsed.session_id, uint64_t{1} << 40);
  ASSERT_EQ(parsed.inputs.size(), 4u);
  EXPECT_EQ(parsed.inputs[0].name, "a");
  ASSERT_TRUE(parsed.inputs[0].tensor.has_value());
  EXPECT_EQ(*parsed.inputs[0].tensor, a->tensor().SerializeAsString());
  EXPECT_FALSE(parsed.inputs[0].sequence.has_value());
  ASSERT_TRUE(parsed.inputs[1].sequence.has_value());
  EXPECT_EQ(*parsed.inputs[1].sequence, s->sequence().SerializeAsString());
  ASSERT_TRUE(parsed.inputs[2].optional.has_value());
  EXPECT_EQ(*parsed.inputs[2].optional, o->optional().SerializeAsString());
  EXPECT_FALSE(parsed.inputs[3].tensor || parsed.inputs[3].sequence || parsed.inputs[3].optional);
}

TEST(WorkerCodecTest, ParsesStateBindingsAndReturnKept) {
  protocol::Request request;
  protocol::Run* run = request.mutable_run();
  run->set_session_id(3);
  protocol::StateBinding* key = run->add_keep();
  key->set_output("present_key");
  key->set_input("past_key");
  protocol::StateBinding* value = run->add_keep();
  value->set_output("present_value");
  value->set_input("past_value");
  run->add_keep();  // both names absent: parsed as empty, refused later by the host
  WireRequest parsed = Parse(request);
  EXPECT_EQ(parsed.kind, Kind::kRun);
  using Binding = std::pair<std::string, std::string>;
  EXPECT_EQ(parsed.keep,
            (std::vector<Binding>{{"present_key", "past_key"}, {"present_value", "past_value"}, {"", ""}}));
  EXPECT_TRUE(parsed.return_kept);  // the .proto's default when absent

  run->set_return_kept(false);
  EXPECT_FALSE(Parse(request).return_kept);
  run->set_return_kept(true);
  EXPECT_TRUE(Parse(request).return_kept);

  // A run without bindings parses to none.
  protocol::Request plain;
  plain.mutable_run()->set_session_id(3);
  EXPECT_TRUE(Parse(plain).keep.empty());
}

TEST(WorkerCodecTest, ParsesReleaseShutdownAndNothing) {
  protocol::Request release;
  release.mutable_release_session()->set_session_id(42);
  EXPECT_EQ(Parse(release).kind, Kind::kReleaseSession);
  EXPECT_EQ(Parse(release).session_id, 42u);
  protocol::Request shutdown;
  shutdown.mutable_shutdown();
  EXPECT_EQ(Parse(shutdown).kind, Kind::kShutdown);
  EXPECT_EQ(Parse(protocol::Request()).kind, Kind::kNone);
}

TEST(WorkerCodecTest, SkipsUnknownFieldsOfEveryWireType) {
  protocol::Request hello;
  hello.mutable_hello()->set_protocol_version(1);
  // Field 99 as varint, field 98 as fixed64, field 97 as bytes, field 96 as fixed32.
  const std::string unknown = std::string("\x98\x06\x05", 3) + std::string("\x91\x06", 2) + std::string(8, '\1') +
                              std::string("\x8a\x06\x02xy", 5) + std::string("\x85\x06", 2) + std::string(4, '\2');
  WireRequest parsed;
  ASSERT_TRUE(ParseRequest(unknown + hello.SerializeAsString() + unknown, &parsed).ok());
  EXPECT_EQ(parsed.kind, Kind::kHello);
  EXPECT_EQ(parsed.protocol_version, 1u);
}

TEST(WorkerCodecTest, LastKindOfTheOneofWins) {
  protocol::Request hello;
  hello.mutable_hello()->set_protocol_version(1);
  protocol::Request release;
  release.mutable_release_session()->set_session_id(7);
  WireRequest parsed;
  ASSERT_TRUE(ParseRequest(hello.SerializeAsString() + release.SerializeAsString(), &parsed).ok());
  EXPECT_EQ(parsed.kind, Kind::kReleaseSession);
  EXPECT_EQ(parsed.protocol_version, 0u);
  EXPECT_EQ(parsed.session_id, 7u);
}

TEST(WorkerCodecTest, TruncatedEncodingsAreRefusedNeverOverread) {
  protocol::Request request;
  request.mutable_create_session()->set_model(std::string(300, 'm'));
  request.mutable_create_session()->mutable_options()->set_case_name("case");
  const std::string bytes = request.SerializeAsString();
  // Every proper prefix cuts the one top-level field, so none is a valid message.
  for (size_t n = 1; n < bytes.size(); ++n) {
    WireRequest parsed;
    EXPECT_FALSE(ParseRequest(std::string_view(bytes).substr(0, n), &parsed).ok()) << "prefix of " << n << " bytes";
  }
  WireRequest parsed;
  EXPECT_FALSE(ParseRequest(std::string(11, '\xff'), &parsed).ok());  // a varint over 10 bytes
  EXPECT_FALSE(ParseRequest(std::string("\x0b", 1), &parsed).ok());   // a group
}

TEST(WorkerCodecTest, ResponseParsesWithTheGeneratedClasses) {
  WireResponse response;
  response.status.emplace(WireCode::kUnsupported, "no kernel for Foo");
  WireAdapterInfo& info = response.info.emplace();
  info.name = "reference";
  info.version = "1";
  info.backend_version = "b";
  info.devices.push_back({"cpu", "cpu", "host"});
  info.devices.push_back({"npu", "npu", ""});
  info.abi_version = 1;
  info.pid = 1234567;
  WireCapabilities& caps = response.capabilities.emplace();
  caps.operators = {"ai.onnx:Add", "com.microsoft:*"};
  caps.data_types = {1, 16, -1};
  caps.variant_targets = {"com.example.npu"};
  caps.can_forbid_fallback = true;
  caps.declared = true;
  WireSessionCreated& session = response.session.emplace();
  session.session_id = 9;
  session.load_ms_cold = 12.5;
  session.load_ms_warm = {1.25, 0.5};
  session.variants = {{"g:0", "main"}};
  session.placement = {{"Add#0", "cpu"}, {"n1", "cpu-fallback"}};
  session.compile_ms_cold = 3.5;
  session.compile_ms_warm = {0.25};
  session.kernels_compiled = 4;
  session.kernels_deferred = 1;
  WireRunDone& run = response.run.emplace();
  run.run_ms = 0.75;
  WireValue& out = run.outputs.emplace_back();
  out.name = "y";
  out.tensor = FloatTensor("y", {5, 6}).SerializeAsString();
  response.peak_rss_kb = 65536;

  protocol::Response parsed;
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(response)));
  EXPECT_EQ(parsed.status().code(), protocol::UNSUPPORTED);
  EXPECT_EQ(parsed.status().message(), "no kernel for Foo");
  EXPECT_EQ(parsed.peak_rss_kb(), 65536u);
  // The oneof keeps the last body written; the others are checked one at a time below.
  ASSERT_TRUE(parsed.has_run());
  EXPECT_EQ(parsed.run().run_ms(), 0.75);
  ASSERT_EQ(parsed.run().outputs_size(), 1);
  EXPECT_EQ(parsed.run().outputs(0).name(), "y");
  EXPECT_EQ(parsed.run().outputs(0).tensor().float_data(1), 6.0f);

  WireResponse only_info;
  only_info.info = info;
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(only_info)));
  EXPECT_FALSE(parsed.has_status());
  EXPECT_EQ(parsed.info().protocol_version(), 1u);
  EXPECT_EQ(parsed.info().name(), "reference");
  ASSERT_EQ(parsed.info().devices_size(), 2);
  EXPECT_EQ(parsed.info().devices(0).description(), "host");
  EXPECT_EQ(parsed.info().devices(1).name(), "npu");
  EXPECT_EQ(parsed.info().abi_version(), 1u);
  EXPECT_EQ(parsed.info().pid(), 1234567u);

  WireResponse only_caps;
  only_caps.capabilities = caps;
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(only_caps)));
  ASSERT_EQ(parsed.capabilities().operators_size(), 2);
  EXPECT_EQ(parsed.capabilities().operators(1), "com.microsoft:*");
  ASSERT_EQ(parsed.capabilities().data_types_size(), 3);
  EXPECT_EQ(parsed.capabilities().data_types(2), -1);
  EXPECT_EQ(parsed.capabilities().variant_targets(0), "com.example.npu");
  EXPECT_FALSE(parsed.capabilities().honours_aliasing());
  EXPECT_TRUE(parsed.capabilities().can_forbid_fallback());
  EXPECT_TRUE(parsed.capabilities().declared());

  WireResponse only_session;
  only_session.session = session;
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(only_session)));
  EXPECT_EQ(parsed.session().session_id(), 9u);
  EXPECT_EQ(parsed.session().load_ms_cold(), 12.5);
  ASSERT_EQ(parsed.session().load_ms_warm_size(), 2);
  EXPECT_EQ(parsed.session().load_ms_warm(1), 0.5);
  EXPECT_EQ(parsed.session().variants(0).entry(), "g:0");
  EXPECT_EQ(parsed.session().variants(0).chosen(), "main");
  ASSERT_EQ(parsed.session().placement_size(), 2);
  EXPECT_EQ(parsed.session().placement(1).node(), "n1");
  EXPECT_EQ(parsed.session().placement(1).device(), "cpu-fallback");
  EXPECT_EQ(parsed.session().compile_ms_cold(), 3.5);
  ASSERT_EQ(parsed.session().compile_ms_warm_size(), 1);
  EXPECT_EQ(parsed.session().compile_ms_warm(0), 0.25);
  EXPECT_EQ(parsed.session().kernels_compiled(), 4u);
  EXPECT_EQ(parsed.session().kernels_deferred(), 1u);
  // A session without a compile step sends none of the four.
  WireResponse plain;
  plain.session = WireSessionCreated{};
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(plain)));
  EXPECT_FALSE(parsed.session().has_compile_ms_cold());
  EXPECT_FALSE(parsed.session().has_kernels_compiled());
}

TEST(WorkerCodecTest, RunMemoryFieldsAreWrittenOnlyWhenKnown) {
  WireResponse response;
  WireRunDone& run = response.run.emplace();
  run.run_ms = 2;
  protocol::Response parsed;
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(response)));
  EXPECT_FALSE(parsed.run().has_run_peak_rss_kb());
  EXPECT_FALSE(parsed.run().has_rss_kb());

  run.run_peak_rss_kb = uint64_t{5} << 33;  // wider than 32 bits
  run.rss_kb = 4096;
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(response)));
  ASSERT_TRUE(parsed.run().has_run_peak_rss_kb());
  EXPECT_EQ(parsed.run().run_peak_rss_kb(), uint64_t{5} << 33);
  ASSERT_TRUE(parsed.run().has_rss_kb());
  EXPECT_EQ(parsed.run().rss_kb(), 4096u);
  EXPECT_EQ(parsed.run().run_ms(), 2.0);

  run.run_peak_rss_kb.reset();  // a reset that failed: the peak stays absent, the size does not
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(response)));
  EXPECT_FALSE(parsed.run().has_run_peak_rss_kb());
  EXPECT_EQ(parsed.run().rss_kb(), 4096u);
}

TEST(WorkerCodecTest, RunCostIsWrittenOnlyWhenTheAdapterReportsIt) {
  WireResponse response;
  WireRunDone& run = response.run.emplace();
  protocol::Response parsed;
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(response)));
  EXPECT_FALSE(parsed.run().has_cost());

  run.cost = WireRunCost{2, 4096, 1, 12, uint64_t{3} << 34, (uint64_t{3} << 34) + 7};
  ASSERT_TRUE(parsed.ParseFromString(SerializeResponse(response)));
  ASSERT_TRUE(parsed.run().has_cost());
  const protocol::RunCost& cost = parsed.run().cost();
  EXPECT_EQ(cost.to_device_copies(), 2u);
  EXPECT_EQ(cost.to_device_bytes(), 4096u);
  EXPECT_EQ(cost.to_host_copies(), 1u);
  EXPECT_EQ(cost.to_host_bytes(), 12u);
  EXPECT_EQ(cost.device_bytes(), uint64_t{3} << 34);
  EXPECT_EQ(cost.device_peak_bytes(), (uint64_t{3} << 34) + 7);
}

TEST(WorkerCodecTest, EmptyResponseIsAnEmptyMessage) { EXPECT_EQ(SerializeResponse(WireResponse()), ""); }

TEST(WorkerCodecTest, RawFramesRoundTripAndEndCleanly) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_TRUE(WriteRawFrame(fds[1], "first").ok());
  ASSERT_TRUE(WriteRawFrame(fds[1], "").ok());
  ::close(fds[1]);
  std::string payload;
  ASSERT_TRUE(ReadRawFrame(fds[0], &payload).ok());
  EXPECT_EQ(payload, "first");
  ASSERT_TRUE(ReadRawFrame(fds[0], &payload).ok());
  EXPECT_EQ(payload, "");
  EXPECT_EQ(ReadRawFrame(fds[0], &payload).code(), StatusCode::kUnavailable);
  ::close(fds[0]);
}

// A length prefix is only a claim: the frame's buffer grows with the bytes
// that arrive, so a corrupt prefix announcing 1 GiB before three bytes does
// not allocate 1 GiB (fuzz/regressions/protocol_fuzzer/).
TEST(WorkerCodecTest, RawFrameAllocatesOnlyForBytesThatArrive) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const uint32_t size = protocol::kMaxFrameBytes;
  const char frame[] = {static_cast<char>(size & 0xff), static_cast<char>((size >> 8) & 0xff),
                        static_cast<char>((size >> 16) & 0xff), static_cast<char>(size >> 24), 'a', 'b', 'c'};
  ASSERT_EQ(::write(fds[1], frame, sizeof frame), static_cast<ssize_t>(sizeof frame));
  ::close(fds[1]);
  std::string payload;
  EXPECT_EQ(ReadRawFrame(fds[0], &payload).code(), StatusCode::kIoError);
  EXPECT_LT(payload.capacity(), size_t{4} << 20);
  ::close(fds[0]);
}

TEST(WorkerCodecTest, RawFrameLongerThanOneChunkArrivesWhole) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string sent(3 * (size_t{1} << 20) + 17, '\0');
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i * 31 % 251);
  // A pipe holds 64 KiB: the frame is written while it is read.
  std::thread writer([&] {
    EXPECT_TRUE(WriteRawFrame(fds[1], sent).ok());
    ::close(fds[1]);
  });
  std::string payload;
  EXPECT_TRUE(ReadRawFrame(fds[0], &payload).ok());
  writer.join();
  EXPECT_EQ(payload, sent);
  ::close(fds[0]);
}

}  // namespace
}  // namespace parity::worker
