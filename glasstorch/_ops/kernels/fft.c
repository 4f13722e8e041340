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
 * element k of every lane is one contiguous row segment, no transposition;
 * there the gather also does dif's first stage, reading the 2 or 4 elements
 * a butterfly combines straight from their rows: one sweep less over a tile
 * that outgrows L1, 512 x 512 complex float32 columns ~290 instead of ~325 us).
 * Contiguous rows of n >= LANES^2 complex (r2c/c2r: of the half length) go
 * line by line instead, as four-step transforms (four_step_line): one
 * register transposition per element instead of the tile's two, and a
 * working set of one line; the real transforms' split steps then run along
 * the line.  For 512 rows of 512 complex float32 on one AVX-512 core that
 * took the row pass from ~340 to ~300 us (MKL: ~250-290 us).
 *
 * A pass transforms one dim of a 3-d view (outer, n, inner) described by
 * strides in real scalars (gt_fft_pass); fft_native.py plans one pass per
 * transformed dim and gt_fft_run runs a transform's passes in one OpenMP
 * region.  glasstorch's OpenMP threads sleep between regions after a short
 * spin (native.py's OPENMP_SPIN_ROUNDS), and waking one took 30-100 us on
 * this 2-core VM, so: one region per transform, not per pass (a barrier-free
 * hand-off between passes: a pass's chunks wait for the one before to
 * finish); chunks claimed dynamically, the opening thread from the first up
 * and the others from the last down, so that the thread that arrives late
 * takes what is left and neighbouring chunks, which share cache lines where
 * rows are not whole lines, stay on one core; the opening thread leaves last
 * (asleep in the closing barrier it would take a wake-up again); and below
 * FFT_PARALLEL_WORK elements, no region.  With both vCPUs busy a chunk took
 * ~1.4x as long as with one (shared caches or memory bandwidth): two threads
 * gained 1.3-1.6x when the other core was free, nothing when another process
 * held it.
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
enum { C2C, R2C, C2R };

/* One pass (fft_native.py's Pass): `kind` over the middle dim of the (outer,
   n, inner) views of in and out, strides in real scalars; n is the real length
   for r2c/c2r.  wr/wi: the twiddles of the complex transform (of n, or n/2
   for r2c/c2r) in the pass's direction, bitrev its bit reversal; rr/ri: the
   split step's (r2c/c2r); dir: -1 forward, +1 inverse (c2c); full: r2c writes
   all n outputs; scale multiplies every output. */
typedef struct {
    const void *in;
    void *out;
    int64_t in_st[3], out_st[3];
    int64_t outer, n, inner;
    const void *wr, *wi, *rr, *ri;
    const int32_t *bitrev;
    double scale;
    int32_t kind, dir, full;
} gt_fft_pass;

#define FFT_CHUNK 4096                  /* elements of lines handed out at once */
#define FFT_PARALLEL_WORK (1 << 17)     /* elements (all passes) worth waking a thread */

int sched_yield(void);                  /* POSIX; not declared under -std=c11 */

/* Claim one chunk of a pass: `range` packs its unclaimed chunks [lo, hi) as
   hi << 32 | lo; the lowest one, or the highest when `from_top`; -1 when
   none is left. */
static inline int64_t gt_fft_claim(uint64_t *range, int from_top) {
    uint64_t r = __atomic_load_n(range, __ATOMIC_RELAXED);
    for (;;) {
        const uint64_t lo = r & 0xffffffffu, hi = r >> 32;
        if (lo >= hi)
            return -1;
        const uint64_t claimed = from_top ? hi - 1 : lo;
        const uint64_t rest = from_top ? (hi - 1) << 32 | lo : hi << 32 | (lo + 1);
        if (__atomic_compare_exchange_n(range, &r, rest, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return (int64_t)claimed;
    }
}

/* Wait until *counter reaches target: spinning (the waits are short), then
   yielding the core, in case the thread it waits for is queued on it. */
static inline void gt_fft_wait(int64_t *counter, int64_t target) {
    for (int spins = 0; __atomic_load_n(counter, __ATOMIC_ACQUIRE) < target; spins++) {
        if (spins >= 1024)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

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

/* One radix-4 butterfly of decimation in frequency on a0..a3 (real and
   imaginary parts), written to o0..o3 (each a pair of vectors): o0 the sum,
   o1..o3 turned by W^(2j), W^j, W^(3j), unless `last` (the last stage: all
   those twiddles are 1). */
static inline __attribute__((always_inline)) void FFT_NAME(butterfly4)(
        V a0r, V a0i, V a1r, V a1i, V a2r, V a2i, V a3r, V a3i, V *o0, V *o1, V *o2, V *o3,
        int last, int64_t j, const T *wr, const T *wi, int dir) {
    V t0r = a0r + a2r, t0i = a0i + a2i;
    V t1r = a0r - a2r, t1i = a0i - a2i;
    V t2r = a1r + a3r, t2i = a1i + a3i;
    V dr = a1r - a3r, di = a1i - a3i;
    /* t3 = (a1 - a3) turned by -i (forward) or +i (inverse) */
    V t3r = dir < 0 ? di : -di, t3i = dir < 0 ? -dr : dr;
    V ar = t0r - t2r, ai = t0i - t2i;
    V br = t1r + t3r, bi = t1i + t3i;
    V cr = t1r - t3r, ci = t1i - t3i;
    o0[0] = t0r + t2r; o0[1] = t0i + t2i;
    if (last) {
        o1[0] = ar; o1[1] = ai; o2[0] = br; o2[1] = bi; o3[0] = cr; o3[1] = ci;
        return;
    }
    const T w1r = wr[j], w1i = wi[j], w2r = wr[2 * j], w2i = wi[2 * j];
    const T w3r = wr[3 * j], w3i = wi[3 * j];
    o1[0] = ar * w2r - ai * w2i; o1[1] = ar * w2i + ai * w2r;
    o2[0] = br * w1r - bi * w1i; o2[1] = br * w1i + bi * w1r;
    o3[0] = cr * w3r - ci * w3i; o3[1] = cr * w3i + ci * w3r;
}

/* One radix-2 butterfly on a, b: o0 = a + b, o1 = (a - b) W^j. */
static inline __attribute__((always_inline)) void FFT_NAME(butterfly2)(
        V ar, V ai, V br, V bi, V *o0, V *o1, int64_t j, const T *wr, const T *wi) {
    V dr = ar - br, di = ai - bi;
    o0[0] = ar + br; o0[1] = ai + bi;
    o1[0] = dr * wr[j] - di * wi[j]; o1[1] = dr * wi[j] + di * wr[j];
}

/* A radix-4 butterfly stage on one block of 4q elements (twiddles W_4q^k, that is
   W_n^(k step) with step = n / 4q), then the stages below it on each quarter:
   depth first, so the small blocks stay in L1 (the same butterflies as
   stage by stage). */
static void FFT_NAME(radix4)(V *x, int64_t q, int64_t step, const T *wr, const T *wi, int dir) {
    for (int64_t k = 0; k < q; k++) {
        V *x0 = x + 2 * k, *x1 = x0 + 2 * q, *x2 = x1 + 2 * q, *x3 = x2 + 2 * q;
        FFT_NAME(butterfly4)(x0[0], x0[1], x1[0], x1[1], x2[0], x2[1], x3[0], x3[1],
                             x0, x1, x2, x3, q == 1, k * step, wr, wi, dir);
    }
    if (q >= 4)
        for (int b = 0; b < 4; b++)
            FFT_NAME(radix4)(x + 2 * b * q, q / 4, step * 4, wr, wi, dir);
}

/* log2 of a power of two. */
static int FFT_NAME(log2)(int64_t n) {
    int log2n = 0;
    while (((int64_t)1 << log2n) < n) log2n++;
    return log2n;
}

/* The tile's lanes transformed (length n, a power of two), bit-reversed order out;
   the twiddles W_n^k are wr/wi[k * stride] (tables of a multiple of n). */
static void FFT_NAME(dif)(V *x, int64_t n, int64_t stride, const T *wr, const T *wi, int dir) {
    if (n < 2)
        return;
    if (FFT_NAME(log2)(n) & 1) {    /* one radix-2 stage over the whole line */
        const int64_t h = n / 2;
        for (int64_t k = 0; k < h; k++) {
            V *x0 = x + 2 * k, *x1 = x0 + 2 * h;
            FFT_NAME(butterfly2)(x0[0], x0[1], x1[0], x1[1], x0, x1, k * stride, wr, wi);
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
    const int log2m = FFT_NAME(log2)(m);
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

/* A c2c tile of a COLUMNS pass (element k of the lanes: one row segment)
   gathered and transformed as dif does, its first stage (radix-2 for odd
   log2 n, else radix-4) fused with the gather: the 2 or 4 elements a
   butterfly combines come straight from their rows, which saves one sweep
   over the tile (64 KiB for 512 complex float32, beyond L1): 512 x 512
   complex float32 columns took ~290 us on one core instead of ~325. */
static void FFT_NAME(gather_dif)(const T *src, const FFT_NAME(lanes) *s, int64_t n, V *x,
                                 const T *wr, const T *wi, int dir) {
    const T *p = src + s->base[0];
    const int64_t step = s->step;
    if (FFT_NAME(log2)(n) & 1) {
        const int64_t h = n / 2;
        for (int64_t k = 0; k < h; k++) {
            V ar, ai, br, bi;
            FFT_NAME(load_parts)(p + k * step, &ar, &ai, 0);
            FFT_NAME(load_parts)(p + (k + h) * step, &br, &bi, 0);
            FFT_NAME(butterfly2)(ar, ai, br, bi, x + 2 * k, x + 2 * (k + h), k, wr, wi);
        }
        if (n >= 8) {
            FFT_NAME(radix4)(x, n / 8, 2, wr, wi, dir);
            FFT_NAME(radix4)(x + n, n / 8, 2, wr, wi, dir);
        }
    } else {
        const int64_t q = n / 4;
        for (int64_t k = 0; k < q; k++) {
            V a[8];
            for (int r = 0; r < 4; r++)
                FFT_NAME(load_parts)(p + (k + r * q) * step, a + 2 * r, a + 2 * r + 1, 0);
            FFT_NAME(butterfly4)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], x + 2 * k,
                                 x + 2 * (k + q), x + 2 * (k + 2 * q), x + 2 * (k + 3 * q),
                                 q == 1, k, wr, wi, dir);
        }
        if (q >= 4)
            for (int b = 0; b < 4; b++)
                FFT_NAME(radix4)(x + 2 * b * q, q / 4, 4, wr, wi, dir);
    }
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

/* -- the passes: units of work ------------------------------------------------------ */


/* The length of the complex transform pass p runs line by line (four-step:
   contiguous rows of at least W^2 complex; r2c/c2r: of the half length), or 0
   when it runs in tiles of W lines. */
static int64_t FFT_NAME(line_length)(const gt_fft_pass *p) {
#ifdef FFT_SHUFFLE
    const int64_t m = p->kind == C2C ? p->n : p->n / 2;
    const int64_t in_step = p->kind == R2C ? 1 : 2, out_step = p->kind == C2R ? 1 : 2;
    if (p->inner == 1 && p->in_st[1] == in_step && p->out_st[1] == out_step && m >= W * W)
        return m;
#else
    (void)p;
#endif
    return 0;
}

/* Pass p's two work areas, in complex vectors: x and y of `unit`. */
static void FFT_NAME(work_sizes)(const gt_fft_pass *p, int64_t line, int64_t *x, int64_t *y) {
    const int64_t n = p->n, h = n / 2;
    if (line) {
        *x = line / W;
        *y = p->kind == C2C ? 0 : line / W;     /* the real transforms' Z */
    } else {
        *x = p->kind == C2C ? n : p->kind == R2C ? h : h + 1;
        *y = p->kind == C2C ? 0 : p->kind == R2C ? (p->full ? n : h + 1) : h;
    }
}

/* Unit u of pass p: line u (`tw`: the four-step factors, see line_length), or
   tile u of W lines (tw NULL); x and y are the thread's work areas. */
static void FFT_NAME(unit)(const gt_fft_pass *p, int64_t u, const V *tw, V *x, V *y) {
    const T *in = (const T *)p->in, *wr = (const T *)p->wr, *wi = (const T *)p->wi;
    const T *rr = (const T *)p->rr, *ri = (const T *)p->ri;
    T *out = (T *)p->out;
    const int32_t *bitrev = p->bitrev;
    const T scale = (T)p->scale;
    const int64_t n = p->n, h = n / 2, len = p->full ? n : h + 1;
#ifdef FFT_SHUFFLE
    if (tw) {
        const T *src = in + u * p->in_st[0];
        T *dst = out + u * p->out_st[0];
        if (p->kind == C2C) {
            FFT_NAME(four_step_line)(src, dst, n, tw, x, wr, wi, bitrev, p->dir, scale);
        } else if (p->kind == R2C) {
            FFT_NAME(four_step_line)(src, (T *)y, h, tw, x, wr, wi, bitrev, -1, 1);
            FFT_NAME(r2c_split_line)((const T *)y, dst, h, len, rr, ri, scale);
        } else {
            FFT_NAME(c2r_merge_line)(src, (T *)y, h, rr, ri);
            FFT_NAME(four_step_line)((const T *)y, dst, h, tw, x, wr, wi, bitrev, 1, scale);
        }
        return;
    }
#else
    (void)tw;
#endif
    FFT_NAME(lanes) src = FFT_NAME(lanes_of)(u, p->outer, p->inner, p->in_st, p->kind == R2C);
    FFT_NAME(lanes) dst = FFT_NAME(lanes_of)(u, p->outer, p->inner, p->out_st, p->kind == C2R);
    if (p->kind == C2C) {
#ifdef FFT_SHUFFLE
        if (src.mode == COLUMNS && n >= 4) {
            FFT_NAME(gather_dif)(in, &src, n, x, wr, wi, p->dir);
        } else
#endif
        {
            FFT_NAME(gather)(in, &src, n, x);
            FFT_NAME(dif)(x, n, 1, wr, wi, p->dir);
        }
        FFT_NAME(scatter)(x, bitrev, n, out, &dst, scale);
    } else if (p->kind == R2C) {
        FFT_NAME(gather)(in, &src, h, x);
        FFT_NAME(dif)(x, h, 1, wr, wi, -1);
        for (int64_t k = 0; k <= h; k++) {
            const V *a = x + 2 * bitrev[k == h ? 0 : k], *b = x + 2 * bitrev[k == 0 ? 0 : h - k];
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
    } else {
        FFT_NAME(gather)(in, &src, h + 1, x);
        x[1] = x[2 * h + 1] = (V){0};   /* X[0] and X[n/2]: real parts only */
        for (int64_t k = 0; k < h; k++) {
            const V *a = x + 2 * k, *c = x + 2 * (h - k);
            /* S = X[k] + conj C, D = X[k] - conj C, Z = S + i W^-k D */
            V sr = a[0] + c[0], si = a[1] - c[1], dr = a[0] - c[0], di = a[1] + c[1];
            y[2 * k] = sr - (rr[k] * di + ri[k] * dr);
            y[2 * k + 1] = si + (rr[k] * dr - ri[k] * di);
        }
        FFT_NAME(dif)(y, h, 1, wr, wi, 1);
        FFT_NAME(scatter)(y, bitrev, h, out, &dst, scale);
    }
}

/* -- a transform's passes, run together ---------------------------------------------- */

/* Run `count` passes in order (each reads what the one before wrote) in one
   parallel region, as the header describes: a pass's units go out in chunks
   (gt_fft_claim: the opening thread from the first up, the others from the
   last down); a thread starts on pass p + 1 once every chunk of pass p is
   done (those are running: the wait is short).  Handed out alternately,
   neighbouring column tiles of rfft2's 257-complex rows (which share cache
   lines) ran at half speed on two threads. */
int64_t FFT_NAME(gt_fft_run)(const gt_fft_pass *ps, int count, int threads) {
    /* per pass: units, units a chunk, chunks, chunks done, unclaimed chunks */
    const size_t book_bytes = sizeof(int64_t) * 5 * (size_t)count;
    int64_t *book = (int64_t *)calloc(5 * (size_t)count, sizeof(int64_t));
    V **tw = (V **)calloc((size_t)count, sizeof *tw);
    V *tiles = NULL;
    int64_t refused = 0;
    if (book == NULL || tw == NULL) {
        refused = (int64_t)(book_bytes + sizeof *tw * (size_t)count);
        goto out;
    }
    int64_t *units = book, *per = book + count, *chunks = book + 2 * count;
    int64_t *done = book + 3 * count;
    uint64_t *left = (uint64_t *)(book + 4 * count);
    int64_t size_x = 1, size_y = 1, work = 0, total = 0, finished = 0;
    for (int i = 0; i < count; i++) {
        const gt_fft_pass *p = ps + i;
        const int64_t line = FFT_NAME(line_length)(p);
        int64_t sx, sy;
        FFT_NAME(work_sizes)(p, line, &sx, &sy);
        size_x = sx > size_x ? sx : size_x;
        size_y = sy > size_y ? sy : size_y;
#ifdef FFT_SHUFFLE
        if (line && (tw[i] = FFT_NAME(four_step_twiddles)(line, (const T *)p->wr,
                                                          (const T *)p->wi)) == NULL) {
            refused = (int64_t)(sizeof(V) * 2 * (size_t)(line / W));
            goto out;
        }
#endif
        units[i] = line ? p->outer : FFT_NAME(tiles)(p->outer, p->inner);
        per[i] = line && p->n < FFT_CHUNK ? FFT_CHUNK / p->n : 1;
        chunks[i] = (units[i] + per[i] - 1) / per[i];
        left[i] = (uint64_t)chunks[i] << 32;
        total += chunks[i];
        work += p->outer * p->n * p->inner;
    }
    const int team = threads > 1 && total > 1 && work >= FFT_PARALLEL_WORK ? threads : 1;
    const int64_t per_thread = 2 * (size_x + size_y);       /* each thread's two tiles */
    const size_t tile_bytes = sizeof(V) * (size_t)(per_thread * team);
    if ((tiles = (V *)aligned_alloc(64, tile_bytes)) == NULL) {
        refused = (int64_t)tile_bytes;
        goto out;
    }
    #pragma omp parallel num_threads(team) if (team > 1)
    {
        V *x = tiles + per_thread * omp_get_thread_num(), *y = x + 2 * size_x;
        const int from_top = omp_get_thread_num() > 0;
        for (int i = 0; i < count; i++) {
            if (i > 0)
                gt_fft_wait(&done[i - 1], chunks[i - 1]);
            for (int64_t c; (c = gt_fft_claim(&left[i], from_top)) >= 0; ) {
                for (int64_t u = c * per[i]; u < (c + 1) * per[i] && u < units[i]; u++)
                    FFT_NAME(unit)(ps + i, u, tw[i], x, y);
                __atomic_fetch_add(&done[i], 1, __ATOMIC_RELEASE);
            }
        }
        /* The opening thread reaches the region's closing barrier last (the
           others sleep there): asleep in it, it would take a wake-up again. */
        __atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
        if (omp_get_thread_num() == 0)
            gt_fft_wait(&finished, omp_get_num_threads());
    }
out:
    for (int i = 0; tw != NULL && i < count; i++)
        free(tw[i]);
    free(tw);
    free(book);
    free(tiles);
    return refused;
}

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
