// The engine, the stream, the ISA's types and the tensor views.
#include "adapters/onednn/onednn_context.h"

#include <unordered_map>
#include <vector>

#include "reference/core/status.h"

namespace parity::adapters::onednn {
namespace {

// Whether the effective ISA includes every feature bit of `wanted` (oneDNN's
// ISA values are sets of feature bits).
bool IsaIncludes(dnnl_cpu_isa_t wanted) {
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  return (isa & static_cast<unsigned>(wanted)) == static_cast<unsigned>(wanted);
}

}  // namespace

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  static dnnl::stream stream(Engine());
  return stream;
}

std::string IsaName() {
  struct Named {
    dnnl_cpu_isa_t isa;
    const char* name;
  };
  // Widest first.
  static const Named kNames[] = {
      {dnnl_cpu_isa_avx512_core_amx_fp16, "avx512_core_amx_fp16"},
      {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"},
      {dnnl_cpu_isa_avx512_core_fp16, "avx512_core_fp16"},
      {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
      {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
      {dnnl_cpu_isa_avx512_core, "avx512_core"},
      {dnnl_cpu_isa_avx2_vnni_2, "avx2_vnni_2"},
      {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
      {dnnl_cpu_isa_avx2, "avx2"},
      {dnnl_cpu_isa_avx, "avx"},
      {dnnl_cpu_isa_sse41, "sse41"},
  };
  for (const Named& n : kNames) {
    if (IsaIncludes(n.isa)) return n.name;
  }
  return "generic";
}

bool HasBfloat16() { return IsaIncludes(dnnl_cpu_isa_avx512_core_bf16) || IsaIncludes(dnnl_cpu_isa_avx2_vnni_2); }
bool HasFloat16() { return IsaIncludes(dnnl_cpu_isa_avx512_core_fp16) || IsaIncludes(dnnl_cpu_isa_avx2_vnni_2); }

std::optional<dnnl_dt> DnnlType(DataType type) {
  switch (type) {
    case DataType::kFloat: return dnnl_dt::f32;
    case DataType::kBfloat16: return dnnl_dt::bf16;
    case DataType::kFloat16: return dnnl_dt::f16;
    case DataType::kInt8: return dnnl_dt::s8;
    case DataType::kUint8: return dnnl_dt::u8;
    case DataType::kInt32: return dnnl_dt::s32;
    default: return std::nullopt;
  }
}

bool IsComputedFloat(DataType type) {
  return type == DataType::kFloat || (type == DataType::kBfloat16 && HasBfloat16()) ||
         (type == DataType::kFloat16 && HasFloat16());
}

std::string DnnlError(const dnnl::error& e) { return StrCat("oneDNN: ", e.what(), " (status ", e.status, ")"); }

dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims, dnnl_dt type) {
  dnnl_dims d(dims.begin(), dims.end());
  if (d.empty()) d.push_back(1);
  dnnl_dims strides(d.size(), 1);
  for (size_t i = d.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * std::max<int64_t>(d[i + 1], 1);
  return dnnl::memory::desc(d, type, strides);
}

namespace {

// Memory objects for Wrap, kept by descriptor; per thread, so that no two
// threads share one (a session's calls come from one thread at a time).
// Creating one allocates oneDNN's storage objects, about a fifth of a small
// decoder's step; re-pointing a kept one (set_data_handle) does not. A memory object handed out inside a WrapScope serves only that scope
// (the run of one lowered node, whose primitives have finished when it
// ends: the CPU stream executes in order and blocks); at its end every
// object goes back. Outside a scope Wrap makes a fresh object, which the
// caller may keep as long as it likes.
class WrapPool {
 public:
  dnnl::memory Get(void* data, const dnnl::memory::desc& desc) {
    if (depth_ == 0) return dnnl::memory(desc, Engine(), data);
    std::vector<Kept>& bucket = kept_[Key{desc.get_size(), desc.get_ndims()}];
    for (Kept& k : bucket) {
      if (!k.in_use && k.desc == desc) {
        k.in_use = true;
        k.memory.set_data_handle(data);
        lent_.push_back(&k.in_use);
        return k.memory;
      }
    }
    if (bucket.size() >= kMaxPerBucket) return dnnl::memory(desc, Engine(), data);
    // Reserved once, never grown past: the flags lent out are found again
    // by address.
    bucket.reserve(kMaxPerBucket);
    bucket.push_back({desc, dnnl::memory(desc, Engine(), data), true});
    ++kept_count_;
    lent_.push_back(&bucket.back().in_use);
    return bucket.back().memory;
  }
  void Enter() { ++depth_; }
  void Leave() {
    if (--depth_ > 0) return;
    for (bool* in_use : lent_) *in_use = false;
    lent_.clear();
    // A worker meets many shapes over a corpus: past kMaxKept objects the
    // pool starts again (nothing is lent between two scopes).
    if (kept_count_ > kMaxKept) {
      kept_.clear();
      kept_count_ = 0;
    }
  }

 private:
  static constexpr size_t kMaxPerBucket = 16;
  static constexpr size_t kMaxKept = 1024;
  struct Key {
    size_t bytes;
    int ndims;
    bool operator==(const Key& o) const { return bytes == o.bytes && ndims == o.ndims; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return (k.bytes * 0x9e3779b97f4a7c15ull) ^ static_cast<size_t>(k.ndims); }
  };
  struct Kept {
    dnnl::memory::desc desc;
    dnnl::memory memory;
    bool in_use = false;
  };
  std::unordered_map<Key, std::vector<Kept>, KeyHash> kept_;
  std::vector<bool*> lent_;
  size_t kept_count_ = 0;
  int depth_ = 0;
};

WrapPool& Pool() {
  thread_local WrapPool pool;
  return pool;
}

}  // namespace

WrapScope::WrapScope() { Pool().Enter(); }
WrapScope::~WrapScope() { Pool().Leave(); }

dnnl::memory Wrap(const Tensor& t, const dnnl::memory::desc& desc) {
  // oneDNN's handle is not const; a lowering never writes an input it wraps.
  return Pool().Get(const_cast<uint8_t*>(t.raw_bytes()), desc);
}

dnnl::memory Wrap(const Tensor& t) { return Wrap(t, PlainDesc(t.shape(), *DnnlType(t.dtype()))); }

BoundPrimitive::BoundPrimitive(dnnl::primitive primitive, const std::vector<std::pair<int, dnnl::memory::desc>>& args)
    : primitive_(std::move(primitive)) {
  memories_.reserve(args.size());
  for (const auto& [index, desc] : args) {
    memories_.push_back(dnnl::memory(desc, Engine(), static_cast<void*>(DNNL_MEMORY_NONE)));
    args_.push_back({index, memories_.back().get()});
  }
}

void BoundPrimitive::Run(const void* const* buffers, size_t count) const {
  if (count < memories_.size()) {
    throw dnnl::error(dnnl_invalid_arguments, "a bound primitive was given fewer buffers than it has arguments");
  }
  for (size_t i = 0; i < memories_.size(); ++i) {
    // oneDNN's handle is not const; a primitive never writes its sources.
    memories_[i].set_data_handle(const_cast<void*>(buffers[i]));
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(primitive_.get(), Stream().get(), static_cast<int>(args_.size()),
                                                 args_.data()),
                          "could not execute a primitive");
  Stream().wait();
}

StatusOr<Tensor> NewTensor(DataType type, const std::vector<int64_t>& dims) { return Tensor::Create(type, dims); }

std::vector<int64_t> LeftPad(const std::vector<int64_t>& dims, size_t rank) {
  std::vector<int64_t> out(rank > dims.size() ? rank - dims.size() : 0, 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

StatusOr<MatMulShapes> NumpyMatMulShapes(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.empty() || b.empty()) return InvalidArgument("MatMul of a scalar");
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  const size_t rank = std::max(a.size(), b.size());
  MatMulShapes s{LeftPad(a, rank), LeftPad(b, rank), std::vector<int64_t>(rank), {}};
  if (s.a[rank - 1] != s.b[rank - 2]) {
    return InvalidArgument("MatMul of [", s.a[rank - 2], ", ", s.a[rank - 1], "] by [", s.b[rank - 2], ", ",
                           s.b[rank - 1], "]: inner dims differ");
  }
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (s.a[i] != s.b[i] && s.a[i] != 1 && s.b[i] != 1) return InvalidArgument("MatMul batch dims do not broadcast");
    s.c[i] = s.a[i] == 0 || s.b[i] == 0 ? 0 : std::max(s.a[i], s.b[i]);
  }
  s.c[rank - 2] = s.a[rank - 2];
  s.c[rank - 1] = s.b[rank - 1];
  s.out = s.c;
  if (a_vector) s.out.erase(s.out.end() - 2);
  if (b_vector) s.out.pop_back();
  return s;
}

bool BroadcastsInto(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  if (dims.size() > out.size()) return false;
  const std::vector<int64_t> padded = LeftPad(dims, out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (padded[i] != 1 && padded[i] != out[i]) return false;
  }
  return true;
}

bool IsOnnxOp(const NodeView& view, std::string_view op) {
  return view.node().op_type() == op && (view.node().domain().empty() || view.node().domain() == "ai.onnx");
}

Status RequireSameComputedFloat(const NodeView& node, std::vector<int> inputs) {
  std::optional<DataType> first;
  for (int i : inputs) {
    if (!node.has_input(i)) continue;
    const std::optional<DataType> type = node.input_type(i);
    if (!type) return NotLowered("the type of input ", i, " is not known before the run");
    if (!IsComputedFloat(*type)) {
      return NotLowered("input ", i, " is ", DataTypeName(*type), ", which this CPU (", IsaName(),
                        ") does not compute in oneDNN");
    }
    if (first && *first != *type) return NotLowered("inputs of mixed types");
    first = type;
  }
  return Status::Ok();
}

}  // namespace parity::adapters::onednn
