// What every oneDNN lowering shares: the one CPU engine and stream of the
// process, the element types this CPU runs (read from oneDNN's effective
// ISA at run time), and views of the reference's host tensors as oneDNN
// memory objects: plain row-major layouts over the tensor's own buffer, so
// that no copy is made between a lowered node and a fallback node.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/device/lowering.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "reference/core/tensor.h"

namespace parity::adapters::onednn {

using dnnl_dt = dnnl::memory::data_type;
using dnnl_dims = dnnl::memory::dims;

dnnl::engine& Engine();
// The stream of the session's thread; calls on sessions come from one
// thread (spec/abi/parity_adapter.h), and a worker hosts one session at a time.
dnnl::stream& Stream();

// "avx512_core_amx", from oneDNN's effective ISA.
std::string IsaName();
bool HasBfloat16();  // the ISA has bfloat16 instructions (AVX512_BF16, AMX or AVX2-VNNI-2)
bool HasFloat16();   // the ISA has float16 arithmetic (AVX512_FP16 or AVX2-VNNI-2)

// The oneDNN type of a reference type, when oneDNN has one.
std::optional<dnnl_dt> DnnlType(DataType type);
// The floating types a primitive of this CPU computes: float32, and the
// 16-bit ones the ISA has.
bool IsComputedFloat(DataType type);

// oneDNN's own message for an error it threw, with what was being done.
std::string DnnlError(const dnnl::error& e);

// The plain (row-major) descriptor of `dims` with `type`; rank 0 is {1}.
dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims, dnnl_dt type);

// A memory object over `t`'s buffer (no copy). The tensor must stay alive
// and its buffer unchanged while the memory is used. Inside a WrapScope the
// object is a kept one re-pointed at the buffer, valid until the outermost
// scope ends; outside one it is new and the caller's to keep.
dnnl::memory Wrap(const Tensor& t, const dnnl::memory::desc& desc);
dnnl::memory Wrap(const Tensor& t);  // with PlainDesc(t.shape(), its type)

// The run of one lowered node: the memory objects Wrap hands out inside it
// are lent for its length only (their primitives have finished when it
// ends), and reused by the next node's Wraps instead of made again.
class WrapScope {
 public:
  WrapScope();
  ~WrapScope();
  WrapScope(const WrapScope&) = delete;
  WrapScope& operator=(const WrapScope&) = delete;
};

// A primitive and memory objects for its arguments, made once with its
// plan and re-pointed at each run's buffers: a run makes no memory object
// and builds no argument map (in a small model's step such per-node work,
// not the arithmetic, is most of the time). Run is called from the
// session's one thread at a time, as the node's is.
class BoundPrimitive {
 public:
  BoundPrimitive() = default;
  // `args`: oneDNN's argument index (DNNL_ARG_SRC, ...) and its descriptor,
  // in the order Run takes the buffers.
  BoundPrimitive(dnnl::primitive primitive, const std::vector<std::pair<int, dnnl::memory::desc>>& args);
  // Runs it on `buffers` (one per argument, in order; any past the last
  // argument are not read) and waits for it; throws dnnl::error as execute
  // does, and when fewer buffers than arguments are given.
  void Run(std::initializer_list<const void*> buffers) const { Run(buffers.begin(), buffers.size()); }
  // The same with `count` buffers at `buffers`, for a primitive whose
  // argument count is known only with its plan (a concat's sources).
  void Run(const void* const* buffers, size_t count) const;

 private:
  dnnl::primitive primitive_;
  std::vector<dnnl::memory> memories_;
  std::vector<dnnl_exec_arg_t> args_;
};

// A fresh output tensor of `type` and `dims` and the memory over it.
StatusOr<Tensor> NewTensor(DataType type, const std::vector<int64_t>& dims);

// `dims` padded on the left with 1s to `rank`.
std::vector<int64_t> LeftPad(const std::vector<int64_t>& dims, size_t rank);

// numpy.matmul's shapes, one rule for every matrix-product lowering: `a`
// and `b` as the primitive takes them (a 1-D A gains a leading 1, a 1-D B a
// trailing 1, then both are padded on the left to one rank), the product's
// dims `c` (batch dims broadcast, a 0 wins), and the operator's output dims
// `out` (`c` without the dims the 1-D operands gained). An error names what
// the shapes break; a scalar operand is one.
struct MatMulShapes {
  std::vector<int64_t> a, b, c, out;
};
StatusOr<MatMulShapes> NumpyMatMulShapes(std::vector<int64_t> a, std::vector<int64_t> b);

// Whether `dims` broadcasts to `out` (numpy's rules) without widening it.
bool BroadcastsInto(const std::vector<int64_t>& dims, const std::vector<int64_t>& out);

// Whether `view` is the ONNX operator `op` (the default domain).
bool IsOnnxOp(const NodeView& view, std::string_view op);

// The input types a lowering of a floating-point kernel accepts: every
// input `node` has among `inputs` must have a known type, all the same,
// that this CPU computes; otherwise why not (kUnimplemented).
Status RequireSameComputedFloat(const NodeView& node, std::vector<int> inputs);

}  // namespace parity::adapters::onednn
