// The 8-bit matrix products on cuBLASLt's int8 kernels: MatMulInteger,
// QLinearMatMul, and the QDQ region DequantizeLinear of both operands
// feeding MatMul, optionally followed by QuantizeLinear. int8 and uint8.
//
// cuBLASLt gives the exact int32 sums of the packed signed bytes
// (matmul_geometry.h, Int8Geometry); the zero points are taken out with the
// packed operands' line sums, and the sums finished (scaled, requantized)
// in double on the device, as the reference's QLinearMatMul does
// (kernel_math.h, Int8OutputValue). So MatMulInteger and QLinearMatMul give
// the reference's bits. A QDQ region gives sum * scales rounded once, where
// the graph rounds each dequantized value and the product to float32 and
// divides by the output scale before rounding to the integer: the two can
// part by one float32 ULP, or by one quantization step next to a tie.
//
// Scales and zero points are read on the host (per tensor, or per column
// of B), and sent with each run. A product is claimed where A's and B's
// dims are static: shapes the int8 path does not take are left to the
// reference at session creation (those cuBLASLt has no algorithm for, when
// a device is there).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>

#include "adapters/cuda/cublaslt.h"
#include "adapters/cuda/kernels.h"
#include "adapters/cuda/lowerings.h"
#include "adapters/device/quantized_claims.h"

namespace parity::adapters::cuda {
namespace {

// A scale or zero point input: absent, or per tensor, or (`per_column`)
// a 1-D of B's N columns.
Status RequireParameter(const NodeView& view, int i, const char* name, bool per_column, int64_t columns) {
  if (!view.has_input(i)) return Status::Ok();
  const int64_t n = StaticCount(view, i);
  if (n < 0) return NotLowered("the dims of ", name, " are not known before the run");
  if (n == 1) return Status::Ok();
  if (per_column && n == columns && view.input_rank(i) == 1) return Status::Ok();
  return NotLowered(name, " of ", n, " elements (the int8 path takes one", per_column ? ", or a 1-D of B's columns" : "",
                    ")");
}

// Where the runner's inputs are, by position; -1: not an input.
struct Operands {
  int a = 0, a_scale = -1, a_zero = -1, b = 1, b_scale = -1, b_zero = -1, y_scale = -1, y_zero = -1;
};
constexpr Operands kMatMulInteger{0, -1, 2, 1, -1, 3, -1, -1};
// QLinearMatMul's order; a QDQ region's runner is given its inputs in it.
constexpr Operands kQLinear{0, 1, 2, 3, 4, 5, 6, 7};

int OutKind(DataType t) {
  switch (t) {
    case DataType::kInt32: return 0;
    case DataType::kInt8: return 1;
    case DataType::kUint8: return 2;
    default: return 3;  // float32
  }
}

struct Int8Plan {
  Int8Geometry geometry;
  MatMulPlan lt;  // no descriptors when nothing is multiplied (an empty product, K = 0)
};

class LtInt8MatMulNode final : public LoweredNode {
 public:
  LtInt8MatMulNode(DataType a_type, DataType b_type, Operands at, IntFinish finish, DataType out_type)
      : a_type_(a_type), b_type_(b_type), at_(at), finish_(finish), out_type_(out_type) {}

  bool deferred() const override { return plans_.empty(); }

