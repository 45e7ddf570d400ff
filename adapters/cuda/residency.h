// Which host buffers have a copy in device memory, and which side holds
// the newer value (cuda_context.h). A device copy, while it is kept, always
// holds the value; the host buffer holds it too unless a kernel wrote the
// device copy since (a result made on the device, a cache written in
// place there), and then gets it only when the host reads it (Bring).
// A template over the device buffer and its copies, so that the ledger is
// tested on the host (residency_test.cc) with host memory as the device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "reference/core/status.h"
#include "reference/core/tensor.h"

namespace parity::adapters::cuda {

// What moved between the host and the device, counted since the ledger was made.
struct Transfers {
  uint64_t uploads = 0, upload_bytes = 0;      // host to device
  uint64_t downloads = 0, download_bytes = 0;  // device to host
  uint64_t resident_reads = 0;                 // inputs found on the device
};

template <typename Buffer>
class Residency {
 public:
  // The device's side: a buffer of at least `bytes`, and the copies between
  // a host tensor's bytes and a buffer (a download waits for the kernels
  // queued before it).
  struct Device {
    std::function<StatusOr<std::shared_ptr<Buffer>>(size_t bytes)> allocate;
    std::function<Status(const Tensor& host, Buffer& device)> upload;
    std::function<Status(const Buffer& device, Tensor& host)> download;
    std::function<Status(const Buffer& from, Buffer& to, size_t bytes)> copy;  // device to device
  };

  explicit Residency(Device device) : device_(std::move(device)) {}

  // The device copy of `host`'s buffer: kept, or uploaded now and kept.
  StatusOr<Buffer*> DeviceCopy(const Tensor& host) {
    if (Entry* kept = Find(host)) {
      PARITY_RETURN_IF_ERROR(Usable(*kept));
      ++transfers_.resident_reads;
      return kept->device.get();
    }
    DropUnheld();
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> device, device_.allocate(host.byte_size()));
    if (host.byte_size() > 0) PARITY_RETURN_IF_ERROR(device_.upload(host, *device));
    ++transfers_.uploads;
    transfers_.upload_bytes += host.byte_size();
    entries_.push_back({host, device, true});
    return device.get();
  }

  // A host tensor of `type` and `shape` for what a kernel wrote into
  // `device`: its buffer is allocated, its bytes come back when the host
  // reads it (Bring). Every kernel of this adapter reads it on the device.
  StatusOr<Tensor> Made(std::shared_ptr<Buffer> device, DataType type, const Shape& shape) {
    PARITY_ASSIGN_OR_RETURN(Tensor host, Tensor::Create(type, shape));
    if (host.byte_size() > device->bytes()) {
      return Status(StatusCode::kInternal, StrCat(host.Description(), " is larger than its device buffer of ",
                                                  device->bytes(), " bytes"));
    }
    DropUnheld();
    entries_.push_back({host, std::move(device), false});
    return host;
  }

  // A kernel wrote `host`'s device copy (in place): the host buffer is
  // behind until it is read. No effect on a buffer without a device copy.
  void DeviceWrote(const Tensor& host) {
    if (Entry* kept = Find(host)) kept->host_current = false;
  }

  // Before the host reads `host`: when the device copy is newer, its bytes
  // come back into the host buffer (the whole buffer, views included).
  Status Bring(const Tensor& host) {
    Entry* kept = Find(host);
    if (!kept || kept->host_current) return Status::Ok();
    PARITY_RETURN_IF_ERROR(Usable(*kept));
    if (kept->host.byte_size() > 0) PARITY_RETURN_IF_ERROR(device_.download(*kept->device, kept->host));
    kept->host_current = true;
    ++transfers_.downloads;
    transfers_.download_bytes += kept->host.byte_size();
    return Status::Ok();
  }

  // A whole-region alias's result `from` into the aliased buffer `into`
  // (NodeKernels::copy_into): when `from` has a device copy, it is copied
  // there into `into`'s, which holds the value from then on (made now if
  // there is none, without an upload: every byte is written). False when
  // `from` has no device copy: the host copies.
  StatusOr<bool> CopyInto(const Tensor& from, const Tensor& into) {
    DropUnheld();
    const Entry* source = Find(from);
    if (!source) return false;
    PARITY_RETURN_IF_ERROR(Usable(*source));
    const std::shared_ptr<Buffer> source_device = source->device;
    Entry* target = Find(into);
    if (!target) {
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> device, device_.allocate(into.byte_size()));
      entries_.push_back({into, std::move(device), true});
      target = &entries_.back();
    }
    if (into.byte_size() > 0) {
      Status copied = device_.copy(*source_device, *target->device, into.byte_size());
      if (!copied.ok()) {
        WriteFailed(into);
        return copied;
      }
    }
    target->host_current = false;
    target->lost = false;
    return true;
  }

  // The host wrote `host`'s buffer (NodeKernels::host_wrote), or a failed
  // write found the host's bytes current (WriteFailed): the device copy
  // goes. False when the device copy held the only current value.
  bool Forget(const Tensor& host) {
    bool kept_value = true;
    std::erase_if(entries_, [&](const Entry& e) {
      if (!e.host.SharesBufferWith(host)) return false;
      kept_value = kept_value && e.host_current;
      return true;
    });
    return kept_value;
  }

  // A write into `host`'s device copy failed, and what it holds is unknown.
  // Where the host's buffer holds the value, the device copy goes (true);
  // where the device held the only current value, the buffer is lost
  // (false): every later use of it, on either side, fails saying so, rather
  // than reading what is left.
  bool WriteFailed(const Tensor& host) {
    Entry* kept = Find(host);
    if (!kept || kept->host_current) return Forget(host);
    kept->lost = true;
    return false;
  }

  // Drops the copies whose host buffer nothing else holds: no one can read
  // them again, on either side. Done before each new copy, and before the
  // device memory is read (a run's values are let go when it returns).
  void DropUnheld() {
    std::erase_if(entries_, [](const Entry& e) { return e.host.BufferUseCount() <= 1; });
  }

  bool HostCurrent(const Tensor& host) const {
    const Entry* kept = Find(host);
    return !kept || kept->host_current;
  }
  bool Resident(const Tensor& host) const { return Find(host) != nullptr; }
  const Transfers& transfers() const { return transfers_; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Tensor host;  // holds the host buffer, so that its address is not reused
    std::shared_ptr<Buffer> device;
    bool host_current;
    bool lost = false;
  };
  static Status Usable(const Entry& e) {
    if (!e.lost) return Status::Ok();
    return Status(StatusCode::kInternal, StrCat(e.host.Description(), " was lost: a write into its device copy failed "
                                                                      "while the device held its only current value"));
  }
  const Entry* Find(const Tensor& host) const {
    for (const Entry& e : entries_) {
      if (e.host.SharesBufferWith(host)) return &e;
    }
    return nullptr;
  }
  Entry* Find(const Tensor& host) { return const_cast<Entry*>(std::as_const(*this).Find(host)); }
  Device device_;
  std::vector<Entry> entries_;
  Transfers transfers_;
};

}  // namespace parity::adapters::cuda
