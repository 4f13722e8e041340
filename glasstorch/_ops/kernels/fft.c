/* glasstorch's FFT for power-of-two lengths: many lines transformed at once.
 *
 * PyTorch's CPU build hands torch.fft to MKL's DFTI (pocketfft where MKL is
 * absent); numpy's pocketfft transforms one line at a time.  Here a tile holds
 * LANES lines side by side: tile[2k] is the vector of the real parts of
 * element k of every line, tile[2k + 1] of the imaginary parts, so each
 * butterfly is a few vector operations (GCC/Clang vector types; -march=native
 * makes them AVX-512 or AVX2 instructions).  The lines of a pass are either
 * consecutive rows (a contiguous last dim: the gather and scatter transpose
 * LANES x LANES blocks in registers) or neighbouring columns (an outer dim:
 * element k of every lane is one contiguous row segment, no transposition).
 * The tiles of a pass are split among the intra-op threads (OpenMP).
 * Contiguous rows of n >= LANES^2 complex (r2c/c2r: of the half length) go
 * line by line instead, as four-step transforms (four_step_line): one
 * register transposition per element instead of the tile's two, and a
 * working set of one line; the real transforms' split steps then run along
 * the line.  For 512 rows of 512 complex float32 on one AVX-512 core that
 * took the row pass from ~340 to ~300 us (MKL: ~250-290 us).
 *
 * A pass transforms one dim of a 3-d view (outer, n, inner) described by
 * strides in real scalars; fft_native.py runs one pass per transformed dim.
 *
 *   c2c  complex -> complex, length n: decimation in frequency, radix-4
 *        stages (one radix-2 stage first for odd log2 n), in place in the tile,
 *        natural order in and bit-reversed order out (the scatter reorders).
 *   r2c  real (n) -> complex (n/2 + 1, or all n when `full`): the even and
 *        odd samples are the real and imaginary parts of a complex line of
 *        n/2; after its transform Z, X[k] = (A + B) / 2 - i W^k (A - B) / 2
 *        with A = Z[k], B = conj(Z[n/2 - k]).
 *   c2r  complex (n/2 + 1) -> real (n), the reverse: Z[k] = (X[k] + C)
 *        + i W^-k (X[k] - C) with C = conj(X[n/2 - k]), an inverse transform
 *        of n/2, its parts the even and odd samples.  The imaginary parts of
 *        X[0] and X[n/2] are dropped (a real signal has none), as MKL and
 *        pocketfft drop them.
 *
 * Twiddles W^k = exp(-+2 pi i k / n) come from fft_native.py (float64, rounded
 * once); `dir` is -1 (forward) or +1 (inverse); `scale` multiplies every
 * output (ATen's normalization).
 *
 * The body below is compiled twice, for float (16 lanes) and double (8 lanes):
 * the file includes itself with FFT_TYPE defined.
 */
#ifndef FFT_TYPE

/* a * b + c may fuse (as MKL's kernels do; -std=c11 turns contraction off) */
#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define FFT_SHUFFLE 1           /* register transposes; else the scalar gathers */
#endif
#endif

enum { GENERIC, ROWS, COLUMNS };    /* how a tile's lanes lie in memory */

#define FFT_TYPE float
#define FFT_LANES 16
#define FFT_NAME(x) x##_f32
#include "fft.c"
#undef FFT_TYPE
#undef FFT_LANES
#undef FFT_NAME

#define FFT_TYPE double
#define FFT_LANES 8
#define FFT_NAME(x) x##_f64
#include "fft.c"

#else   /* the body, for T = FFT_TYPE */

#define T FFT_TYPE
#define W FFT_LANES
#define V FFT_NAME(vec)
typedef T V __attribute__((vector_size(sizeof(T) * W)));

/* shuffle masks: even / odd elements of a pair of vectors (deinterleave), the
   two halves of their interleaving, the lanes reversed, and the stages of a W x W transpose (stage
   s swaps bit s of the row and the column index) */
