// Tests of the residency ledger (residency.h) with host memory as the
// device: what is uploaded once and read where it lies, which results stay
// on the device until the host reads them, what an in-place write on the
// device leaves behind on the host, and what every copy counts.
#include "adapters/cuda/residency.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace parity::adapters::cuda {
namespace {

class FakeBuffer {
 public:
  explicit FakeBuffer(size_t bytes) : bytes_(bytes, 0) {}
  size_t bytes() const { return bytes_.size(); }
  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }

 private:
  std::vector<uint8_t> bytes_;
};

struct FakeDevice {
  int allocations = 0;
  bool fail_downloads = false, fail_copies = false;
  Residency<FakeBuffer> ledger{Residency<FakeBuffer>::Device{
      .allocate = [this](size_t bytes) -> StatusOr<std::shared_ptr<FakeBuffer>> {
        ++allocations;
        return std::make_shared<FakeBuffer>(bytes);
      },
      .upload =
          [](const Tensor& host, FakeBuffer& device) {
            std::memcpy(device.data(), host.raw_bytes(), host.byte_size());
            return Status::Ok();
          },
      .download = [this](const FakeBuffer& device, Tensor& host) -> Status {
        if (fail_downloads) return Status(StatusCode::kInternal, "the copy failed");
        std::memcpy(host.mutable_raw_bytes(), device.data(), host.byte_size());
        return Status::Ok();
      },
      .copy = [this](const FakeBuffer& from, FakeBuffer& to, size_t bytes) -> Status {
        if (fail_copies) return Status(StatusCode::kInternal, "the copy failed");
        std::memcpy(to.data(), from.data(), bytes);
        return Status::Ok();
      },
  }};
};

Tensor Floats(std::vector<double> values) {
  const auto n = static_cast<int64_t>(values.size());
  return *Tensor::FromDoubles(DataType::kFloat, {n}, values);
}

// What a kernel would write into a fresh device buffer.
std::shared_ptr<FakeBuffer> Written(const Tensor& value) {
  auto buffer = std::make_shared<FakeBuffer>(value.byte_size());
  std::memcpy(buffer->data(), value.raw_bytes(), value.byte_size());
  return buffer;
}

TEST(ResidencyTest, AnInputIsUploadedOnceAndThenReadWhereItLies) {
  FakeDevice device;
  const Tensor x = Floats({1, 2, 3});
  StatusOr<FakeBuffer*> first = device.ledger.DeviceCopy(x);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  StatusOr<FakeBuffer*> again = device.ledger.DeviceCopy(x.Reshaped({3, 1}));  // a view of the same buffer
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*first, *again);
  EXPECT_EQ(device.allocations, 1);
  EXPECT_EQ(device.ledger.transfers().uploads, 1u);
  EXPECT_EQ(device.ledger.transfers().upload_bytes, 12u);
  EXPECT_EQ(device.ledger.transfers().resident_reads, 1u);
  EXPECT_TRUE(device.ledger.HostCurrent(x));
}

TEST(ResidencyTest, AResultStaysOnTheDeviceUntilTheHostReadsItOnce) {
  FakeDevice device;
  StatusOr<Tensor> made = device.ledger.Made(Written(Floats({4, 5})), DataType::kFloat, {2});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_FALSE(device.ledger.HostCurrent(*made));
  EXPECT_EQ(made->GetDouble(0), 0);  // allocated, not copied
  // Read on the device: no copy either way.
  ASSERT_TRUE(device.ledger.DeviceCopy(*made).ok());
  EXPECT_EQ(device.ledger.transfers().uploads + device.ledger.transfers().downloads, 0u);
  // Read on the host through a view: the whole buffer comes back, once.
  const Tensor view = made->Reshaped({1, 2});
  ASSERT_TRUE(device.ledger.Bring(view).ok());
  ASSERT_TRUE(device.ledger.Bring(*made).ok());
  EXPECT_EQ(made->GetDouble(0), 4);
  EXPECT_EQ(made->GetDouble(1), 5);
  EXPECT_EQ(device.ledger.transfers().downloads, 1u);
  EXPECT_EQ(device.ledger.transfers().download_bytes, 8u);
  // A tensor the ledger does not hold is the host's own: nothing to bring.
  ASSERT_TRUE(device.ledger.Bring(Floats({7})).ok());
  EXPECT_EQ(device.ledger.transfers().downloads, 1u);
}

