/* glasstorch native CPU loops (the role of ATen's vectorized CPU kernels).
 *
 * numpy covers almost every CPU kernel.  A few loops matter for throughput
 * and numpy is slow at them: on machines without AVX-512 its float32 exp is
 * scalar, and its arithmetic runs on one core
 * (add/sub/mul/div of large tensors).  Others must round as ATen's loops round
 * (sum's order of additions, fused multiply-adds), which numpy cannot say.
 * These are plain C loops that the compiler vectorizes (-O3 -march=native) and
 * OpenMP spreads over the intra-op threads, as at::parallel_for does in PyTorch.
 *
 * No -ffast-math: NaN and inf must behave exactly as in PyTorch.  Only
 * -fno-math-errno and -fno-trapping-math (nothing here reads errno or FP
 * exception flags), which let the loops below vectorize, and -ffp-contract=off:
 * the compiler never fuses a multiply and an add on its own; where a loop must
 * round as a fused multiply-add it calls fma/fmaf explicitly.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <omp.h>

#include "vecmath.h"    /* exp_f32, erf_f32, sleef_expf: shared with Inductor's C */

void gt_set_num_threads(int n) { omp_set_num_threads(n); }
int gt_get_num_threads(void) { return omp_get_max_threads(); }

/* copy_'s real -> complex cast of contiguous values (imaginary parts zero),
 * e.g. the to(complex64) of torch.fft's real inputs (promote_tensor_fft):
 * split among the intra-op threads as ATen's copy is (numpy's cast runs on
 * one).  512x512 float32 on two threads: to(complex64) 235 -> 125 us, fft2
 * 780 -> 635 us; on one, the same as numpy's. */
#define GT_REAL_TO_COMPLEX(T, S)                                                        \
void gt_real_to_complex_##S(const T *src, T *dst, int64_t n) {                          \
    _Pragma("omp parallel for schedule(static) if (n > 131072)")                        \
    for (int64_t i = 0; i < n; i++) { dst[2 * i] = src[i]; dst[2 * i + 1] = 0; }        \
}
GT_REAL_TO_COMPLEX(float, f32)
GT_REAL_TO_COMPLEX(double, f64)

void gt_exp_f32(const float *x, float *out, int64_t n) {
    #pragma omp parallel for simd schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; i++) out[i] = exp_f32(x[i]);
}

/* SLEEF's logf_u10 (ATen's Vectorized<float>::log) step for step (expf_u10 is
 * in vecmath.h). */
static inline float sleef_logf(float d) {
    if (d != d || d < 0.0f) return NAN;
    if (d == 0.0f) return -INFINITY;
    if (d == INFINITY) return INFINITY;
    int tiny = d < FLT_MIN;
    float d2 = tiny ? d * 18446744073709551616.0f : d;           /* 2^64 */
    float scaled = d2 * (1.0f / 0.75f);
    int32_t bits, mbits;
    memcpy(&bits, &scaled, sizeof bits);
    int32_t e = ((bits >> 23) & 0xff) - 0x7f;
    memcpy(&mbits, &d2, sizeof mbits);
    mbits = (int32_t)((uint32_t)mbits + ((uint32_t)(-e) << 23));
    float m;
    memcpy(&m, &mbits, sizeof m);
    float ef = (float)(tiny ? e - 64 : e);
    const float ln2_hi = 0.69314718246459960938f, ln2_lo = -1.904654323148236017e-09f;
    float sx = ln2_hi * ef;
    float sy = fmaf(ln2_lo, ef, fmaf(ln2_hi, ef, -sx));
    float ax = -1.0f + m, av = ax + 1.0f, ay = (-1.0f - (ax - av)) + (m - av);
    float bx = 1.0f + m, bv = bx - 1.0f, by = (1.0f - (bx - bv)) + (m - bv);
    float t = 1.0f / bx, x = ax * t, u = fmaf(t, ax, -x);
    float v = fmaf(-by, t, fmaf(-bx, t, 1.0f));
    float xl = fmaf(x, v, fmaf(ay, t, u));
    float x2 = x * x;
    float p = 0.3027294874f;
    p = fmaf(p, x2, 0.3996108174f);
    p = fmaf(p, x2, 0.6666694880f);
    float hx = x * 2.0f, hl = xl * 2.0f;
    float s = sx + hx, sl = (((sx - s) + hx) + sy) + hl;
    float y = (x2 * x) * p;
    float r = s + y;
    sl = ((s - r) + y) + sl;
    return r + sl;
}

/* The lanes of vec::reduce_all: the first block, each further block added lane-wise,
 * the leftover elements added into the first lanes (n >= lanes). */