#if W == 16
#define EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define LOW 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23
#define HIGH 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31
#define T1A 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define T1B 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define T2A 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define T2B 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define T4A 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define T4B 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define REV 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0
#define T8A 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define T8B 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#else
#define REV 7, 6, 5, 4, 3, 2, 1, 0
#define EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define ODD 1, 3, 5, 7, 9, 11, 13, 15
#define LOW 0, 8, 1, 9, 2, 10, 3, 11
#define HIGH 4, 12, 5, 13, 6, 14, 7, 15
#define T1A 0, 8, 2, 10, 4, 12, 6, 14
#define T1B 1, 9, 3, 11, 5, 13, 7, 15
#define T2A 0, 1, 8, 9, 4, 5, 12, 13
#define T2B 2, 3, 10, 11, 6, 7, 14, 15
#define T4A 0, 1, 2, 3, 8, 9, 10, 11
#define T4B 4, 5, 6, 7, 12, 13, 14, 15
#endif

static inline V FFT_NAME(loadu)(const T *p) { V v; memcpy(&v, p, sizeof v); return v; }
static inline void FFT_NAME(storeu)(T *p, V v) { memcpy(p, &v, sizeof v); }

/* -- butterflies ------------------------------------------------------------------ */

/* A radix-4 butterfly stage on one block of 4q elements (twiddles W_4q^k, that is
   W_n^(k step) with step = n / 4q), then the stages below it on each quarter:
   depth first, so the small blocks stay in L1 (the same butterflies as
   stage by stage). */
static void FFT_NAME(radix4)(V *x, int64_t q, int64_t step, const T *wr, const T *wi, int dir) {
    for (int64_t k = 0; k < q; k++) {
        V *x0 = x + 2 * k, *x1 = x0 + 2 * q, *x2 = x1 + 2 * q, *x3 = x2 + 2 * q;
        V t0r = x0[0] + x2[0], t0i = x0[1] + x2[1];
        V t1r = x0[0] - x2[0], t1i = x0[1] - x2[1];
        V t2r = x1[0] + x3[0], t2i = x1[1] + x3[1];
        V dr = x1[0] - x3[0], di = x1[1] - x3[1];
        /* t3 = (a1 - a3) turned by -i (forward) or +i (inverse) */
        V t3r = dir < 0 ? di : -di, t3i = dir < 0 ? -dr : dr;
        V ar = t0r - t2r, ai = t0i - t2i;
        V br = t1r + t3r, bi = t1i + t3i;
        V cr = t1r - t3r, ci = t1i - t3i;
        x0[0] = t0r + t2r; x0[1] = t0i + t2i;
        if (q == 1) {               /* the last stage: every twiddle is 1 */
            x1[0] = ar; x1[1] = ai; x2[0] = br; x2[1] = bi; x3[0] = cr; x3[1] = ci;
            continue;
        }
        const T w1r = wr[k * step], w1i = wi[k * step];
        const T w2r = wr[2 * k * step], w2i = wi[2 * k * step];
        const T w3r = wr[3 * k * step], w3i = wi[3 * k * step];
        x1[0] = ar * w2r - ai * w2i; x1[1] = ar * w2i + ai * w2r;
        x2[0] = br * w1r - bi * w1i; x2[1] = br * w1i + bi * w1r;
        x3[0] = cr * w3r - ci * w3i; x3[1] = cr * w3i + ci * w3r;
    }
    if (q >= 4)
        for (int b = 0; b < 4; b++)
            FFT_NAME(radix4)(x + 2 * b * q, q / 4, step * 4, wr, wi, dir);
}

/* The tile's lanes transformed (length n, a power of two), bit-reversed order out;
   the twiddles W_n^k are wr/wi[k * stride] (tables of a multiple of n). */
