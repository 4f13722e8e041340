/* SLEEF's expf_u10 (the function ATen's Vectorized<float>::exp calls under
 * AVX2/AVX512), step for step with explicit fused multiply-adds; see
 * kernels/sleef.py for the same steps in numpy and what they compute.
 * Shared by native.c and the C that Inductor generates (pasted into it). */
#ifndef GT_SLEEF_H
#define GT_SLEEF_H
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

#endif