static inline __attribute__((always_inline))
void gt_lane_accumulate(const float *e, int64_t n, int lanes, float *acc) {
    for (int k = 0; k < lanes; k++) acc[k] = e[k];
    int64_t whole = n - n % lanes;
    for (int64_t d = lanes; d < whole; d += lanes)
        for (int k = 0; k < lanes; k++) acc[k] += e[d + k];
    for (int64_t k = 0; k < n - whole; k++) acc[k] += e[whole + k];
}

/* The lanes folded to one: in halves (AVX2/AVX512's shuffles) or one by one. */
static inline __attribute__((always_inline))
float gt_fold_lanes(float *acc, int lanes, int halves) {
    if (halves) {
        for (int w = lanes / 2; w >= 1; w /= 2)
            for (int k = 0; k < w; k++) acc[k] = acc[k] + acc[k + w];
        return acc[0];
    }
    float s = acc[0];
    for (int k = 1; k < lanes; k++) s += acc[k];
    return s;
}

/* vec::reduce_all(+) of n floats with ATen's lanes (see kernels/softmax_order.py);
 * inlined with a constant lane count below, so the lane loop vectorizes. */
static inline __attribute__((always_inline))
float gt_reduce_all_sum_lanes(const float *e, int64_t n, int lanes, int halves) {
    if (n < lanes) {
        float s = e[0];
        for (int64_t j = 1; j < n; j++) s += e[j];
        return s;
    }
    float acc[16];
    gt_lane_accumulate(e, n, lanes, acc);
    return gt_fold_lanes(acc, lanes, halves);
}

static float gt_reduce_all_sum(const float *e, int64_t n, int lanes, int halves) {
    return lanes == 16 ? gt_reduce_all_sum_lanes(e, n, 16, halves)
                       : gt_reduce_all_sum_lanes(e, n, 8, halves);
}

/* float32 softmax / log_softmax over the rows of a contiguous (rows, cols)
 * matrix in ATen's order (kernels/softmax_order.py): max, exp(x - max) (SLEEF,
 * or libm under DEFAULT), the lane sum, then e * (1 / sum) or (x - max) - log(sum). */
void gt_softmax_f32(const float *x, float *out, int64_t rows, int64_t cols, int log_,
                    int lanes, int halves, int use_libm) {
    if (cols == 0) return;
    #pragma omp parallel for schedule(static) if (rows * cols > 32768)
    for (int64_t i = 0; i < rows; i++) {
        const float *row = x + i * cols;
        float *dst = out + i * cols;
        float m = -INFINITY;
        int nan = 0;
        #pragma omp simd reduction(max:m) reduction(|:nan)
        for (int64_t j = 0; j < cols; j++) {
            nan |= row[j] != row[j];
            m = row[j] > m ? row[j] : m;
        }
        if (nan) m = NAN;                 /* vec::maximum propagates a NaN */
        if (use_libm) {
            for (int64_t j = 0; j < cols; j++) dst[j] = expf(row[j] - m);
        } else {
            #pragma omp simd
            for (int64_t j = 0; j < cols; j++) dst[j] = sleef_expf(row[j] - m);
        }
        float total = gt_reduce_all_sum(dst, cols, lanes, halves);
        if (log_) {
            float lse = use_libm ? logf(total) : sleef_logf(total);
            for (int64_t j = 0; j < cols; j++) dst[j] = (row[j] - m) - lse;
        } else {
            float inv = 1.0f / total;
            for (int64_t j = 0; j < cols; j++) dst[j] *= inv;
        }
    }
}

/* The gradient of softmax / log_softmax rows (kernels/softmax_order.py), y the
 * output: (g - sum(g * y)) * y, or g - exp(y) * sum(g) (fused where ATen's is). */