static void FFT_NAME(dif)(V *x, int64_t n, int64_t stride, const T *wr, const T *wi, int dir) {
    if (n < 2)
        return;
    int log2n = 0;
    while (((int64_t)1 << log2n) < n) log2n++;
    if (log2n & 1) {                /* one radix-2 stage over the whole line */
        const int64_t h = n / 2;
        for (int64_t k = 0; k < h; k++) {
            V *x0 = x + 2 * k, *x1 = x0 + 2 * h;
            const T w_r = wr[k * stride], w_i = wi[k * stride];
            V dr = x0[0] - x1[0], di = x0[1] - x1[1];
            x0[0] += x1[0]; x0[1] += x1[1];
            x1[0] = dr * w_r - di * w_i; x1[1] = dr * w_i + di * w_r;
        }
        if (n >= 8) {
            FFT_NAME(radix4)(x, n / 8, 2 * stride, wr, wi, dir);
            FFT_NAME(radix4)(x + n, n / 8, 2 * stride, wr, wi, dir);
        }
    } else {
        FFT_NAME(radix4)(x, n / 4, stride, wr, wi, dir);
    }
}

/* -- moving lines in and out of a tile -------------------------------------------- */

/* Where a tile's lines lie: element k of lane l has its real part at
   base[l] + k * step and its imaginary part `imag` scalars after it. */
typedef struct { int64_t base[W], step, imag; int count, mode; } FFT_NAME(lanes);

/* Tile t of a pass over (outer, n, inner) with strides st (scalars); `pair`: an
   element is two scalars of the line (real input/output taken as complex pairs). */
static FFT_NAME(lanes) FFT_NAME(lanes_of)(int64_t t, int64_t outer, int64_t inner,
                                          const int64_t *st, int pair) {
    FFT_NAME(lanes) s;
    int64_t o, i;
    if (inner == 1) {
        o = t * W; i = 0;
        s.count = (int)(outer - o < W ? outer - o : W);
    } else {
        const int64_t per = (inner + W - 1) / W;
        o = t / per; i = (t % per) * W;
        s.count = (int)(inner - i < W ? inner - i : W);
    }
    for (int l = 0; l < s.count; l++)
        s.base[l] = inner == 1 ? (o + l) * st[0] : o * st[0] + (i + l) * st[2];
    s.step = pair ? 2 * st[1] : st[1];
    s.imag = pair ? st[1] : 1;
    s.mode = GENERIC;
#ifdef FFT_SHUFFLE
    if (s.count == W && s.imag == 1 && inner == 1 && s.step == 2) s.mode = ROWS;
    if (s.count == W && s.imag == 1 && inner > 1 && st[2] == 2) s.mode = COLUMNS;
#endif
    return s;
}

static int64_t FFT_NAME(tiles)(int64_t outer, int64_t inner) {
    return inner == 1 ? (outer + W - 1) / W : outer * ((inner + W - 1) / W);
}

#ifdef FFT_SHUFFLE
#define STAGE(s, A, B)                                                          \
    for (int a = 0; a < W; a++)                                                 \
        if (!(a & s)) {                                                         \
            V p = x[a], q = x[a + s];                                           \
            x[a] = __builtin_shufflevector(p, q, A);                            \
            x[a + s] = __builtin_shufflevector(p, q, B);                        \
        }

static inline void FFT_NAME(transpose)(V *x) {
    STAGE(1, T1A, T1B)
    STAGE(2, T2A, T2B)
    STAGE(4, T4A, T4B)
#if W == 16
    STAGE(8, T8A, T8B)
#endif
}
#undef STAGE
#endif

