/* LAPACK's dense factorizations rebuilt over BLAS's gemm: LU (getrf, getrs,
 * getri), Householder QR (geqrf, orgqr) and the products with its Q (gelsy's,
 * syevd's, gesdd's), what MKL runs for ATen's linalg.lu_factor, det, solve,
 * inv, qr, lstsq, eigh and svd.
 *
 * numpy's OpenBLAS has these routines, but its trsm and trmm run at a third
 * of its gemm's speed and its threads are pinned to one (kernels/native.py).
 * Here the work goes to gemm:
 *   LU     splits the columns in half (LAPACK's getrf2 recursion: factor the
 *          left half, swap and solve the top right block, update the bottom
 *          right block with one gemm, factor it), down to panels of LU_LEAF
 *          columns factored by plain loops (getf2: the first largest |value|
 *          of a column is its pivot).
 *   solves split the same way around one gemm, down to blocks of TRSM_LEAF
 *          rows solved by vectorized substitutions (W right-hand sides at
 *          once: BLAS's trsm spends a fixed time per column, as long for 16
 *          rows as for 128).  The inverse (getri) is the solve against the
 *          identity with the known zeros of L^-1 skipped (a third less work).
 *   QR     by blocks of QR_BLOCK reflectors: LAPACK's geqr2 on each panel,
 *          then the block's compact WY form I - V T V^T (larft's T, V written
 *          out whole) applied to the rest with two gemms; orgqr applies the
 *          blocks to the identity's columns from the last one back.
 *   Q B    (apply_q) by the same blocks: gelsy's steps after its QR (ATen's
 *          default lstsq driver on CPU: Q^T B, then R^-1 by the recursive
 *          solve; the rank from gelsy's laic1 loop, LAPACK's own laic1 passed
 *          in), syevd's ormtr (eigh's Q Z after LAPACK's sytrd and stedc)
 *          and gesdd's two ormbr (svd's Q U and VT P^T after gebrd, bdsdc).
 * Large steps are split by columns among the intra-op threads (OpenMP), each
 * calling the single-threaded BLAS.  A large LU or QR runs in one parallel
 * region whose other threads (a crew) spin between the steps its leader hands
 * them: an OpenMP region per step would cost a hand-off each time, and a
 * wake-up (~0.1 ms on these machines, about a step's gemm) wherever the
 * threads have gone to sleep (after native.py's OPENMP_SPIN_ROUNDS).
 * gt_column_major makes the column-major copies that the kernels hand to
 * LAPACK (row-major inputs by register tiles), split among the threads.
 *
 * Matrices are column-major with leading dimension `ld`; pivots are LAPACK's
 * (1-based, row i swapped with row ipiv[i] - 1 in turn); integers are 64-bit
 * (numpy's ILP64 OpenBLAS, whose cblas_?gemm the caller passes in).
 *
 * The body below is compiled for float and double: the file includes itself
 * with LA_TYPE defined.
 */
#ifndef LA_TYPE

#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

enum { COL_MAJOR = 102, NO_TRANS = 111, TRANS = 112 };
enum { LU_LEAF = 8, LU_PANEL = 32, TRSM_LEAF = 16, SWAP_BLOCK = 4, TRANSPOSE_BLOCK = 64,
       QR_BLOCK = 32, AHEAD_CHUNK = 64 };
#define MIN_PARALLEL_WORK ((int64_t)1 << 21)    /* multiply-adds worth a thread hand-off */
#define MIN_CREW_WORK ((int64_t)1 << 24)        /* m n min(m, n) worth a crew for an LU */
#define MIN_COPY_PARALLEL ((int64_t)1 << 18)    /* elements of a copy worth a thread hand-off */

/* -- a crew: the threads of one parallel region serving one leader's jobs ---------- */

/* The leader (thread 0) runs a recursion and hands out jobs, each split into
   parts (one per thread, unless the job asks for more); every thread, the
   leader too, claims parts until none is left, so that a thread the system has not scheduled holds nothing up
   (its parts go to the others).  The others wait for the next job by
   spinning, yielding their core after SPIN_LIMIT rounds (a busy machine).
   `ticket` holds the job's number (high 32 bits) and the parts claimed. */
typedef struct {
    atomic_ulong ticket;
    atomic_int done;                /* parts finished of the current job */
    void (*job)(void *context, int part, int parts);
    void *context;
    int size, parts, stop;          /* threads; parts of the current job */
} crew_t;

enum { SPIN_LIMIT = 4096 };