void gt_softmax_backward_f32(const float *g, const float *y, float *out, int64_t rows,
                             int64_t cols, int log_, int lanes, int halves, int use_libm,
                             int fused, int fused_tail) {
    if (cols == 0) return;
    #pragma omp parallel for schedule(static) if (rows * cols > 32768)
    for (int64_t i = 0; i < rows; i++) {
        const float *gr = g + i * cols, *yr = y + i * cols;
        float *dst = out + i * cols;
        if (log_) {
            float total = gt_reduce_all_sum(gr, cols, lanes, halves);
            if (use_libm) {
                for (int64_t j = 0; j < cols; j++) dst[j] = expf(yr[j]);
            } else {
                #pragma omp simd
                for (int64_t j = 0; j < cols; j++) dst[j] = sleef_expf(yr[j]);
            }
            for (int64_t j = 0; j < cols; j++)
                dst[j] = fused ? fmaf(-dst[j], total, gr[j]) : gr[j] - dst[j] * total;
        } else {
            for (int64_t j = 0; j < cols; j++) dst[j] = gr[j] * yr[j];
            float total;
            if (fused_tail && cols >= lanes) {
                /* map2_reduce_all run serially (one row, or one thread): there the
                 * compiler fuses the leftover lanes' multiply-add */
                int64_t whole = cols - cols % lanes;
                float acc[16];
                gt_lane_accumulate(dst, whole, lanes, acc);
                for (int64_t k = 0; k < cols - whole; k++)
                    acc[k] = fmaf(gr[whole + k], yr[whole + k], acc[k]);
                total = gt_fold_lanes(acc, lanes, halves);
            } else {
                total = gt_reduce_all_sum(dst, cols, lanes, halves);
            }
            for (int64_t j = 0; j < cols; j++) dst[j] = (gr[j] - total) * yr[j];
        }
    }
}

/* nll_loss's reduced loss and weight sums in ATen's order (LossNLL.cpp): 8
 * partial sums; each target's term goes into level 0, and after target b, while
 * b's bits at level j are all zero, level j is carried into level j + 1 (levels
 * of 2^p targets, p = max(4, ceil(log2 n) / 8)); ignored targets add nothing and
 * carry nothing; at the end the levels are added in order.  terms[b] is
 * input[b][target[b]] * weight, weights[b] the weight. */
#define GT_NLL_CASCADE(T, SUFFIX)                                                          \
void gt_nll_cascade_##SUFFIX(const T *terms, const T *weights, const uint8_t *ignored,     \
                             int64_t n, int power, T *loss_out, T *weight_out) {          \
    T loss[8] = {0}, weight[8] = {0};                                                      \
    int64_t mask = ((int64_t)1 << power) - 1;                                              \
    for (int64_t b = 0; b < n; b++) {                                                      \
        if (ignored[b]) continue;                                                          \
        loss[0] -= terms[b];                                                               \
        weight[0] += weights[b];                                                           \
        for (int j = 0; j + 1 < 8; j++) {                                                  \
            if ((b & (mask << (j * power))) != 0) break;                                   \
            weight[j + 1] += weight[j];                                                    \
            loss[j + 1] += loss[j];                                                        \
            weight[j] = 0;                                                                 \
            loss[j] = 0;                                                                   \
        }                                                                                  \
    }                                                                                      \
    T total_loss = 0, total_weight = 0;                                                    \
    for (int j = 0; j < 8; j++) { total_loss += loss[j]; total_weight += weight[j]; }     \
    *loss_out = total_loss;                                                                \
    *weight_out = total_weight;                                                            \
}
GT_NLL_CASCADE(float, f32)
GT_NLL_CASCADE(double, f64)

/* out = a (op) b for contiguous float32 arrays of equal size, threaded: the
 * arithmetic ops numpy runs on one core.  op: 0 add, 1 sub, 2 mul, 3 div. */
void gt_binary_f32(int op, const float *a, const float *b, float *out, int64_t n) {
    switch (op) {
    case 0:
        #pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i];
        break;
    case 1:
        #pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; i++) out[i] = a[i] - b[i];
        break;
    case 2:
        #pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; i++) out[i] = a[i] * b[i];
        break;
    default:
        #pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; i++) out[i] = a[i] / b[i];
        break;
    }
}

/* libm's functions of float64 values, one call per element: the loop behind erf,
 * erfc and exact gelu (numpy has no erf), and behind the Box-Muller steps of
 * float64 normal sampling, where PyTorch calls libm too (numpy's own vectorized
 * log/cos/sin differ from libm's in the last bit on some CPUs).  No -ffast-math,
 * so the compiler keeps libm's scalar functions.  Also the libm calls of the
 * special functions' scalar loops (kernels/special.py's _libm: exp, cos, sin,
 * log, acos), one whole array per call.
 * which (native.py's _LIBM): 0 erf, 1 erfc, 2 log, 3 log1p, 4 cos, 5 sin, 6 exp,
 * 7 tan, 8 acos, 9 lgamma (std::lgamma, through the reentrant lgamma_r so that
 * threads do not race on signgam). */
double lgamma_r(double, int *);     /* POSIX; not declared under -std=c11 */

static double lgamma_reentrant(double x) {
    int sign;
    return lgamma_r(x, &sign);
}

void gt_libm_f64(int which, const double *x, double *out, int64_t n) {
    double (*const fns[])(double) = {erf, erfc, log, log1p, cos, sin, exp, tan, acos,
                                     lgamma_reentrant};
    double (*const fn)(double) = fns[which];
    #pragma omp parallel for schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; i++) out[i] = fn(x[i]);
}