/* Elements 0..len-1 of the lines into tile rows 0..len-1 (unused lanes: zeros). */
static void FFT_NAME(gather)(const T *src, const FFT_NAME(lanes) *s, int64_t len, V *tile) {
    int64_t k = 0;
#ifdef FFT_SHUFFLE
    if (s->mode == ROWS) {          /* W consecutive complex of each row, transposed */
        for (; k + W <= len; k += W) {
            V re[W], im[W];
            for (int l = 0; l < W; l++) {
                const T *p = src + s->base[l] + 2 * k;
                V a = FFT_NAME(loadu)(p), b = FFT_NAME(loadu)(p + W);
                re[l] = __builtin_shufflevector(a, b, EVEN);
                im[l] = __builtin_shufflevector(a, b, ODD);
            }
            FFT_NAME(transpose)(re);
            FFT_NAME(transpose)(im);
            for (int j = 0; j < W; j++) { tile[2 * (k + j)] = re[j]; tile[2 * (k + j) + 1] = im[j]; }
        }
    } else if (s->mode == COLUMNS) {    /* element k of the lanes: one row segment */
        for (; k < len; k++) {
            const T *p = src + s->base[0] + k * s->step;
            V a = FFT_NAME(loadu)(p), b = FFT_NAME(loadu)(p + W);
            tile[2 * k] = __builtin_shufflevector(a, b, EVEN);
            tile[2 * k + 1] = __builtin_shufflevector(a, b, ODD);
        }
    }
#endif
    for (; k < len; k++) {
        V re = {0}, im = {0};
        for (int l = 0; l < s->count; l++) {
            re[l] = src[s->base[l] + k * s->step];
            im[l] = src[s->base[l] + k * s->step + s->imag];
        }
        tile[2 * k] = re; tile[2 * k + 1] = im;
    }
}

/* Tile rows map[k] (k when map is NULL), times scale, into elements 0..len-1. */
static void FFT_NAME(scatter)(const V *tile, const int32_t *map, int64_t len, T *dst,
                              const FFT_NAME(lanes) *s, T scale) {
    int64_t k = 0;
#ifdef FFT_SHUFFLE
    if (s->mode == ROWS) {
        for (; k + W <= len; k += W) {
            V re[W], im[W];
            for (int j = 0; j < W; j++) {
                const int64_t r = map ? map[k + j] : k + j;
                re[j] = tile[2 * r]; im[j] = tile[2 * r + 1];
                if (scale != 1) { re[j] *= scale; im[j] *= scale; }
            }
            FFT_NAME(transpose)(re);
            FFT_NAME(transpose)(im);
            for (int l = 0; l < W; l++) {
                T *p = dst + s->base[l] + 2 * k;
                FFT_NAME(storeu)(p, __builtin_shufflevector(re[l], im[l], LOW));
                FFT_NAME(storeu)(p + W, __builtin_shufflevector(re[l], im[l], HIGH));
            }
        }
    } else if (s->mode == COLUMNS) {
        for (; k < len; k++) {
            const int64_t r = map ? map[k] : k;
            V re = tile[2 * r], im = tile[2 * r + 1];
            if (scale != 1) { re *= scale; im *= scale; }
            T *p = dst + s->base[0] + k * s->step;
            FFT_NAME(storeu)(p, __builtin_shufflevector(re, im, LOW));
            FFT_NAME(storeu)(p + W, __builtin_shufflevector(re, im, HIGH));
        }
    }
#endif
    for (; k < len; k++) {
        const int64_t r = map ? map[k] : k;
        V re = tile[2 * r] * scale, im = tile[2 * r + 1] * scale;
        for (int l = 0; l < s->count; l++) {
            dst[s->base[l] + k * s->step] = re[l];
            dst[s->base[l] + k * s->step + s->imag] = im[l];
        }
    }
}

/* -- one contiguous line at a time: the four-step transform ---------------------- */

#ifdef FFT_SHUFFLE
/* Bailey's four-step transform of one contiguous line of n = W m complex (m a
   multiple of W), for row passes: element j1 m + j2 is row j1, column j2 of a
   W x m matrix.
     1. Its columns, W at a time (lane = column: element j1 of the lanes is one
        row segment, no transposition), transformed over j1 (length W);
     2. value (k1, j2) turned by W_n^(k1 j2) (`tw`, see four_step_twiddles);
     3. each W x W block transposed in registers, so lane = k1;
     4. those W lines of length m transformed over j2 into `z`: X[k1 + W k2]
        is lane k1 of z's row k2, W consecutive outputs, stored without
        transposition.
   One register transposition per element, where a tile of W lines takes two
   (gather and scatter), and the working set is the line (L1).  bitrev is that
   of n: bitrev_W(k1) = bitrev[k1] / m, bitrev_m(k2) = bitrev[k2] / W (shifts:
   a division by the variable m would cost more than the butterflies). */
