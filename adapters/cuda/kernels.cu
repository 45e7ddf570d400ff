// The CUDA adapter's own kernels (kernels.h). Each is a grid-stride loop
// over its output; what it computes per element is kernel_math.h's, shared
// with the host tests. Loads widen to the compute type (double for
// float32, float for the 16-bit types) and stores round once; the kernels
// that compute in double for every type (RMSNormalization, Attention, the
// reductions) round from double once (StoreDouble).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "adapters/cuda/kernels.h"

namespace parity::adapters::cuda {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 8 ? (blocks < 1 ? 1 : blocks) : 65535 * 8);
}

template <typename T> struct Compute { using type = float; };
template <> struct Compute<float> { using type = double; };

__device__ inline double Load(const float* p, int64_t i) { return static_cast<double>(p[i]); }
__device__ inline float Load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ inline float Load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ inline void Store(float* p, int64_t i, double v) { p[i] = static_cast<float>(v); }
__device__ inline void Store(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ inline void Store(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
// A double rounded once to the element type (not through float first).
__device__ inline void StoreDouble(float* p, int64_t i, double v) { p[i] = static_cast<float>(v); }
__device__ inline void StoreDouble(__half* p, int64_t i, double v) { p[i] = __double2half(v); }
__device__ inline void StoreDouble(__nv_bfloat16* p, int64_t i, double v) { p[i] = __double2bfloat16(v); }

#define PARITY_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

template <typename T>
__global__ void UnaryKernel(UnaryOp op, const T* x, T* y, int64_t n, float alpha, float beta) {
  using C = typename Compute<T>::type;
  PARITY_GRID_LOOP(i, n) { Store(y, i, ApplyUnary<C>(op, Load(x, i), C(alpha), C(beta))); }
}

template <typename T>
__global__ void BinaryKernel(BinaryOp op, const T* a, StridedView av, const T* b, StridedView bv, T* y, int64_t n) {
  using C = typename Compute<T>::type;
  PARITY_GRID_LOOP(i, n) {
    Store(y, i, ApplyBinary<C>(op, Load(a, StridedOffset(i, av)), Load(b, StridedOffset(i, bv))));
  }
}

template <typename E>
__global__ void StridedCopyKernel(const E* x, StridedView view, E* y, int64_t n) {
  PARITY_GRID_LOOP(i, n) { y[i] = x[StridedOffset(i, view)]; }
}

// One thread a row: rows are outer * inner, each `length` long with stride inner.
template <typename T>
__global__ void SoftmaxKernel(bool log_softmax, const T* x, T* y, int64_t outer, int64_t length, int64_t inner) {
  using C = typename Compute<T>::type;
  PARITY_GRID_LOOP(row, outer * inner) {
    const int64_t base = (row / inner) * length * inner + row % inner;
    SoftmaxRow<C>(
        log_softmax, length, [&](int64_t j) { return static_cast<C>(Load(x, base + j * inner)); },
        [&](int64_t j, C v) { Store(y, base + j * inner, v); });
  }
}

// One thread a row.
template <typename T>
__global__ void RmsNormKernel(const T* x, const T* scale, StridedView scale_view, T* y, int64_t rows, int64_t cols,
                              float epsilon) {
  PARITY_GRID_LOOP(row, rows) {
    const int64_t base = row * cols;
    RmsNormRow(
        cols, static_cast<double>(epsilon), [&](int64_t j) { return static_cast<double>(Load(x, base + j)); },
        [&](int64_t j) { return static_cast<double>(Load(scale, StridedOffset(j, scale_view))); },
        [&](int64_t j, double v) { StoreDouble(y, base + j, v); });
  }
}

template <typename T>
__global__ void RotaryKernel(RotaryShape shape, const T* x, const T* cos_cache, const T* sin_cache,
                             const int64_t* cache_rows, T* y) {
  using C = typename Compute<T>::type;
  const int64_t half = shape.rotary_dim / 2;
  PARITY_GRID_LOOP(i, shape.Elements()) {
    RotaryPlace place;
    const int64_t k = RotaryLocate(i, shape, &place);
    if (k < 0) {
      y[i] = x[i];
      continue;
    }
    const int64_t at = cache_rows[place.bs] * half + k;
    Store(y, i, Rotate<C>(place.first, Load(x, i), Load(x, place.partner), Load(cos_cache, at), Load(sin_cache, at)));
  }
}

template <typename E>
__global__ void GatherKernel(const E* x, int64_t axis_dim, int64_t inner, const int64_t* indices, int64_t index_count,
                             E* y, int64_t n) {
  PARITY_GRID_LOOP(i, n) {
    const int64_t in = i % inner;
    const int64_t k = (i / inner) % index_count;
    const int64_t o = i / inner / index_count;
    y[i] = x[(o * axis_dim + indices[k]) * inner + in];
  }
}

template <typename T>
__global__ void AttentionKernel(AttentionArgs a, const T* q, const T* k, const T* v, T* y) {
  double acc[kMaxAttentionHead];
  PARITY_GRID_LOOP(row, a.batch * a.q_heads * a.q_len) {
    const int64_t i = row % a.q_len, h = (row / a.q_len) % a.q_heads, b = row / a.q_len / a.q_heads;
    const int64_t kv = h / (a.q_heads / a.kv_heads);
    AttentionRow r;
    r.total = a.total, r.head_size = a.head_size, r.v_size = a.v_size, r.scale = a.scale, r.softcap = a.softcap;
    const int64_t offset = a.offset_from_nonpad ? a.nonpad[b] - a.q_len : a.past_len;
    AllowedKeys(i, offset, a.total, a.causal, a.left_window, a.right_window, a.nonpad != nullptr,
                a.nonpad ? a.nonpad[b] : 0, &r.lo, &r.hi);
    const T* q_row = q + b * a.q_strides[0] + h * a.q_strides[1] + i * a.q_strides[2];
    const T* k_rows = k + (b * a.kv_heads + kv) * a.total * a.head_size;
    const T* v_rows = v + (b * a.kv_heads + kv) * a.total * a.v_size;
    T* y_row = y + b * a.y_strides[0] + h * a.y_strides[1] + i * a.y_strides[2];
    const int64_t* dims = a.bias_dims;
    const int64_t bias_row =
        (((dims[0] == 1 ? 0 : b) * dims[1] + (dims[1] == 1 ? 0 : h)) * dims[2] + (dims[2] == 1 ? 0 : i)) * dims[3];
    AttendRow(
        r, [&](int64_t d) { return static_cast<double>(Load(q_row, d)); },
        [&](int64_t j, int64_t d) { return static_cast<double>(Load(k_rows, j * a.head_size + d)); },
        [&](int64_t j, int64_t d) { return static_cast<double>(Load(v_rows, j * a.v_size + d)); },
        [&](int64_t j) { return !a.bias ? 0.0 : (j < dims[3] ? a.bias[bias_row + j] : -HUGE_VAL); },
        [&](int64_t d, double value) { StoreDouble(y_row, d, value); }, acc);
  }
}

template <typename T>
__global__ void ReduceKernel(ReduceOp op, const T* x, StridedView kept, StridedView group, T* y, int64_t out_count) {
  int64_t count = 1;
  for (int i = 0; i < group.rank; ++i) count *= group.dims[i];
  PARITY_GRID_LOOP(o, out_count) {
    const int64_t base = StridedOffset(o, kept);
    const double value =
        ReduceGroup(op, count, [&](int64_t j) { return static_cast<double>(Load(x, base + StridedOffset(j, group))); });
    StoreDouble(y, o, value);
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  PARITY_GRID_LOOP(i, n) { Store(y, i, static_cast<typename Compute<To>::type>(Load(x, i))); }
}

template <typename E>
__global__ void WhereKernel(const uint8_t* cond, StridedView cv, const E* x, StridedView xv, const E* z,
                            StridedView zv, E* y, int64_t n) {
  PARITY_GRID_LOOP(i, n) { y[i] = cond[StridedOffset(i, cv)] ? x[StridedOffset(i, xv)] : z[StridedOffset(i, zv)]; }
}

template <typename T>
__global__ void BatchNormKernel(const T* x, const T* scale, const T* bias, const T* mean, const T* var,
                                int64_t channels, int64_t inner, T* y, int64_t n, double epsilon) {
  PARITY_GRID_LOOP(i, n) {
    const int64_t c = (i / inner) % channels;
    StoreDouble(y, i,
                BatchNormValue(static_cast<double>(Load(x, i)), static_cast<double>(Load(scale, c)),
                               static_cast<double>(Load(bias, c)), static_cast<double>(Load(mean, c)),
                               static_cast<double>(Load(var, c)), epsilon));
  }
}

__global__ void PackInt8Kernel(Int8Pack p, const uint8_t* src, int8_t* dst, int64_t n) {
  PARITY_GRID_LOOP(i, n) {
    const int64_t from = PackSource(p, i);
    dst[i] = from < 0 ? int8_t{0} : PackedInt8(src[from], p.flip);
  }
}

__global__ void RowSumsInt8Kernel(const int8_t* packed, int64_t row_count, int64_t cols, int64_t* sums) {
  PARITY_GRID_LOOP(r, row_count) {
    int64_t sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += packed[r * cols + c];
    sums[r] = sum;
  }
}

template <typename T>
__global__ void FinishInt8Kernel(Int8Finish f, const int32_t* raw, const int64_t* a_sums, const int64_t* b_sums, T* y,
                                 int64_t n) {
  PARITY_GRID_LOOP(o, n) {
    const double v = Int8OutputValue(f, o, raw[Int8RawOffset(f, o)], a_sums, b_sums);
    // float32 rounds once; the integer kinds' values are whole (int32's, the
    // sum, wraps as the reference's does).
    if constexpr (std::is_floating_point_v<T>) {
      y[o] = static_cast<T>(v);
    } else {
      y[o] = static_cast<T>(static_cast<int64_t>(v));
    }
  }
}

template <typename T>
__global__ void BatchNormParamsKernel(const T* scale, const T* bias, const T* mean, const T* var, int64_t channels,
                                      double epsilon, float* out) {
  PARITY_GRID_LOOP(c, channels) {
    out[c] = static_cast<float>(Load(scale, c));
    out[channels + c] = static_cast<float>(Load(bias, c));
    out[2 * channels + c] = static_cast<float>(Load(mean, c));
    out[3 * channels + c] = static_cast<float>(InverseStdDev(static_cast<double>(Load(var, c)), epsilon));
  }
}

cudaStream_t AsStream(Stream s) { return static_cast<cudaStream_t>(s); }

int Done() { return static_cast<int>(cudaGetLastError()); }

// Calls launch.template operator()<T>() for the storage type of `type`.
template <typename Launch>
int ForType(KType type, Launch&& launch) {
  switch (type) {
    case KType::kFloat32: launch(static_cast<float*>(nullptr)); break;
    case KType::kFloat16: launch(static_cast<__half*>(nullptr)); break;
    case KType::kBfloat16: launch(static_cast<__nv_bfloat16*>(nullptr)); break;
  }
  return Done();
}

template <typename Launch>
int ForBytes(int element_bytes, Launch&& launch) {
  switch (element_bytes) {
    case 1: launch(static_cast<uint8_t*>(nullptr)); break;
    case 2: launch(static_cast<uint16_t*>(nullptr)); break;
    case 4: launch(static_cast<uint32_t*>(nullptr)); break;
    case 8: launch(static_cast<uint64_t*>(nullptr)); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return Done();
}

}  // namespace

int LaunchUnary(KType type, UnaryOp op, const void* x, void* y, int64_t n, float alpha, float beta, Stream stream) {
  if (n == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    UnaryKernel<T><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(op, static_cast<const T*>(x), static_cast<T*>(y), n,
                                                                 alpha, beta);
  });
}

int LaunchBinary(KType type, BinaryOp op, const void* a, const StridedView& a_view, const void* b,
                 const StridedView& b_view, void* y, int64_t n, Stream stream) {
  if (n == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    BinaryKernel<T><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(op, static_cast<const T*>(a), a_view,
                                                                  static_cast<const T*>(b), b_view, static_cast<T*>(y), n);
  });
}

int LaunchStridedCopy(int element_bytes, const void* x, const StridedView& view, void* y, int64_t n, Stream stream) {
  if (n == 0) return 0;
  return ForBytes(element_bytes, [&](auto* t) {
    using E = std::remove_pointer_t<decltype(t)>;
    StridedCopyKernel<E><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(static_cast<const E*>(x), view,
                                                                       static_cast<E*>(y), n);
  });
}

int LaunchSoftmax(KType type, bool log_softmax, const void* x, void* y, int64_t outer, int64_t length, int64_t inner,
                  Stream stream) {
  if (outer * length * inner == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    SoftmaxKernel<T><<<Blocks(outer * inner), kThreads, 0, AsStream(stream)>>>(
        log_softmax, static_cast<const T*>(x), static_cast<T*>(y), outer, length, inner);
  });
}