/* libm's float32 functions, one call per element: ATen's DEFAULT capability
 * computes Vectorized<float>::exp()/log() lane by lane with std::exp/std::log
 * (softmax, log_softmax); the float32 special functions' scalar loops call
 * them too (kernels/special.py's _libm).
 * which (native.py's _LIBM_F32): 0 expf, 1 logf, 2 cosf, 3 sinf, 4 acosf. */
void gt_libm_f32(int which, const float *x, float *out, int64_t n) {
    float (*const fns[])(float) = {expf, logf, cosf, sinf, acosf};
    float (*const fn)(float) = fns[which];
    #pragma omp parallel for schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; i++) out[i] = fn(x[i]);
}

/* -- normal_: the Box-Muller step of ATen's normal_fill (kernels/random.py) --------------
 * The data arrive as uniform draws in blocks of 16: per block, u1 = 1 - x[k] and
 * u2 = x[8 + k] for lanes k < 8; the block becomes
 *     x[k] = r cos(theta) * std + mean,   x[8 + k] = r sin(theta) * std + mean,
 * r = sqrt(-2 log u1), theta = 2 pi u2, the last step one fused multiply-add.
 * Every float constant is the double literal rounded to float, as numpy's
 * np.float32(c) rounds it in random.py's emulation; every fused multiply-add is
 * an explicit fmaf (the library is compiled with -ffp-contract=off). */

/* avx_mathfun.h's log256_ps for one lane (random.py's _log256_ps): x = m 2^e with
 * m in [sqrt(1/2), sqrt 2), log(m) by a degree-9 polynomial in m - 1 plus e ln 2
 * in two parts, with the multiply-adds GCC fuses in ATen's AVX2 build. */
static inline float avx_mathfun_logf(float x) {
    const int invalid = x <= 0.0f;       /* NaN, as avx_mathfun's log gives */
    x = x < FLT_MIN ? FLT_MIN : x;       /* no subnormals */
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    float e = (float)((bits >> 23) - 0x7f) + 1.0f;
    int32_t mbits = (bits & ~0x7f800000) | 0x3f000000;     /* the mantissa, in [0.5, 1) */
    float m;
    memcpy(&m, &mbits, sizeof m);
    const int low = m < (float)0.707106781186547524;
    e = e - (low ? 1.0f : 0.0f);
    m = (m - 1.0f) + (low ? m : 0.0f);
    const float z = m * m;
    /* the polynomial by Horner's rule, written out so that the lanes vectorize */
    float y = (float)7.0376836292E-2;
    y = fmaf(y, m, (float)-1.1514610310E-1);
    y = fmaf(y, m, (float)1.1676998740E-1);
    y = fmaf(y, m, (float)-1.2420140846E-1);
    y = fmaf(y, m, (float)1.4249322787E-1);
    y = fmaf(y, m, (float)-1.6668057665E-1);
    y = fmaf(y, m, (float)2.0000714765E-1);
    y = fmaf(y, m, (float)-2.4999993993E-1);
    y = fmaf(y, m, (float)3.3333331174E-1);
    y = y * m;
    y = fmaf(y, z, e * (float)-2.12194440e-4);
    y = y - z * 0.5f;
    y = fmaf(e, 0.693359375f, m + y);
    return invalid ? NAN : y;
}

/* avx_mathfun.h's sincos256_ps for one lane (random.py's _sincos256_ps): |x|
 * reduced by the even multiple j of pi/4 (pi/4 in three parts), the sine and
 * cosine polynomials of the remainder, swapped and signed by j's octant. */
static inline void avx_mathfun_sincosf(float x, float *sin_out, float *cos_out) {
    uint32_t xbits;
    memcpy(&xbits, &x, sizeof xbits);
    uint32_t sign_sin = xbits & 0x80000000u;
    x = fabsf(x);
    int32_t j = (int32_t)(x * (float)1.27323954473516);   /* 4 / pi, truncated */
    j = (j + 1) & ~1;
    const float y = (float)j;
    sign_sin ^= (uint32_t)(j & 4) << 29;
    const uint32_t sign_cos = (uint32_t)(~(j - 2) & 4) << 29;
    const int sine_first = (j & 2) == 0;
    x = fmaf(y, (float)-0.78515625, x);
    x = fmaf(y, (float)-2.4187564849853515625e-4, x);
    x = fmaf(y, (float)-3.77489497744594108e-8, x);
    const float z = x * x;
    float cos_poly = fmaf((float)2.443315711809948E-005, z, (float)-1.388731625493765E-003);
    cos_poly = fmaf(cos_poly, z, (float)4.166664568298827E-002) * z;
    cos_poly = fmaf(cos_poly, z, -(z * 0.5f)) + 1.0f;
    float sin_poly = fmaf((float)-1.9515295891E-4, z, (float)8.3321608736E-3);
    sin_poly = fmaf(sin_poly, z, (float)-1.6666654611E-1) * z;
    sin_poly = fmaf(sin_poly, x, x);
    float s = sine_first ? sin_poly : cos_poly, c = sine_first ? cos_poly : sin_poly;
    uint32_t sbits, cbits;
    memcpy(&sbits, &s, sizeof sbits);
    memcpy(&cbits, &c, sizeof cbits);
    sbits ^= sign_sin;
    cbits ^= sign_cos;
    memcpy(sin_out, &sbits, sizeof sbits);
    memcpy(cos_out, &cbits, sizeof cbits);
}

