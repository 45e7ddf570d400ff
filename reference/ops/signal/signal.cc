// Signal processing (Operators.md): DFT-17 (axis attribute) and DFT-20 (axis
// input), STFT-17, the Hann, Hamming and Blackman windows and
// MelWeightMatrix-17. Transforms are direct sums in double with twiddle
// angles reduced modulo the length, so that no FFT ordering enters the
// ground truth.
#include <cmath>
#include <complex>
#include <numbers>

#include "reference/ops/common.h"
#include "reference/ops/signal/signal.h"

namespace parity::ops::signal {
namespace {

using Complex = std::complex<double>;

// exp(sign * 2*pi*i * k*t / n), with k*t reduced modulo n first.
Complex Twiddle(int64_t k, int64_t t, int64_t n, double sign) {
  // k and t are below n, and n is far below 2^32, so the product fits.
  const uint64_t un = static_cast<uint64_t>(n);
  const int64_t m = static_cast<int64_t>((static_cast<uint64_t>(k) % un) * (static_cast<uint64_t>(t) % un) % un);
  const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// Forward (sign -1) or unnormalised inverse (sign +1) transform of `in`,
// zero-padded or truncated to n points, returning bins [0, bins).
std::vector<Complex> Transform(const std::vector<Complex>& in, int64_t n, int64_t bins, double sign) {
  std::vector<Complex> out(static_cast<size_t>(bins));
  const int64_t used = std::min<int64_t>(static_cast<int64_t>(in.size()), n);
  for (int64_t k = 0; k < bins; ++k) {
    Complex acc = 0.0;
    for (int64_t t = 0; t < used; ++t) acc += in[static_cast<size_t>(t)] * Twiddle(k, t, n, sign);
    out[static_cast<size_t>(k)] = acc;
  }
  return out;
}

StatusOr<int64_t> ScalarInt(const KernelContext& ctx, size_t i, const char* name) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  if (t->size() != 1 || !IsInteger(t->dtype())) return ctx.Error(name, " must be an integer scalar, got ", t->Description());
  return t->GetInt64(0);
}

}  // namespace

// DFT: the last axis holds 1 (real) or 2 (real, imaginary) components. A
// forward onesided transform keeps bins [0, n/2]; an inverse onesided one
// takes those bins of a Hermitian spectrum and returns the real signal (last
// axis 1), as numpy's irfft. The inverse is normalised by 1/n.
StatusOr<std::vector<Value>> Dft(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (x->rank() < 2 || (x->dim(x->rank() - 1) != 1 && x->dim(x->rank() - 1) != 2)) {
    return ctx.Error("input must have rank >= 2 with a last dimension of 1 or 2, got ", x->Description());
  }
  if (!IsFloatingPoint(x->dtype())) return ctx.Error("input must be a float tensor, got ", x->Description());
  int64_t axis = ctx.opset() >= 20 ? -2 : ctx.GetInt("axis", 1);
  if (ctx.opset() >= 20 && ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(axis, ScalarInt(ctx, 2, "axis"));
  }
  PARITY_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, axis, x->rank()));
  if (axis == x->rank() - 1) return ctx.Error("axis must not be the last (real/imaginary) axis");
  const bool inverse = ctx.GetInt("inverse", 0) != 0;
  const bool onesided = ctx.GetInt("onesided", 0) != 0;
  const int64_t m = x->dim(axis);
  int64_t n = inverse && onesided ? 2 * (m - 1) : m;
  if (ctx.has_input(1)) {
    PARITY_ASSIGN_OR_RETURN(n, ScalarInt(ctx, 1, "dft_length"));
  }
  if (n <= 0) return ctx.Error("dft_length ", n, " must be positive");
  const bool complex_in = x->dim(x->rank() - 1) == 2;

  const int64_t out_len = inverse ? n : onesided ? n / 2 + 1 : n;
  const int64_t components = inverse && onesided ? 1 : 2;
  Shape out_shape = x->shape();
  out_shape[static_cast<size_t>(axis)] = out_len;
  out_shape.back() = components;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dim(d);
  for (int64_t d = axis + 1; d < x->rank() - 1; ++d) inner *= x->dim(d);
  const int64_t in_c = complex_in ? 2 : 1;
  std::vector<double> out(static_cast<size_t>(outer * out_len * inner * components), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<Complex> line(static_cast<size_t>(m));
      for (int64_t t = 0; t < m; ++t) {
        const int64_t base = ((o * m + t) * inner + i) * in_c;
        line[static_cast<size_t>(t)] = {x->GetDouble(base), complex_in ? x->GetDouble(base + 1) : 0.0};
      }
      std::vector<Complex> result;
      if (inverse && onesided) {
        // Hermitian extension of bins [0, n/2] (missing bins are zero).
        std::vector<Complex> full(static_cast<size_t>(n));
        for (int64_t k = 0; k <= n / 2; ++k) full[static_cast<size_t>(k)] = k < m ? line[static_cast<size_t>(k)] : 0.0;
        for (int64_t k = n / 2 + 1; k < n; ++k) full[static_cast<size_t>(k)] = std::conj(full[static_cast<size_t>(n - k)]);
        full[0] = full[0].real();
        if (n % 2 == 0) full[static_cast<size_t>(n / 2)] = full[static_cast<size_t>(n / 2)].real();
        result = Transform(full, n, n, +1.0);
      } else {
        result = Transform(line, n, out_len, inverse ? +1.0 : -1.0);
      }
      for (int64_t k = 0; k < out_len; ++k) {
        Complex v = result[static_cast<size_t>(k)];
        if (inverse) v /= static_cast<double>(n);
        const size_t base = static_cast<size_t>(((o * out_len + k) * inner + i) * components);
        out[base] = v.real();
        if (components == 2) out[base + 1] = v.imag();
      }
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value result, MakeResult(ctx, x->dtype(), out_shape, out));
  return std::vector<Value>{std::move(result)};
}