static inline void crew_pause(int *spins) {
    if (++*spins < SPIN_LIMIT) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

/* Claim and run parts of job `number` until none is left. */
static void crew_work(crew_t *crew, unsigned long number) {
    for (;;) {
        unsigned long ticket = atomic_load_explicit(&crew->ticket, memory_order_acquire);
        const int part = (int)(ticket & 0xffffffffUL);
        if ((ticket >> 32) != number || part >= crew->parts)
            return;
        if (!atomic_compare_exchange_weak_explicit(&crew->ticket, &ticket, ticket + 1,
                                                   memory_order_acq_rel, memory_order_acquire))
            continue;
        crew->job(crew->context, part, crew->parts);
        atomic_fetch_add_explicit(&crew->done, 1, memory_order_release);
    }
}

/* The next job's number, published with none of its parts claimed (what the
   leader wrote before, the job and the stop, is visible to whoever sees it). */
static unsigned long crew_publish(crew_t *crew) {
    const unsigned long number =
        (atomic_load_explicit(&crew->ticket, memory_order_relaxed) >> 32) + 1;
    atomic_store_explicit(&crew->ticket, number << 32, memory_order_release);
    return number;
}

/* Run job(context, part, parts) over `parts` parts, or over one per thread for
   0 (one part, the whole job, without a crew). */
static void crew_run(crew_t *crew, int parts, void (*job)(void *, int, int), void *context) {
    if (crew == NULL || crew->size < 2) {
        job(context, 0, 1);
        return;
    }
    crew->job = job;
    crew->context = context;
    crew->parts = parts > 0 ? parts : crew->size;
    atomic_store_explicit(&crew->done, 0, memory_order_relaxed);
    crew_work(crew, crew_publish(crew));
    int spins = 0;
    while (atomic_load_explicit(&crew->done, memory_order_acquire) < crew->parts)
        crew_pause(&spins);
}

/* A thread other than the leader: parts of every job, until the stop. */
static void crew_serve(crew_t *crew) {
    unsigned long seen = 0;
    for (;;) {
        int spins = 0;
        unsigned long number;
        while ((number = atomic_load_explicit(&crew->ticket, memory_order_acquire) >> 32) == seen)
            crew_pause(&spins);
        seen = number;
        if (crew->stop)
            return;
        crew_work(crew, number);
    }
}

static void crew_stop(crew_t *crew) {
    crew->stop = 1;
    crew_publish(crew);
}

/* leader(context, crew) on this thread, with a crew of `threads` (none for one). */
static void crew_lead(int threads, void (*leader)(void *, crew_t *), void *context) {
    if (threads < 2) {
        leader(context, NULL);
        return;
    }
    crew_t crew = {.size = 1};
    atomic_init(&crew.ticket, 0);
    atomic_init(&crew.done, 0);
    #pragma omp parallel num_threads(threads)
    {
        if (omp_get_thread_num() == 0) {
            crew.size = omp_get_num_threads();
            leader(context, &crew);
            crew_stop(&crew);
        } else {
            crew_serve(&crew);
        }
    }
}

#define LA_TYPE float
#define LA_MIN FLT_MIN
#define LA_ABS fabsf
#define LA_INT int32_t
#define LA_NAME(x) x##_f32
#include "lapack.c"
#undef LA_TYPE
#undef LA_MIN
#undef LA_ABS
#undef LA_INT
#undef LA_NAME

#define LA_TYPE double
#define LA_MIN DBL_MIN
#define LA_ABS fabs
#define LA_INT int64_t
#define LA_NAME(x) x##_f64
#include "lapack.c"

#else   /* the body, for T = LA_TYPE */

#define T LA_TYPE
#define W (64 / (int)sizeof(T))
#define V LA_NAME(vec)
typedef T V __attribute__((vector_size(64)));
#define I LA_NAME(ints)
typedef LA_INT I __attribute__((vector_size(64)));
#define GEMM LA_NAME(gemm_fn)
typedef void (*GEMM)(int, int, int, int64_t, int64_t, int64_t, T, const T *, int64_t,
                     const T *, int64_t, T, T *, int64_t);

static inline V LA_NAME(loadu)(const T *p) { V v; memcpy(&v, p, sizeof v); return v; }

/* How many threads a step of `work` multiply-adds over `columns` columns takes. */
static int LA_NAME(team)(int threads, int64_t work, int64_t columns) {
    if (work < MIN_PARALLEL_WORK || threads < 2)
        return 1;
    return columns < threads ? (int)columns : threads;
}

/* The masks of an in-register transposition of W vectors (log2(W) rounds, two
   each: see transpose_regs). */
static void LA_NAME(transpose_picks)(I *picks) {
    for (int s = W / 2, round = 0; s > 0; s /= 2, round += 2)
        for (int c = 0; c < W; c++) {
            picks[round][c] = c & s ? W + c - s : c;
            picks[round + 1][c] = c & s ? W + c : c + s;
        }
}

/* x[r][c] := x[c][r]: round s exchanges the off-diagonal s x s blocks of each
   2s x 2s block (rows r and r + s trade halves, picking from x[r]: indices
   < W, and x[r + s]: >= W). */
static inline void LA_NAME(transpose_regs)(V *x, const I *picks) {
    #pragma GCC unroll 4
    for (int s = W / 2, round = 0; s > 0; s /= 2, round += 2) {
        const I low = picks[round], high = picks[round + 1];
        #pragma GCC unroll 16
        for (int r = 0; r < W; r++) {
            if (r & s)
                continue;
            const V a = x[r], b = x[r + s];
            x[r] = __builtin_shuffle(a, b, low);
            x[r + s] = __builtin_shuffle(a, b, high);
        }
    }
}

/* The W x W tile at src (row stride lds) transposed into dst (column stride
   ldd) in registers. */
static inline void LA_NAME(transpose_tile)(const T *src, int64_t lds, T *dst, int64_t ldd,
                                           const I *picks) {
    V x[W];
    #pragma GCC unroll 16
    for (int r = 0; r < W; r++) x[r] = LA_NAME(loadu)(src + r * lds);
    LA_NAME(transpose_regs)(x, picks);
    #pragma GCC unroll 16
    for (int r = 0; r < W; r++) memcpy(dst + r * ldd, &x[r], sizeof x[r]);
}

/* The substitutions of a block of n <= TRSM_LEAF rows: W columns of B at a time,
   row i of them one vector (BLAS's trsm takes as long for a few rows as for
   many: a fixed cost per column); a W x W block goes in and out by register
   transpositions. */
static void LA_NAME(substitute)(int upper, int64_t n, int64_t k, const T *a, int64_t lda, T *b,
                                int64_t ldb) {
    V x[TRSM_LEAF > W ? TRSM_LEAF : W];
    I picks[8];
    if (n == W)
        LA_NAME(transpose_picks)(picks);
    for (int64_t c0 = 0; c0 < k; c0 += W) {
        const int cols = k - c0 < W ? (int)(k - c0) : W, square = n == W && cols == W;
        T *part = b + c0 * ldb;
        if (square) {
            for (int l = 0; l < W; l++) x[l] = LA_NAME(loadu)(part + l * ldb);
            LA_NAME(transpose_regs)(x, picks);
        } else {
            for (int64_t i = 0; i < n; i++) {
                V v = {0};
                for (int l = 0; l < cols; l++) v[l] = part[i + l * ldb];
                x[i] = v;
            }
        }
        /* column by column (reference BLAS's trsm order): once x[i] is known, the
           rows still to solve take their independent updates from column i of A */
        if (upper) {
            for (int64_t i = n - 1; i >= 0; i--) {
                const T *col = a + i * lda;
                x[i] /= col[i];
                for (int64_t j = 0; j < i; j++) x[j] -= col[j] * x[i];
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                const T *col = a + i * lda;
                for (int64_t j = i + 1; j < n; j++) x[j] -= col[j] * x[i];
            }
        }
        if (square) {
            LA_NAME(transpose_regs)(x, picks);
            for (int l = 0; l < W; l++) memcpy(part + l * ldb, &x[l], sizeof x[l]);
        } else {
            for (int64_t i = 0; i < n; i++)
                for (int l = 0; l < cols; l++) part[i + l * ldb] = x[i][l];
        }
    }
}

/* B (n x k) := A^-1 B, A lower unit (upper: upper non-unit) triangular; one thread. */
static void LA_NAME(solve)(GEMM gemm, int upper, int64_t n, int64_t k, const T *a, int64_t lda,
                           T *b, int64_t ldb) {
    if (n <= TRSM_LEAF) {
        LA_NAME(substitute)(upper, n, k, a, lda, b, ldb);
        return;
    }
    const int64_t n1 = n / 2, n2 = n - n1;
    const T *a22 = a + n1 + n1 * lda;
    if (upper) {
        LA_NAME(solve)(gemm, upper, n2, k, a22, lda, b + n1, ldb);
        gemm(COL_MAJOR, NO_TRANS, NO_TRANS, n1, k, n2, (T)-1, a + n1 * lda, lda, b + n1, ldb,
             (T)1, b, ldb);
        LA_NAME(solve)(gemm, upper, n1, k, a, lda, b, ldb);
    } else {
        LA_NAME(solve)(gemm, upper, n1, k, a, lda, b, ldb);
        gemm(COL_MAJOR, NO_TRANS, NO_TRANS, n2, k, n1, (T)-1, a + n1, lda, b, ldb, (T)1,
             b + n1, ldb);
        LA_NAME(solve)(gemm, upper, n2, k, a22, lda, b + n1, ldb);
    }
}

/* Rows i and ipiv[i] - 1 swapped for i in [k1, k2), in the n columns of a: the
   swaps in turn over blocks of SWAP_BLOCK columns (LAPACK's laswp order), whose
   independent element swaps overlap, one test of each pivot per block. */
static void LA_NAME(laswp)(T *a, int64_t lda, int64_t n, int64_t k1, int64_t k2,
                           const int64_t *ipiv) {
    for (int64_t j0 = 0; j0 < n; j0 += SWAP_BLOCK) {
        const int64_t cols = n - j0 < SWAP_BLOCK ? n - j0 : SWAP_BLOCK;
        T *block = a + j0 * lda;
        for (int64_t i = k1; i < k2; i++) {
            const int64_t p = ipiv[i] - 1;
            if (p == i)
                continue;
            for (int64_t j = 0; j < cols; j++) {
                T *col = block + j * lda, t = col[i];
                col[i] = col[p];
                col[p] = t;
            }
        }
    }
}

/* The first i in [j, m) of the largest |col[i]| (NaNs never larger; a NaN at j is
   kept): W rows at a time, each lane keeping its largest and where it first
   was, then the largest lane's (the first lane of equals), then the rest. */
static int64_t LA_NAME(pivot)(const T *col, int64_t j, int64_t m) {
    const T first = LA_ABS(col[j]);
    T best = 0;
    int64_t at = j, i = j + 1;
    if (m - i >= W) {
        const V zero = {0};
        const I sign = (I)(-zero);
        I lane, where = {0};
        for (int l = 0; l < W; l++) lane[l] = l;
        V top = zero;
        for (; i + W <= m; i += W) {
            const I v = (I)LA_NAME(loadu)(col + i) & ~sign;     /* |col[i..]| */
            const I larger = (V)v > top;    /* all ones where larger (never for a NaN) */
            top = (V)((v & larger) | ((I)top & ~larger));
            where = ((lane + (LA_INT)i) & larger) | (where & ~larger);
        }
        for (int l = 0; l < W; l++)
            if (top[l] > best || (top[l] == best && top[l] > 0 && where[l] < at)) {
                best = top[l];
                at = where[l];
            }
    }
    for (; i < m; i++)
        if (LA_ABS(col[i]) > best) {
            best = LA_ABS(col[i]);
            at = i;
        }
    return best > first ? at : j;
}

/* The unblocked LU of a panel (LAPACK's getf2); its info (first zero pivot, 1-based). */
static int64_t LA_NAME(getf2)(T *a, int64_t lda, int64_t m, int64_t n, int64_t *ipiv) {
    int64_t info = 0;
    const int64_t mn = m < n ? m : n;
    for (int64_t j = 0; j < mn; j++) {
        T *col = a + j * lda;
        const int64_t p = LA_NAME(pivot)(col, j, m);
        ipiv[j] = p + 1;
        const T pivot = col[p];
        if (pivot != 0) {
            if (p != j)
                for (int64_t c = 0; c < n; c++) {
                    T *x = a + c * lda, t = x[j];
                    x[j] = x[p]; x[p] = t;
                }
            if (LA_ABS(pivot) >= LA_MIN) {
                const T r = 1 / pivot;
                for (int64_t i = j + 1; i < m; i++) col[i] *= r;
            } else {
                for (int64_t i = j + 1; i < m; i++) col[i] /= pivot;
            }
        } else if (info == 0) {
            info = j + 1;
        }
        for (int64_t c = j + 1; c < n; c++) {     /* the rank-one update of the panel */
            T *x = a + c * lda;
            const T f = x[j];
            for (int64_t i = j + 1; i < m; i++) x[i] -= col[i] * f;
        }
    }
    return info;
}

/* One step of the LU on n2 columns right of a factored block of n1 columns
   (from `first` columns past it): their rows swapped as the block's were,
   A12 := L11^-1 A12 and A22 -= A21 A12, all column by column, so that a crew
   splits them. */
typedef struct { GEMM gemm; T *a; int64_t lda, m, n1, n2; const int64_t *ipiv; int64_t first; }
    LA_NAME(step);

static void LA_NAME(step_part)(void *context, int part, int parts) {
    const LA_NAME(step) *s = context;
    const int64_t lo = s->n2 * part / parts, hi = s->n2 * (part + 1) / parts;
    if (hi == lo)
        return;
    T *a12 = s->a + (s->n1 + s->first + lo) * s->lda;
    LA_NAME(laswp)(a12, s->lda, hi - lo, 0, s->n1, s->ipiv);
    LA_NAME(solve)(s->gemm, 0, s->n1, hi - lo, s->a, s->lda, a12, s->lda);
    if (s->m > s->n1)
        s->gemm(COL_MAJOR, NO_TRANS, NO_TRANS, s->m - s->n1, hi - lo, s->n1, (T)-1,
                s->a + s->n1, s->lda, a12, s->lda, (T)1, a12 + s->n1, s->lda);
}

/* The recursive LU of a (m x n) in place (LAPACK's getrf2); its info. */
static int64_t LA_NAME(getrf2)(GEMM gemm, crew_t *crew, T *a, int64_t lda, int64_t m,
                               int64_t n, int64_t *ipiv) {
    const int64_t mn = m < n ? m : n;
    if (n <= LU_LEAF || mn <= LU_LEAF)
        return LA_NAME(getf2)(a, lda, m, n, ipiv);
    const int64_t n1 = mn / 2, n2 = n - n1;
    T *a22 = a + n1 * lda + n1;
    int64_t info = LA_NAME(getrf2)(gemm, crew, a, lda, m, n1, ipiv);
    LA_NAME(step) step = {gemm, a, lda, m, n1, n2, ipiv, 0};
    crew_run(m * n2 * n1 >= MIN_PARALLEL_WORK ? crew : NULL, 0, LA_NAME(step_part), &step);
    const int64_t info2 = LA_NAME(getrf2)(gemm, crew, a22, lda, m - n1, n2, ipiv + n1);
    if (info == 0 && info2 > 0)
        info = info2 + n1;
    for (int64_t i = n1; i < mn; i++)
        ipiv[i] += n1;
    LA_NAME(laswp)(a, lda, n1, n1, mn, ipiv);
    return info;
}

/* A crew's step of the blocked LU below.  Part 0 updates the next panel's
   columns and factors that panel (its pivots relative to its first row, its
   info); the other parts update the columns past it, AHEAD_CHUNK or more at
   a time, so that the threads not factoring the panel take the most of them.
   As one part (no crew), all of it. */
typedef struct {
    LA_NAME(step) step;
    int64_t ahead, next_rows, next_info;
    T *next;
    int64_t *next_ipiv;
} LA_NAME(ahead);

static void LA_NAME(ahead_part)(void *context, int part, int parts) {
    LA_NAME(ahead) *h = context;
    if (part == 0 && h->ahead > 0) {
        LA_NAME(step) next = h->step;
        next.n2 = h->ahead;
        LA_NAME(step_part)(&next, 0, 1);
        h->next_info = LA_NAME(getrf2)(h->step.gemm, NULL, h->next, h->step.lda, h->next_rows,
                                       h->ahead, h->next_ipiv);
    }
    if (part == 0 && parts > 1)
        return;
    LA_NAME(step) rest = h->step;
    rest.n2 -= h->ahead;
    rest.first = h->ahead;
    LA_NAME(step_part)(&rest, parts > 1 ? part - 1 : 0, parts > 1 ? parts - 1 : 1);
}

/* A crew's share of the panels' row swaps that reach the columns left of
   them (panel j's columns take the swaps of every later panel). */
static void LA_NAME(swap_left_part)(void *context, int part, int parts) {
    const LA_NAME(step) *s = context;
    const int64_t panels = (s->n1 + LU_PANEL - 1) / LU_PANEL;
    for (int64_t p = panels * part / parts; p < panels * (part + 1) / parts; p++) {
        const int64_t j = p * LU_PANEL, cols = s->n1 - j < LU_PANEL ? s->n1 - j : LU_PANEL;
        LA_NAME(laswp)(s->a + j * s->lda, s->lda, cols, j + cols, s->n1, s->ipiv);
    }
}

/* With a crew: LAPACK's blocked right-looking LU (getrf) in panels of LU_PANEL
   columns, each factored alone by the recursion, with a look-ahead (the
   serial panel runs while the crew updates the rest); each panel's row swaps
   reach the columns left of it at the end.  One thread keeps the recursion
   (its gemms are larger). */
static int64_t LA_NAME(getrf_ahead)(GEMM gemm, crew_t *crew, T *a, int64_t lda, int64_t m,
                                    int64_t n, int64_t *ipiv) {
    const int64_t mn = m < n ? m : n;
    int64_t info = LA_NAME(getrf2)(gemm, NULL, a, lda, m, mn < LU_PANEL ? mn : LU_PANEL, ipiv);
    for (int64_t k = 0; k < mn; k += LU_PANEL) {
        const int64_t nb = mn - k < LU_PANEL ? mn - k : LU_PANEL, next = k + nb;
        const int64_t ahead = mn - next < LU_PANEL ? mn - next : LU_PANEL;
        LA_NAME(ahead) h = {{gemm, a + k + k * lda, lda, m - k, nb, n - next, ipiv + k, 0},
                            ahead, m - next, 0, a + next + next * lda, ipiv + next};
        const int64_t chunks = (n - next - ahead) / AHEAD_CHUNK;
        if (n > next)
            crew_run(crew, 1 + (chunks > crew->size ? chunks : crew->size),
                     LA_NAME(ahead_part), &h);
        if (info == 0 && h.next_info > 0)
            info = h.next_info + next;
        for (int64_t i = k; i < next; i++)
            ipiv[i] += k;
    }
    LA_NAME(step) left = {gemm, a, lda, m, mn, 0, ipiv, 0};
    crew_run(crew, 0, LA_NAME(swap_left_part), &left);
    return info;
}

typedef struct { GEMM gemm; T *a; int64_t lda, m, n, *ipiv, info; } LA_NAME(lu);

static void LA_NAME(lu_leader)(void *context, crew_t *crew) {
    LA_NAME(lu) *lu = context;
    lu->info = crew != NULL && crew->size > 1
        ? LA_NAME(getrf_ahead)(lu->gemm, crew, lu->a, lu->lda, lu->m, lu->n, lu->ipiv)
        : LA_NAME(getrf2)(lu->gemm, NULL, lu->a, lu->lda, lu->m, lu->n, lu->ipiv);
}

int64_t LA_NAME(gt_getrf)(GEMM gemm, T *a, int64_t m, int64_t n, int64_t lda,
                          int64_t *ipiv, int threads) {
    const int64_t mn = m < n ? m : n;
    LA_NAME(lu) lu = {gemm, a, lda, m, n, ipiv, 0};
    crew_lead(m * n * mn < MIN_CREW_WORK ? 1 : threads, LA_NAME(lu_leader), &lu);
    return lu.info;
}

/* B (n x k) := A^-1 B from A's LU factors (LAPACK's getrs, no transpose). */
void LA_NAME(gt_getrs)(GEMM gemm, const T *lu, int64_t n, int64_t lda,
                       const int64_t *ipiv, T *b, int64_t k, int64_t ldb, int threads) {
    const int team = LA_NAME(team)(threads, n * n * k, k);
    #pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (int t = 0; t < team; t++) {
        const int64_t lo = k * t / team, hi = k * (t + 1) / team;
        T *part = b + lo * ldb;
        LA_NAME(laswp)(part, ldb, hi - lo, 0, n, ipiv);
        LA_NAME(solve)(gemm, 0, n, hi - lo, lu, lda, part, ldb);
        LA_NAME(solve)(gemm, 1, n, hi - lo, lu, lda, part, ldb);
    }
}