/* One block of NormalFill16<float, true>, ATen's AVX2 kernel (AVX512 runs it too):
 * avx_mathfun's log and sincos; the eight lanes vectorize as ATen's do. */
static inline void normal_block_avx_mathfun(float *block, float mean, float std) {
    const float two_pi = (float)(2.0 * 3.14159265358979323846);
    for (int k = 0; k < 8; k++) {
        const float u1 = 1.0f - block[k], u2 = block[8 + k];
        const float radius = sqrtf(-2.0f * avx_mathfun_logf(u1));
        float sin_t, cos_t;
        avx_mathfun_sincosf(two_pi * u2, &sin_t, &cos_t);
        block[k] = fmaf(radius * cos_t, std, mean);
        block[8 + k] = fmaf(radius * sin_t, std, mean);
    }
}

/* One block of the scalar NormalFill16<float> (the DEFAULT capability): libm's
 * logf/cosf/sinf, theta = 2 pi u2 in double rounded to float. */
static inline void normal_block_libm(float *block, float mean, float std) {
    for (int k = 0; k < 8; k++) {
        const float u1 = 1.0f - block[k], u2 = block[8 + k];
        const float radius = sqrtf(-2.0f * logf(u1));
        const float theta = (float)(2.0 * 3.14159265358979323846 * (double)u2);
        block[k] = fmaf(radius * cosf(theta), std, mean);
        block[8 + k] = fmaf(radius * sinf(theta), std, mean);
    }
}

/* float32 (and half/bfloat16, filled in float): the AVX2 kernel when
 * `vectorized`, else the DEFAULT one. */
void gt_normal_fill16_f32(float *data, int64_t blocks, float mean, float std,
                          int vectorized) {
    #pragma omp parallel for schedule(static) if (blocks > 4096)
    for (int64_t b = 0; b < blocks; b++) {
        if (vectorized)
            normal_block_avx_mathfun(data + 16 * b, mean, std);
        else
            normal_block_libm(data + 16 * b, mean, std);
    }
}

/* float64: normal_fill_16<double>, libm's log/cos/sin, the last step fused
 * (so PyTorch 2.13 computes it under every capability). */
void gt_normal_fill16_f64(double *data, int64_t blocks, double mean, double std) {
    #pragma omp parallel for schedule(static) if (blocks > 2048)
    for (int64_t b = 0; b < blocks; b++) {
        double *block = data + 16 * b;
        for (int k = 0; k < 8; k++) {
            const double u1 = 1.0 - block[k];
            const double theta = 2.0 * 3.14159265358979323846 * block[8 + k];
            const double radius = sqrt(-2.0 * log(u1));
            block[k] = fma(radius * cos(theta), std, mean);
            block[8 + k] = fma(radius * sin(theta), std, mean);
        }
    }
}


#define GT_SQRT1_2 0.70710678118654752440     /* 1/sqrt(2) (M_SQRT1_2 is not C11) */
#define GT_2_SQRTPI 1.12837916709551257390    /* 2/sqrt(pi) */

/* gelu(x) = x/2 (1 + erf(x / sqrt 2)), and its backward
 * grad * (Phi(x) + x phi(x)), in float32 with erf_f32.  Not PyTorch's bits:
 * its gelu takes oneDNN's erf approximation, which changes with the CPU's ISA.
 * Promised instead, on every CPU: within 2 ulp + 3e-7 of the exact gelu, and
 * 2 ulp + 2.5e-7 |grad| of its exact backward (tests/test_native.py). */
void gt_gelu_f32(const float *x, float *out, int64_t n) {
    #pragma omp parallel for simd schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; i++)
        out[i] = x[i] * 0.5f * (1.0f + erf_f32(x[i] * (float)GT_SQRT1_2));
}