// STFT-17: frames of frame_length samples every frame_step, multiplied by
// the window (ones when absent), each transformed; output [batch, frames,
// bins, 2] with bins = frame_length/2 + 1 when onesided.
StatusOr<std::vector<Value>> Stft(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (x->rank() != 3 || (x->dim(2) != 1 && x->dim(2) != 2)) {
    return ctx.Error("signal must be [batch, length, 1 or 2], got ", x->Description());
  }
  PARITY_ASSIGN_OR_RETURN(int64_t step, ScalarInt(ctx, 1, "frame_step"));
  const Tensor* window = nullptr;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(window, ctx.RequireTensor(2));
    if (window->rank() != 1) return ctx.Error("window must be 1-D, got ", window->Description());
  }
  int64_t frame_length = window ? window->dim(0) : x->dim(1);
  if (ctx.has_input(3)) {
    PARITY_ASSIGN_OR_RETURN(frame_length, ScalarInt(ctx, 3, "frame_length"));
  }
  if (window && window->dim(0) != frame_length) {
    return ctx.Error("window length ", window->dim(0), " differs from frame_length ", frame_length);
  }
  const bool onesided = ctx.GetInt("onesided", 1) != 0;
  const bool complex_in = x->dim(2) == 2;
  if (onesided && complex_in) return ctx.Error("onesided output needs a real signal");
  const int64_t batch = x->dim(0), length = x->dim(1);
  if (step <= 0 || frame_length <= 0 || frame_length > length) {
    return ctx.Error("frame_step ", step, " and frame_length ", frame_length, " do not fit a signal of ", length);
  }
  const int64_t frames = 1 + (length - frame_length) / step;
  const int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  std::vector<double> out(static_cast<size_t>(batch * frames * bins * 2));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      std::vector<Complex> frame(static_cast<size_t>(frame_length));
      for (int64_t t = 0; t < frame_length; ++t) {
        const int64_t base = (b * length + f * step + t) * x->dim(2);
        const double w = window ? window->GetDouble(t) : 1.0;
        frame[static_cast<size_t>(t)] = Complex(x->GetDouble(base), complex_in ? x->GetDouble(base + 1) : 0.0) * w;
      }
      const std::vector<Complex> spectrum = Transform(frame, frame_length, bins, -1.0);
      for (int64_t k = 0; k < bins; ++k) {
        const size_t at = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
        out[at] = spectrum[static_cast<size_t>(k)].real();
        out[at + 1] = spectrum[static_cast<size_t>(k)].imag();
      }
    }
  PARITY_ASSIGN_OR_RETURN(Value result, MakeResult(ctx, x->dtype(), {batch, frames, bins, 2}, out));
  return std::vector<Value>{std::move(result)};
}