/* B (m x w) := the first w <= m columns of L^-1, L (m x m) lower unit triangular;
   the known zeros of L^-1 (above its diagonal) are written, never computed: the
   left half of a square block recursively, its right half as L22's own inverse,
   and for w < m the rows below the top w x w inverse by one gemm and a solve. */
static void LA_NAME(lower_inverse)(GEMM gemm, int64_t m, int64_t w, const T *a, int64_t lda,
                                   T *b, int64_t ldb) {
    if (w == m && m <= TRSM_LEAF) {
        for (int64_t j = 0; j < m; j++) {
            memset(b + j * ldb, 0, (size_t)m * sizeof(T));
            b[j + j * ldb] = 1;
        }
        LA_NAME(substitute)(0, m, m, a, lda, b, ldb);
    } else if (w == m) {
        const int64_t n1 = m / 2;
        LA_NAME(lower_inverse)(gemm, m, n1, a, lda, b, ldb);
        for (int64_t j = n1; j < m; j++)
            memset(b + j * ldb, 0, (size_t)n1 * sizeof(T));
        LA_NAME(lower_inverse)(gemm, m - n1, m - n1, a + n1 + n1 * lda, lda,
                               b + n1 + n1 * ldb, ldb);
    } else {
        LA_NAME(lower_inverse)(gemm, w, w, a, lda, b, ldb);
        gemm(COL_MAJOR, NO_TRANS, NO_TRANS, m - w, w, w, (T)-1, a + w, lda, b, ldb, (T)0,
             b + w, ldb);
        LA_NAME(solve)(gemm, 0, m - w, w, a + w + w * lda, lda, b + w, ldb);
    }
}