  // The plan of A's and B's static dims, made at session creation.
  Status Prepare(const std::vector<int64_t>* a, const std::vector<int64_t>* b) {
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, CudaContext::Get());
    return Find(*cuda, *a, *b).status();
  }

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i) && !ctx.input(i).is_tensor()) return ctx.Error("input ", i, " is not a tensor");
    }
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, NodeContext(ctx));
    const Tensor& a = ctx.tensor(static_cast<size_t>(at_.a));
    const Tensor& b = ctx.tensor(static_cast<size_t>(at_.b));
    if (a.dtype() != a_type_ || b.dtype() != b_type_) {
      return ctx.Error("A and B are ", a.Description(), " and ", b.Description(), ", not ", DataTypeName(a_type_),
                       " and ", DataTypeName(b_type_));
    }
    // The scales and zero points are read here.
    for (int i : {at_.a_scale, at_.a_zero, at_.b_scale, at_.b_zero, at_.y_scale, at_.y_zero}) {
      if (i >= 0 && ctx.has_input(static_cast<size_t>(i))) {
        PARITY_RETURN_IF_ERROR(cuda->Bring(ctx.tensor(static_cast<size_t>(i))).WithContext(ctx.NodeLabel()));
      }
    }
    StatusOr<const Int8Plan*> found = Find(*cuda, a.shape(), b.shape());
    if (!found.ok()) return found.status().WithContext(graph::DescribeNode(ctx.node()));
    const Int8Geometry& g = (*found)->geometry;
    PARITY_ASSIGN_OR_RETURN(Int8Parameters parameters, Parameters(ctx, g));
    std::vector<int64_t> packed_b_zero;
    Int8Finish finish = Int8FinishOf(g, finish_, out_type_, parameters, packed_b_zero);
    // B's zero points and scales on the device: sent again only when they
    // differ from the last run's (the node holds those, so they stay there).
    if (!b_zero_.defined() || b_zero_.ToInt64s() != packed_b_zero) {
      b_zero_ = Tensor::FromInt64s({finish.b_zero_count}, packed_b_zero);
    }
    if (!w_scale_.defined() || w_scale_.ToDoubles() != parameters.w_scale) {
      PARITY_ASSIGN_OR_RETURN(w_scale_,
                              Tensor::FromDoubles(DataType::kDouble, {finish.w_scale_count}, parameters.w_scale));
    }
    PARITY_ASSIGN_OR_RETURN(const void* b_zero_data, cuda->DeviceData(b_zero_));
    PARITY_ASSIGN_OR_RETURN(const void* w_scale_data, cuda->DeviceData(w_scale_));
    finish.b_zero = static_cast<const int64_t*>(b_zero_data);
    finish.w_scale = static_cast<const double*>(w_scale_data);

    auto allocate = [&](int64_t count, size_t element) { return cuda->Allocate(static_cast<size_t>(count) * element); };
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, allocate(g.batch * g.m * g.n, StorageSize(out_type_)));
    if (g.batch * g.m * g.n > 0) {
      PARITY_ASSIGN_OR_RETURN(const void* a_data, cuda->DeviceData(a));
      PARITY_ASSIGN_OR_RETURN(const void* b_data, cuda->DeviceData(b));
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> a_packed, allocate(g.a_matrices * g.m * g.k_pad, 1));
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> b_packed, allocate(g.b_matrices * g.n_pad * g.k_pad, 1));
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> a_sums, allocate(g.a_matrices * g.m, sizeof(int64_t)));
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> b_sums, allocate(g.b_matrices * g.n_pad, sizeof(int64_t)));
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> raw, allocate(g.batch * g.m * g.n_pad, sizeof(int32_t)));
      void* stream = cuda->stream();
      PARITY_RETURN_IF_ERROR(Launched(ctx, LaunchPackInt8(g.a_pack, g.a_matrices, a_data, a_packed->data(), stream), "A's packing"));
      PARITY_RETURN_IF_ERROR(Launched(ctx, LaunchPackInt8(g.b_pack, g.b_matrices, b_data, b_packed->data(), stream), "B's packing"));
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      LaunchRowSumsInt8(a_packed->data(), g.a_matrices * g.m, g.k_pad,
                                                        static_cast<int64_t*>(a_sums->data()), stream),
                                      "A's row sums"));
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      LaunchRowSumsInt8(b_packed->data(), g.b_matrices * g.n_pad, g.k_pad,
                                                        static_cast<int64_t*>(b_sums->data()), stream),
                                      "B's column sums"));
      if (g.k == 0) {
        PARITY_RETURN_IF_ERROR(Launched(ctx,
                                        cudaMemsetAsync(raw->data(), 0, raw->bytes(), static_cast<cudaStream_t>(stream)),
                                        "empty sums"));
      } else {
        const MatMulPlan& plan = (*found)->lt;
        const LtDescriptors& d = *plan.descriptors;
        PARITY_ASSIGN_OR_RETURN(const LtDevice* device, GetLtDevice(*cuda));
        const int32_t alpha = 1, beta = 0;
        const cublasStatus_t s =
            device->lt->Matmul(device->handle, d.matmul, &alpha, b_packed->data(), d.first, a_packed->data(), d.second,
                               &beta, raw->data(), d.out, raw->data(), d.out, &plan.algorithm,
                               device->workspace->data(), kLtWorkspaceBytes, static_cast<cudaStream_t>(stream));
        if (s != CUBLAS_STATUS_SUCCESS) {
          return ctx.Error("cublasLtMatmul (int8) failed: ", device->lt->StatusText(s), " for ", plan.geometry.Text());
        }
      }
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      LaunchFinishInt8(finish, static_cast<const int32_t*>(raw->data()),
                                                       static_cast<const int64_t*>(a_sums->data()),
                                                       static_cast<const int64_t*>(b_sums->data()), OutKind(out_type_),
                                                       out->data(), stream),
                                      "the sums' finishing"));
    }
    PARITY_ASSIGN_OR_RETURN(Tensor y, cuda->Made(out, out_type_, g.out_dims));
    return std::vector<Value>{Value::FromTensor(std::move(y))};
  }

 private:
  const Tensor* Optional(const KernelContext& ctx, int i) const {
    return i >= 0 && ctx.has_input(static_cast<size_t>(i)) ? &ctx.tensor(static_cast<size_t>(i)) : nullptr;
  }

  // A per-tensor parameter's value, or `absent`.
  StatusOr<double> Scalar(const KernelContext& ctx, int i, const char* name, double absent) const {
    const Tensor* t = Optional(ctx, i);
    if (!t) return absent;
    if (t->size() != 1) return ctx.Error(name, " ", t->Description(), " is not one value");
    return t->GetDouble(0);
  }

  // A parameter of one value or one a column of B's n.
  StatusOr<std::vector<double>> PerColumn(const KernelContext& ctx, int i, const char* name, int64_t n,
                                          double absent) const {
    const Tensor* t = Optional(ctx, i);
    if (!t) return std::vector<double>{absent};
    if (t->size() != 1 && (t->size() != n || t->shape().size() != 1)) {
      return ctx.Error(name, " ", t->Description(), " is neither one value nor one per column of B's ", n);
    }
    return t->ToDoubles();
  }

  // This run's scales and zero points, read on the host.
  StatusOr<Int8Parameters> Parameters(const KernelContext& ctx, const Int8Geometry& g) const {
    for (auto [zero, operand] : {std::pair{at_.a_zero, a_type_}, std::pair{at_.b_zero, b_type_}, std::pair{at_.y_zero, out_type_}}) {
      const Tensor* z = Optional(ctx, zero);
      if (z && z->dtype() != operand) return ctx.Error("zero point ", z->Description(), " is not ", DataTypeName(operand));
    }
    Int8Parameters p;
    PARITY_ASSIGN_OR_RETURN(double a_zero, Scalar(ctx, at_.a_zero, "a_zero_point", 0));
    p.a_zero = static_cast<int64_t>(a_zero);
    PARITY_ASSIGN_OR_RETURN(std::vector<double> b_zero, PerColumn(ctx, at_.b_zero, "b_zero_point", g.n, 0));
    p.b_zero.assign(b_zero.begin(), b_zero.end());
    if (finish_ != IntFinish::kInt32) {
      PARITY_ASSIGN_OR_RETURN(p.x_scale, Scalar(ctx, at_.a_scale, "a_scale", 1));
      PARITY_ASSIGN_OR_RETURN(p.w_scale, PerColumn(ctx, at_.b_scale, "b_scale", g.n, 1));
    }
    if (finish_ == IntFinish::kQuantize) {
      PARITY_ASSIGN_OR_RETURN(p.y_scale, Scalar(ctx, at_.y_scale, "y_scale", 1));
      PARITY_ASSIGN_OR_RETURN(p.y_zero, Scalar(ctx, at_.y_zero, "y_zero_point", 0));
    }
    return p;
  }

  StatusOr<const Int8Plan*> Find(CudaContext& cuda, const Shape& a, const Shape& b) {
    const std::pair<Shape, Shape> key{a, b};
    auto it = plans_.find(key);
    if (it != plans_.end()) return &it->second;
    Int8Plan plan;
    PARITY_ASSIGN_OR_RETURN(plan.geometry,
                            Int8GeometryOf(a, b, a_type_ == DataType::kUint8, b_type_ == DataType::kUint8));
    const Int8Geometry& g = plan.geometry;
    if (g.batch * g.m * g.n * g.k > 0) {
      PARITY_ASSIGN_OR_RETURN(plan.lt, MakeLtPlan(cuda, g.lt, DataType::kInt8, Epilogue::kNone));
    }
    return &plans_.emplace(key, std::move(plan)).first->second;
  }

  DataType a_type_, b_type_;
  Operands at_;
  IntFinish finish_;
  DataType out_type_;
  std::map<std::pair<Shape, Shape>, Int8Plan> plans_;
  Tensor b_zero_, w_scale_;  // the last run's, kept on the device
};