int LaunchRmsNorm(KType type, const void* x, const void* scale, const StridedView& scale_view, void* y, int64_t rows,
                  int64_t cols, float epsilon, Stream stream) {
  if (rows * cols == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    RmsNormKernel<T><<<Blocks(rows), kThreads, 0, AsStream(stream)>>>(
        static_cast<const T*>(x), static_cast<const T*>(scale), scale_view, static_cast<T*>(y), rows, cols, epsilon);
  });
}

int LaunchRotary(KType type, const RotaryShape& shape, const void* x, const void* cos_cache, const void* sin_cache,
                 const int64_t* cache_rows, void* y, Stream stream) {
  if (shape.Elements() == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    RotaryKernel<T><<<Blocks(shape.Elements()), kThreads, 0, AsStream(stream)>>>(
        shape, static_cast<const T*>(x), static_cast<const T*>(cos_cache), static_cast<const T*>(sin_cache),
        cache_rows, static_cast<T*>(y));
  });
}

int LaunchGather(int element_bytes, const void* x, int64_t outer, int64_t axis_dim, int64_t inner,
                 const int64_t* indices, int64_t index_count, void* y, Stream stream) {
  const int64_t n = outer * index_count * inner;
  if (n == 0) return 0;
  return ForBytes(element_bytes, [&](auto* t) {
    using E = std::remove_pointer_t<decltype(t)>;
    GatherKernel<E><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(static_cast<const E*>(x), axis_dim, inner, indices,
                                                                  index_count, static_cast<E*>(y), n);
  });
}