TEST(ResidencyTest, AWriteOnTheDeviceLeavesTheHostBehindUntilRead) {
  FakeDevice device;
  Tensor cache = Floats({1, 1, 1, 1});
  StatusOr<FakeBuffer*> copy = device.ledger.DeviceCopy(cache);
  ASSERT_TRUE(copy.ok());
  reinterpret_cast<float*>((*copy)->data())[2] = 9;  // one row, in place
  device.ledger.DeviceWrote(cache);
  EXPECT_FALSE(device.ledger.HostCurrent(cache));
  EXPECT_EQ(cache.GetDouble(2), 1);
  ASSERT_TRUE(device.ledger.Bring(cache).ok());
  EXPECT_EQ(cache.GetDouble(2), 9);
  EXPECT_TRUE(device.ledger.HostCurrent(cache));
}

TEST(ResidencyTest, ForgettingSaysWhetherTheHostHeldTheValue) {
  FakeDevice device;
  const Tensor input = Floats({1, 2});
  ASSERT_TRUE(device.ledger.DeviceCopy(input).ok());
  EXPECT_TRUE(device.ledger.Forget(input));  // the host had it
  EXPECT_FALSE(device.ledger.Resident(input));
  // Read again: uploaded again (the host wrote it, say).
  ASSERT_TRUE(device.ledger.DeviceCopy(input).ok());
  EXPECT_EQ(device.ledger.transfers().uploads, 2u);
  StatusOr<Tensor> made = device.ledger.Made(Written(Floats({3})), DataType::kFloat, {1});
  ASSERT_TRUE(made.ok());
  EXPECT_FALSE(device.ledger.Forget(*made));  // the device had the only current value
}

TEST(ResidencyTest, AFailedCopyBackLeavesTheHostBehindAndCanBeTriedAgain) {
  FakeDevice device;
  StatusOr<Tensor> made = device.ledger.Made(Written(Floats({6})), DataType::kFloat, {1});
  ASSERT_TRUE(made.ok());
  device.fail_downloads = true;
  const Status failed = device.ledger.Bring(*made);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("the copy failed"), std::string::npos);
  EXPECT_FALSE(device.ledger.HostCurrent(*made));
  EXPECT_EQ(device.ledger.transfers().downloads, 0u);
  device.fail_downloads = false;
  ASSERT_TRUE(device.ledger.Bring(*made).ok());
  EXPECT_EQ(made->GetDouble(0), 6);
}

TEST(ResidencyTest, ACopyWhoseHostBufferNoOneHoldsIsDropped) {
  FakeDevice device;
  {
    const Tensor gone = Floats({1, 2, 3});
    ASSERT_TRUE(device.ledger.DeviceCopy(gone).ok());
  }
  const Tensor kept = Floats({4});
  ASSERT_TRUE(device.ledger.DeviceCopy(kept).ok());  // an upload drops the unheld first
  EXPECT_EQ(device.ledger.size(), 1u);
  EXPECT_TRUE(device.ledger.Resident(kept));
  // A run's intermediate, let go when the run returns, goes when asked.
  {
    StatusOr<Tensor> intermediate = device.ledger.Made(Written(Floats({5})), DataType::kFloat, {1});
    ASSERT_TRUE(intermediate.ok());
    EXPECT_EQ(device.ledger.size(), 2u);
  }
  device.ledger.DropUnheld();
  EXPECT_EQ(device.ledger.size(), 1u);
}

