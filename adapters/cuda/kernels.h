// The CUDA adapter's own kernels (kernels.cu), launched on a stream. Plain
// declarations, so that the lowering (compiled by the host compiler) calls
// them without CUDA's headers; each returns the launch's cudaError_t as an
// int (0 on success). Pointers are device pointers; `n` counts elements.
#pragma once

#include <cstdint>

#include "adapters/cuda/kernel_math.h"

namespace parity::adapters::cuda {

using Stream = void*;  // a cudaStream_t

int LaunchUnary(KType type, UnaryOp op, const void* x, void* y, int64_t n, float alpha, float beta, Stream stream);

// y[i] = op(a[offset of i in a_view], b[offset of i in b_view]), where both
// views have the output's dims (strides 0 where an input broadcasts).
int LaunchBinary(KType type, BinaryOp op, const void* a, const StridedView& a_view, const void* b,
                 const StridedView& b_view, void* y, int64_t n, Stream stream);

// y[i] = x[offset of i in view]: Transpose, Expand, any strided gather of
// elements of `element_bytes` (1, 2, 4 or 8).
int LaunchStridedCopy(int element_bytes, const void* x, const StridedView& view, void* y, int64_t n, Stream stream);

// Softmax (log_softmax: LogSoftmax) along the middle dim of x viewed as
// [outer, length, inner]. A row holding NaN or +inf is NaN throughout.
int LaunchSoftmax(KType type, bool log_softmax, const void* x, void* y, int64_t outer, int64_t length,
                  int64_t inner, Stream stream);

// RMSNormalization-23 over rows of `cols` elements: y = x / sqrt(mean(x^2) +
// epsilon) * scale, in double, rounded once. scale is read at the offset of
// the element's column in scale_view (dims: the normalized dims).
int LaunchRmsNorm(KType type, const void* x, const void* scale, const StridedView& scale_view, void* y,
                  int64_t rows, int64_t cols, float epsilon, Stream stream);

// RotaryEmbedding-23. cache_rows[b * seq + s] is the caches' row for that
// position (device int64), each row rotary_dim / 2 long.
int LaunchRotary(KType type, const RotaryShape& shape, const void* x, const void* cos_cache, const void* sin_cache,
                 const int64_t* cache_rows, void* y, Stream stream);

// Gather along an axis: x viewed as [outer, axis_dim, inner], indices
// (device int64, already in [0, axis_dim)) count `index_count`; y is
// [outer, index_count, inner].
int LaunchGather(int element_bytes, const void* x, int64_t outer, int64_t axis_dim, int64_t inner,
                 const int64_t* indices, int64_t index_count, void* y, Stream stream);

// Attention, one thread a query row (AttendRow in double, as the
// reference's exact path). K and V are whole caches, past rows then
// current ones: [batch, kv_heads, total, size] contiguous. Q and Y rows
// start at b * stride_b + h * stride_h + s * stride_s (4-D or 3-D layouts).
inline constexpr int64_t kMaxAttentionHead = 256;  // v_size a row's accumulator holds
struct AttentionArgs {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, total = 0, head_size = 0, v_size = 0;
  int64_t q_strides[3] = {}, y_strides[3] = {};
  double scale = 1, softcap = 0;
  bool causal = false;
  int64_t left_window = -1, right_window = -1, past_len = 0;
  const int64_t* nonpad = nullptr;  // [batch] nonpad_kv_seqlen on the device, or null
  bool offset_from_nonpad = false;  // query 0's position is nonpad[b] - q_len (an external cache)
  const double* bias = nullptr;     // the mask as additive bias, of dims bias_dims, or null
  int64_t bias_dims[4] = {1, 1, 1, 1};
};
int LaunchAttention(KType type, const AttentionArgs& args, const void* q, const void* k, const void* v, void* y,
                    Stream stream);

// A reduction: output element o reduces the group of x at offset
// StridedOffset(o, kept) + StridedOffset(j, group) for j < group's count
// (kept: the output's dims with x's strides; group: the reduced dims).
int LaunchReduce(KType type, ReduceOp op, const void* x, const StridedView& kept, const StridedView& group, void* y,
                 int64_t out_count, Stream stream);

// y[i] = x[i] converted from `from` to `to`, rounded once (to nearest even).
int LaunchCast(KType from, KType to, const void* x, void* y, int64_t n, Stream stream);

// Where: y[i] = cond[c offset] ? x[x offset] : z[z offset], elements of
// `element_bytes`; cond is bool (one byte).
int LaunchWhere(int element_bytes, const void* cond, const StridedView& c_view, const void* x,
                const StridedView& x_view, const void* z, const StridedView& z_view, void* y, int64_t n,
                Stream stream);

// BatchNormalization in inference mode over x [N, C, inner...]: params
// holds scale, bias, mean and var, each `channels` long, in that order.
int LaunchBatchNorm(KType type, const void* x, const void* const params[4], int64_t channels, int64_t inner, void* y,
                    int64_t n, double epsilon, Stream stream);

// cuDNN's batch-norm parameters from the operator's (params as above):
// out holds 4 * channels float32 values, scale, bias, mean, then
// InverseStdDev(var, epsilon), each rounded once.
int LaunchBatchNormParams(KType type, const void* const params[4], int64_t channels, double epsilon, float* out,
                          Stream stream);

// 8-bit operands packed for cuBLASLt: `matrices` int8 matrices into dst,
// laid out as `pack` says (kernel_math.h, PackSource).
int LaunchPackInt8(const Int8Pack& pack, int64_t matrices, const void* src, void* dst, Stream stream);

// sums[r] = the sum of row r of `row_count` packed rows of `cols` int8 bytes.
int LaunchRowSumsInt8(const void* packed, int64_t row_count, int64_t cols, int64_t* sums, Stream stream);

// The output elements of an 8-bit product from cuBLASLt's int32 sums `raw`
// (Int8OutputValue): int32, int8, uint8 or float32 (`out_kind`: 0, 1, 2, 3).
// b_zero and w_scale in `finish` are device pointers.
int LaunchFinishInt8(const Int8Finish& finish, const int32_t* raw, const int64_t* a_sums, const int64_t* b_sums,
                     int out_kind, void* y, Stream stream);

}  // namespace parity::adapters::cuda