/* B (n x n) := A^-1 from A's LU factors (what LAPACK's getri gives, by ATen's
   route: the solves against the identity).  With S A = L U (S: the row swaps),
   A^-1 = U^-1 L^-1 S: L^-1 skipping its zeros, the solve with U, then the swaps
   as column swaps in reverse order.  Both steps are jobs over the columns for a
   crew, for L^-1 split so that each part has as many multiply-adds (column j
   costs ~ (n - j)^2). */
typedef struct { GEMM gemm; const T *lu; int64_t n, lda; T *b; int64_t ldb; } LA_NAME(inverse);

static void LA_NAME(lower_inverse_part)(void *context, int part, int parts) {
    const LA_NAME(inverse) *v = context;
    const int64_t n = v->n;
    const int64_t lo = part == 0 ? 0 : n - (int64_t)llround(n * cbrt(1.0 - (double)part / parts));
    const int64_t hi = part == parts - 1 ? n
                     : n - (int64_t)llround(n * cbrt(1.0 - (double)(part + 1) / parts));
    for (int64_t j = lo; j < hi; j++)
        memset(v->b + j * v->ldb, 0, (size_t)lo * sizeof(T));
    if (hi > lo)
        LA_NAME(lower_inverse)(v->gemm, n - lo, hi - lo, v->lu + lo + lo * v->lda, v->lda,
                               v->b + lo + lo * v->ldb, v->ldb);
}

