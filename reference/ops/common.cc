// Broadcasting and other kernel helpers.
#include "reference/ops/common.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "reference/core/parallel.h"
#include "reference/ops/gemm.h"

namespace parity::ops {

std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

StatusOr<Shape> BroadcastShapes(const KernelContext& ctx, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[offset + i];
      const int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const auto& t : shapes) all += ShapeToString(t) + " ";
      return ctx.Error("shapes cannot be broadcast together: ", all);
    }
  }
  return out;
}

BroadcastIndexer::BroadcastIndexer(const Shape& input, const Shape& output)
    : output_dims_(output), input_strides_(output.size(), 0) {
  identity_ = input == output;
  const std::vector<int64_t> in_strides = Strides(input);
  const size_t offset = output.size() - input.size();
  for (size_t i = 0; i < input.size(); ++i) {
    input_strides_[offset + i] = input[i] == 1 ? 0 : in_strides[i];
  }
}

int64_t BroadcastIndexer::operator()(int64_t output_index) const {
  if (identity_) return output_index;
  int64_t in = 0;
  for (int64_t axis = static_cast<int64_t>(output_dims_.size()) - 1; axis >= 0 && output_index > 0; --axis) {
    const int64_t d = output_dims_[axis];
    in += (output_index % d) * input_strides_[axis];
    output_index /= d;
  }
  return in;
}

StatusOr<int64_t> NormalizeAxis(const KernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.Error("axis ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

StatusOr<Tensor> Allocate(const KernelContext& ctx, DataType dtype, Shape shape) {
  StatusOr<Tensor> t = Tensor::Create(dtype, std::move(shape));
  if (!t.ok()) return t.status().WithContext(ctx.NodeLabel());
  return t;
}

StatusOr<Value> MakeResult(const KernelContext& ctx, DataType dtype, Shape shape, const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::FromDoubles(dtype, std::move(shape), values);
  if (!t.ok()) return t.status().WithContext(ctx.NodeLabel());
  return Value::FromTensor(std::move(t).value());
}

namespace {
// Elements per conversion task of ReadAllDoubles and WriteAllDoubles.
constexpr int64_t kConvertChunk = int64_t{1} << 16;
}  // namespace

void FreeDoubles::operator()(double* p) const { std::free(p); }

DoubleBuffer AllocateDoubles(int64_t count) {
  void* p = std::malloc(std::max<size_t>(static_cast<size_t>(count), 1) * sizeof(double));
  if (!p) throw std::bad_alloc();
  return DoubleBuffer(static_cast<double*>(p));
}

DoubleBuffer ReadAllDoubles(const Tensor& t, bool* finite) {
  DoubleBuffer values = AllocateDoubles(t.size());
  std::atomic<bool> special{false};
  ParallelFor((t.size() + kConvertChunk - 1) / kConvertChunk, [&](int64_t chunk) {
    const int64_t begin = chunk * kConvertChunk;
    const int64_t count = std::min(kConvertChunk, t.size() - begin);
    t.ReadDoubles(begin, count, values.get() + begin);
    // Scanned while the chunk is still in cache.
    if (finite && HoldsSpecialValue(values.get() + begin, count)) special.store(true, std::memory_order_relaxed);
  });
  if (finite) *finite = !special.load();
  return values;
}

void WriteAllDoubles(const double* values, Tensor* t) {
  ParallelFor((t->size() + kConvertChunk - 1) / kConvertChunk, [&](int64_t chunk) {
    const int64_t begin = chunk * kConvertChunk;
    t->WriteDoubles(begin, std::min(kConvertChunk, t->size() - begin), values + begin);
  });
}

std::vector<int64_t> ReadInt64s(const Tensor& tensor) { return tensor.ToInt64s(); }

Status RequireFloat32OrHalf(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (IsFloat32OrHalf(t.dtype()) || (ctx.widened() && t.dtype() == DataType::kDouble)) return Status::Ok();
  return ctx.Error(what, " must be float32, float16 or bfloat16, got ", t.Description());
}

}  // namespace parity::ops
