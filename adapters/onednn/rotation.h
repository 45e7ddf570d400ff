// The arithmetic of the rotary embedding exporters write as "rotate half",
//   out = x * cos + Concat(-x2, x1) * sin,   (x1, x2) = the halves of x's last axis,
// shared by its own region (rotate_half.cc) and by the projections region,
// which rotates the query and key heads in one pass (projections.cc).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "adapters/device/lowering.h"
#include "adapters/onednn/onednn_context.h"

namespace parity::adapters::onednn {

// t = Concat(-x2, x1) * sin, in x's type, as three primitives: two
// reorders from strided views of x's halves into r's (the first scaled by
// -1, which is exact), then one binary. (Binaries over the halves' strided
// views would need one primitive less, but oneDNN 3.2 runs a binary whose
// source is not dense on its reference kernel, some 30 times slower; so it
// does a bfloat16 binary that writes float32, which is why t is in x's type.)
class RotatedHalves {
 public:
  RotatedHalves() = default;
  // x of plain `dims` in `type` (last dim even), sin of `sin_dims`
  // broadcasting into them. Throws dnnl::error where oneDNN refuses.
  RotatedHalves(DataType type, const std::vector<int64_t>& dims, const std::vector<int64_t>& sin_dims);
  // t for x and sin into `t`, a buffer of the node's (resized here): r
  // is built there, then multiplied by sin in place.
  void Run(const uint8_t* x, const void* sin, std::vector<uint8_t>& t) const;

 private:
  BoundPrimitive negate_x2_, copy_x1_, r_sin_;
  size_t half_bytes_ = 0, bytes_ = 0;  // of a half's row, and of x
};

// out = x * cos + t (a binary with t added as a post-op): x, t and out of
// plain `dims` in `type`, cos of `cos_dims` broadcasting into `dims`. Run
// with {x, cos, out, t}.
BoundPrimitive CosPlus(DataType type, const std::vector<int64_t>& dims, const std::vector<int64_t>& cos_dims);

// The six nodes (Mul, Split, Neg, Concat, Mul, Add) of the rotation of
// `x`, as a claim with inputs {x, cos, sin} and the Add's output; nullopt
// where the nodes that read x are not that pattern, or one is taken.
std::optional<RegionClaim> MatchRotateHalf(const RegionView& region, const std::string& x);

}  // namespace parity::adapters::onednn