static void LA_NAME(upper_solve_part)(void *context, int part, int parts) {
    const LA_NAME(inverse) *v = context;
    const int64_t c0 = v->n * part / parts, c1 = v->n * (part + 1) / parts;
    LA_NAME(solve)(v->gemm, 1, v->n, c1 - c0, v->lu, v->lda, v->b + c0 * v->ldb, v->ldb);
}

static void LA_NAME(inverse_leader)(void *context, crew_t *crew) {
    crew_run(crew, 0, LA_NAME(lower_inverse_part), context);
    crew_run(crew, 0, LA_NAME(upper_solve_part), context);
}

void LA_NAME(gt_getri)(GEMM gemm, const T *lu, int64_t n, int64_t lda, const int64_t *ipiv,
                       T *b, int64_t ldb, int threads) {
    LA_NAME(inverse) inverse = {gemm, lu, n, lda, b, ldb};
    crew_lead(LA_NAME(team)(threads, n * n * n, n), LA_NAME(inverse_leader), &inverse);
    for (int64_t j = n - 1; j >= 0; j--) {
        const int64_t p = ipiv[j] - 1;
        if (p != j)
            for (int64_t i = 0; i < n; i++) {
                T *x = b + i, t = x[j * ldb];
                x[j * ldb] = x[p * ldb];
                x[p * ldb] = t;
            }
    }
}