int LaunchAttention(KType type, const AttentionArgs& args, const void* q, const void* k, const void* v, void* y,
                    Stream stream) {
  const int64_t rows = args.batch * args.q_heads * args.q_len;
  if (rows == 0 || args.v_size > kMaxAttentionHead) return rows == 0 ? 0 : static_cast<int>(cudaErrorInvalidValue);
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    // Fewer threads a block: each keeps a row's accumulator in local memory.
    AttentionKernel<T><<<static_cast<int>((rows + 63) / 64), 64, 0, AsStream(stream)>>>(
        args, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<T*>(y));
  });
}

int LaunchReduce(KType type, ReduceOp op, const void* x, const StridedView& kept, const StridedView& group, void* y,
                 int64_t out_count, Stream stream) {
  if (out_count == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    ReduceKernel<T><<<Blocks(out_count), kThreads, 0, AsStream(stream)>>>(op, static_cast<const T*>(x), kept, group,
                                                                          static_cast<T*>(y), out_count);
  });
}

int LaunchCast(KType from, KType to, const void* x, void* y, int64_t n, Stream stream) {
  if (n == 0) return 0;
  return ForType(from, [&](auto* f) {
    using From = std::remove_pointer_t<decltype(f)>;
    ForType(to, [&](auto* t) {
      using To = std::remove_pointer_t<decltype(t)>;
      CastKernel<From, To><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(static_cast<const From*>(x),
                                                                         static_cast<To*>(y), n);
    });
  });
}