void gt_gelu_backward_f32(const float *grad, const float *x, float *out, int64_t n) {
    const float beta = (float)(GT_2_SQRTPI * GT_SQRT1_2 * 0.5);
    #pragma omp parallel for simd schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; i++) {
        float cdf = 0.5f * (1.0f + erf_f32(x[i] * (float)GT_SQRT1_2));
        float pdf = beta * exp_f32(x[i] * x[i] * -0.5f);
        out[i] = grad[i] * (cdf + x[i] * pdf);
    }
}

/* The optimizers' arithmetic, rounded as ATen's CPU loops round it.  Under the
 * AVX2 and AVX512 capabilities ATen's kernels are compiled with FMA contraction,
 * so a multiply followed by an add is one fused multiply-add; under DEFAULT
 * every operation rounds (`fused` says which, from the capability):
 *   axpy:    a + alpha * b            fma(b, alpha, a)          (add/sub with alpha)
 *   addcmul: s + v * t1 * t2          fma(v * t1, t2, s)
 *   addcdiv: s + v * t1 / t2          rounded at every step
 *   lerp:    |w| < 0.5 ? fma(w, e - s, s) : fma(w - 1, e - s, e)            */
/* One set of loops per floating type T (suffix S, fused multiply-add FMA). */
#define GT_FUSED_LOOPS(T, S, FMA, FABS)                                                  \
static inline T madd_##S(T a, T b, T c, int fused) {                                   \
    return fused ? FMA(a, b, c) : a * b + c;   /* -std=c11: no implicit contraction */   \
}                                                                                       \
void gt_axpy_##S(const T *a, const T *b, T alpha, T *out, int64_t n, int fused) {       \
    _Pragma("omp parallel for simd schedule(static) if (n > 65536)")                    \
    for (int64_t i = 0; i < n; i++) out[i] = madd_##S(b[i], alpha, a[i], fused);        \
}                                                                                       \
void gt_addcmul_##S(const T *s, const T *t1, const T *t2, T v, T *out, int64_t n,       \
                    int fused) {                                                        \
    _Pragma("omp parallel for simd schedule(static) if (n > 65536)")                    \
    for (int64_t i = 0; i < n; i++) out[i] = madd_##S(v * t1[i], t2[i], s[i], fused);   \
}                                                                                       \
void gt_addcdiv_##S(const T *s, const T *t1, const T *t2, T v, T *out, int64_t n) {     \
    _Pragma("omp parallel for simd schedule(static) if (n > 65536)")                    \
    for (int64_t i = 0; i < n; i++) out[i] = s[i] + (v * t1[i]) / t2[i];                \
}                                                                                       \
void gt_lerp_##S(const T *s, const T *e, T w, T *out, int64_t n, int fused) {           \
    const int small = FABS(w) < (T)0.5;                                                 \
    const T coeff = small ? w : w - (T)1;                                               \
    _Pragma("omp parallel for simd schedule(static) if (n > 65536)")                    \
    for (int64_t i = 0; i < n; i++)                                                     \
        out[i] = madd_##S(coeff, e[i] - s[i], small ? s[i] : e[i], fused);              \
}

GT_FUSED_LOOPS(float, f32, fmaf, fabsf)
GT_FUSED_LOOPS(double, f64, fma, fabs)

/* -- sum and nansum as ATen's cascade_sum (SumKernel.cpp) ----------------------------
 *
 * One call is one 2-d step of TensorIterator's loop: `size0` x `size1` elements
 * of `in` (byte strides in0, in1) added into `out` (byte strides out0, out1; 0
 * along reduced dims).  The bits depend on the order of the additions, so the
 * order is ATen's:
 *   - a row is summed by `multi_row`: accumulate 2^p consecutive elements into
 *     level 0, then carry level 0 into level 1, and level 1 into 2 (every 2^p
 *     carries), 2 into 3; at the end the levels are added, 1 to 3 into 0;
 *   - `row_sum` first splits a row into 4 interleaved partial sums (ILP), each
 *     summed by multi_row, then adds the leftovers and the 4 partials in order;
 *   - contiguous inner rows are read in 32-byte vectors (8 floats, 4 doubles:
 *     ATen runs sum with AVX2's Vectorized even on AVX512 CPUs, and DEFAULT's
 *     Vectorized is 32 bytes too) and the lanes are added last, in order;
 *   - contiguous outer reductions sum 4 vectors of columns at once (multi_row,
 *     no ILP split), then single vectors, then single columns (row_sum).
 * Each lane is an independent accumulator, so a "vector" is an array here.
 * `nan` makes NaN read as 0 (nansum).
 */