static void FFT_NAME(four_step_line)(const T *src, T *dst, int64_t n, const V *tw, V *z,
                                     const T *wr, const T *wi, const int32_t *bitrev,
                                     int dir, T scale) {
    const int64_t m = n / W;
    int log2m = 0;
    while (((int64_t)1 << log2m) < m) log2m++;
    for (int64_t b = 0; b < m; b += W) {        /* columns b .. b + W-1 */
        V y[2 * W], re[W], im[W];
        for (int j1 = 0; j1 < W; j1++) {
            const T *p = src + 2 * (j1 * m + b);
            V a = FFT_NAME(loadu)(p), c = FFT_NAME(loadu)(p + W);
            y[2 * j1] = __builtin_shufflevector(a, c, EVEN);
            y[2 * j1 + 1] = __builtin_shufflevector(a, c, ODD);
        }
        FFT_NAME(dif)(y, W, m, wr, wi, dir);    /* W_W = W_n^m */
        re[0] = y[0]; im[0] = y[1];             /* k1 = 0: every factor is 1 */
        for (int k1 = 1; k1 < W; k1++) {
            const V *v = y + 2 * (bitrev[k1] >> log2m), *w = tw + 2 * (b + k1);
            re[k1] = v[0] * w[0] - v[1] * w[1];
            im[k1] = v[0] * w[1] + v[1] * w[0];
        }
        FFT_NAME(transpose)(re);
        FFT_NAME(transpose)(im);
        for (int l = 0; l < W; l++) { z[2 * (b + l)] = re[l]; z[2 * (b + l) + 1] = im[l]; }
    }
    FFT_NAME(dif)(z, m, W, wr, wi, dir);        /* W_m = W_n^W */
    for (int64_t k2 = 0; k2 < m; k2++) {
        const V *v = z + 2 * ((uint32_t)bitrev[k2] / W);
        V re = v[0], im = v[1];
        if (scale != 1) { re *= scale; im *= scale; }
        FFT_NAME(storeu)(dst + 2 * W * k2, __builtin_shufflevector(re, im, LOW));
        FFT_NAME(storeu)(dst + 2 * W * k2 + W, __builtin_shufflevector(re, im, HIGH));
    }
}

/* W consecutive complex at p as real and imaginary vectors; `reverse`: lane l
   holds element W-1-l. */
static inline void FFT_NAME(load_parts)(const T *p, V *re, V *im, int reverse) {
    V a = FFT_NAME(loadu)(p), b = FFT_NAME(loadu)(p + W);
    *re = __builtin_shufflevector(a, b, EVEN);
    *im = __builtin_shufflevector(a, b, ODD);
    if (reverse) {
        *re = __builtin_shufflevector(*re, *re, REV);
        *im = __builtin_shufflevector(*im, *im, REV);
    }
}

static inline void FFT_NAME(store_parts)(T *p, V re, V im) {
    FFT_NAME(storeu)(p, __builtin_shufflevector(re, im, LOW));
    FFT_NAME(storeu)(p + W, __builtin_shufflevector(re, im, HIGH));
}

/* r2c's split step on one line, vectorized along it: Z (h complex, natural
   order) -> X[k] = (E - i W^k D) / 2 for k <= h, E = A + conj B,
   D = A - conj B, A = Z[k], B = Z[h - k] (Z[h] = Z[0]), times scale; with
   `len` = 2h (full), also X[2h - k] = conj X[k].  W values of k at once
   (B's run loaded reversed), the ends one by one. */