int LaunchWhere(int element_bytes, const void* cond, const StridedView& c_view, const void* x,
                const StridedView& x_view, const void* z, const StridedView& z_view, void* y, int64_t n,
                Stream stream) {
  if (n == 0) return 0;
  return ForBytes(element_bytes, [&](auto* t) {
    using E = std::remove_pointer_t<decltype(t)>;
    WhereKernel<E><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(static_cast<const uint8_t*>(cond), c_view,
                                                                 static_cast<const E*>(x), x_view,
                                                                 static_cast<const E*>(z), z_view, static_cast<E*>(y), n);
  });
}

int LaunchBatchNorm(KType type, const void* x, const void* const params[4], int64_t channels, int64_t inner, void* y,
                    int64_t n, double epsilon, Stream stream) {
  if (n == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    BatchNormKernel<T><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(
        static_cast<const T*>(x), static_cast<const T*>(params[0]), static_cast<const T*>(params[1]),
        static_cast<const T*>(params[2]), static_cast<const T*>(params[3]), channels, inner, static_cast<T*>(y), n,
        epsilon);
  });
}

int LaunchPackInt8(const Int8Pack& pack, int64_t matrices, const void* src, void* dst, Stream stream) {
  const int64_t n = matrices * pack.rows_pad * pack.cols_pad;
  if (n == 0) return 0;
  PackInt8Kernel<<<Blocks(n), kThreads, 0, AsStream(stream)>>>(pack, static_cast<const uint8_t*>(src),
                                                                 static_cast<int8_t*>(dst), n);
  return Done();
}

