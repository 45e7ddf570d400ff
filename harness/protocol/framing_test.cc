// Tests of length-prefixed frames over a pipe: round trips, deadlines, and
// every way a stream can end or break.
#include "harness/protocol/framing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "parity_worker.pb.h"

namespace parity {
namespace {

using protocol::CreateSession;
using protocol::ReadFrame;
using protocol::Request;
using protocol::WriteFrame;

// A pipe whose ends close with the test.
class Pipe {
 public:
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_ = fds[0];
    write_ = fds[1];
  }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  int read_fd() const { return read_; }
  int write_fd() const { return write_; }
  void CloseRead() {
    if (read_ >= 0) ::close(read_);
    read_ = -1;
  }
  void CloseWrite() {
    if (write_ >= 0) ::close(write_);
    write_ = -1;
  }
  void WriteBytes(const std::string& bytes) {
    ASSERT_EQ(::write(write_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }

 private:
  int read_ = -1;
  int write_ = -1;
};

Request SampleRequest() {
  Request request;
  CreateSession* create = request.mutable_create_session();
  create->set_model("model bytes \0 with a zero", 25);
  create->set_warm_repeats(3);
  create->mutable_options()->set_device("cpu");
  create->mutable_options()->set_case_name("test_add");
  return request;
}

TEST(FramingTest, RoundTripThroughAPipe) {
  Pipe pipe;
  const Request sent = SampleRequest();
  ASSERT_TRUE(WriteFrame(pipe.write_fd(), sent).ok());
  Request received;
  const Status read = ReadFrame(pipe.read_fd(), &received, 5000);
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(received.SerializeAsString(), sent.SerializeAsString());
  EXPECT_EQ(received.create_session().options().case_name(), "test_add");
}

TEST(FramingTest, PrefixIsFourBytesLittleEndian) {
  Pipe pipe;
  const Request sent = SampleRequest();
  ASSERT_TRUE(WriteFrame(pipe.write_fd(), sent).ok());
  pipe.CloseWrite();
  std::string bytes(4 + sent.ByteSizeLong() + 1, '\0');
  const ssize_t n = ::read(pipe.read_fd(), bytes.data(), bytes.size());
  ASSERT_EQ(n, static_cast<ssize_t>(4 + sent.ByteSizeLong()));
  const size_t size = sent.ByteSizeLong();
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), size & 0xff);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), (size >> 8) & 0xff);
  EXPECT_EQ(bytes[2], 0);
  EXPECT_EQ(bytes[3], 0);
}

TEST(FramingTest, FrameLargerThanThePipeBufferArrivesWhole) {
  Pipe pipe;
  Request sent;
  sent.mutable_create_session()->set_model(std::string(3 << 20, 'x'));
  std::thread writer([&] { EXPECT_TRUE(WriteFrame(pipe.write_fd(), sent).ok()); });
  Request received;
  const Status read = ReadFrame(pipe.read_fd(), &received, 10000);
  writer.join();
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(received.create_session().model().size(), size_t{3} << 20);
}

TEST(FramingTest, NothingArrivingIsDeadlineExceeded) {
  Pipe pipe;
  Request received;
  const auto start = std::chrono::steady_clock::now();
  const Status read = ReadFrame(pipe.read_fd(), &received, 100);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(read.code(), StatusCode::kDeadlineExceeded) << read.ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(90));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST(FramingTest, HalfAFrameAtTheDeadlineIsAProtocolBreach) {
  Pipe pipe;
  pipe.WriteBytes(std::string("\x10\x00\x00\x00\x0a", 5));  // 16 bytes announced, 1 sent
  Request received;
  const Status read = ReadFrame(pipe.read_fd(), &received, 100);
  EXPECT_EQ(read.code(), StatusCode::kIoError);
  EXPECT_NE(read.message().find("stopped short"), std::string::npos) << read.message();
}

TEST(FramingTest, NothingBeforeTheDeadlineIsDeadlineExceeded) {
  Pipe pipe;
  Request received;
  EXPECT_EQ(ReadFrame(pipe.read_fd(), &received, 100).code(), StatusCode::kDeadlineExceeded);
}

TEST(FramingTest, CorruptLengthIsRefused) {
  Pipe pipe;
  pipe.WriteBytes(std::string("\xff\xff\xff\xff", 4));
  Request received;
  const Status read = ReadFrame(pipe.read_fd(), &received, 1000);
  EXPECT_EQ(read.code(), StatusCode::kIoError);
  EXPECT_NE(read.message().find("corrupt"), std::string::npos) << read.message();
}

TEST(FramingTest, CleanCloseIsUnavailable) {
  Pipe pipe;
  pipe.CloseWrite();
  Request received;
  EXPECT_EQ(ReadFrame(pipe.read_fd(), &received, 1000).code(), StatusCode::kUnavailable);
  // Without a deadline too.
  EXPECT_EQ(ReadFrame(pipe.read_fd(), &received).code(), StatusCode::kUnavailable);
}

TEST(FramingTest, CloseInsideAFrameIsIoError) {
  Pipe pipe;
  pipe.WriteBytes(std::string("\x08\x00\x00\x00\x0a\x00", 6));
  pipe.CloseWrite();
  Request received;
  const Status read = ReadFrame(pipe.read_fd(), &received, 1000);
  EXPECT_EQ(read.code(), StatusCode::kIoError);
  EXPECT_NE(read.message().find("inside a frame"), std::string::npos) << read.message();
}

TEST(FramingTest, BytesThatDoNotParseAreIoError) {
  Pipe pipe;
  pipe.WriteBytes(std::string("\x02\x00\x00\x00\xff\xff", 6));
  Request received;
  const Status read = ReadFrame(pipe.read_fd(), &received, 1000);
  EXPECT_EQ(read.code(), StatusCode::kIoError);
  EXPECT_NE(read.message().find("parity.protocol.Request"), std::string::npos) << read.message();
}

TEST(FramingTest, WritingToAClosedReaderIsUnavailableNotASignal) {
  std::signal(SIGPIPE, SIG_IGN);  // as both ends of the protocol do
  Pipe pipe;
  pipe.CloseRead();
  EXPECT_EQ(WriteFrame(pipe.write_fd(), SampleRequest()).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace parity