static void FFT_NAME(r2c_split_line)(const T *z, T *x, int64_t h, int64_t len, const T *rr,
                                     const T *ri, T scale) {
    const T half = (T)0.5 * scale;
    int64_t k = 0;
    while (k <= h) {
        if (k >= 1 && k + W <= h) {
            V ar, ai, br, bi;
            FFT_NAME(load_parts)(z + 2 * k, &ar, &ai, 0);
            FFT_NAME(load_parts)(z + 2 * (h - k - W + 1), &br, &bi, 1);
            V wr = FFT_NAME(loadu)(rr + k), wi = FFT_NAME(loadu)(ri + k);
            V er = ar + br, ei = ai - bi, dr = ar - br, di = ai + bi;
            FFT_NAME(store_parts)(x + 2 * k, (er + (wr * di + wi * dr)) * half,
                                  (ei - (wr * dr - wi * di)) * half);
            k += W;
            continue;
        }
        const T *a = z + 2 * (k == h ? 0 : k), *b = z + 2 * (k == 0 ? 0 : h - k);
        T er = a[0] + b[0], ei = a[1] - b[1], dr = a[0] - b[0], di = a[1] + b[1];
        x[2 * k] = (er + (rr[k] * di + ri[k] * dr)) * half;
        x[2 * k + 1] = (ei - (rr[k] * dr - ri[k] * di)) * half;
        k++;
    }
    for (; k < len; ) {                         /* X[2h - k] = conj X[k] */
        if (k + W <= len) {
            V re, im;
            FFT_NAME(load_parts)(x + 2 * (len - k - W + 1), &re, &im, 1);
            FFT_NAME(store_parts)(x + 2 * k, re, -im);
            k += W;
            continue;
        }
        x[2 * k] = x[2 * (len - k)];
        x[2 * k + 1] = -x[2 * (len - k) + 1];
        k++;
    }
}

/* c2r's first step on one line, vectorized along it: X (h + 1 complex) -> Z[k]
   = S + i W^-k D for k < h, S = X[k] + conj C, D = X[k] - conj C,
   C = X[h - k]; the imaginary parts of X[0] and X[h] count as zero.  W values
   of k at once (C's run loaded reversed), the ends one by one. */
static void FFT_NAME(c2r_merge_line)(const T *x, T *z, int64_t h, const T *rr, const T *ri) {
    for (int64_t k = 0; k < h; ) {
        if (k >= 1 && k + W <= h) {
            V ar, ai, cr, ci;
            FFT_NAME(load_parts)(x + 2 * k, &ar, &ai, 0);
            FFT_NAME(load_parts)(x + 2 * (h - k - W + 1), &cr, &ci, 1);
            V wr = FFT_NAME(loadu)(rr + k), wi = FFT_NAME(loadu)(ri + k);
            V sr = ar + cr, si = ai - ci, dr = ar - cr, di = ai + ci;
            FFT_NAME(store_parts)(z + 2 * k, sr - (wr * di + wi * dr), si + (wr * dr - wi * di));
            k += W;
            continue;
        }
        const T ar = x[2 * k], ai = k == 0 ? 0 : x[2 * k + 1];
        const T cr = x[2 * (h - k)], ci = k == 0 ? 0 : x[2 * (h - k) + 1];
        T sr = ar + cr, si = ai - ci, dr = ar - cr, di = ai + ci;
        z[2 * k] = sr - (rr[k] * di + ri[k] * dr);
        z[2 * k + 1] = si + (rr[k] * dr - ri[k] * di);
        k++;
    }
}

/* Step 2's factors W_n^(k1 j2) as vectors over W consecutive j2: those of
   columns b .. b + W-1 and row k1 at tw[2 (b + k1)] (real) and + 1 (imag). */
static V *FFT_NAME(four_step_twiddles)(int64_t n, const T *wr, const T *wi) {
    const int64_t m = n / W;
    V *tw = (V *)aligned_alloc(64, sizeof(V) * 2 * (size_t)m);
    for (int64_t b = 0; b < m; b += W)
        for (int k1 = 0; k1 < W; k1++)
            for (int l = 0; l < W; l++) {
                const int64_t e = (k1 * (b + l)) % n;
                tw[2 * (b + k1)][l] = wr[e];
                tw[2 * (b + k1) + 1][l] = wi[e];
            }
    return tw;
}
#endif

/* -- the passes ------------------------------------------------------------------- */

/* Thread-local tiles: `rows` complex vectors each (two allocations at most). */
#define TILE(rows) ((V *)aligned_alloc(64, sizeof(V) * 2 * (size_t)(rows)))