/* -- least squares: gelsy's steps around LAPACK's geqp3 ------------------------- */

#define LAIC1 LA_NAME(laic1_fn)
typedef void (*LAIC1)(const int64_t *, const int64_t *, const T *, const T *, const T *,
                      const T *, T *, T *, T *);

/* gelsy's rank: the largest r whose leading r x r block of the pivoted R keeps
   its estimated condition number below 1 / rcond.  The smallest and largest
   singular values of R[:r, :r] are tracked incrementally by LAPACK's laic1
   (job 2 and 1) with their approximate singular vectors (xmin, xmax: mn each). */
int64_t LA_NAME(gt_gelsy_rank)(LAIC1 laic1, const T *a, int64_t lda, int64_t mn, T rcond,
                               T *xmin, T *xmax) {
    const int64_t largest = 1, smallest = 2;
    T smax = LA_ABS(a[0]), smin = smax;
    if (mn == 0 || smax == 0)
        return 0;
    xmin[0] = xmax[0] = 1;
    int64_t rank = 1;
    for (; rank < mn; rank++) {
        const T *col = a + rank * lda;
        T sminpr, smaxpr, s1, c1, s2, c2;
        laic1(&smallest, &rank, xmin, &smin, col, col + rank, &sminpr, &s1, &c1);
        laic1(&largest, &rank, xmax, &smax, col, col + rank, &smaxpr, &s2, &c2);
        if (!(smaxpr * rcond <= sminpr))
            break;
        for (int64_t i = 0; i < rank; i++) { xmin[i] *= s1; xmax[i] *= s2; }
        xmin[rank] = c1;
        xmax[rank] = c2;
        smin = sminpr;
        smax = smaxpr;
    }
    return rank;
}

/* The block of nb reflectors starting at column j of a (m rows), as two
   rows x nb matrices (rows = m - j): v their vectors written out (unit
   diagonal, zeros above) and y = V T (V T^T when `forward`), where T (nb x nb,
   upper) is the triangular factor of P = H(j) ... H(j+nb-1) = I - V T V^T
   (LAPACK's larft, forward and columnwise) built from g = V^T V (one gemm):
   so that P^T (P when `forward`) applies to B as B - V (Y^T B), two gemms
   (reflect_part).  t, g: nb x nb scratch. */
static void LA_NAME(reflector_block)(GEMM gemm, const T *a, int64_t lda, int64_t m, int64_t j,
                                     int64_t nb, const T *tau, T *v, T *y, T *t, T *g,
                                     int forward) {
    const int64_t rows = m - j;
    for (int64_t c = 0; c < nb; c++) {
        const T *src = a + j + (j + c) * lda;
        T *dst = v + c * rows;
        memset(dst, 0, (size_t)c * sizeof(T));
        dst[c] = 1;
        memcpy(dst + c + 1, src + c + 1, (size_t)(rows - c - 1) * sizeof(T));
    }
    gemm(COL_MAJOR, TRANS, NO_TRANS, nb, nb, rows, (T)1, v, rows, v, rows, (T)0, g, nb);
    memset(t, 0, (size_t)(nb * nb) * sizeof(T));
    for (int64_t c = 0; c < nb; c++) {
        /* T[:c, c] = -tau_c T[:c, :c] (V[:, :c]^T v_c), T[c, c] = tau_c */
        for (int64_t r = 0; r < c; r++) {
            T sum = 0;
            for (int64_t s = r; s < c; s++) sum += t[r + s * nb] * g[s + c * nb];
            t[r + c * nb] = -tau[j + c] * sum;
        }
        t[c + c * nb] = tau[j + c];
    }
    gemm(COL_MAJOR, NO_TRANS, forward ? TRANS : NO_TRANS, rows, nb, nb, (T)1, v, rows, t, nb,
         (T)0, y, rows);
}

/* B (rows x cols) -= V (Y^T B) for a block of reflectors (reflector_block), its
   columns split among a crew's parts. */
typedef struct { GEMM gemm; const T *v, *y; int64_t rows, nb; T *b; int64_t ldb, cols, missing; }
    LA_NAME(reflect);

static void LA_NAME(reflect_part)(void *context, int part, int parts) {
    LA_NAME(reflect) *r = context;
    const int64_t lo = r->cols * part / parts, cols = r->cols * (part + 1) / parts - lo;
    if (cols == 0)
        return;
    const size_t bytes = sizeof(T) * (size_t)(r->nb * cols);
    T *w = malloc(bytes), *c = r->b + lo * r->ldb;
    if (w == NULL) {
        __atomic_store_n(&r->missing, (int64_t)bytes, __ATOMIC_RELAXED);   /* parts race */
        return;
    }
    r->gemm(COL_MAJOR, TRANS, NO_TRANS, r->nb, cols, r->rows, (T)1, r->y, r->rows, c, r->ldb,
            (T)0, w, r->nb);
    r->gemm(COL_MAJOR, NO_TRANS, NO_TRANS, r->rows, cols, r->nb, (T)-1, r->v, r->rows, w, r->nb,
            (T)1, c, r->ldb);
    free(w);
}

