/* ATen's CPU selection and sorting, step for step, so that ties resolve as PyTorch's do.
 *
 * PyTorch's sort, topk, median, nanmedian and mode kernels call libstdc++'s
 * std::sort (introsort), std::nth_element (introselect) and std::partial_sort
 * (heap select + heap sort); kthvalue runs its own Sedgewick quickselect.
 * None of them is stable, so which of several equal elements lands where is
 * decided by the exact sequence of comparisons and moves.  This file repeats
 * those sequences (GCC's bits/stl_algo.h and bits/stl_heap.h; ATen's
 * quick_select_template) on rows of (key, index) records.  sorting.py holds
 * the same algorithms in Python for when no compiler is available.
 *
 * Keys are doubles (every float dtype converts exactly) or int64 (every
 * integer dtype; uint64 with its top bit flipped).  Comparators (the `mode`
 * argument, as sorting.py numbers them):
 *   0 ASC   a < b, NaN after everything          sort, topk(largest=False), nanmedian()
 *   1 DESC  a > b, NaN before everything         sort(descending), topk(largest), kthvalue
 *   2 LT    a < b                                mode, median()
 *   3 LT_INDEX     (a, i) < (b, j)               median(dim)
 *   4 LT_INDEX_NAN (a, i) < (b, j), NaN last     nanmedian(dim)
 * libstdc++ relies on sentinels instead of bounds checks; the scans below also
 * stop at the row's ends, which changes nothing for a strict weak order and
 * keeps memory safe where PyTorch's comparator is not one (mode with NaN).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { double key; int64_t index; } rec_f;
typedef struct { int64_t key; int64_t index; } rec_i;

#define NAN_F(x) isnan(x)
#define NAN_I(x) 0

#define ASC(N, a, b) ((!N((a)->key) && N((b)->key)) || (a)->key < (b)->key)
#define DESC(N, a, b) ((N((a)->key) && !N((b)->key)) || (a)->key > (b)->key)
#define LT(N, a, b) ((a)->key < (b)->key)
#define LT_INDEX(N, a, b) ((a)->key < (b)->key || ((a)->key == (b)->key && (a)->index < (b)->index))
#define LT_INDEX_NAN(N, a, b) (LT_INDEX(N, a, b) || (N((b)->key) && !N((a)->key)))

static int64_t floor_log2(int64_t n) {
    int64_t r = 0;
    while (n > 1) { n >>= 1; r++; }
    return r;
}

/* One instantiation of every algorithm for record type R and comparator
 * less(a, b) = CMP(NANF, a, b), on pointers to records.  `lo`/`hi` bound the row. */
#define DEFINE_ALGORITHMS(NAME, R, CMP, NANF)                                                  \
static inline int NAME##_less(const R *a, const R *b) { return CMP(NANF, a, b); }          \
static inline void NAME##_swap(R *a, R *b) { R t = *a; *a = *b; *b = t; }                   \
                                                                                             \
/* __unguarded_linear_insert */                                                              \
static void NAME##_linear_insert(R *lo, R *last) {                                          \
    R val = *last;                                                                           \
    R *next = last - 1;                                                                      \
    while (last > lo && NAME##_less(&val, next)) { *last = *next; last = next; --next; }    \
    *last = val;                                                                             \
}                                                                                            \
                                                                                             \
