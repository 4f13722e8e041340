/* Vectorizable float32 math shared by native.c and the C that Inductor
 * generates (pasted into it): loops of these functions vectorize, where a
 * libm call would be a call per element.
 *
 * sleef_expf: SLEEF's expf_u10 (the function ATen's Vectorized<float>::exp
 * calls under AVX2/AVX512), step for step with explicit fused multiply-adds;
 * see kernels/sleef.py for the same steps in numpy and what they compute.
 * erf_f32: the steps of ATen's Vectorized<float>::erf.
 * exp_f32, gt_sinf, gt_cosf: glasstorch's own, below. */
#ifndef GT_VECMATH_H
#define GT_VECMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float gt_pow2i(int32_t q) {
    int32_t bits = (q + 0x7f) * (1 << 23);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline float sleef_expf(float x) {
    /* branch-free, so that loops of it vectorize; out-of-range and NaN inputs take
       d = 0 through the arithmetic and are replaced at the end, as SLEEF selects */
    float d = (x >= -104.0f && x <= 100.0f) ? x : 0.0f;
    int32_t q = (int32_t)rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float qf = (float)q;
    float s = fmaf(qf, -0.693145751953125f, d);
    s = fmaf(qf, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    int32_t half = q >> 1;
    u = (u * gt_pow2i(half)) * gt_pow2i(q - half);
    u = x < -104.0f ? 0.0f : u;
    u = x > 100.0f ? INFINITY : u;
    return x != x ? x : u;
}


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

/* erf for float32 as ATen's Vectorized<float>::erf takes it (Abramowitz &
 * Stegun 7.1.26): erf(x) = sign(x) (1 - t p(t) exp(-x^2)), t = 1 / (1 +
 * 0.3275911 |x|), in fused multiply-adds, with SLEEF's exp; absolute error
 * below 1.5e-7.  Vectorizable. */
static inline float erf_f32(float x) {
    float t = 1.0f / fmaf(0.3275911f, fabsf(x), 1.0f);
    float p = fmaf(fmaf(fmaf(fmaf(1.061405429f, t, -1.453152027f), t, 1.421413741f), t,
                        -0.284496736f), t, 0.254829592f);
    float minus_e = -sleef_expf(-(x * x));
    return copysignf(fmaf(minus_e * t, p, 1.0f), x);
}

/* sin and cos for float32, vectorizable, for |x| <= GT_TRIG_FAST_LIMIT.
 *
 *   x = q*pi/2 + r,  |r| <= pi/4      q = round(x * 2/pi)
 *   sin(x), cos(x) = +-sin(r) or +-cos(r), by q mod 4
 *
 * r comes from three fused multiply-adds with pi/2 split into three floats
 * (the first one exact: x - q*A is a multiple of A's last bit below 1);
 * sin(r) and cos(r) are degree-7 and degree-8 polynomials (Cephes'
 * coefficients).  Measured over every float up to 2^18: at most 1.57 ulp
 * from the correctly rounded result.  The two functions share the reduction,
 * so a loop computing sin(x) and cos(x) reduces x once (the compiler merges
 * the identical steps).  Larger arguments need more bits of pi: the caller
 * checks |x| against the limit and uses libm's sinf/cosf there. */
#define GT_TRIG_FAST_LIMIT 262144.0f

static inline float gt_trig_reduce(float x, int32_t *quadrant) {
    float q = rintf(x * 0.636619772367581343f);
    *quadrant = (int32_t)q;
    float r = fmaf(q, -1.57079637050628662109375f, x);
    r = fmaf(q, 4.371138828673793e-08f, r);
    return fmaf(q, 1.7151245100058819e-15f, r);
}

static inline float gt_sin_poly(float r) {
    float z = r * r;
    return fmaf(r * z, fmaf(z, fmaf(z, -1.9515295891e-4f, 8.3321608736e-3f), -1.6666654611e-1f), r);
}

static inline float gt_cos_poly(float r) {
    float z = r * r;
    return fmaf(z * z, fmaf(z, fmaf(z, 2.443315711809948e-5f, -1.388731625493765e-3f),
                            4.166664568298827e-2f), fmaf(-0.5f, z, 1.0f));
}

static inline float gt_negate_if(float v, int32_t two) {   /* two: 0 or 2 */
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits ^= (uint32_t)two << 30;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline float gt_sinf(float x) {
    int32_t q;
    float r = gt_trig_reduce(x, &q);
    return gt_negate_if((q & 1) ? gt_cos_poly(r) : gt_sin_poly(r), q & 2);
}

static inline float gt_cosf(float x) {
    int32_t q;
    float r = gt_trig_reduce(x, &q);
    return gt_negate_if((q & 1) ? gt_sin_poly(r) : gt_cos_poly(r), (q + 1) & 2);
}

#endif