/* B (m x cols) := Q^T B (Q B when `forward`), with Q = H(0) ... H(k-1) the
   reflectors below a's diagonal (tau; geqrf's, geqp3's or sytrd's), then R^-1
   on B's first `rank` rows, R the upper triangle of a's leading rank x rank
   block (gelsy's ormqr and trsm; rank 0: no solve).  The blocks of reflectors
   are written out first; then each thread takes its share of B's columns
   through every block (from the first for Q^T, from the last for Q): B -=
   V (Y^T B), two gemms; then the recursive triangular solve.  0, or the bytes
   of scratch the system refused. */
int64_t LA_NAME(gt_apply_q)(GEMM gemm, const T *a, int64_t lda, int64_t m, int64_t k, const T *tau,
                        int forward, int64_t rank, T *b, int64_t cols, int64_t ldb, int threads) {
    const int64_t blocks = (k + QR_BLOCK - 1) / QR_BLOCK, size = m * QR_BLOCK;
    const size_t bytes = sizeof(T) * (size_t)(2 * size * blocks + 2 * QR_BLOCK * QR_BLOCK);
    T *v = malloc(bytes);
    if (v == NULL)
        return (int64_t)bytes;
    T *y = v + size * blocks, *t = y + size * blocks, *g = t + QR_BLOCK * QR_BLOCK;
    for (int64_t i = 0; i < blocks; i++) {
        const int64_t j = i * QR_BLOCK, nb = k - j < QR_BLOCK ? k - j : QR_BLOCK;
        LA_NAME(reflector_block)(gemm, a, lda, m, j, nb, tau, v + size * i, y + size * i, t, g,
                                 forward);
    }
    const int team = LA_NAME(team)(threads, m * k * cols, cols);
    int64_t missing = 0;
    #pragma omp parallel num_threads(team) if (team > 1) reduction(max:missing)
    {
        const int p = team > 1 ? omp_get_thread_num() : 0;
        const int64_t lo = cols * p / team, share = cols * (p + 1) / team - lo;
        for (int64_t step = 0; step < blocks && share > 0; step++) {
            const int64_t i = forward ? blocks - 1 - step : step, j = i * QR_BLOCK;
            LA_NAME(reflect) r = {gemm, v + size * i, y + size * i, m - j,
                                  k - j < QR_BLOCK ? k - j : QR_BLOCK, b + j + lo * ldb, ldb,
                                  share, 0};
            LA_NAME(reflect_part)(&r, 0, 1);
            missing = r.missing > missing ? r.missing : missing;
        }
        if (share > 0 && rank > 0)
            LA_NAME(solve)(gemm, 1, rank, share, a, lda, b + lo * ldb, ldb);
    }
    free(v);
    return missing;
}

/* -- Householder QR: geqrf and orgqr by blocks of reflectors over gemm ------------- */

#define GEQR2 LA_NAME(geqr2_fn)
typedef void (*GEQR2)(const int64_t *, const int64_t *, T *, const int64_t *, T *, T *,
                      int64_t *);

/* What both need: the matrix, its reflectors' scalars, and the scratch of one
   block (v, y: m x QR_BLOCK; t, g: QR_BLOCK^2; geqr2's work: n). */
typedef struct {
    GEMM gemm; GEQR2 geqr2; T *a; int64_t lda, m, n, k; T *tau, *v, *y, *t, *g, *work;
    int64_t missing;
} LA_NAME(qr);

/* The reflect job of a block over the columns from `first` (a crew's when large). */
static void LA_NAME(qr_reflect)(LA_NAME(qr) *q, crew_t *crew, int64_t j, int64_t nb,
                                int64_t first) {
    const int64_t rows = q->m - j, cols = q->n - first;
    LA_NAME(reflect) r = {q->gemm, q->v, q->y, rows, nb, q->a + j + first * q->lda, q->lda,
                          cols, 0};
    crew_run(rows * cols * nb >= MIN_PARALLEL_WORK ? crew : NULL, 0, LA_NAME(reflect_part), &r);
    q->missing = r.missing > q->missing ? r.missing : q->missing;
}

/* LAPACK's geqrf: per block of QR_BLOCK columns, LAPACK's geqr2 on the panel,
   then P^T applied to the columns right of it. */
static void LA_NAME(geqrf_leader)(void *context, crew_t *crew) {
    LA_NAME(qr) *q = context;
    for (int64_t j = 0; j < q->k; j += QR_BLOCK) {
        const int64_t nb = q->k - j < QR_BLOCK ? q->k - j : QR_BLOCK, rows = q->m - j;
        int64_t info;
        q->geqr2(&rows, &nb, q->a + j + j * q->lda, &q->lda, q->tau + j, q->work, &info);
        if (j + nb < q->n) {
            LA_NAME(reflector_block)(q->gemm, q->a, q->lda, q->m, j, nb, q->tau, q->v, q->y,
                                     q->t, q->g, 0);
            LA_NAME(qr_reflect)(q, crew, j, nb, j + nb);
        }
    }
}

/* LAPACK's orgqr: Q = P_1 ... P_b E (E the first n columns of I) from the last
   block back: each block's reflectors are read, its columns set to E's, and
   P_i applied to the columns from its first (those left of it are still E's
   columns there, and the rows above it zero). */
