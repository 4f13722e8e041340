/* glasstorch native CPU loops (the role of ATen's vectorized CPU kernels).
 *
 * numpy covers almost every CPU kernel.  A few loops matter for throughput
 * and numpy is slow at them: on machines without AVX-512 its float32 exp is
 * scalar (exp, softmax / log_softmax), its sums keep one accumulator chain, and
 * its arithmetic runs on one core (add/sub/mul/div of large tensors).  These are
 * plain C loops that the compiler vectorizes (-O3 -march=native) and OpenMP
 * spreads over the intra-op threads, as at::parallel_for does in PyTorch.
 *
 * No -ffast-math: NaN and inf must behave exactly as in PyTorch.  Only
 * -fno-math-errno and -fno-trapping-math (nothing here reads errno or FP
 * exception flags), which let the loops below vectorize.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <omp.h>

/* exp(x) for float32, vectorizable.
 *
 *   x = n*ln2 + r,  |r| <= ln2/2      n = round(x / ln2)
 *   exp(x) = 2^n * p(r)               p: degree-6 minimax-style polynomial
 *
 * 2^n is built in the exponent bits.  Out-of-range inputs are patched with
 * selects (inf above ~88.72, 0 below ~-103.97, NaN passes through), which
 * the vectorizer turns into blends.  Max error ~2 ulp.
 */
static inline float exp_f32(float x) {
    const float log2e = 1.44269504088896341f;
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    float xc = x < -104.0f ? -104.0f : (x > 88.8f ? 88.8f : x);   /* NaN: patched below */
    const float round_magic = 12582912.0f;                      /* 1.5 * 2^23 */
    float n = (xc * log2e + round_magic) - round_magic;         /* round to nearest */
    float r = xc - n * ln2_hi;
    r = r - n * ln2_lo;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* 2^n as two normal powers of two, so n in [-150, 128] needs no special case
       (results in the subnormal range come out of the multiplication itself) */
    int32_t ni = (int32_t)n;
    int32_t n1 = ni / 2, n2 = ni - n1;
    int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float y = p * s1 * s2;
    y = x > 88.72283905206835f ? INFINITY : y;
    y = x < -103.972077083991796f ? 0.0f : y;
    y = x != x ? x : y;
    return y;
}

void gt_set_num_threads(int n) { omp_set_num_threads(n); }
int gt_get_num_threads(void) { return omp_get_max_threads(); }

void gt_exp_f32(const float *x, float *out, int64_t n) {
    #pragma omp parallel for simd schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; i++) out[i] = exp_f32(x[i]);
}

/* Softmax over rows of a contiguous (rows, cols) matrix.
 *   m = max(row)            (a NaN anywhere makes the whole row NaN, as in PyTorch)
 *   s = sum(exp(row - m))
 *   softmax:     out = exp(row - m) / s
 *   log_softmax: out = row - m - log(s)
 */
void gt_softmax_f32(const float *x, float *out, int64_t rows, int64_t cols, int log_) {
    #pragma omp parallel for schedule(static) if (rows * cols > 32768)
    for (int64_t i = 0; i < rows; i++) {
        const float *row = x + i * cols;
        float *dst = out + i * cols;
        float m = -INFINITY;
        int nan = 0;
        #pragma omp simd reduction(max:m) reduction(|:nan)
        for (int64_t j = 0; j < cols; j++) {
            m = row[j] > m ? row[j] : m;
            nan |= row[j] != row[j];
        }
        if (nan) m = NAN;
        if (m == -INFINITY) m = 0.0f;   /* an all -inf row: exp(-inf - 0) = 0, sum 0 -> nan, as torch */
        float s = 0.0f;
        if (log_) {
            #pragma omp simd reduction(+:s)
            for (int64_t j = 0; j < cols; j++) s += exp_f32(row[j] - m);
            float log_s = logf(s);
            #pragma omp simd
            for (int64_t j = 0; j < cols; j++) dst[j] = (row[j] - m) - log_s;   /* torch's order */
        } else {
            #pragma omp simd reduction(+:s)
            for (int64_t j = 0; j < cols; j++) {
                float e = exp_f32(row[j] - m);
                dst[j] = e;
                s += e;
            }
            float inv = 1.0f / s;
            #pragma omp simd
            for (int64_t j = 0; j < cols; j++) dst[j] *= inv;
        }
    }
}

