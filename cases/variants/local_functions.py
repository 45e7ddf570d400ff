"""The model-local functions the entries of the variant cases call, in ONNX
text syntax (domain org.onnxparity.local). Each computes the same values as
the region of the main graph it stands for. A function standing for a
block of several operators computes it with the same operators (the
reference gives bit-identical results, as `parity check --equivalence`
demands of a call it compares exactly); a function standing for one
standard operator carries that operator's name and computes it another
way (LayerNormalization and Softmax step by step), so the equivalence check
compares two computations under that operator's tolerance.

Functions have no initializers: a weight is a function input, passed by name."""
from __future__ import annotations

from variant_model import function

LINEAR_RELU = function("""
LinearRelu (X, W, B) => (Y) {
  T = MatMul(X, W)
  U = Add(T, B)
  Y = Relu(U)
}""")

# LinearRelu with the bias added on the left (Add commutes exactly).
BIAS_FIRST_LINEAR_RELU = function("""
BiasFirstLinearRelu (X, W, B) => (Y) {
  T = MatMul(X, W)
  U = Add(B, T)
  Y = Relu(U)
}""")

LINEAR_RELU_SOFTMAX = function("""
LinearReluSoftmax (X, W, B) => (Y) {
  T = MatMul(X, W)
  U = Add(T, B)
  R = Relu(U)
  Y = Softmax <axis = -1> (R)
}""")

SCALED_LINEAR_TANH = function("""
ScaledLinearTanh (X, W, B, S) => (Y) {
  T = MatMul(X, W)
  U = Add(T, B)
  V = Mul(U, S)
  Y = Tanh(V)
}""")

LINEAR_TANH = function("""
LinearTanh (X, W, B) => (Y) {
  T = MatMul(X, W)
  U = Add(T, B)
  Y = Tanh(U)
}""")

# LayerNormalization over the last axis, epsilon 1e-5, step by step.
LAYER_NORM_DECOMPOSED = function("""
LayerNormalization (X, G, B) => (Y) {
  axes = Constant <value_ints = [-1]> ()
  eps = Constant <value_float = 0.00001> ()
  mean = ReduceMean <keepdims = 1> (X, axes)
  d = Sub(X, mean)
  sq = Mul(d, d)
  var = ReduceMean <keepdims = 1> (sq, axes)
  ve = Add(var, eps)
  sd = Sqrt(ve)
  n = Div(d, sd)
  s = Mul(n, G)
  Y = Add(s, B)
}""")

# Softmax over the last axis, shifted by the row maximum.
SOFTMAX_DECOMPOSED = function("""
Softmax (X) => (Y) {
  axes = Constant <value_ints = [-1]> ()
  m = ReduceMax <keepdims = 1> (X, axes)
  d = Sub(X, m)
  e = Exp(d)
  s = ReduceSum <keepdims = 1> (e, axes)
  Y = Div(e, s)
}""")

MATMUL_LAYER_NORM_SOFTMAX = function("""
MatMulLayerNormSoftmax (X, W, G, B) => (Y) {
  A = MatMul(X, W)
  N = LayerNormalization <axis = -1, epsilon = 0.00001> (A, G, B)
  Y = Softmax <axis = -1> (N)
}""")

MATMUL_LAYER_NORM_RELU = function("""
MatMulLayerNormRelu (X, W, G, B) => (Y) {
  A = MatMul(X, W)
  N = LayerNormalization <axis = -1, epsilon = 0.00001> (A, G, B)
  Y = Relu(N)
}""")

MATMUL_RELU = function("""
MatMulRelu (X, W) => (Y) {
  A = MatMul(X, W)
  Y = Relu(A)
}""")

RELU_MATMUL = function("""
ReluMatMul (A, W) => (Y) {
  R = Relu(A)
  Y = MatMul(R, W)
}""")

TWO_LAYER = function("""
TwoLayer (X, W1, W2, B2) => (Y) {
  A = MatMul(X, W1)
  R = Relu(A)
  C = MatMul(R, W2)
  Y = Add(C, B2)
}""")

MATMUL_SOFTMAX = function("""
MatMulSoftmax (X, W) => (Y) {
  A = MatMul(X, W)
  Y = Softmax <axis = -1> (A)
}""")

# MatMulSoftmax with the product written as a Gemm of alpha 1 and no bias
# (the reference computes both in double and rounds once).
GEMM_SOFTMAX = function("""
GemmSoftmax (X, W) => (Y) {
  A = Gemm <alpha = 1.0> (X, W)
  Y = Softmax <axis = -1> (A)
}""")

MUL_RELU = function("""
MulRelu (A, X) => (Y) {
  C = Mul(A, X)
  Y = Relu(C)
}""")

MATMUL_TANH = function("""
MatMulTanh (X, W) => (Y) {
  A = MatMul(X, W)
  Y = Tanh(A)
}""")

MATMUL_SIGMOID = function("""
MatMulSigmoid (X, W) => (Y) {
  A = MatMul(X, W)
  Y = Sigmoid(A)
}""")

DIAMOND_GATE = function("""
DiamondGate (X, W) => (Y) {
  A = MatMul(X, W)
  L = Relu(A)
  R = Sigmoid(A)
  Y = Mul(L, R)
}""")

# Two outputs each: the halves of the cross-wired pair of the cycle cases.
CROSS_A = function("""
CrossA (X, Wa, B1) => (A1, A2) {
  A1 = MatMul(X, Wa)
  A2 = Mul(A1, B1)
}""")

CROSS_B = function("""
CrossB (Z, Wb, A1) => (B1, B2) {
  B1 = MatMul(Z, Wb)
  B2 = Add(B1, A1)
}""")

GATED_LINEAR = function("""
GatedLinear (X, W, S) => (Y) {
  A = MatMul(X, W)
  Y = Mul(A, S)
}""")

# Where on the condition instead of If over two branches.
GATE_BY_CONDITION = function("""
GateByCondition (X, W, C) => (Y) {
  A = MatMul(X, W)
  R = Relu(A)
  S = Sigmoid(A)
  Y = Where(C, R, S)
}""")

# A SwiGLU-like gated MLP, and an overload "v2" that multiplies in the
# other order (products commute exactly).
GATED_MLP = function("""
GatedMLP (X, W, V) => (Y) {
  G = MatMul(X, W)
  P = MatMul(X, V)
  S = Sigmoid(G)
  H = Mul(G, S)
  Y = Mul(H, P)
}""")

GATED_MLP_V2 = function("""
GatedMLP (X, W, V) => (Y) {
  P = MatMul(X, V)
  G = MatMul(X, W)
  S = Sigmoid(G)
  H = Mul(S, G)
  Y = Mul(P, H)
}""", overload="v2")

# The weight as an attribute instead of an input: the form that copies it
# into every alternative (VAR-COPIED-WEIGHT; weight_sharing.py's contrast).
LINEAR_RELU_WEIGHT_ATTRIBUTE = function("""
LinearReluWeightAttribute <weight> (X, B) => (Y) {
  W = Constant <value: tensor = @weight> ()
  T = MatMul(X, W)
  U = Add(T, B)
  Y = Relu(U)
}""")