static void LA_NAME(orgqr_leader)(void *context, crew_t *crew) {
    LA_NAME(qr) *q = context;
    const int64_t blocks = (q->k + QR_BLOCK - 1) / QR_BLOCK;
    for (int64_t c = q->k; c < q->n; c++) {
        memset(q->a + c * q->lda, 0, (size_t)q->m * sizeof(T));
        if (c < q->m)
            q->a[c + c * q->lda] = 1;
    }
    for (int64_t i = blocks - 1; i >= 0; i--) {
        const int64_t j = i * QR_BLOCK, nb = q->k - j < QR_BLOCK ? q->k - j : QR_BLOCK;
        LA_NAME(reflector_block)(q->gemm, q->a, q->lda, q->m, j, nb, q->tau, q->v, q->y, q->t,
                                 q->g, 1);
        for (int64_t c = j; c < j + nb; c++) {
            memset(q->a + c * q->lda, 0, (size_t)q->m * sizeof(T));
            q->a[c + c * q->lda] = 1;
        }
        LA_NAME(qr_reflect)(q, crew, j, nb, j);
    }
}

static int64_t LA_NAME(qr_run)(void (*leader)(void *, crew_t *), GEMM gemm, GEQR2 geqr2, T *a,
                           int64_t m, int64_t n, int64_t k, int64_t lda, T *tau, int threads) {
    const int64_t block = m * QR_BLOCK;
    const size_t bytes = sizeof(T) * (size_t)(2 * block + 2 * QR_BLOCK * QR_BLOCK + n);
    T *v = malloc(bytes);
    if (v == NULL)
        return (int64_t)bytes;
    LA_NAME(qr) q = {gemm, geqr2, a, lda, m, n, k, tau, v, v + block, v + 2 * block,
                     v + 2 * block + QR_BLOCK * QR_BLOCK, v + 2 * block + 2 * QR_BLOCK * QR_BLOCK,
                     0};
    crew_lead(m * n * k < MIN_CREW_WORK ? 1 : threads, leader, &q);
    free(v);
    return q.missing;
}

/* a (m x n) := its Householder QR (R above the diagonal, the reflectors below),
   tau: min(m, n); 0, or the bytes of scratch the system refused. */
int64_t LA_NAME(gt_geqrf)(GEMM gemm, GEQR2 geqr2, T *a, int64_t m, int64_t n, int64_t lda, T *tau,
                      int threads) {
    return LA_NAME(qr_run)(LA_NAME(geqrf_leader), gemm, geqr2, a, m, n, m < n ? m : n, lda, tau,
                           threads);
}

/* a (m x n, m >= n >= k) := the first n columns of the product of the k
   reflectors in a's first k columns (geqrf's, tau); 0, or the bytes of scratch
   the system refused. */
int64_t LA_NAME(gt_orgqr)(GEMM gemm, T *a, int64_t m, int64_t n, int64_t k, int64_t lda,
                      const T *tau, int threads) {
    return LA_NAME(qr_run)(LA_NAME(orgqr_leader), gemm, NULL, a, m, n, k, lda, (T *)tau,
                           threads);
}

/* Row i of B's first n rows moved to row jpvt[i] - 1 (gelsy's last step: the
   solution of the pivoted problem back in the columns' order); one column of
   n scratch values. */
void LA_NAME(gt_unpivot_rows)(T *b, int64_t n, int64_t k, int64_t ldb, const int64_t *jpvt,
                              T *scratch) {
    for (int64_t c = 0; c < k; c++) {
        T *col = b + c * ldb;
        for (int64_t i = 0; i < n; i++) scratch[jpvt[i] - 1] = col[i];
        memcpy(col, scratch, (size_t)n * sizeof(T));
    }
}

/* Rows [i0, i1) (multiples of W) of the column-major copy of a row-major
   matrix: W x W tiles transposed in registers, TRANSPOSE_BLOCK rows of them
   at a time (their source lines stay in cache). */
static void LA_NAME(transpose_rows)(const T *src, int64_t i0, int64_t i1, int64_t n,
                                    int64_t lds, T *dst, int64_t ldd, const I *picks) {
    for (; i0 < i1; i0 += TRANSPOSE_BLOCK) {
        const int64_t end = i1 - i0 < TRANSPOSE_BLOCK ? i1 : i0 + TRANSPOSE_BLOCK;
        for (int64_t j = 0; j + W <= n; j += W)
            for (int64_t i = i0; i < end; i += W)
                LA_NAME(transpose_tile)(src + i * lds + j, lds, dst + i + j * ldd, ldd, picks);
    }
}

/* The column-major copy (column stride ldd) of an m x n matrix, row-major
   (row stride lds; numpy's element order walks the destination or the source
   a whole matrix apart, 2.6 times as long for 512 x 512) or column-major
   (column stride lds), a large one split among `threads` by rows or columns. */
void LA_NAME(gt_column_major)(const T *src, int64_t m, int64_t n, int64_t lds, int row_major,
                              T *dst, int64_t ldd, int threads) {
    const int team = m * n >= MIN_COPY_PARALLEL && threads > 1 ? threads : 1;
    if (!row_major) {
        #pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + j * ldd, src + j * lds, (size_t)m * sizeof(T));
        return;
    }
    I picks[8];
    LA_NAME(transpose_picks)(picks);
    const int64_t m_tiles = m - m % W, n_tiles = n - n % W, blocks = m_tiles / W;
    #pragma omp parallel num_threads(team) if (team > 1)
    {
        const int t = omp_get_thread_num(), size = omp_get_num_threads();
        LA_NAME(transpose_rows)(src, blocks * t / size * W, blocks * (t + 1) / size * W, n, lds,
                                dst, ldd, picks);
    }
    for (int64_t j = 0; j < n; j++)                 /* the edges */
        for (int64_t i = j < n_tiles ? m_tiles : 0; i < m; i++)
            dst[i + j * ldd] = src[i * lds + j];
}

#undef T
#undef W
#undef V
#undef I
#undef GEMM
#undef LAIC1
#undef GEQR2

#endif