// Claimed where A's and B's dims are static, so that what the int8 path
// refuses (Int8GeometryOf's limits, a shape cuBLASLt has no algorithm for)
// falls back at session creation rather than failing a run. With a device
// the plan is made now; without one (the device-free tests) the geometry
// is checked alone.
StatusOr<std::unique_ptr<LoweredNode>> Prepared(std::unique_ptr<LtInt8MatMulNode> node, const std::vector<int64_t>* a,
                                                const std::vector<int64_t>* b) {
  if (StatusOr<const CublasLt*> lt = LoadCublasLt(); !lt.ok()) return NotLowered(lt.status().message());
  if (!a || !b) return NotLowered("the dims of A and B are not known before the run (the int8 plan is made at creation)");
  const Status prepared =
      CudaContext::Get().ok() ? node->Prepare(a, b) : Int8GeometryOf(*a, *b, false, false).status();
  if (!prepared.ok()) return NotLowered(prepared.message());
  return std::unique_ptr<LoweredNode>(std::move(node));
}

// B's columns when its dims are static (a rank-1 B is one column), else -1.
int64_t Columns(const NodeView& view, int b) {
  const std::vector<int64_t>* dims = view.input_dims(b);
  if (!dims || dims->empty()) return -1;
  return dims->size() == 1 ? 1 : dims->back();
}