/* Sum of a contiguous float32 array.  Each block keeps 64 float lanes (eight
 * independent vector accumulators, so the adds pipeline instead of waiting on
 * one chain, like ATen's cascade sum); blocks are added in double. */
double gt_sum_f32(const float *x, int64_t n) {
    const int64_t block = 4096;
    double total = 0.0;
    #pragma omp parallel for reduction(+:total) schedule(static) if (n > 65536)
    for (int64_t start = 0; start < n; start += block) {
        int64_t end = start + block < n ? start + block : n;
        float acc[64] = {0};
        int64_t i = start;
        for (; i + 64 <= end; i += 64)
            for (int k = 0; k < 64; k++) acc[k] += x[i + k];
        float tail = 0.0f;
        for (; i < end; i++) tail += x[i];
        double block_sum = tail;
        for (int k = 0; k < 64; k++) block_sum += acc[k];
        total += block_sum;
    }
    return total;
}

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

/* erf / erfc of float64 values (libm's, correctly rounded to ~1 ulp).  numpy has
 * no erf ufunc; this is the loop behind erf, erfc and exact gelu.
 * which: 0 erf, 1 erfc. */
void gt_erf_f64(int which, const double *x, double *out, int64_t n) {
    if (which == 0) {
        #pragma omp parallel for schedule(static) if (n > 32768)
        for (int64_t i = 0; i < n; i++) out[i] = erf(x[i]);
    } else {
        #pragma omp parallel for schedule(static) if (n > 32768)
        for (int64_t i = 0; i < n; i++) out[i] = erfc(x[i]);
    }
}

/* erf for float32 as ATen's vectorized CPU kernel computes it (Vectorized<float>::erf,
 * Abramowitz & Stegun 7.1.26): erf(x) = sign(x) (1 - t p(t) exp(-x^2)),
 * t = 1 / (1 + 0.3275911 |x|); absolute error below 1.5e-7.  Vectorizable. */
static inline float erf_f32(float x) {
    const float p = 0.3275911f, a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f,
                a4 = -1.453152027f, a5 = 1.061405429f;
    float ax = fabsf(x);
    float t = 1.0f / (p * ax + 1.0f);
    float poly = (((a5 * t + a4) * t + a3) * t + a2) * t + a1;
    float r = 1.0f - poly * t * exp_f32(-ax * ax);
    return x < 0.0f ? -r : (x != x ? x : r);
}

#define GT_SQRT1_2 0.70710678118654752440     /* 1/sqrt(2) (M_SQRT1_2 is not C11) */
#define GT_2_SQRTPI 1.12837916709551257390    /* 2/sqrt(pi) */

/* gelu(x) = x/2 (1 + erf(x / sqrt 2)), and its backward
 * grad * (Phi(x) + x phi(x)), in float32 as ATen's GeluKernelImpl. */
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

/* The optimizers' arithmetic, rounded as ATen's CPU loops round it (their
 * vectorized bodies are fused multiply-adds):
 *   axpy:    a + alpha * b            fma(b, alpha, a)          (add/sub with alpha)
 *   addcmul: s + v * t1 * t2          fma(v * t1, t2, s)
 *   addcdiv: s + v * t1 / t2          rounded at every step
 *   lerp:    |w| < 0.5 ? fma(w, e - s, s) : fma(w - 1, e - s, e)            */
void gt_axpy_f32(const float *a, const float *b, float alpha, float *out, int64_t n) {
    #pragma omp parallel for simd schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) out[i] = fmaf(b[i], alpha, a[i]);
}

void gt_addcmul_f32(const float *s, const float *t1, const float *t2, float v, float *out,
                    int64_t n) {
    #pragma omp parallel for simd schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) out[i] = fmaf(v * t1[i], t2[i], s[i]);
}

void gt_addcdiv_f32(const float *s, const float *t1, const float *t2, float v, float *out,
                    int64_t n) {
    #pragma omp parallel for simd schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) out[i] = s[i] + (v * t1[i]) / t2[i];
}

void gt_lerp_f32(const float *s, const float *e, float w, float *out, int64_t n) {
    const int small = fabsf(w) < 0.5f;
    const float coeff = small ? w : w - 1.0f;
    #pragma omp parallel for simd schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) out[i] = fmaf(coeff, e[i] - s[i], small ? s[i] : e[i]);
}