void FFT_NAME(gt_fft_c2c)(const T *in, const int64_t *in_st, T *out, const int64_t *out_st,
                          int64_t outer, int64_t n, int64_t inner, const T *wr, const T *wi,
                          const int32_t *bitrev, int dir, T scale, int threads) {
    const int64_t tiles = FFT_NAME(tiles)(outer, inner);
#ifdef FFT_SHUFFLE
    if (inner == 1 && in_st[1] == 2 && out_st[1] == 2 && n >= W * W) {
        /* contiguous complex rows: line by line, four-step */
        V *tw = FFT_NAME(four_step_twiddles)(n, wr, wi);
        #pragma omp parallel num_threads(threads) if (threads > 1 && outer > 1)
        {
            V *z = TILE(n / W);
            #pragma omp for schedule(static)
            for (int64_t o = 0; o < outer; o++)
                FFT_NAME(four_step_line)(in + o * in_st[0], out + o * out_st[0], n, tw, z,
                                         wr, wi, bitrev, dir, scale);
            free(z);
        }
        free(tw);
        return;
    }
#endif
    #pragma omp parallel num_threads(threads) if (threads > 1 && tiles > 1)
    {
        V *x = TILE(n);
        #pragma omp for schedule(static)
        for (int64_t t = 0; t < tiles; t++) {
            FFT_NAME(lanes) src = FFT_NAME(lanes_of)(t, outer, inner, in_st, 0);
            FFT_NAME(lanes) dst = FFT_NAME(lanes_of)(t, outer, inner, out_st, 0);
            FFT_NAME(gather)(in, &src, n, x);
            FFT_NAME(dif)(x, n, 1, wr, wi, dir);
            FFT_NAME(scatter)(x, bitrev, n, out, &dst, scale);
        }
        free(x);
    }
}

/* n real samples -> n/2 + 1 (all n when `full`) complex; wr/wi: the forward
   twiddles of n/2, rr/ri: W_n^k for k <= n/2, bitrev: that of n/2. */
void FFT_NAME(gt_fft_r2c)(const T *in, const int64_t *in_st, T *out, const int64_t *out_st,
                          int64_t outer, int64_t n, int64_t inner, const T *wr, const T *wi,
                          const T *rr, const T *ri, const int32_t *bitrev, T scale, int full,
                          int threads) {
    const int64_t h = n / 2, len = full ? n : h + 1, tiles = FFT_NAME(tiles)(outer, inner);
#ifdef FFT_SHUFFLE
    if (inner == 1 && in_st[1] == 1 && out_st[1] == 2 && h >= W * W) {
        /* contiguous rows: line by line, the half-length transform four-step */
        V *tw = FFT_NAME(four_step_twiddles)(h, wr, wi);
        #pragma omp parallel num_threads(threads) if (threads > 1 && outer > 1)
        {
            V *work = TILE(h / W);
            T *z = (T *)TILE(h / W);        /* the line's Z: h complex */
            #pragma omp for schedule(static)
            for (int64_t o = 0; o < outer; o++) {
                FFT_NAME(four_step_line)(in + o * in_st[0], z, h, tw, work, wr, wi, bitrev,
                                         -1, 1);
                FFT_NAME(r2c_split_line)(z, out + o * out_st[0], h, len, rr, ri, scale);
            }
            free(work);
            free(z);
        }
        free(tw);
        return;
    }
#endif
    #pragma omp parallel num_threads(threads) if (threads > 1 && tiles > 1)
    {
        V *z = TILE(h), *y = TILE(len);
        #pragma omp for schedule(static)
        for (int64_t t = 0; t < tiles; t++) {
            FFT_NAME(lanes) src = FFT_NAME(lanes_of)(t, outer, inner, in_st, 1);
            FFT_NAME(lanes) dst = FFT_NAME(lanes_of)(t, outer, inner, out_st, 0);
            FFT_NAME(gather)(in, &src, h, z);
            FFT_NAME(dif)(z, h, 1, wr, wi, -1);
            for (int64_t k = 0; k <= h; k++) {
                const V *a = z + 2 * bitrev[k == h ? 0 : k], *b = z + 2 * bitrev[k == 0 ? 0 : h - k];
                /* E = A + conj B, D = A - conj B, X = (E - i W^k D) / 2 */
                V er = a[0] + b[0], ei = a[1] - b[1], dr = a[0] - b[0], di = a[1] + b[1];
                y[2 * k] = (er + (rr[k] * di + ri[k] * dr)) * (T)0.5;
                y[2 * k + 1] = (ei - (rr[k] * dr - ri[k] * di)) * (T)0.5;
            }
            for (int64_t k = h + 1; k < len; k++) {     /* X[n - k] = conj X[k] */
                y[2 * k] = y[2 * (n - k)];
                y[2 * k + 1] = -y[2 * (n - k) + 1];
            }
            FFT_NAME(scatter)(y, NULL, len, out, &dst, scale);
        }
        free(z);
        free(y);
    }
}