namespace {

enum class Window { kHann, kHamming, kBlackman };

// w[n] over N = size (periodic) or size - 1 (symmetric):
//   Hann sin^2(pi n / N); Hamming 25/46 - 21/46 cos(2 pi n / N);
//   Blackman 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N).
StatusOr<std::vector<Value>> MakeWindow(const KernelContext& ctx, Window kind) {
  PARITY_ASSIGN_OR_RETURN(int64_t size, ScalarInt(ctx, 0, "size"));
  if (size < 0) return ctx.Error("size ", size, " is negative");
  const int64_t out_type = ctx.GetInt("output_datatype", static_cast<int64_t>(DataType::kFloat));
  if (!IsKnownDataType(static_cast<int32_t>(out_type)) || static_cast<DataType>(out_type) == DataType::kString) {
    return ctx.Error("output_datatype ", out_type, " is not a numeric type");
  }
  const bool periodic = ctx.GetInt("periodic", 1) != 0;
  const double denom = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  const double pi = std::numbers::pi;
  for (int64_t n = 0; n < size; ++n) {
    const double x = static_cast<double>(n) / denom;  // NaN/inf for size 1 symmetric, as the formula gives
    switch (kind) {
      case Window::kHann: w[static_cast<size_t>(n)] = std::pow(std::sin(pi * x), 2); break;
      case Window::kHamming: w[static_cast<size_t>(n)] = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(2 * pi * x); break;
      case Window::kBlackman:
        w[static_cast<size_t>(n)] = 0.42 - 0.5 * std::cos(2 * pi * x) + 0.08 * std::cos(4 * pi * x);
        break;
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value result, MakeResult(ctx, static_cast<DataType>(out_type), {size}, w));
  return std::vector<Value>{std::move(result)};
}

}  // namespace

StatusOr<std::vector<Value>> HannWindow(const KernelContext& ctx) { return MakeWindow(ctx, Window::kHann); }
StatusOr<std::vector<Value>> HammingWindow(const KernelContext& ctx) { return MakeWindow(ctx, Window::kHamming); }
StatusOr<std::vector<Value>> BlackmanWindow(const KernelContext& ctx) { return MakeWindow(ctx, Window::kBlackman); }

// MelWeightMatrix-17: triangular filters between num_mel_bins + 2 points
// evenly spaced on the mel scale (mel = 2595 log10(1 + hz / 700)), mapped to
// DFT bins floor((dft_length + 1) * hz / sample_rate); output
// [dft_length / 2 + 1, num_mel_bins]. The spacing divides by num_mel_bins + 2
// as ONNX's reference does.
StatusOr<std::vector<Value>> MelWeightMatrix(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(int64_t mel_bins, ScalarInt(ctx, 0, "num_mel_bins"));
  PARITY_ASSIGN_OR_RETURN(int64_t dft_length, ScalarInt(ctx, 1, "dft_length"));
  PARITY_ASSIGN_OR_RETURN(int64_t sample_rate, ScalarInt(ctx, 2, "sample_rate"));
  PARITY_ASSIGN_OR_RETURN(const Tensor* lower_t, ctx.RequireTensor(3));
  PARITY_ASSIGN_OR_RETURN(const Tensor* upper_t, ctx.RequireTensor(4));
  if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0 || lower_t->size() != 1 || upper_t->size() != 1) {
    return ctx.Error("num_mel_bins, dft_length and sample_rate must be positive, the edges scalars");
  }
  const int64_t out_type = ctx.GetInt("output_datatype", static_cast<int64_t>(DataType::kFloat));
  if (!IsKnownDataType(static_cast<int32_t>(out_type))) return ctx.Error("output_datatype ", out_type, " is not a type");
  const double lower = lower_t->GetDouble(0), upper = upper_t->GetDouble(0);
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low_mel = to_mel(lower), high_mel = to_mel(upper);
  const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
    const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    if (!(bin >= 0 && bin < static_cast<double>(spectrogram_bins))) {
      return ctx.Error("mel point ", i, " falls outside the ", spectrogram_bins, " spectrogram bins");
    }
    points[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }
  std::vector<double> out(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = points[static_cast<size_t>(i)], center = points[static_cast<size_t>(i + 1)],
                  hi = points[static_cast<size_t>(i + 2)];
    if (center == lo) {
      out[static_cast<size_t>(center * mel_bins + i)] = 1.0;
    } else {
      for (int64_t j = lo; j <= center; ++j) {
        out[static_cast<size_t>(j * mel_bins + i)] = static_cast<double>(j - lo) / static_cast<double>(center - lo);
      }
    }
    for (int64_t j = center; j < hi; ++j) {
      out[static_cast<size_t>(j * mel_bins + i)] = static_cast<double>(hi - j) / static_cast<double>(hi - center);
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value result,
                          MakeResult(ctx, static_cast<DataType>(out_type), {spectrogram_bins, mel_bins}, out));
  return std::vector<Value>{std::move(result)};
}

}  // namespace parity::ops::signal