int LaunchRowSumsInt8(const void* packed, int64_t row_count, int64_t cols, int64_t* sums, Stream stream) {
  if (row_count == 0) return 0;
  RowSumsInt8Kernel<<<Blocks(row_count), kThreads, 0, AsStream(stream)>>>(static_cast<const int8_t*>(packed),
                                                                            row_count, cols, sums);
  return Done();
}

int LaunchFinishInt8(const Int8Finish& finish, const int32_t* raw, const int64_t* a_sums, const int64_t* b_sums,
                     int out_kind, void* y, Stream stream) {
  const int64_t n = finish.batch * finish.m * finish.n;
  if (n == 0) return 0;
  auto launch = [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    FinishInt8Kernel<T><<<Blocks(n), kThreads, 0, AsStream(stream)>>>(finish, raw, a_sums, b_sums, static_cast<T*>(y),
                                                                      n);
  };
  switch (out_kind) {
    case 0: launch(static_cast<int32_t*>(nullptr)); break;
    case 1: launch(static_cast<int8_t*>(nullptr)); break;
    case 2: launch(static_cast<uint8_t*>(nullptr)); break;
    case 3: launch(static_cast<float*>(nullptr)); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return Done();
}

int LaunchBatchNormParams(KType type, const void* const params[4], int64_t channels, double epsilon, float* out,
                          Stream stream) {
  if (channels == 0) return 0;
  return ForType(type, [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    BatchNormParamsKernel<T><<<Blocks(channels), kThreads, 0, AsStream(stream)>>>(
        static_cast<const T*>(params[0]), static_cast<const T*>(params[1]), static_cast<const T*>(params[2]),
        static_cast<const T*>(params[3]), channels, epsilon, out);
  });
}

}  // namespace parity::adapters::cuda