/* n/2 + 1 complex -> n real; wr/wi: the inverse twiddles of n/2, rr/ri: W_n^-k. */
void FFT_NAME(gt_fft_c2r)(const T *in, const int64_t *in_st, T *out, const int64_t *out_st,
                          int64_t outer, int64_t n, int64_t inner, const T *wr, const T *wi,
                          const T *rr, const T *ri, const int32_t *bitrev, T scale,
                          int threads) {
    const int64_t h = n / 2, tiles = FFT_NAME(tiles)(outer, inner);
#ifdef FFT_SHUFFLE
    if (inner == 1 && in_st[1] == 2 && out_st[1] == 1 && h >= W * W) {
        /* contiguous rows: line by line, the half-length transform four-step */
        V *tw = FFT_NAME(four_step_twiddles)(h, wr, wi);
        #pragma omp parallel num_threads(threads) if (threads > 1 && outer > 1)
        {
            V *work = TILE(h / W);
            T *z = (T *)TILE(h / W);        /* the line's Z: h complex */
            #pragma omp for schedule(static)
            for (int64_t o = 0; o < outer; o++) {
                FFT_NAME(c2r_merge_line)(in + o * in_st[0], z, h, rr, ri);
                FFT_NAME(four_step_line)(z, out + o * out_st[0], h, tw, work, wr, wi, bitrev,
                                         1, scale);
            }
            free(work);
            free(z);
        }
        free(tw);
        return;
    }
#endif
    #pragma omp parallel num_threads(threads) if (threads > 1 && tiles > 1)
    {
        V *x = TILE(h + 1), *z = TILE(h);
        #pragma omp for schedule(static)
        for (int64_t t = 0; t < tiles; t++) {
            FFT_NAME(lanes) src = FFT_NAME(lanes_of)(t, outer, inner, in_st, 0);
            FFT_NAME(lanes) dst = FFT_NAME(lanes_of)(t, outer, inner, out_st, 1);
            FFT_NAME(gather)(in, &src, h + 1, x);
            x[1] = x[2 * h + 1] = (V){0};   /* X[0] and X[n/2]: real parts only */
            for (int64_t k = 0; k < h; k++) {
                const V *a = x + 2 * k, *c = x + 2 * (h - k);
                /* S = X[k] + conj C, D = X[k] - conj C, Z = S + i W^-k D */
                V sr = a[0] + c[0], si = a[1] - c[1], dr = a[0] - c[0], di = a[1] + c[1];
                z[2 * k] = sr - (rr[k] * di + ri[k] * dr);
                z[2 * k + 1] = si + (rr[k] * dr - ri[k] * di);
            }
            FFT_NAME(dif)(z, h, 1, wr, wi, 1);
            FFT_NAME(scatter)(z, bitrev, h, out, &dst, scale);
        }
        free(x);
        free(z);
    }
}

#undef TILE
#undef T
#undef W
#undef V
#undef EVEN
#undef REV
#undef ODD
#undef LOW
#undef HIGH
#undef T1A
#undef T1B
#undef T2A
#undef T2B
#undef T4A
#undef T4B
#if FFT_LANES == 16
#undef T8A
#undef T8B
#endif

#endif