TEST(ResidencyTest, ALostBufferFailsEveryLaterUse) {
  FakeDevice device;
  StatusOr<Tensor> made = device.ledger.Made(Written(Floats({1, 2})), DataType::kFloat, {2});
  ASSERT_TRUE(made.ok());
  EXPECT_FALSE(device.ledger.WriteFailed(*made));  // the device held its only value
  const Status brought = device.ledger.Bring(*made);
  EXPECT_NE(brought.message().find("was lost: a write into its device copy failed"), std::string::npos)
      << brought.ToString();
  EXPECT_FALSE(device.ledger.DeviceCopy(*made).ok());
  EXPECT_EQ(device.ledger.transfers().downloads, 0u);
}

TEST(ResidencyTest, AResultLargerThanItsBufferIsRefused) {
  FakeDevice device;
  StatusOr<Tensor> made = device.ledger.Made(std::make_shared<FakeBuffer>(4), DataType::kFloat, {2});
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("larger than its device buffer of 4 bytes"), std::string::npos);
}

TEST(ResidencyTest, AWholeAliasResultOnTheDeviceFillsTheBuffersCopyThere) {
  FakeDevice device;
  Tensor state = Floats({1, 1, 1});
  StatusOr<Tensor> result = device.ledger.Made(Written(Floats({4, 5, 6})), DataType::kFloat, {3});
  ASSERT_TRUE(result.ok());
  // The state has no device copy yet: one is made, not uploaded.
  StatusOr<bool> copied = device.ledger.CopyInto(*result, state);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_TRUE(*copied);
  EXPECT_EQ(device.ledger.transfers().uploads, 0u);
  EXPECT_EQ(device.ledger.transfers().downloads, 0u);
  EXPECT_FALSE(device.ledger.HostCurrent(state));
  EXPECT_EQ(state.GetDouble(0), 1);  // the host is behind until read
  // The next step reads the state where it lies, and fills it again there.
  StatusOr<FakeBuffer*> read = device.ledger.DeviceCopy(state);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(reinterpret_cast<const float*>((*read)->data())[2], 6);
  StatusOr<Tensor> next = device.ledger.Made(Written(Floats({7, 8, 9})), DataType::kFloat, {3});
  ASSERT_TRUE(device.ledger.CopyInto(*next, state).ok());
  EXPECT_EQ(device.allocations, 1);  // the state's one copy (the results came in buffers of their own)
  ASSERT_TRUE(device.ledger.Bring(state).ok());
  EXPECT_EQ(state.ToDoubles(), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(device.ledger.transfers().downloads, 1u);
  // A result the host made is not on the device: the host copies it.
  StatusOr<bool> host_made = device.ledger.CopyInto(Floats({0, 0, 0}), state);
  ASSERT_TRUE(host_made.ok());
  EXPECT_FALSE(*host_made);
}

TEST(ResidencyTest, AFailedWholeAliasCopyLosesOnlyAValueTheDeviceAloneHeld) {
  FakeDevice device;
  Tensor state = Floats({1, 2});
  ASSERT_TRUE(device.ledger.DeviceCopy(state).ok());  // the host holds it too
  StatusOr<Tensor> result = device.ledger.Made(Written(Floats({3, 4})), DataType::kFloat, {2});
  ASSERT_TRUE(result.ok());
  device.fail_copies = true;
  EXPECT_FALSE(device.ledger.CopyInto(*result, state).ok());
  EXPECT_FALSE(device.ledger.Resident(state));  // dropped: the host's bytes are the value
  device.fail_copies = false;
  ASSERT_TRUE(device.ledger.CopyInto(*result, state).ok());
  device.fail_copies = true;
  StatusOr<Tensor> again = device.ledger.Made(Written(Floats({5, 6})), DataType::kFloat, {2});
  EXPECT_FALSE(device.ledger.CopyInto(*again, state).ok());
  const Status lost = device.ledger.Bring(state);  // the device held the only current value
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(lost.message().find("was lost"), std::string::npos) << lost.ToString();
}

}  // namespace
}  // namespace parity::adapters::cuda