StatusOr<std::unique_ptr<LoweredNode>> LowerMatMulInteger(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireEightBitOperands(view, 0, 2, 1, 3));
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 2, "a_zero_point", false, 0));
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 3, "b_zero_point", true, Columns(view, 1)));
  return Prepared(std::make_unique<LtInt8MatMulNode>(*view.input_type(0), *view.input_type(1), kMatMulInteger,
                                                     IntFinish::kInt32, DataType::kInt32),
                  view.input_dims(0), view.input_dims(1));
}

StatusOr<std::unique_ptr<LoweredNode>> LowerQLinearMatMul(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireEightBitOperands(view, 0, 2, 3, 5));
  PARITY_RETURN_IF_ERROR(RequireScaleTypes(view, {1, 4, 6}));
  const int64_t n = Columns(view, 3);
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 1, "a_scale", false, 0));
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 2, "a_zero_point", false, 0));
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 4, "b_scale", true, n));
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 5, "b_zero_point", true, n));
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 6, "y_scale", false, 0));
  PARITY_RETURN_IF_ERROR(RequireParameter(view, 7, "y_zero_point", false, 0));
  const std::optional<DataType> out_type = view.has_input(7) ? view.input_type(7) : view.input_type(0);
  if (!IsEightBit(out_type)) return NotLowered("the output is not int8 or uint8");
  return Prepared(std::make_unique<LtInt8MatMulNode>(*view.input_type(0), *view.input_type(3), kQLinear,
                                                     IntFinish::kQuantize, *out_type),
                  view.input_dims(0), view.input_dims(3));
}

// --- The QDQ region -----------------------------------------------------------

StatusOr<std::optional<RegionClaim>> LowerQdqRegion(const RegionView& region) {
  const onnx::NodeProto& anchor = region.node(region.anchor());
  const NodeView view = region.view(region.anchor());
  PARITY_ASSIGN_OR_RETURN(std::optional<Dequantized> a, FindDequantize(region, anchor.input(0), 1, -1, false));
  if (!a) return std::optional<RegionClaim>();
  const int64_t rank_b = view.input_rank(1);
  PARITY_ASSIGN_OR_RETURN(std::optional<Dequantized> b, FindDequantize(region, anchor.input(1), Columns(view, 1),
                                                                       rank_b >= 2 ? rank_b - 1 : -1, true));
  if (!b) return std::optional<RegionClaim>();
  RegionClaim claim;
  claim.nodes = {a->node, b->node, region.anchor()};
  claim.inputs = {a->data, a->scale, a->zero, b->data, b->scale, b->zero};
  IntFinish finish = IntFinish::kFloat;
  DataType out_type = DataType::kFloat;
  if (const int q = FindQuantize(region, region.anchor()); q >= 0) {
    const onnx::NodeProto& qn = region.node(q);
    claim.nodes.push_back(q);
    claim.inputs.push_back(qn.input(1));
    claim.inputs.push_back(qn.input_size() > 2 ? qn.input(2) : "");
    claim.outputs = {qn.output(0)};
    finish = IntFinish::kQuantize;
    out_type = *region.view(q).output_type(0);
  } else {
    claim.outputs = {anchor.output(0)};
  }
  auto node = std::make_unique<LtInt8MatMulNode>(*region.view(a->node).input_type(0),
                                                 *region.view(b->node).input_type(0), kQLinear, finish, out_type);
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<LoweredNode> runner,
                          Prepared(std::move(node), region.facts().StaticDims(a->data),
                                   region.facts().StaticDims(b->data)));
  claim.runner = std::move(runner);
  return std::optional<RegionClaim>(std::move(claim));
}

}  // namespace

void AddQuantizedLowerings(Lowering& lowering) {
  lowering.AddRegion("MatMul", LowerQdqRegion);
  lowering.Add("MatMulInteger", LowerMatMulInteger);
  lowering.Add("QLinearMatMul", LowerQLinearMatMul);
}

}  // namespace parity::adapters::cuda