/* __insertion_sort */                                                                       \
static void NAME##_insertion_sort(R *first, R *last) {                                      \
    if (first == last) return;                                                               \
    for (R *i = first + 1; i != last; ++i) {                                                 \
        if (NAME##_less(i, first)) {                                                         \
            R val = *i;                                                                      \
            for (R *j = i; j != first; --j) *j = *(j - 1);                                   \
            *first = val;                                                                    \
        } else {                                                                             \
            NAME##_linear_insert(first, i);                                                  \
        }                                                                                    \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* __final_insertion_sort: threshold 16, then unguarded inserts */                          \
static void NAME##_final_insertion_sort(R *first, R *last) {                                \
    if (last - first > 16) {                                                                 \
        NAME##_insertion_sort(first, first + 16);                                            \
        for (R *i = first + 16; i != last; ++i) NAME##_linear_insert(first, i);              \
    } else {                                                                                 \
        NAME##_insertion_sort(first, last);                                                  \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* __push_heap */                                                                            \
static void NAME##_push_heap(R *first, ptrdiff_t hole, ptrdiff_t top, R value) {            \
    ptrdiff_t parent = (hole - 1) / 2;                                                       \
    while (hole > top && NAME##_less(first + parent, &value)) {                              \
        first[hole] = first[parent];                                                         \
        hole = parent;                                                                       \
        parent = (hole - 1) / 2;                                                             \
    }                                                                                        \
    first[hole] = value;                                                                     \
}                                                                                            \
                                                                                             \
/* __adjust_heap */                                                                          \
static void NAME##_adjust_heap(R *first, ptrdiff_t hole, ptrdiff_t len, R value) {          \
    const ptrdiff_t top = hole;                                                              \
    ptrdiff_t child = hole;                                                                  \
    while (child < (len - 1) / 2) {                                                          \
        child = 2 * (child + 1);                                                             \
        if (NAME##_less(first + child, first + (child - 1))) child--;                        \
        first[hole] = first[child];                                                          \
        hole = child;                                                                        \
    }                                                                                        \
    if ((len & 1) == 0 && child == (len - 2) / 2) {                                          \
        child = 2 * (child + 1);                                                             \
        first[hole] = first[child - 1];                                                      \
        hole = child - 1;                                                                    \
    }                                                                                        \
    NAME##_push_heap(first, hole, top, value);                                               \
}                                                                                            \
                                                                                             \
/* __make_heap */                                                                            \
static void NAME##_make_heap(R *first, R *last) {                                           \
    const ptrdiff_t len = last - first;                                                      \
    if (len < 2) return;                                                                     \
    for (ptrdiff_t parent = (len - 2) / 2; ; parent--) {                                     \
        NAME##_adjust_heap(first, parent, len, first[parent]);                               \
        if (parent == 0) return;                                                             \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* __pop_heap: the top goes to *result, *result's value sifts in from the root */           \
static void NAME##_pop_heap(R *first, R *last, R *result) {                                 \
    R value = *result;                                                                       \
    *result = *first;                                                                        \
    NAME##_adjust_heap(first, 0, last - first, value);                                       \
}                                                                                            \
                                                                                             \
/* __heap_select */                                                                          \
static void NAME##_heap_select(R *first, R *middle, R *last) {                              \
    NAME##_make_heap(first, middle);                                                         \
    for (R *i = middle; i < last; ++i)                                                       \
        if (NAME##_less(i, first)) NAME##_pop_heap(first, middle, i);                        \
}                                                                                            \
                                                                                             \
/* __partial_sort: heap select, then __sort_heap */                                          \
static void NAME##_partial_sort(R *first, R *middle, R *last) {                             \
    NAME##_heap_select(first, middle, last);                                                 \
    for (R *end = middle; end - first > 1; ) { --end; NAME##_pop_heap(first, end, end); }    \
}                                                                                            \
                                                                                             \
/* __move_median_to_first */                                                                 \
static void NAME##_median_to_first(R *result, R *a, R *b, R *c) {                           \
    if (NAME##_less(a, b)) {                                                                 \
        if (NAME##_less(b, c)) NAME##_swap(result, b);                                       \
        else if (NAME##_less(a, c)) NAME##_swap(result, c);                                  \
        else NAME##_swap(result, a);                                                         \
    } else if (NAME##_less(a, c)) NAME##_swap(result, a);                                    \
    else if (NAME##_less(b, c)) NAME##_swap(result, c);                                      \
    else NAME##_swap(result, b);                                                             \
}                                                                                            \
                                                                                             \
/* __unguarded_partition_pivot: median of first+1, middle, last-1 as pivot */               \
static R *NAME##_partition_pivot(R *first, R *last) {                                       \
    R *mid = first + (last - first) / 2;                                                     \
    NAME##_median_to_first(first, first + 1, mid, last - 1);                                 \
    R *pivot = first, *hi = last - 1;                                                        \
    first++;                                                                                 \
    for (;;) {                                                                               \
        while (first < hi && NAME##_less(first, pivot)) ++first;                             \
        --last;                                                                              \
        while (last > pivot && NAME##_less(pivot, last)) --last;                             \
        if (!(first < last)) return first;                                                   \
        NAME##_swap(first, last);                                                            \
        ++first;                                                                             \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* __introsort_loop */                                                                       \
static void NAME##_introsort_loop(R *first, R *last, int64_t depth) {                       \
    while (last - first > 16) {                                                              \
        if (depth == 0) { NAME##_partial_sort(first, last, last); return; }                  \
        --depth;                                                                             \
        R *cut = NAME##_partition_pivot(first, last);                                        \
        NAME##_introsort_loop(cut, last, depth);                                             \
        last = cut;                                                                          \
    }                                                                                        \
}                                                                                            \
                                                                                             \
/* std::sort */                                                                              \
static void NAME##_sort(R *first, R *last) {                                                \
    if (first == last) return;                                                               \
    NAME##_introsort_loop(first, last, floor_log2(last - first) * 2);                        \
    NAME##_final_insertion_sort(first, last);                                                \
}                                                                                            \
                                                                                             \
/* std::nth_element: __introselect, insertion sort below 4 elements */                      \
static void NAME##_nth_element(R *first, R *nth, R *last) {                                 \
    if (first == last || nth == last) return;                                                \
    int64_t depth = floor_log2(last - first) * 2;                                            \
    while (last - first > 3) {                                                               \
        if (depth == 0) {                                                                    \
            NAME##_heap_select(first, nth + 1, last);                                        \
            NAME##_swap(first, nth);                                                         \
            return;                                                                          \
        }                                                                                    \
        --depth;                                                                             \
        R *cut = NAME##_partition_pivot(first, last);                                        \
        if (cut <= nth) first = cut; else last = cut;                                        \
    }                                                                                        \
    NAME##_insertion_sort(first, last);                                                      \
}                                                                                            \
                                                                                             \
/* ATen's quick_select_template (Sedgewick): less() plays its gt_or_nan */                  \
static void NAME##_quick_select(R *arr, int64_t n, int64_t k) {                             \
    int64_t L = 0, R_ = n - 1;                                                               \
    for (;;) {                                                                               \
        if (R_ <= L) return;                                                                 \
        if (R_ == L + 1) {                                                                   \
            if (NAME##_less(arr + L, arr + R_)) NAME##_swap(arr + L, arr + R_);              \
            return;                                                                          \
        }                                                                                    \
        int64_t P = (L + R_) >> 1;                                                           \
        NAME##_swap(arr + P, arr + L + 1);                                                   \
        if (NAME##_less(arr + L + 1, arr + R_)) NAME##_swap(arr + L + 1, arr + R_);          \
        if (NAME##_less(arr + L, arr + R_)) NAME##_swap(arr + L, arr + R_);                  \
        if (NAME##_less(arr + L + 1, arr + L)) NAME##_swap(arr + L + 1, arr + L);            \
        int64_t i = L + 1, j = R_;                                                           \
        R piv = arr[L];                                                                      \
        for (;;) {                                                                           \
            do i++; while (i < R_ && NAME##_less(&piv, arr + i));                            \
            do j--; while (j > L && NAME##_less(arr + j, &piv));                             \
            if (j < i) break;                                                                \
            NAME##_swap(arr + i, arr + j);                                                   \
        }                                                                                    \
        NAME##_swap(arr + L, arr + j);                                                       \
        if (j <= k) L = i;                                                                   \
        if (j >= k) R_ = j - 1;                                                              \
    }                                                                                        \
}

#define DEFINE_FOR_KEYS(CMP)                                   \
    DEFINE_ALGORITHMS(f_##CMP, rec_f, CMP, NAN_F)              \
    DEFINE_ALGORITHMS(i_##CMP, rec_i, CMP, NAN_I)

DEFINE_FOR_KEYS(ASC)
DEFINE_FOR_KEYS(DESC)
DEFINE_FOR_KEYS(LT)
DEFINE_FOR_KEYS(LT_INDEX)
DEFINE_FOR_KEYS(LT_INDEX_NAN)

/* Entry points: `rows` rows of `n` records each, contiguous; `is_int` picks the
 * key type, `mode` the comparator (numbered as above). */
#define DISPATCH(CALL)                                                              \
    switch (mode * 2 + (is_int != 0)) {                                             \
        case 0: CALL(f_ASC, rec_f); break;         case 1: CALL(i_ASC, rec_i); break;  \
        case 2: CALL(f_DESC, rec_f); break;        case 3: CALL(i_DESC, rec_i); break; \
        case 4: CALL(f_LT, rec_f); break;          case 5: CALL(i_LT, rec_i); break;   \
        case 6: CALL(f_LT_INDEX, rec_f); break;    case 7: CALL(i_LT_INDEX, rec_i); break; \
        case 8: CALL(f_LT_INDEX_NAN, rec_f); break; case 9: CALL(i_LT_INDEX_NAN, rec_i); break; \
    }

/* std::sort of each row */
void gt_sort_rows(void *data, int64_t rows, int64_t n, int is_int, int mode) {
#define SORT(NAME, R)                                                              \
    for (int64_t r = 0; r < rows; r++) { R *row = (R *)data + r * n; NAME##_sort(row, row + n); }
    DISPATCH(SORT)
#undef SORT
}

/* std::nth_element of each row at its own position nth[r] */
void gt_nth_element_rows(void *data, int64_t rows, int64_t n, const int64_t *nth, int is_int,
                         int mode) {
#define SELECT(NAME, R)                                                             \
    for (int64_t r = 0; r < rows; r++) {                                            \
        R *row = (R *)data + r * n; NAME##_nth_element(row, row + nth[r], row + n); \
    }
    DISPATCH(SELECT)
#undef SELECT
}

/* ATen's topk_impl_loop: std::partial_sort when k * 64 <= n, else
 * std::nth_element at k - 1 and (if sorted) std::sort of the first k - 1 */
void gt_topk_rows(void *data, int64_t rows, int64_t n, int64_t k, int sorted, int is_int,
                  int mode) {
    if (k == 0) return;
#define TOPK(NAME, R)                                                               \
    for (int64_t r = 0; r < rows; r++) {                                            \
        R *row = (R *)data + r * n;                                                 \
        if (k * 64 <= n) {                                                          \
            NAME##_partial_sort(row, row + k, row + n);                             \
        } else {                                                                    \
            NAME##_nth_element(row, row + k - 1, row + n);                          \
            if (sorted) NAME##_sort(row, row + k - 1);                              \
        }                                                                           \
    }
    DISPATCH(TOPK)
#undef TOPK
}

/* kthvalue: ATen's quickselect at k - 1 with gt_or_nan (comparator DESC) */
void gt_kthvalue_rows(void *data, int64_t rows, int64_t n, int64_t k, int is_int) {
    const int mode = 1;
#define QSELECT(NAME, R)                                                            \
    for (int64_t r = 0; r < rows; r++) NAME##_quick_select((R *)data + r * n, n, k - 1);
    DISPATCH(QSELECT)
#undef QSELECT
}