static inline int64_t ceil_log2(int64_t x) {
    return x <= 2 ? 1 : 64 - __builtin_clzll((uint64_t)(x - 1));
}

#define GT_CASCADE(T, SUF)                                                                   \
static inline T load_##SUF(const char *p, int nan) {                                        \
    T v = *(const T *)p;                                                                    \
    return nan && v != v ? (T)0 : v;                                                        \
}                                                                                           \
                                                                                            \
/* `size` rows of nrows x width lanes: lane (r, v) of row i at i*row + r*col + v*sizeof(T) */ \
static inline __attribute__((always_inline)) void multi_row_##SUF(const char *in, int64_t row, int64_t col, int64_t size,         \
                            int nrows, int width, int nan, T *ret) {                        \
    const int lanes = nrows * width;                                                        \
    int64_t power = ceil_log2(size) / 4;                                                    \
    if (power < 4) power = 4;                                                               \
    const int64_t step = (int64_t)1 << power, mask = step - 1;                              \
    T acc[4][64];                                                                           \
    memset(acc, 0, sizeof acc);                                                             \
    int64_t i = 0;                                                                          \
    while (i + step <= size) {                                                              \
        for (int64_t j = 0; j < step; ++j, ++i)                                             \
            for (int r = 0; r < nrows; ++r) {                                               \
                const char *base = in + i * row + r * col;                                  \
                for (int v = 0; v < width; ++v)                                             \
                    acc[0][r * width + v] += load_##SUF(base + v * (int64_t)sizeof(T), nan); \
            }                                                                               \
        for (int level = 1; level < 4; ++level) {                                           \
            for (int k = 0; k < lanes; ++k) {                                               \
                acc[level][k] += acc[level - 1][k];                                         \
                acc[level - 1][k] = 0;                                                      \
            }                                                                               \
            if (i & (mask << (level * power))) break;                                       \
        }                                                                                   \
    }                                                                                       \
    for (; i < size; ++i)                                                                   \
        for (int r = 0; r < nrows; ++r) {                                                   \
            const char *base = in + i * row + r * col;                                      \
            for (int v = 0; v < width; ++v)                                                 \
                acc[0][r * width + v] += load_##SUF(base + v * (int64_t)sizeof(T), nan);    \
        }                                                                                   \
    for (int level = 1; level < 4; ++level)                                                 \
        for (int k = 0; k < lanes; ++k) acc[0][k] += acc[level][k];                         \
    memcpy(ret, acc[0], lanes * sizeof(T));                                                 \
}                                                                                           \
                                                                                            \
/* `width` lanes summed along `size` steps of `stride` bytes, 4-way interleaved */          \
static inline __attribute__((always_inline)) void row_sum_##SUF(const char *in, int64_t stride, int64_t size, int width, int nan, \
                          T *ret) {                                                         \
    const int64_t size_ilp = size / 4;                                                      \
    T partial[64];                                                                          \
    multi_row_##SUF(in, stride * 4, stride, size_ilp, 4, width, nan, partial);              \
    for (int64_t i = size_ilp * 4; i < size; ++i)                                           \
        for (int v = 0; v < width; ++v)                                                     \
            partial[v] += load_##SUF(in + i * stride + v * (int64_t)sizeof(T), nan);        \
    for (int k = 1; k < 4; ++k)                                                             \
        for (int v = 0; v < width; ++v) partial[v] += partial[k * width + v];               \
    memcpy(ret, partial, width * sizeof(T));                                                \
}                                                                                           \
                                                                                            \
static inline __attribute__((always_inline)) void cascade_##SUF(                             \
        const char *in, char *out, int64_t in0, int64_t in1, int64_t out0, int64_t out1,    \
        int64_t size0, int64_t size1, int nan) {                                            \
    const int64_t es = sizeof(T);                                                           \
    const int width = 32 / sizeof(T);                                                       \
    if (out0 != 0 && out1 == 0) {          /* the reduced dim first */                      \
        int64_t t;                                                                          \
        t = in0; in0 = in1; in1 = t;                                                        \
        t = out0; out0 = out1; out1 = t;                                                    \
        t = size0; size0 = size1; size1 = t;                                                \
    }                                                                                       \
    T sums[64];                                                                             \
    if (out0 != 0 && out1 != 0) {          /* nothing reduced here: out += in */            \
        for (int64_t j = 0; j < size1; ++j)                                                 \
            for (int64_t i = 0; i < size0; ++i) {                                           \
                T *o = (T *)(out + j * out1 + i * out0);                                    \
                T a = *o, b = load_##SUF(in + j * in1 + i * in0, nan);                      \
                *o = (nan && a != a ? (T)0 : a) + b;                                        \
            }                                                                               \
    } else if (in0 == es && size0 >= width) {          /* contiguous inner rows */          \
        const int64_t vecs = size0 / width;                                                 \
        for (int64_t j = 0; j < size1; ++j) {                                               \
            const char *row = in + j * in1;                                                 \
            row_sum_##SUF(row, width * es, vecs, width, nan, sums);                         \
            T total = 0;                                                                    \
            for (int64_t k = vecs * width; k < size0; ++k)                                  \
                total += load_##SUF(row + k * es, nan);                                     \
            for (int v = 0; v < width; ++v) total += sums[v];                               \
            *(T *)(out + j * out1) += total;                                                \
        }                                                                                   \
    } else if (in1 == es && size1 >= width) {          /* contiguous outer columns */       \
        int64_t j = 0;                                                                      \
        for (; j + 4 * width <= size1; j += 4 * width) {                                    \
            multi_row_##SUF(in + j * es, in0, width * es, size0, 4, width, nan, sums);      \
            for (int k = 0; k < 4 * width; ++k) *(T *)(out + (j + k) * out1) += sums[k];    \
        }                                                                                   \
        for (; j + width <= size1; j += width) {                                            \
            row_sum_##SUF(in + j * es, in0, size0, width, nan, sums);                       \
            for (int k = 0; k < width; ++k) *(T *)(out + (j + k) * out1) += sums[k];        \
        }                                                                                   \
        for (; j < size1; ++j) {                                                            \
            row_sum_##SUF(in + j * es, in0, size0, 1, nan, sums);                           \
            *(T *)(out + j * out1) += sums[0];                                              \
        }                                                                                   \
    } else if (in0 < in1) {                            /* strided inner rows */             \
        for (int64_t j = 0; j < size1; ++j) {                                               \
            row_sum_##SUF(in + j * in1, in0, size0, 1, nan, sums);                          \
            *(T *)(out + j * out1) += sums[0];                                              \
        }                                                                                   \
    } else {                                           /* strided outer columns */          \
        int64_t j = 0;                                                                      \
        for (; j + 3 < size1; j += 4) {                                                     \
            multi_row_##SUF(in + j * in1, in0, in1, size0, 4, 1, nan, sums);                \
            for (int k = 0; k < 4; ++k) *(T *)(out + (j + k) * out1) += sums[k];            \
        }                                                                                   \
        for (; j < size1; ++j) {                                                            \
            row_sum_##SUF(in + j * in1, in0, size0, 1, nan, sums);                          \
            *(T *)(out + j * out1) += sums[0];                                              \
        }                                                                                   \
    }                                                                                       \
}                                                                                           \
                                                                                            \
/* one body compiled for sum and one for nansum */                                          \
void gt_cascade_sum_##SUF(const char *in, char *out, int64_t in0, int64_t in1, int64_t out0, \
                          int64_t out1, int64_t size0, int64_t size1, int nan) {            \
    if (nan) cascade_##SUF(in, out, in0, in1, out0, out1, size0, size1, 1);                 \
    else cascade_##SUF(in, out, in0, in1, out0, out1, size0, size1, 0);                     \
}                                                                                           \
                                                                                            \
/* the whole sum of `n` contiguous elements in one step (no thread split) */                \
double gt_sum_contiguous_##SUF(const char *in, int64_t n, int nan) {                        \
    T out = 0;                                                                              \
    gt_cascade_sum_##SUF(in, (char *)&out, sizeof(T), 0, 0, 0, n, 1, nan);                  \
    return out;                                                                             \
}                                                                                           \
                                                                                            \
/* parallel_reduce's first pass over `n` contiguous elements: range t (`chunk` elements)    \
 * summed in one step by thread t into partial[t] */                                        \
void gt_sum_chunks_##SUF(const char *in, int64_t n, int64_t chunk, int nan, T *partial) {    \
    int64_t parts = (n + chunk - 1) / chunk;                                                \
    _Pragma("omp parallel for schedule(static, 1) num_threads(parts)")                      \
    for (int64_t t = 0; t < parts; t++) {                                                   \
        int64_t begin = t * chunk, end = begin + chunk < n ? begin + chunk : n;             \
        T s = 0;                                                                            \
        gt_cascade_sum_##SUF(in + begin * (int64_t)sizeof(T), (char *)&s, sizeof(T), 0, 0, 0, \
                             end - begin, 1, nan);                                          \
        partial[t] = s;                                                                     \
    }                                                                                       \
}

GT_CASCADE(float, f32)
GT_CASCADE(double, f64)
