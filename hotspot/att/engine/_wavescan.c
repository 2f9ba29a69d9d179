/* Native fast path of the wave pass (hotspot/att/engine/native.py is the Python face of it).
 *
 * scan(data): parse one decoder wave file (FORMATS.md §1.2) straight into int64 columns, without
 * building a Python object per number. It accepts only the plain shape real decoders write: a JSON
 * object whose "wave" object has integer "begin"/"end", "cu" integer or null, "instructions" rows
 * of exactly five integers, "timeline" rows of two non-negative integers, "waitcnt" nested arrays of
 * integers, every integer below 2**40 in magnitude, and ASCII strings elsewhere. For anything else
 * (floats, escapes in keys, duplicate keys, malformed JSON, ...) it returns None and the caller
 * parses the file with orjson as before, so errors and semantics stay those of the Python path.
 *
 * edges_key(json): the same canonical encoding of waitcnt for a JSON array (a sequence's expected
 * edges), so a wave's edges are compared to it as bytes.
 * The per-wave fold of hotspot/att/engine/groups.py on those columns, into int64 accumulators or the
 * group's Python containers: charge (timeline cycles to instruction windows, as `charge_windows`),
 * add, gather_add, arrivals (barrier arrival/release pairs), count_pairs (issue-to-wait
 * histograms), and fold_lines (a group's sums into the per-line dicts, as `_fold_lines`).
 *
 * Fold (below): scan and all of the above for one wave in a single call, with the group state in
 * C, the wave's issue sums (trace ceilings) included; the module-level helpers remain for the
 * waves the Python path folds.
 *
 * episodes and occupancy_se (end of file): barrier episodes and achieved occupancy after the pass,
 * C twins of Python reference functions (hotspot/att/barriers.py, hotspot/arch/achieved.py).
 *
 * The 2**40 bound keeps every per-wave quantity (values, window ends, timeline time, per-window
 * charge <= sum of cycles) far from int64 overflow; the Python side spills the int64 accumulators
 * into Python integers before enough waves add up to overflow them (groups.SPILL_WAVES).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(O_NOFOLLOW) && defined(O_NONBLOCK) && defined(O_CLOEXEC)
/* Fold.files reads wave files itself: hotspot/capture/files.py's flags (O_NONBLOCK: a FIFO opens
 * at once and is refused by type; O_NOFOLLOW: a symlink is left to Python, which checks where it
 * leads) */
#define FOLD_FILES 1
#define FILE_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
/* Fold.files keeps its read buffer between calls up to this size */
#define KEEP_BUF_BYTES ((size_t)64 << 20)
#if defined(O_PATH) && defined(O_DIRECTORY)
/* Fold.files opens each file of an absolute path relative to its folder, held open (O_PATH: search
 * permission is all it needs, as for the whole path) while the paths stay in it: the folder's path
 * is resolved once per call (at most FILES_PER_CALL files) instead of once per file. So a folder
 * renamed away and replaced during one call is read from the old one until the call ends, where a
 * per-file open would mix the two folders' files; nothing is held between calls. */
#define FOLD_DIRS 1
#endif
#endif
#endif

#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
#else
#define HOT static inline
#endif

#define VALUE_LIMIT ((int64_t)1 << 40)
#define MAX_DEPTH 64
#define N_STATES 5

typedef struct {
    const char *p;
    const char *end;
} Cur;

/* A growable int64 column. */
typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} Col;

static int col_push(Col *c, int64_t x) {
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 1024;
        int64_t *v = PyMem_Realloc(c->v, (size_t)cap * sizeof(int64_t));
        if (!v) return 0;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = x;
    return 1;
}

static void col_free(Col *c) {
    PyMem_Free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

static PyObject *col_bytes(const Col *c) {
    return PyBytes_FromStringAndSize((const char *)c->v, c->n * (Py_ssize_t)sizeof(int64_t));
}

/* Every text the parser reads has a NUL just past its end (`Text` below): the hot loops stop at
 * it as at any byte no JSON token continues with, so they need no length check. A NUL inside the
 * text stops them the same way, and the document then fails to parse (the caller falls back). */
HOT void skip_ws(Cur *c) {
    const char *p = c->p;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    c->p = p;
}

HOT int peek(Cur *c, char ch) {
    skip_ws(c);
    return *c->p == ch;
}

HOT int expect(Cur *c, char ch) {
    if (*c->p == ch) { /* compact JSON: no whitespace before most tokens */
        c->p++;
        return 1;
    }
    if (!peek(c, ch)) return 0;
    c->p++;
    return 1;
}

HOT int is_digit(char ch) { return (unsigned char)(ch - '0') < 10; }

/* 13 digits reach 2**40 (1.1e12 has 13 digits): shorter numbers need no range check. */
#define SHORT_DIGITS 12

/* Digits at p (a JSON integer without sign, fraction or exponent) into *out, |value| <
 * VALUE_LIMIT; returns the end, or NULL when the number is not that. */
HOT const char *digits(const char *p, int64_t *out) {
    const char *start = p;
    uint64_t v = (uint64_t)(*p - '0');
    if (v > 9) return NULL;
    p++;
    if (v != 0) {
        while (is_digit(*p)) {
            v = v * 10 + (uint64_t)(*p - '0'); /* unsigned: a long digit run wraps, then is refused */
            p++;
        }
        if (p - start > SHORT_DIGITS && (p - start > 13 || v >= (uint64_t)VALUE_LIMIT)) return NULL;
    }
    if (*p == '.' || *p == 'e' || *p == 'E' || is_digit(*p)) return NULL;
    *out = (int64_t)v;
    return p;
}

#if defined(__SSE2__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <emmintrin.h>
#define ROW_SIMD 1
#define ROW_WINDOW 32 /* bytes of a row read at once */
#define ROW_SLACK 48  /* readable bytes a row needs after its start: the window and an 8-byte read */
#define ONES ((uint64_t)0x0101010101010101ULL)

/* The value of the len (1..8) ASCII digits at s, 8 bytes read (the ones past the digits are
 * shifted out): three multiply steps, two digits, then four, then eight at a time. */
HOT uint64_t eight_digits(const char *s, int len) {
    uint64_t x;
    memcpy(&x, s, 8);
    uint64_t v = (x - 0x30 * ONES) << (64 - 8 * len); /* most significant digit first, at the top */
    v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFULL;
    v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFULL;
    return (v * 10000 + (v >> 32)) & 0xFFFFFFFFULL;
}

/* The value of the len (1..4) ASCII digits at s, 4 bytes read: two multiply steps. */
HOT uint64_t four_digits(const char *s, int len) {
    uint32_t x;
    memcpy(&x, s, 4);
    uint32_t v = (x - 0x30303030U) << (32 - 8 * len);
    v = (v * 10 + (v >> 8)) & 0x00FF00FFU;
    return (v * 100 + (v >> 16)) & 0xFFFFU;
}

/* A row of n non-negative integers written compactly, `[a,b,...]`, within the ROW_WINDOW bytes
 * at p (ROW_SLACK bytes readable): the separators are found in one mask of the window's
 * non-digit bytes, and each number is converted from its known start and length, so the numbers
 * of a row are independent work (the per-digit loop chains every number on the one before and
 * mispredicts its exit once per number). Returns the end of the row, or NULL for any other form
 * (a sign, whitespace, a longer row...), which the caller then reads with compact_row. */
HOT const char *row_simd(const char *p, int64_t *out, int n) {
    const __m128i lo = _mm_loadu_si128((const __m128i *)p);
    const __m128i hi = _mm_loadu_si128((const __m128i *)(p + 16));
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8('9');
    /* signed compares: bytes >= 0x80 are negative, so not digits */
    uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(lo, zero), _mm_cmpgt_epi8(lo, nine))) |
                 ((uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(hi, zero), _mm_cmpgt_epi8(hi, nine)))
                  << 16);
    if (*p != '[') return NULL;
    m &= m - 1; /* the '[' at 0 */
    int prev = 0;
    for (int k = 0; k < n; k++) {
        if (!m) return NULL;
        int d = __builtin_ctz(m);
        m &= m - 1;
        int len = d - prev - 1;
        const char *s = p + prev + 1;
        if (len < 1 || len > 13 || p[d] != (k == n - 1 ? ']' : ',') || (len > 1 && *s == '0')) return NULL;
        uint64_t v = len <= 4   ? four_digits(s, len) /* most fields of a row are short */
                     : len <= 8 ? eight_digits(s, len)
                                : eight_digits(s, len - 8) * 100000000ULL + eight_digits(s + len - 8, 8);
        if (len > SHORT_DIGITS && v >= (uint64_t)VALUE_LIMIT) return NULL;
        out[k] = (int64_t)v;
        prev = d;
    }
    return p + prev + 1;
}
#endif

/* The wide row reader: AVX-512 (BW, VBMI, VBMI2), compiled for that target function by function
 * and used only when the CPU has it (module init), so the module still loads and reads the same
 * on any x86-64; row_simd and compact_row stay the path everywhere else and for every row this
 * one refuses. wide_rows(False) (module function) forces the portable path, for the tests that
 * hold both paths to the same results. */
#if defined(__x86_64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    ((defined(__clang__) && __clang_major__ >= 8) || (!defined(__clang__) && __GNUC__ >= 8))
#include <immintrin.h>
#define ROW_WIDE 1
#define WIDE __attribute__((target("avx512f,avx512bw,avx512dq,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt,sse4.1")))
#define WIDE_HOT WIDE static inline __attribute__((always_inline))
static int wide_ok; /* the CPU runs the wide path */
static int wide_on; /* it is used (wide_ok unless a test turned it off) */
/* byte i of each: i; i + 1 (63 at the end); i % 8 - 8 */
#define I8(b) b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7
static const struct {
    int8_t iota[64], next[64], offset[64];
} wide_tab = {
    {I8(0), I8(8), I8(16), I8(24), I8(32), I8(40), I8(48), I8(56)},
    {I8(1), I8(9), I8(17), I8(25), I8(33), I8(41), I8(49), 57, 58, 59, 60, 61, 62, 63, 63},
    {I8(-8), I8(-8), I8(-8), I8(-8), I8(-8), I8(-8), I8(-8), I8(-8)},
};
#undef I8

/* The rows of n numbers `[a,...],[...]` as their separators read in order (index i: the i-th
 * non-digit byte; n + 2 per row: '[', n - 1 commas, ']', the comma between rows): each one's
 * character, and the bounds of the distance to the next (1..8 digits after '[' and the commas
 * inside a row, none after ']' and after the comma between rows); col[k][b]: the index of the
 * separator before number k of row b / 8 (the row of lane b / 8). Filled at module init. */
typedef struct {
    int8_t ch[64], lo[64], hi[64], col[5][64];
} RowTab;
static RowTab ins_tab, timeline_tab;

static void row_tab_init(RowTab *t, int n) {
    int per = n + 2;
    for (int i = 0; i < 64; i++) {
        int j = i % per;
        t->ch[i] = (int8_t)(j == 0 ? '[' : j == n ? ']' : ',');
        t->lo[i] = (int8_t)(j < n ? 2 : 1);
        t->hi[i] = (int8_t)(j < n ? 9 : 1);
        for (int k = 0; k < n; k++) t->col[k][i] = (int8_t)(per * (i / 8) + k);
    }
}

/* Up to 8 whole rows of n (2..5) non-negative integers of 1..8 digits, written compactly
 * `[a,b,...],[...]` from p (a '[') within the `span` (64 or 128) bytes at p (fewer when the text
 * ends sooner: the loads are masked, nothing past `end` is read): number k of row r into out[k][r]
 * (room for 8 rows), the end of the last row into *after, the sum of the last column over the rows
 * into *sum (when not NULL); returns the rows read, 0 when the one at p is not such a row (the
 * caller reads it as before). No branch per number or per row: the separators are compressed into
 * one vector of positions and one of characters and held to the table `t` all at once (the first
 * one out of place ends the rows read), and the digits of each column's numbers are moved,
 * right-aligned, into an 8-byte lane per row (a byte permute whose indices come from those
 * positions), then converted in three multiply-add steps (pairs of digits, fours, eights). */
WIDE_HOT int rows_window(const char *p, const char *end, int n, int span, const RowTab *t,
                         int64_t *const *out, const char **after, int64_t *sum) {
    if (*p != '[') return 0;
    Py_ssize_t avail = end - p;
    const __m512i iota = _mm512_loadu_si512(wide_tab.iota), zero = _mm512_set1_epi8('0'),
                  ten = _mm512_set1_epi8(10);
    __mmask64 loaded = avail >= 64 ? ~(__mmask64)0 : (__mmask64)_bzhi_u64(~0ULL, (unsigned)avail);
    __m512i x = _mm512_maskz_loadu_epi8(loaded, p);
    __m512i d = _mm512_sub_epi8(x, zero), d1 = _mm512_setzero_si512();
    uint64_t digit = _mm512_cmplt_epu8_mask(d, ten);
    uint64_t sep = ~digit; /* the bytes past the text (0) too */
    __m512i P = _mm512_maskz_compress_epi8(sep, iota);
    __m512i C = _mm512_maskz_compress_epi8(sep, x);
    uint64_t zeros = _mm512_cmpeq_epi8_mask(x, zero), lead;
    unsigned iz = 64; /* the separator before the first number with a leading zero */
    if (span == 128) { /* the next 64 bytes: their separators after these */
        Py_ssize_t rest = avail - 64;
        __mmask64 loaded1 = rest >= 64 ? ~(__mmask64)0 : rest <= 0 ? 0 : (__mmask64)_bzhi_u64(~0ULL, (unsigned)rest);
        __m512i x1 = _mm512_maskz_loadu_epi8(loaded1, p + (rest > 0 ? 64 : 0));
        d1 = _mm512_sub_epi8(x1, zero);
        uint64_t digit1 = _mm512_cmplt_epu8_mask(d1, ten), sep1 = ~digit1;
        unsigned c0 = (unsigned)_mm_popcnt_u64(sep);
        __m512i P1 = _mm512_maskz_compress_epi8(sep1, _mm512_add_epi8(iota, _mm512_set1_epi8(64)));
        __m512i C1 = _mm512_maskz_compress_epi8(sep1, x1);
        /* entry i >= c0 from entry i - c0 of the second half (index bit 6 picks it) */
        __m512i idx = _mm512_mask_add_epi8(iota, ~(__mmask64)_bzhi_u64(~0ULL, c0), iota,
                                           _mm512_set1_epi8((char)(64 - c0)));
        P = _mm512_permutex2var_epi8(P, idx, P1);
        C = _mm512_permutex2var_epi8(C, idx, C1);
        lead = zeros & (sep << 1) & ((digit >> 1) | (digit1 << 63));
        uint64_t lead1 = _mm512_cmpeq_epi8_mask(x1, zero) & ((sep1 << 1) | (sep >> 63)) & (digit1 >> 1);
        if (!lead && lead1) iz = c0 + (unsigned)_mm_popcnt_u64(_bzhi_u64(sep1, (unsigned)_tzcnt_u64(lead1))) - 1;
    } else {
        lead = zeros & (sep << 1) & (digit >> 1);
    }
    if (lead) iz = (unsigned)_mm_popcnt_u64(_bzhi_u64(sep, (unsigned)_tzcnt_u64(lead))) - 1;
    /* the distance to the next separator: past the last one read, "next" is a 0 of the compressed
     * tail and the distance wraps past every bound (a number cut off is not read) */
    __m512i gap = _mm512_sub_epi8(_mm512_permutexvar_epi8(_mm512_loadu_si512(wide_tab.next), P), P);
    uint64_t chok = _mm512_cmpeq_epi8_mask(C, _mm512_loadu_si512(t->ch));
    uint64_t ok = chok & _mm512_cmpge_epu8_mask(gap, _mm512_loadu_si512(t->lo)) &
                  _mm512_cmple_epu8_mask(gap, _mm512_loadu_si512(t->hi));
    ok = _bzhi_u64(ok, iz); /* nothing from a number with a leading zero on */
    unsigned per = (unsigned)n + 2, f = (unsigned)_tzcnt_u64(~ok), rows = f / per, rem = f % per;
    /* the row after the last whole one with its comma: read when all but what follows its ']' is
     * in place */
    rows += rem == (unsigned)n + 1 || (rem == (unsigned)n && f < 64 && ((chok >> f) & 1));
    if (rows > 8) rows = 8;
    if (!rows) return 0;
    __mmask8 lanes = (__mmask8)((1u << rows) - 1);
    for (int k = 0; k < n; k++) {
        __m512i col = _mm512_loadu_si512(t->col[k]);
        __m512i start = _mm512_permutexvar_epi8(col, P);
        __m512i src = _mm512_add_epi8(_mm512_permutexvar_epi8(_mm512_add_epi8(col, _mm512_set1_epi8(1)), P),
                                      _mm512_loadu_si512(wide_tab.offset));
        __mmask64 inside = _mm512_cmpgt_epi8_mask(src, start); /* signed: a negative index is outside */
        __m512i v = span == 128 ? _mm512_maskz_permutex2var_epi8(inside, d, src, d1)
                                : _mm512_maskz_permutexvar_epi8(inside, src, d);
        v = _mm512_maddubs_epi16(v, _mm512_set1_epi16(0x010A));  /* 10 * even byte + odd byte */
        v = _mm512_madd_epi16(v, _mm512_set1_epi32(0x00010064)); /* 100 * even + odd */
        v = _mm512_add_epi64(_mm512_mul_epu32(v, _mm512_set1_epi64(10000)), _mm512_srli_epi64(v, 32));
        _mm512_mask_storeu_epi64(out[k], lanes, v);
        if (sum && k == n - 1) *sum = _mm512_mask_reduce_add_epi64(lanes, v);
    }
    __m512i last = _mm512_permutexvar_epi8(_mm512_set1_epi8((char)((rows - 1) * per + n)), P);
    *after = p + (_mm_cvtsi128_si32(_mm512_castsi512_si128(last)) & 0xFF) + 1;
    return (int)rows;
}
#endif

/* A JSON integer (no fraction, no exponent) with |value| < VALUE_LIMIT. */
HOT int parse_int(Cur *c, int64_t *out) {
    skip_ws(c);
    const char *p = c->p;
    int neg = *p == '-';
    p += neg;
    int64_t v;
    p = digits(p, &v);
    if (!p) return 0;
    c->p = p;
    *out = neg ? -v : v;
    return 1;
}

/* A row of `n` integers written compactly, `[a,b,...]`, at c->p (the shape decoders write):
 * into out[] and past it; 0 (nothing consumed) for any other form, which the caller then reads
 * token by token. */
HOT int compact_row(Cur *c, int64_t *out, int n) {
    const char *p = c->p;
#ifdef ROW_SIMD
    if (c->end - p >= ROW_SLACK) {
        const char *q = row_simd(p, out, n);
        if (q) {
            c->p = q;
            return 1;
        }
    }
#endif
    if (*p != '[') return 0;
    p++;
    for (int k = 0; k < n; k++) {
        int neg = *p == '-';
        p += neg;
        int64_t v;
        p = digits(p, &v);
        if (!p || *p != (k == n - 1 ? ']' : ',')) return 0;
        p++;
        out[k] = neg ? -v : v;
    }
    c->p = p;
    return 1;
}

/* An ASCII string without escapes (keys); sets [*s, *s + *len). */
static int parse_plain_string(Cur *c, const char **s, Py_ssize_t *len) {
    if (!expect(c, '"')) return 0;
    const char *start = c->p;
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '"') {
            *s = start;
            *len = c->p - start;
            c->p++;
            return 1;
        }
        if (ch == '\\' || ch < 0x20 || ch >= 0x80) return 0;
        c->p++;
    }
    return 0;
}

static int is_hex(char ch) {
    return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* Skip a string value: valid JSON escapes, ASCII only (so nothing orjson would reject passes). */
static int skip_string(Cur *c) {
    if (!expect(c, '"')) return 0;
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '"') return 1;
        if (ch < 0x20 || ch >= 0x80) return 0;
        if (ch == '\\') {
            if (c->p >= c->end) return 0;
            char e = *c->p++;
            if (e == 'u') {
                if (c->end - c->p < 4) return 0;
                for (int i = 0; i < 4; i++)
                    if (!is_hex(c->p[i])) return 0;
                /* surrogates need pairing rules: leave them to orjson */
                if (c->p[0] == 'd' || c->p[0] == 'D') return 0;
                c->p += 4;
            } else if (!strchr("\"\\/bfnrt", e) || e == 0) {
                return 0;
            }
        }
    }
    return 0;
}

/* Skip a number: JSON grammar, at most 18 integer digits and no exponent (orjson's range). */
static int skip_number(Cur *c) {
    const char *p = c->p;
    if (p < c->end && *p == '-') p++;
    if (p >= c->end || !is_digit(*p)) return 0;
    if (*p == '0') {
        p++;
    } else {
        int digits = 0;
        while (p < c->end && is_digit(*p)) {
            p++;
            if (++digits > 18) return 0;
        }
    }
    if (p < c->end && is_digit(*p)) return 0;
    if (p < c->end && *p == '.') {
        p++;
        if (p >= c->end || !is_digit(*p)) return 0;
        int digits = 0;
        while (p < c->end && is_digit(*p)) {
            p++;
            if (++digits > 15) return 0;
        }
    }
    if (p < c->end && (*p == 'e' || *p == 'E')) return 0;
    c->p = p;
    return 1;
}

static int skip_literal(Cur *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
    c->p += n;
    return 1;
}

static int skip_value(Cur *c, int depth);

static int skip_object(Cur *c, int depth) {
    if (!expect(c, '{')) return 0;
    if (expect(c, '}')) return 1;
    do {
        skip_ws(c);
        if (!skip_string(c) || !expect(c, ':') || !skip_value(c, depth + 1)) return 0;
    } while (expect(c, ','));
    return expect(c, '}');
}

static int skip_array(Cur *c, int depth) {
    if (!expect(c, '[')) return 0;
    if (expect(c, ']')) return 1;
    do {
        if (!skip_value(c, depth + 1)) return 0;
    } while (expect(c, ','));
    return expect(c, ']');
}

static int skip_value(Cur *c, int depth) {
    if (depth > MAX_DEPTH) return 0;
    skip_ws(c);
    if (c->p >= c->end) return 0;
    switch (*c->p) {
    case '{': return skip_object(c, depth);
    case '[': return skip_array(c, depth);
    case '"': return skip_string(c);
    case 't': return skip_literal(c, "true");
    case 'f': return skip_literal(c, "false");
    case 'n': return skip_literal(c, "null");
    default: return skip_number(c);
    }
}

/* Markers of the canonical encoding of nested integer arrays (outside the value range). */
#define OPEN_MARK ((int64_t)1 << 62)
#define CLOSE_MARK (((int64_t)1 << 62) + 1)

/* Nested arrays of integers (the waitcnt edges) as a canonical int64 stream: the elements of the
 * outer array, inner arrays between OPEN_MARK and CLOSE_MARK. Two values are equal as Python lists
 * exactly when their streams are equal. Return 1, 0 (another shape), -1 (memory error). */
static int encode_arrays(Cur *c, Col *out, int depth) {
    if (depth > 8 || !expect(c, '[')) return 0;
    if (depth && !col_push(out, OPEN_MARK)) goto nomem;
    if (!expect(c, ']')) {
        do {
            if (peek(c, '[')) {
                int rc = encode_arrays(c, out, depth + 1);
                if (rc != 1) return rc;
            } else {
                int64_t v;
                if (!parse_int(c, &v)) return 0;
                if (!col_push(out, v)) goto nomem;
            }
        } while (expect(c, ','));
        if (!expect(c, ']')) return 0;
    }
    if (depth && !col_push(out, CLOSE_MARK)) goto nomem;
    return 1;
nomem:
    PyErr_NoMemory();
    return -1;
}

/* Entries of the outer array in an encoded stream. */
static Py_ssize_t count_entries(const Col *e) {
    Py_ssize_t n = 0, depth = 0;
    for (Py_ssize_t i = 0; i < e->n; i++) {
        if (e->v[i] == OPEN_MARK) {
            if (depth++ == 0) n++;
        } else if (e->v[i] == CLOSE_MARK) {
            depth--;
        } else if (depth == 0) {
            n++;
        }
    }
    return n;
}

static int key_is(const char *s, Py_ssize_t n, const char *word) {
    return (size_t)n == strlen(word) && memcmp(s, word, (size_t)n) == 0;
}

typedef struct {
    int64_t begin, end, cu;
    int have_begin, have_end, have_cu, cu_null, have_ins, have_timeline, have_waitcnt;
    int64_t ins_or; /* OR of every instruction value: negative when any is */
    /* lazy: waitcnt is only delimited while parsing (Fold: most waves' edges are their group's,
     * text for text); edges_lazy: so delimited and not yet encoded (edges_settle) */
    int lazy, edges_lazy;
    Col cols[5]; /* time, category, stall, duration, line */
    Col states, cycles;
    Col edges;                    /* waitcnt, encoded */
    const char *edges_at, *edges_end; /* waitcnt as written, when an array */
} Wave;

static void wave_free(Wave *w) {
    for (int i = 0; i < 5; i++) col_free(&w->cols[i]);
    col_free(&w->states);
    col_free(&w->cycles);
    col_free(&w->edges);
}

/* Room for one more row in all five instruction columns (they grow together). */
static int rows_reserve(Wave *w) {
    Col *c = w->cols;
    /* every column checked: a memory error part-way through growing them (here or in cols_room)
     * leaves their capacities unequal, and the buffers are kept for the next wave */
    for (int k = 0; k < 5; k++) {
        if (c[k].n < c[k].cap) continue;
        Py_ssize_t n = c[k].n;
        if (!col_push(&c[k], 0)) return 0; /* grows the buffer */
        c[k].n = n;
    }
    return 1;
}

#ifdef ROW_WIDE
/* Room for `need` entries in each of the k columns at cols. 0 on memory error. */
static int cols_room(Col *cols, int k, Py_ssize_t need) {
    for (int i = 0; i < k; i++) {
        if (cols[i].cap >= need) continue;
        Py_ssize_t cap = cols[i].cap ? cols[i].cap : 1024;
        while (cap < need) cap *= 2;
        int64_t *v = PyMem_Realloc(cols[i].v, (size_t)cap * sizeof(int64_t));
        if (!v) return 0;
        cols[i].v = v;
        cols[i].cap = cap;
    }
    return 1;
}

/* Instruction rows read by rows_window from c->p on, into the columns from row *np on, while they
 * follow each other: 1 with c->p just past the last row read (the caller goes on at the ',' or ']'
 * after it), 0 none read (c->p unmoved: the caller reads that row), -1 memory error (exception
 * set). Their values are non-negative: ins_or needs no update. */
WIDE static int ins_rows_wide(Cur *c, Wave *w, Py_ssize_t *np) {
    Col *cols = w->cols;
    Py_ssize_t n = *np;
    const char *at = c->p, *q;
    int any = 0;
    for (;;) {
        if (!cols_room(cols, 5, n + 8)) {
            PyErr_NoMemory();
            return -1;
        }
        int64_t *out[5] = {cols[0].v + n, cols[1].v + n, cols[2].v + n, cols[3].v + n, cols[4].v + n};
        int r = rows_window(at, c->end, 5, 128, &ins_tab, out, &q, NULL);
        if (!r) break;
        n += r;
        any = 1;
        c->p = q;
        if (*q != ',') break;
        at = q + 1;
    }
    *np = n;
    return any;
}

/* The same for timeline rows (pairs), stopping before rows that would take the running cycle
 * total *total to VALUE_LIMIT (the caller reads them one by one and refuses the wave, as before). */
WIDE static int timeline_rows_wide(Cur *c, Wave *w, int64_t *total) {
    const char *at = c->p, *q;
    int any = 0;
    for (;;) {
        Py_ssize_t n = w->states.n;
        if (!cols_room(&w->states, 1, n + 8) || !cols_room(&w->cycles, 1, n + 8)) {
            PyErr_NoMemory();
            return -1;
        }
        int64_t *out[2] = {w->states.v + n, w->cycles.v + n}, sum;
        int r = rows_window(at, c->end, 2, 64, &timeline_tab, out, &q, &sum);
        if (!r || *total + sum >= VALUE_LIMIT) break;
        *total += sum;
        w->states.n = w->cycles.n = n + r;
        any = 1;
        c->p = q;
        if (*q != ',') break;
        at = q + 1;
    }
    return any;
}
#endif

#ifdef ROW_WIDE
/* The end of the nested arrays at p (a '['), delimited as parse_waitcnt's byte loop does (brackets
 * counted over the bytes nested integer arrays are written with): just past the ']' that closes
 * the first '[', or NULL when another byte (the NUL past the text included) comes first. 64 bytes
 * at a time: the bracket depth after each byte is a prefix sum of +1/-1 over the block (six
 * shift-and-add steps), so the closing ']' is the first byte where it meets the depth before the
 * block, negated. */
WIDE static const char *edges_end_wide(const char *p, const char *end) {
    static const int8_t shift_idx[6][64] = {
#define S(k) {I64(k)}
#define I8K(b, k) b - k, b + 1 - k, b + 2 - k, b + 3 - k, b + 4 - k, b + 5 - k, b + 6 - k, b + 7 - k
#define I64(k) I8K(0, k), I8K(8, k), I8K(16, k), I8K(24, k), I8K(32, k), I8K(40, k), I8K(48, k), I8K(56, k)
        S(1), S(2), S(4), S(8), S(16), S(32),
#undef S
#undef I8K
#undef I64
    };
    const __m512i open = _mm512_set1_epi8('['), close = _mm512_set1_epi8(']');
    int depth = 0;
    for (;;) {
        Py_ssize_t avail = end - p;
        __mmask64 loaded = avail >= 64 ? ~(__mmask64)0 : (__mmask64)_bzhi_u64(~0ULL, (unsigned)avail);
        __m512i x = _mm512_maskz_loadu_epi8(loaded, p);
        uint64_t opens = _mm512_cmpeq_epi8_mask(x, open), closes = _mm512_cmpeq_epi8_mask(x, close);
        uint64_t other = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(x, _mm512_set1_epi8('0')), _mm512_set1_epi8(10)) |
                         _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(',')) |
                         _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('-')) |
                         _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(' ')) |
                         _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\n')) |
                         _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\r')) |
                         _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\t'));
        /* the bytes before the first one no such array is written with (past the text: 0) */
        unsigned stop = (unsigned)_tzcnt_u64(~(opens | closes | other));
        __m512i v = _mm512_sub_epi8(_mm512_movm_epi8(closes), _mm512_movm_epi8(opens)); /* +1 '[', -1 ']' */
        for (int k = 0; k < 6; k++) /* v[i] += v[i - 2**k] */
            v = _mm512_add_epi8(v, _mm512_maskz_permutexvar_epi8(~(__mmask64)0 << (1 << k),
                                                                 _mm512_loadu_si512(shift_idx[k]), v));
        /* v[i]: opens minus closes in bytes 0..i, within -64..64 */
        if (depth <= 64) {
            uint64_t at = _bzhi_u64(_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)-depth)), stop);
            if (at) return p + _tzcnt_u64(at) + 1;
        }
        if (stop < 64) return NULL;
        depth += (int8_t)_mm_extract_epi8(_mm512_extracti32x4_epi32(v, 3), 15);
        p += 64;
    }
}
#endif

/* Return 1 parsed, 0 not the plain shape (fall back), -1 memory error (exception set). */
static int parse_instructions(Cur *c, Wave *w) {
    if (!expect(c, '[')) return 0;
    if (expect(c, ']')) return 1;
    Col *cols = w->cols;
    Py_ssize_t n = cols[0].n;
    do {
#ifdef ROW_WIDE
        if (wide_on) {
            int got = ins_rows_wide(c, w, &n);
            if (got < 0) return -1;
            if (got) continue; /* on at the ',' after the last row read */
        }
#endif
        if (n == cols[0].cap) {
            for (int k = 0; k < 5; k++) cols[k].n = n;
            if (!rows_reserve(w)) {
                PyErr_NoMemory();
                return -1;
            }
        }
        int64_t row[5];
        if (!compact_row(c, row, 5)) {
            if (!expect(c, '[') || !parse_int(c, &row[0])) return 0;
            for (int k = 1; k < 5; k++)
                if (!expect(c, ',') || !parse_int(c, &row[k])) return 0;
            if (!expect(c, ']')) return 0;
        }
        for (int k = 0; k < 5; k++) cols[k].v[n] = row[k];
        w->ins_or |= row[0] | row[1] | row[2] | row[3] | row[4];
        n++;
    } while (expect(c, ','));
    for (int k = 0; k < 5; k++) cols[k].n = n;
    return expect(c, ']');
}

static int parse_timeline(Cur *c, Wave *w) {
    if (peek(c, 'n')) return skip_literal(c, "null");
    if (!expect(c, '[')) return 0;
    if (expect(c, ']')) return 1;
    int64_t total = 0;
    do {
#ifdef ROW_WIDE
        if (wide_on) {
            int got = timeline_rows_wide(c, w, &total);
            if (got < 0) return -1;
            if (got) continue;
        }
#endif
        int64_t pair[2];
        if (!compact_row(c, pair, 2) &&
            (!expect(c, '[') || !parse_int(c, &pair[0]) || !expect(c, ',') ||
             !parse_int(c, &pair[1]) || !expect(c, ']')))
            return 0;
        int64_t state = pair[0], cycles = pair[1];
        if (state < 0 || cycles < 0) return 0; /* the per-record path handles these */
        total += cycles;
        if (total >= VALUE_LIMIT) return 0;
        if (!col_push(&w->states, state) || !col_push(&w->cycles, cycles)) {
            PyErr_NoMemory();
            return -1;
        }
    } while (expect(c, ','));
    return expect(c, ']');
}

static int parse_waitcnt(Cur *c, Wave *w) {
    if (peek(c, 'n')) return skip_literal(c, "null");
    w->edges_at = c->p;
#ifdef ROW_WIDE
    if (w->lazy && *c->p == '[' && wide_on) {
        const char *q = edges_end_wide(c->p, c->end);
        if (q) {
            c->p = w->edges_end = q;
            w->edges_lazy = 1;
            return 1;
        }
    } else
#endif
    if (w->lazy && *c->p == '[') {
        /* its extent: brackets counted over the bytes nested integer arrays are written with
         * (anything else, the NUL past the text included, ends this and it is encoded now) */
        const char *p = c->p;
        int depth = 0;
        for (;;) {
            char ch = *p++;
            if (ch == '[') {
                depth++;
            } else if (ch == ']') {
                if (--depth == 0) break;
            } else if (!is_digit(ch) && ch != ',' && ch != '-' && ch != ' ' && ch != '\n' &&
                       ch != '\r' && ch != '\t') {
                depth = -1;
                break;
            }
        }
        if (depth == 0) {
            c->p = w->edges_end = p;
            w->edges_lazy = 1;
            return 1;
        }
    }
    int rc = encode_arrays(c, &w->edges, 0);
    w->edges_end = c->p;
    return rc;
}

static int parse_wave_object(Cur *c, Wave *w) {
    if (!expect(c, '{')) return 0;
    if (expect(c, '}')) return 1;
    do {
        const char *k;
        Py_ssize_t n;
        int rc = 1;
        skip_ws(c);
        if (!parse_plain_string(c, &k, &n) || !expect(c, ':')) return 0;
        if (key_is(k, n, "begin")) {
            if (w->have_begin++) return 0;
            rc = parse_int(c, &w->begin);
        } else if (key_is(k, n, "end")) {
            if (w->have_end++) return 0;
            rc = parse_int(c, &w->end);
        } else if (key_is(k, n, "cu")) {
            if (w->have_cu++) return 0;
            if (peek(c, 'n')) {
                w->cu_null = 1;
                rc = skip_literal(c, "null");
            } else {
                rc = parse_int(c, &w->cu);
            }
        } else if (key_is(k, n, "instructions")) {
            if (w->have_ins++) return 0;
            rc = parse_instructions(c, w);
        } else if (key_is(k, n, "timeline")) {
            if (w->have_timeline++) return 0;
            rc = parse_timeline(c, w);
        } else if (key_is(k, n, "waitcnt")) {
            if (w->have_waitcnt++) return 0;
            rc = parse_waitcnt(c, w);
        } else {
            rc = skip_value(c, 2);
        }
        if (rc != 1) return rc;
    } while (expect(c, ','));
    return expect(c, '}');
}

static int parse_document(Cur *c, Wave *w) {
    int have_wave = 0;
    if (!expect(c, '{')) return 0;
    if (expect(c, '}')) return 0;
    do {
        const char *k;
        Py_ssize_t n;
        int rc;
        skip_ws(c);
        if (!parse_plain_string(c, &k, &n) || !expect(c, ':')) return 0;
        if (key_is(k, n, "wave")) {
            if (have_wave++) return 0;
            rc = parse_wave_object(c, w);
        } else {
            rc = skip_value(c, 1);
        }
        if (rc != 1) return rc;
    } while (expect(c, ','));
    if (!expect(c, '}')) return 0;
    skip_ws(c);
    return c->p == c->end && have_wave;
}

/* FNV-1a over the line and category columns, in four interleaved lanes (elements i, i+4, ...
 * each), combined at the end: four independent multiply chains instead of one, so the hash no
 * longer waits on each multiply in turn. The key of the wave's executed sequence (the caller
 * confirms a match by comparing the columns themselves). */
static uint64_t sequence_hash(const Wave *w) {
    const uint64_t prime = 1099511628211ULL;
    uint64_t lane[4] = {1469598103934665603ULL, 1469598103934665603ULL ^ 1, 1469598103934665603ULL ^ 2,
                        1469598103934665603ULL ^ 3};
    for (int k = 1; k < 5; k += 3) { /* cats (1), then lines (4) */
        const int64_t *v = w->cols[k].v;
        Py_ssize_t n = w->cols[k].n, i = 0;
        for (; i + 4 <= n; i += 4)
            for (int j = 0; j < 4; j++) lane[j] = (lane[j] ^ (uint64_t)v[i + j]) * prime;
        for (; i < n; i++) lane[i & 3] = (lane[i & 3] ^ (uint64_t)v[i]) * prime;
        for (int j = 0; j < 4; j++) lane[j] = (lane[j] ^ (0xff + (uint64_t)n)) * prime; /* column separator */
    }
    uint64_t h = lane[0];
    for (int j = 1; j < 4; j++) h = (h ^ (lane[j] >> 29) ^ lane[j]) * prime;
    return h;
}

/* A buffer argument as text with a NUL just past its end (the parser's sentinel): a bytes
 * object has it already (CPython keeps one after the data); any other buffer is copied. */
typedef struct {
    Py_buffer view;
    char *copy;
    const char *p;
    Py_ssize_t n;
} Text;

static int text_open(PyObject *obj, Text *t) {
    t->copy = NULL;
    if (PyObject_GetBuffer(obj, &t->view, PyBUF_SIMPLE) < 0) return 0;
    t->p = (const char *)t->view.buf;
    t->n = t->view.len;
    if (!PyBytes_CheckExact(obj)) {
        t->copy = PyMem_Malloc((size_t)t->n + 1);
        if (!t->copy) {
            PyBuffer_Release(&t->view);
            PyErr_NoMemory();
            return 0;
        }
        memcpy(t->copy, t->p, (size_t)t->n);
        t->copy[t->n] = '\0';
        t->p = t->copy;
    }
    return 1;
}

static void text_close(Text *t) {
    PyMem_Free(t->copy);
    PyBuffer_Release(&t->view);
}

/* Parse `buf` into `w`: 1 a plain wave with instructions, 0 not (the caller falls back), -1
 * memory error (exception set). */
/* The wave's columns, each with its buffer (a wave scanned into the same Wave reuses them: no
 * allocation, and no fresh pages to fault in, per wave). */
#define WAVE_COLS(w) {&(w)->cols[0], &(w)->cols[1], &(w)->cols[2], &(w)->cols[3], &(w)->cols[4], \
                      &(w)->states, &(w)->cycles, &(w)->edges}
/* Buffers above this many entries are not kept for the next wave (a rare, very long wave). */
#define KEEP_ENTRIES ((Py_ssize_t)1 << 20)

/* `w` emptied, its buffers kept. */
static void wave_reset(Wave *w) {
    Col *cols[8] = WAVE_COLS(w);
    Col keep[8];
    for (int k = 0; k < 8; k++) keep[k] = *cols[k];
    memset(w, 0, sizeof *w);
    for (int k = 0; k < 8; k++) {
        *cols[k] = keep[k];
        cols[k]->n = 0;
    }
}

/* After a wave: keep the buffers of `w` in `keep` for the next one, unless they grew too big. */
static void wave_keep(Wave *keep, Wave *w) {
    Col *cols[8] = WAVE_COLS(w);
    for (int k = 0; k < 8; k++)
        if (cols[k]->cap > KEEP_ENTRIES) {
            wave_free(w);
            break;
        }
    *keep = *w;
}

/* A lazily delimited waitcnt encoded (Wave.lazy): 1, 0 when it is not nested integer arrays
 * after all (the wave is then not the plain shape), -1 memory error (exception set). */
static int edges_settle(Wave *w) {
    if (!w->edges_lazy) return 1;
    w->edges_lazy = 0;
    Cur c = {w->edges_at, w->edges_end};
    int rc = encode_arrays(&c, &w->edges, 0);
    if (rc != 1) return rc;
    return c.p == w->edges_end;
}

static int scan_into(const char *buf, Py_ssize_t len, Wave *w, int lazy) {
    wave_reset(w);
    w->lazy = lazy;
    Cur c = {buf, buf + len};
    int rc = parse_document(&c, w);
    if (rc < 0) return -1;
    if (rc == 0 || !w->have_begin || !w->have_end || !w->have_ins || w->cols[0].n == 0) return 0;
    return 1;
}

/* The tuple ScannedWave (hotspot/att/engine/native.py) is made of. */
static PyObject *scanned_tuple(const Wave *w, uint64_t h) {
    PyObject *cu = (w->have_cu && !w->cu_null) ? PyLong_FromLongLong(w->cu) : Py_NewRef(Py_None);
    PyObject *raw = w->edges_at ? PyBytes_FromStringAndSize(w->edges_at, w->edges_end - w->edges_at)
                                : Py_NewRef(Py_None);
    return Py_BuildValue("(LLNNNNNNNNNNnK)", (long long)w->begin, (long long)w->end, cu,
                         col_bytes(&w->cols[0]), col_bytes(&w->cols[1]), col_bytes(&w->cols[2]),
                         col_bytes(&w->cols[3]), col_bytes(&w->cols[4]), col_bytes(&w->states),
                         col_bytes(&w->cycles), raw, col_bytes(&w->edges),
                         count_entries(&w->edges), (unsigned long long)h);
}

static PyObject *scan(PyObject *self, PyObject *arg) {
    (void)self;
    Text t;
    if (!text_open(arg, &t)) return NULL;
    Wave w;
    memset(&w, 0, sizeof w);
    int rc = scan_into(t.p, t.n, &w, 0);
    PyObject *out = rc < 0 ? NULL : rc == 0 ? Py_NewRef(Py_None) : scanned_tuple(&w, sequence_hash(&w));
    wave_free(&w);
    text_close(&t); /* after scanned_tuple: it copies the waitcnt text */
    return out;
}

/* edges_key(json): the canonical encoding of a JSON array of nested integer arrays, as scan()
 * gives it for waitcnt; None for any other value. */
static PyObject *edges_key(PyObject *self, PyObject *arg) {
    (void)self;
    Text t;
    if (!text_open(arg, &t)) return NULL;
    Cur c = {t.p, t.p + t.n};
    Col e = {NULL, 0, 0};
    int rc = encode_arrays(&c, &e, 0);
    skip_ws(&c);
    text_close(&t);
    PyObject *out = NULL;
    if (rc == 1 && c.p == c.end)
        out = col_bytes(&e);
    else if (rc >= 0)
        out = Py_NewRef(Py_None);
    col_free(&e);
    return out;
}

/* An int64 buffer argument; writable when `write` is set. */
static int get_i64(PyObject *obj, Py_buffer *b, int write) {
    if (PyObject_GetBuffer(obj, b, write ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) return 0;
    if (b->len % (Py_ssize_t)sizeof(int64_t)) {
        PyBuffer_Release(b);
        PyErr_SetString(PyExc_ValueError, "expected a buffer of int64 values");
        return 0;
    }
    return 1;
}

/* Charge a wave's timeline to instruction windows: a[j * N_STATES + state] += cycles of the
 * segment inside window j (groups.charge_windows). n >= 1 instructions, m timeline segments. */
static void charge_into(int64_t *a, const int64_t *tm, const int64_t *du, Py_ssize_t n,
                        const int64_t *st, const int64_t *cy, Py_ssize_t m, int64_t begin) {
    Py_ssize_t last = n - 1, j = 0;
    /* window j ends at the running max of time + duration up to j */
    int64_t end_j = tm[0] + du[0];
    int64_t t = begin;
#define ADVANCE()                                                                               \
    while (end_j <= t && j < last) {                                                            \
        j++;                                                                                    \
        int64_t e = tm[j] + du[j];                                                              \
        if (e > end_j) end_j = e;                                                               \
    }
    ADVANCE();
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t state = st[i], seg_end = t + cy[i];
        if (state >= 0 && state < N_STATES) {
            if (seg_end <= end_j || j == last) {
                a[j * N_STATES + state] += cy[i];
            } else {
                for (;;) {
                    a[j * N_STATES + state] += end_j - t;
                    t = end_j;
                    ADVANCE();
                    if (seg_end <= end_j || j == last) {
                        a[j * N_STATES + state] += seg_end - t;
                        break;
                    }
                }
            }
        }
        t = seg_end;
        ADVANCE();
    }
#undef ADVANCE
}

static PyObject *charge(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *oacc, *otimes, *odur, *ostates, *ocycles;
    long long begin;
    if (!PyArg_ParseTuple(args, "OOOOOL", &oacc, &otimes, &odur, &ostates, &ocycles, &begin))
        return NULL;
    Py_buffer acc, times, dur, states, cycles;
    if (!get_i64(oacc, &acc, 1)) return NULL;
    if (!get_i64(otimes, &times, 0)) goto e1;
    if (!get_i64(odur, &dur, 0)) goto e2;
    if (!get_i64(ostates, &states, 0)) goto e3;
    if (!get_i64(ocycles, &cycles, 0)) goto e4;
    Py_ssize_t n = times.len / 8, m = states.len / 8;
    if (n == 0 || dur.len != times.len || cycles.len != states.len || acc.len != n * N_STATES * 8) {
        PyErr_SetString(PyExc_ValueError, "charge: column lengths disagree");
        goto e5;
    }
    charge_into(acc.buf, times.buf, dur.buf, n, states.buf, cycles.buf, m, begin);
    PyBuffer_Release(&cycles);
    PyBuffer_Release(&states);
    PyBuffer_Release(&dur);
    PyBuffer_Release(&times);
    PyBuffer_Release(&acc);
    Py_RETURN_NONE;
e5:
    PyBuffer_Release(&cycles);
e4:
    PyBuffer_Release(&states);
e3:
    PyBuffer_Release(&dur);
e2:
    PyBuffer_Release(&times);
e1:
    PyBuffer_Release(&acc);
    return NULL;
}

static PyObject *add(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *oacc, *ocol;
    if (!PyArg_ParseTuple(args, "OO", &oacc, &ocol)) return NULL;
    Py_buffer acc, col;
    if (!get_i64(oacc, &acc, 1)) return NULL;
    if (!get_i64(ocol, &col, 0)) {
        PyBuffer_Release(&acc);
        return NULL;
    }
    if (acc.len != col.len) {
        PyBuffer_Release(&col);
        PyBuffer_Release(&acc);
        PyErr_SetString(PyExc_ValueError, "add: lengths disagree");
        return NULL;
    }
    int64_t *a = acc.buf;
    const int64_t *v = col.buf;
    for (Py_ssize_t i = 0, n = acc.len / 8; i < n; i++) a[i] += v[i];
    PyBuffer_Release(&col);
    PyBuffer_Release(&acc);
    Py_RETURN_NONE;
}

/* count_pairs(hists, times, stalls, waits, producers): for each (wait, producer) position pair i,
 * hists[i][times[wait] - times[producer] - stalls[producer]] += 1 (issue-to-wait cycles). */
static PyObject *count_pairs(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *hists, *otimes, *ostalls, *owaits, *oprods;
    if (!PyArg_ParseTuple(args, "O!OOOO", &PyList_Type, &hists, &otimes, &ostalls, &owaits, &oprods))
        return NULL;
    Py_buffer times, stalls, waits, prods;
    PyObject *result = NULL;
    if (!get_i64(otimes, &times, 0)) return NULL;
    if (!get_i64(ostalls, &stalls, 0)) goto r1;
    if (!get_i64(owaits, &waits, 0)) goto r2;
    if (!get_i64(oprods, &prods, 0)) goto r3;
    {
        Py_ssize_t n = times.len / 8, npairs = waits.len / 8;
        const int64_t *tm = times.buf, *st = stalls.buf, *wi = waits.buf, *pi = prods.buf;
        if (stalls.len != times.len || prods.len != waits.len || PyList_GET_SIZE(hists) != npairs) {
            PyErr_SetString(PyExc_ValueError, "count_pairs: lengths disagree");
            goto r4;
        }
        for (Py_ssize_t i = 0; i < npairs; i++) {
            int64_t w = wi[i], p = pi[i];
            PyObject *h = PyList_GET_ITEM(hists, i);
            if (w < 0 || w >= n || p < 0 || p >= n || !PyDict_Check(h)) {
                PyErr_SetString(PyExc_ValueError, "count_pairs: bad position or histogram");
                goto r4;
            }
            PyObject *key = PyLong_FromLongLong(tm[w] - tm[p] - st[p]);
            if (!key) goto r4;
            PyObject *old = PyDict_GetItemWithError(h, key);
            long long count = 0;
            if (old) {
                count = PyLong_AsLongLong(old);
                if (count == -1 && PyErr_Occurred()) {
                    Py_DECREF(key);
                    goto r4;
                }
            } else if (PyErr_Occurred()) {
                Py_DECREF(key);
                goto r4;
            }
            PyObject *val = PyLong_FromLongLong(count + 1);
            int rc = val ? PyDict_SetItem(h, key, val) : -1;
            Py_XDECREF(val);
            Py_DECREF(key);
            if (rc < 0) goto r4;
        }
        result = Py_NewRef(Py_None);
    }
r4:
    PyBuffer_Release(&prods);
r3:
    PyBuffer_Release(&waits);
r2:
    PyBuffer_Release(&stalls);
r1:
    PyBuffer_Release(&times);
    return result;
}

/* lst[k] += v, with Python integer semantics. */
static int add_item(PyObject *lst, Py_ssize_t k, PyObject *v) {
    PyObject *old = PyList_GET_ITEM(lst, k);
    PyObject *sum = PyNumber_Add(old, v);
    if (!sum) return 0;
    PyList_SET_ITEM(lst, k, sum); /* steals sum; the list's reference to old is ours now */
    Py_DECREF(old);
    return 1;
}

/* A column fold_lines reads: a list or tuple of Python integers, or an int64 buffer (the sums of
 * a sequence group the native pass filled, kept as int64 arrays). */
typedef struct {
    PyObject *seq; /* the list or tuple, or NULL for a buffer */
    Py_buffer buf;
    Py_ssize_t n;
} ICol;

static int icol_open(PyObject *o, ICol *c) {
    if (PyList_Check(o) || PyTuple_Check(o)) {
        c->seq = o;
        c->n = PySequence_Fast_GET_SIZE(o);
        return 1;
    }
    c->seq = NULL;
    if (!get_i64(o, &c->buf, 0)) return 0;
    c->n = c->buf.len / (Py_ssize_t)sizeof(int64_t);
    return 1;
}

static void icol_close(ICol *c) {
    if (!c->seq) PyBuffer_Release(&c->buf);
}

/* Item i as a new reference. */
static PyObject *icol_get(const ICol *c, Py_ssize_t i) {
    if (c->seq) return Py_NewRef(PySequence_Fast_ITEMS(c->seq)[i]);
    return PyLong_FromLongLong(((const int64_t *)c->buf.buf)[i]);
}

/* Item i is nonzero: 1, 0, or -1 with an exception. */
static int icol_true(const ICol *c, Py_ssize_t i) {
    if (c->seq) return PyObject_IsTrue(PySequence_Fast_ITEMS(c->seq)[i]);
    return ((const int64_t *)c->buf.buf)[i] != 0;
}

/* fold_lines(per_line, line_states, lines, waves, duration, stall, charge): the per-line part of
 * groups.flush_group, in the same order (so dicts get the same insertion order). Each column is a
 * list or tuple of integers or an int64 buffer. */
static PyObject *fold_per_line(PyObject *per_line, PyObject *line_states, const ICol *lines,
                               PyObject *waves, const ICol *duration, const ICol *stall,
                               const ICol *charge) {
    Py_ssize_t n = lines->n;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *line = icol_get(lines, j), *d = icol_get(duration, j), *st = icol_get(stall, j);
        PyObject *acc = NULL;
        int ok = line && d && st;
        if (ok) {
            PyObject *vals[3] = {waves, d, st};
            acc = PyDict_GetItemWithError(per_line, line);
            if (!acc) {
                PyObject *fresh = PyErr_Occurred() ? NULL : PyList_New(3);
                ok = fresh != NULL;
                if (ok) {
                    for (int k = 0; k < 3; k++) PyList_SET_ITEM(fresh, k, Py_NewRef(vals[k]));
                    ok = PyDict_SetItem(per_line, line, fresh) == 0;
                    Py_DECREF(fresh);
                }
            } else if (!PyList_Check(acc) || PyList_GET_SIZE(acc) != 3) {
                PyErr_SetString(PyExc_TypeError, "fold_lines: per-line entry is not a 3-list");
                ok = 0;
            } else {
                for (int k = 0; k < 3 && ok; k++) ok = add_item(acc, k, vals[k]);
            }
        }
        Py_XDECREF(line);
        Py_XDECREF(d);
        Py_XDECREF(st);
        if (!ok) return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        int any = 0;
        for (int k = 0; k < N_STATES && !any; k++) {
            int t = icol_true(charge, j * N_STATES + k);
            if (t < 0) return NULL;
            any = t;
        }
        if (!any) continue; /* a line's entry is created on its first charge */
        PyObject *line = icol_get(lines, j);
        if (!line) return NULL;
        PyObject *ls = PyDict_GetItemWithError(line_states, line);
        int ok = 1;
        if (!ls) {
            PyObject *fresh = PyErr_Occurred() ? NULL : PyList_New(N_STATES);
            ok = fresh != NULL;
            for (int k = 0; k < N_STATES && ok; k++) {
                PyObject *v = icol_get(charge, j * N_STATES + k);
                if (!v) ok = 0;
                else PyList_SET_ITEM(fresh, k, v);
            }
            if (ok) ok = PyDict_SetItem(line_states, line, fresh) == 0;
            Py_XDECREF(fresh);
        } else if (!PyList_Check(ls) || PyList_GET_SIZE(ls) != N_STATES) {
            PyErr_SetString(PyExc_TypeError, "fold_lines: line-state entry is not a 5-list");
            ok = 0;
        } else {
            for (int k = 0; k < N_STATES && ok; k++) {
                PyObject *v = icol_get(charge, j * N_STATES + k);
                ok = v && add_item(ls, k, v);
                Py_XDECREF(v);
            }
        }
        Py_DECREF(line);
        if (!ok) return NULL;
    }
    Py_RETURN_NONE;
}

/* An insertion-ordered map from up to three int64 to `nv` int64 values (zeros when added): the
 * per-key sums the flush of a sequence group adds up in C before touching Python dicts once per
 * key, in the order the keys were first met (the order the per-position loops insert them). */
typedef struct {
    int64_t *keys, *vals; /* 3 keys and nv values per entry */
    Py_ssize_t n, cap, nv;
    Py_ssize_t *slots; /* entry index + 1, 0 empty; a power of 2, at least twice n */
    Py_ssize_t n_slots;
} OMap;

static void omap_free(OMap *m) {
    PyMem_Free(m->keys);
    PyMem_Free(m->vals);
    PyMem_Free(m->slots);
}

static uint64_t omap_hash(int64_t a, int64_t b, int64_t c) {
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)b * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2);
    h ^= (uint64_t)c * 0x165667B19E3779F9ULL + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

static int omap_rehash(OMap *m, Py_ssize_t n_slots) {
    Py_ssize_t *slots = PyMem_Calloc((size_t)n_slots, sizeof *slots);
    if (!slots) return 0;
    for (Py_ssize_t i = 0; i < m->n; i++) {
        const int64_t *k = &m->keys[3 * i];
        size_t s = (size_t)omap_hash(k[0], k[1], k[2]) & (size_t)(n_slots - 1);
        while (slots[s]) s = (s + 1) & (size_t)(n_slots - 1);
        slots[s] = i + 1;
    }
    PyMem_Free(m->slots);
    m->slots = slots;
    m->n_slots = n_slots;
    return 1;
}

/* The entry of (a, b, c), added with zero values when new; -1 on memory error. */
static Py_ssize_t omap_get(OMap *m, int64_t a, int64_t b, int64_t c) {
    if (2 * (m->n + 1) > m->n_slots && !omap_rehash(m, m->n_slots ? 2 * m->n_slots : 64)) return -1;
    size_t mask = (size_t)(m->n_slots - 1), s = (size_t)omap_hash(a, b, c) & mask;
    for (; m->slots[s]; s = (s + 1) & mask) {
        Py_ssize_t i = m->slots[s] - 1;
        const int64_t *k = &m->keys[3 * i];
        if (k[0] == a && k[1] == b && k[2] == c) return i;
    }
    if (m->n == m->cap) {
        Py_ssize_t cap = m->cap ? 2 * m->cap : 32;
        int64_t *keys = PyMem_Realloc(m->keys, (size_t)cap * 3 * sizeof(int64_t));
        if (!keys) return -1;
        m->keys = keys;
        int64_t *vals = PyMem_Realloc(m->vals, (size_t)cap * (size_t)(m->nv ? m->nv : 1) * sizeof(int64_t));
        if (!vals) return -1;
        m->vals = vals;
        m->cap = cap;
    }
    Py_ssize_t i = m->n++;
    m->keys[3 * i] = a;
    m->keys[3 * i + 1] = b;
    m->keys[3 * i + 2] = c;
    for (Py_ssize_t k = 0; k < m->nv; k++) m->vals[i * m->nv + k] = 0;
    m->slots[s] = i + 1;
    return i;
}

/* *acc += v; 0 on int64 overflow (the caller then takes the Python-integer path). */
static int add_i64(int64_t *acc, int64_t v) {
    if ((v > 0 && *acc > INT64_MAX - v) || (v < 0 && *acc < INT64_MIN - v)) return 0;
    *acc += v;
    return 1;
}

/* *out = a * b for a >= 0, b >= 0; 0 on int64 overflow. */
static int mul_i64(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0 || (b && a > INT64_MAX / b)) return 0;
    *out = a * b;
    return 1;
}

/* d[key] = d.get(key, 0) + v for an int64 v (a new reference is made for it). */
static int dict_add_i64(PyObject *d, PyObject *key, int64_t v);

/* d[key] = d.get(key, 0) + v (a missing key takes v itself: 0 + an int is that int). */
static int dict_add(PyObject *d, PyObject *key, PyObject *v) {
    PyObject *old = PyDict_GetItemWithError(d, key);
    if (!old) {
        if (PyErr_Occurred()) return 0;
        return PyDict_SetItem(d, key, v) == 0;
    }
    PyObject *sum = PyNumber_Add(old, v);
    if (!sum) return 0;
    int rc = PyDict_SetItem(d, key, sum);
    Py_DECREF(sum);
    return rc == 0;
}

static int dict_add_i64(PyObject *d, PyObject *key, int64_t v) {
    PyObject *o = PyLong_FromLongLong(v);
    if (!o) return 0;
    int ok = dict_add(d, key, o);
    Py_DECREF(o);
    return ok;
}

/* Item i of an ICol as an index into a column of length n; -1 with an exception otherwise. */
static Py_ssize_t icol_index(const ICol *c, Py_ssize_t i, Py_ssize_t n) {
    Py_ssize_t v;
    if (c->seq) {
        v = PyLong_AsSsize_t(PySequence_Fast_ITEMS(c->seq)[i]);
        if (v == -1 && PyErr_Occurred()) return -1;
    } else {
        v = (Py_ssize_t)((const int64_t *)c->buf.buf)[i];
    }
    if (v < 0 || v >= n) {
        PyErr_SetString(PyExc_IndexError, "blame_waits: position outside the sequence");
        return -1;
    }
    return v;
}

/* One wait position's blame (the loop body of groups._flush_blame). 1, or 0 with an exception. */
static int blame_wait(const ICol *lines, Py_ssize_t w, PyObject *wobj, PyObject *stall,
                      PyObject *producers, PyObject *bw, PyObject *no_producer, PyObject *blame,
                      PyObject *wait_stall, PyObject *wait_hits, PyObject *dcyc, PyObject *dins) {
    PyObject *wline = icol_get(lines, w);
    if (!wline) return 0;
    int ok = dict_add(wait_stall, wline, stall) && dict_add(wait_hits, wline, bw);
    PyObject *prods = ok ? PyDict_GetItemWithError(producers, wobj) : NULL;
    if (ok && !prods && PyErr_Occurred()) ok = 0;
    if (ok && prods && !PyList_Check(prods)) {
        PyErr_SetString(PyExc_TypeError, "blame_waits: producers are not a list");
        ok = 0;
    }
    if (ok && (!prods || PyList_GET_SIZE(prods) == 0)) {
        PyObject *one = PyLong_FromLong(1);
        PyObject *key = one ? PyTuple_Pack(3, wline, no_producer, one) : NULL;
        ok = key && dict_add(blame, key, stall);
        Py_XDECREF(key);
        Py_XDECREF(one);
        Py_DECREF(wline);
        return ok;
    }
    Py_ssize_t k = ok ? PyList_GET_SIZE(prods) : 0;
    PyObject *kobj = ok ? PyLong_FromSsize_t(k) : NULL;
    if (!kobj) ok = 0;
    for (Py_ssize_t i = 0; i < k && ok; i++) {
        Py_ssize_t p = PyLong_AsSsize_t(PyList_GET_ITEM(prods, i));
        if (p == -1 && PyErr_Occurred()) { ok = 0; break; }
        if (p < 0 || p >= lines->n) {
            PyErr_SetString(PyExc_IndexError, "blame_waits: producer outside the sequence");
            ok = 0;
            break;
        }
        PyObject *pline = icol_get(lines, p);
        PyObject *key3 = pline ? PyTuple_Pack(3, wline, pline, kobj) : NULL;
        PyObject *dkey = key3 ? PyTuple_Pack(2, wline, pline) : NULL;
        ok = dkey && dict_add(blame, key3, stall);
        PyObject *hi = NULL;
        if (ok) {
            int has = PyDict_Contains(dcyc, dkey);
            if (has < 0) ok = 0;
            else if (!has) {
                PyObject *a = PyDict_New(), *b = PyDict_New();
                ok = a && b && PyDict_SetItem(dcyc, dkey, a) == 0 && PyDict_SetItem(dins, dkey, b) == 0;
                Py_XDECREF(a);
                Py_XDECREF(b);
            }
        }
        if (ok) {
            hi = PyDict_GetItemWithError(dins, dkey); /* borrowed */
            if (!hi) {
                if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, dkey);
                ok = 0;
            }
        }
        PyObject *d = ok ? PyLong_FromSsize_t(w - p - 1) : NULL;
        if (ok) ok = d && PyDict_Check(hi) && dict_add(hi, d, bw);
        if (ok == 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "blame_waits: bad histogram");
        Py_XDECREF(d);
        Py_XDECREF(dkey);
        Py_XDECREF(key3);
        Py_XDECREF(pline);
    }
    Py_XDECREF(kobj);
    Py_DECREF(wline);
    return ok;
}

/* One sequence group's columns as blame_waits_summed reads them. */
typedef struct {
    const int64_t *lines, *stalls;
    Py_ssize_t n_lines, n;
    const ICol *positions;
    PyObject *producers; /* wait position -> producer positions, or NULL: */
    const int64_t *counts, *pair_producers; /* per position its count of pairs, then theirs */
    Py_ssize_t n_pairs;
    int64_t bw;
} BlameGroup;

/* blame_waits for int64 lines and wait stalls of the groups `gs` in turn, summed per key first:
 * each dict is then updated once per key, in the order its keys were first met by the
 * per-position loops (wait lines repeat once per loop iteration, and the groups of one kernel
 * share them). 1 done, 0 a sum leaves int64 (nothing changed: the caller takes the per-position
 * loop), -1 error. */
static int blame_waits_summed(const BlameGroup *gs, Py_ssize_t ng, int64_t no_producer,
                              PyObject *blame, PyObject *wsd, PyObject *whd, PyObject *dcyc,
                              PyObject *dins) {
    OMap waits = {0}, keys3 = {0}, dkeys = {0}, dists = {0};
    waits.nv = 2;  /* stall, positions */
    keys3.nv = 1;  /* stall */
    dkeys.nv = 0;
    dists.nv = 1;  /* positions */
    PyObject **his = NULL; /* dins[dkey] per dkeys entry (borrowed) */
    int rc = -1;
    for (Py_ssize_t g = 0; g < ng; g++) {
    const int64_t *lines = gs[g].lines, *stalls = gs[g].stalls, bw = gs[g].bw;
    Py_ssize_t n_lines = gs[g].n_lines;
    PyObject *producers = gs[g].producers;
    Py_ssize_t pair = 0; /* the first pair of position i (counts/pair_producers) */
    for (Py_ssize_t i = 0; i < gs[g].n; i++) {
        Py_ssize_t w = icol_index(gs[g].positions, i, n_lines);
        if (w < 0) goto out;
        int64_t wline = lines[w], st = stalls[i];
        Py_ssize_t e = omap_get(&waits, wline, 0, 0);
        if (e < 0) goto nomem;
        if (!add_i64(&waits.vals[2 * e], st)) { rc = 0; goto out; }
        /* hits: `bw` per position (count * bw, the overflow found on the way) */
        if (!add_i64(&waits.vals[2 * e + 1], bw)) { rc = 0; goto out; }
        PyObject *prods = NULL;
        const int64_t *pp = NULL; /* the pairs' producers of this position (arrays) */
        Py_ssize_t k;
        if (producers) {
            PyObject *wobj = PyLong_FromSsize_t(w);
            if (!wobj) goto out;
            prods = PyDict_GetItemWithError(producers, wobj);
            Py_DECREF(wobj);
            if (!prods && PyErr_Occurred()) goto out;
            if (prods && !PyList_Check(prods)) {
                PyErr_SetString(PyExc_TypeError, "blame_waits: producers are not a list");
                goto out;
            }
            k = prods ? PyList_GET_SIZE(prods) : 0;
        } else {
            k = (Py_ssize_t)gs[g].counts[i];
            if (k < 0 || pair > gs[g].n_pairs - k) {
                PyErr_SetString(PyExc_ValueError, "blame_waits: counts and pairs disagree");
                goto out;
            }
            pp = &gs[g].pair_producers[pair];
            pair += k;
        }
        if (!k) {
            e = omap_get(&keys3, wline, no_producer, 1);
            if (e < 0) goto nomem;
            if (!add_i64(&keys3.vals[e], st)) { rc = 0; goto out; }
            continue;
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            Py_ssize_t p = pp ? (Py_ssize_t)pp[j] : PyLong_AsSsize_t(PyList_GET_ITEM(prods, j));
            if (p == -1 && PyErr_Occurred()) goto out;
            if (p < 0 || p >= n_lines) {
                PyErr_SetString(PyExc_IndexError, "blame_waits: producer outside the sequence");
                goto out;
            }
            int64_t pline = lines[p];
            e = omap_get(&keys3, wline, pline, (int64_t)k);
            if (e < 0) goto nomem;
            if (!add_i64(&keys3.vals[e], st)) { rc = 0; goto out; }
            Py_ssize_t dk = omap_get(&dkeys, wline, pline, 0);
            if (dk < 0) goto nomem;
            e = omap_get(&dists, dk, (int64_t)(w - p - 1), 0);
            if (e < 0) goto nomem;
            if (!add_i64(&dists.vals[e], bw)) { rc = 0; goto out; }
        }
    }
    }
    /* the sums fit: now the dicts, each in its first-seen key order */
    for (Py_ssize_t e = 0; e < waits.n; e++) {
        PyObject *wline = PyLong_FromLongLong(waits.keys[3 * e]);
        int ok = wline && dict_add_i64(wsd, wline, waits.vals[2 * e]) &&
                 dict_add_i64(whd, wline, waits.vals[2 * e + 1]);
        Py_XDECREF(wline);
        if (!ok) goto out;
    }
    for (Py_ssize_t e = 0; e < keys3.n; e++) {
        const int64_t *kk = &keys3.keys[3 * e];
        PyObject *key = Py_BuildValue("(LLL)", (long long)kk[0], (long long)kk[1], (long long)kk[2]);
        int ok = key && dict_add_i64(blame, key, keys3.vals[e]);
        Py_XDECREF(key);
        if (!ok) goto out;
    }
    his = PyMem_Calloc((size_t)(dkeys.n ? dkeys.n : 1), sizeof *his);
    if (!his) goto nomem;
    for (Py_ssize_t e = 0; e < dkeys.n; e++) {
        const int64_t *kk = &dkeys.keys[3 * e];
        PyObject *dkey = Py_BuildValue("(LL)", (long long)kk[0], (long long)kk[1]);
        if (!dkey) goto out;
        int has = PyDict_Contains(dcyc, dkey), ok = has >= 0;
        if (ok && !has) {
            PyObject *a = PyDict_New(), *b = PyDict_New();
            ok = a && b && PyDict_SetItem(dcyc, dkey, a) == 0 && PyDict_SetItem(dins, dkey, b) == 0;
            Py_XDECREF(a);
            Py_XDECREF(b);
        }
        if (ok) {
            his[e] = PyDict_GetItemWithError(dins, dkey);
            if (!his[e] && !PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, dkey);
            ok = his[e] != NULL;
            if (ok && !PyDict_Check(his[e])) {
                PyErr_SetString(PyExc_TypeError, "blame_waits: bad histogram");
                ok = 0;
            }
        }
        Py_DECREF(dkey);
        if (!ok) goto out;
    }
    for (Py_ssize_t e = 0; e < dists.n; e++) {
        const int64_t *kk = &dists.keys[3 * e];
        PyObject *d = PyLong_FromLongLong(kk[1]);
        int ok = d && dict_add_i64(his[kk[0]], d, dists.vals[e]);
        Py_XDECREF(d);
        if (!ok) goto out;
    }
    rc = 1;
    goto out;
nomem:
    PyErr_NoMemory();
out:
    PyMem_Free(his);
    omap_free(&waits);
    omap_free(&keys3);
    omap_free(&dkeys);
    omap_free(&dists);
    return rc;
}

/* blame_waits(lines, positions, wait_stall, producers, blame_waves, no_producer, blame, wait_stall_d,
 * wait_hits_d, dist_cycles, dist_instructions): the per-wait-position loop of groups._flush_blame
 * (its Python twin), the same dict operations in the same order. `lines` and `wait_stall`: lists,
 * tuples or int64 buffers; `positions` a list or tuple. */
static PyObject *blame_waits(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *olines, *positions, *ostall, *producers, *bw, *no_producer, *blame, *wsd, *whd, *dcyc, *dins;
    if (!PyArg_ParseTuple(args, "OOOO!OOO!O!O!O!O!", &olines, &positions, &ostall, &PyDict_Type,
                          &producers, &bw, &no_producer, &PyDict_Type, &blame, &PyDict_Type, &wsd,
                          &PyDict_Type, &whd, &PyDict_Type, &dcyc, &PyDict_Type, &dins))
        return NULL;
    ICol cols[3];
    PyObject *objs[3] = {olines, positions, ostall};
    int opened = 0;
    PyObject *out = NULL;
    for (; opened < 3; opened++)
        if (!icol_open(objs[opened], &cols[opened])) goto done;
    Py_ssize_t n = cols[1].n < cols[2].n ? cols[1].n : cols[2].n; /* zip() */
    if (!cols[0].seq && !cols[2].seq) {
        int ob = 0, onp = 0;
        long long b = PyLong_AsLongLongAndOverflow(bw, &ob);
        long long np = b == -1 && PyErr_Occurred() ? 0 : PyLong_AsLongLongAndOverflow(no_producer, &onp);
        if (PyErr_Occurred()) goto done;
        if (!ob && !onp && b >= 0) {
            BlameGroup g = {(const int64_t *)cols[0].buf.buf, (const int64_t *)cols[2].buf.buf,
                            cols[0].n, n, &cols[1], producers, NULL, NULL, 0, (int64_t)b};
            int rc = blame_waits_summed(&g, 1, (int64_t)np, blame, wsd, whd, dcyc, dins);
            if (rc < 0) goto done;
            if (rc == 1) {
                out = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t w = icol_index(&cols[1], i, cols[0].n);
        if (w < 0) goto done;
        PyObject *wobj = icol_get(&cols[1], i), *stall = wobj ? icol_get(&cols[2], i) : NULL;
        int ok = stall && blame_wait(&cols[0], w, wobj, stall, producers, bw, no_producer, blame,
                                     wsd, whd, dcyc, dins);
        Py_XDECREF(wobj);
        Py_XDECREF(stall);
        if (!ok) goto done;
    }
    out = Py_NewRef(Py_None);
done:
    while (opened > 0) icol_close(&cols[--opened]);
    return out;
}

/* blame_waits_all(groups, no_producer, blame, wait_stall_d, wait_hits_d, dist_cycles,
 * dist_instructions): blame_waits of each (lines, positions, wait_stall, producers, blame_waves)
 * of the list `groups` in turn, each dict key touched once for all of them; `producers` is the
 * dict or (counts, pair_producers), pair_index's int64 arrays of the same. True done; False
 * nothing changed, when lines or wait_stall is not an int64 buffer, a blame_waves or no_producer
 * is not an int64 (blame_waves >= 0) or a sum leaves int64: the caller then calls blame_waits
 * per group. */
static PyObject *blame_waits_all(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *items, *no_producer, *blame, *wsd, *whd, *dcyc, *dins;
    if (!PyArg_ParseTuple(args, "O!OO!O!O!O!O!", &PyList_Type, &items, &no_producer, &PyDict_Type,
                          &blame, &PyDict_Type, &wsd, &PyDict_Type, &whd, &PyDict_Type, &dcyc,
                          &PyDict_Type, &dins))
        return NULL;
    Py_ssize_t ng = PyList_GET_SIZE(items), opened = 0;
    ICol *cols = PyMem_Calloc((size_t)(3 * ng + 1), sizeof *cols);
    BlameGroup *gs = PyMem_Calloc((size_t)(ng + 1), sizeof *gs);
    Py_buffer *bufs = PyMem_Calloc((size_t)(2 * ng + 1), sizeof *bufs); /* counts, pair_producers */
    Py_ssize_t n_bufs = 0;
    PyObject *out = NULL;
    int onp = 0;
    long long np = PyLong_AsLongLongAndOverflow(no_producer, &onp);
    int plain = !onp;
    if (np == -1 && PyErr_Occurred()) goto done;
    if (!cols || !gs || !bufs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t g = 0; g < ng && plain; g++) {
        PyObject *it = PyList_GET_ITEM(items, g);
        PyObject *prod = PyTuple_Check(it) && PyTuple_GET_SIZE(it) == 5 ? PyTuple_GET_ITEM(it, 3) : NULL;
        if (!prod || !(PyDict_Check(prod) || (PyTuple_Check(prod) && PyTuple_GET_SIZE(prod) == 2))) {
            PyErr_SetString(PyExc_TypeError,
                            "blame_waits_all: groups are (lines, positions, wait_stall, producers dict, blame_waves)");
            goto done;
        }
        ICol *c = &cols[3 * g];
        for (int k = 0; k < 3; k++, opened++)
            if (!icol_open(PyTuple_GET_ITEM(it, k), &c[k])) goto done;
        int ob = 0;
        long long b = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(it, 4), &ob);
        if (b == -1 && PyErr_Occurred()) goto done;
        plain = !ob && b >= 0 && !c[0].seq && !c[2].seq;
        gs[g] = (BlameGroup){c[0].seq ? NULL : (const int64_t *)c[0].buf.buf,
                             c[2].seq ? NULL : (const int64_t *)c[2].buf.buf, c[0].n,
                             c[1].n < c[2].n ? c[1].n : c[2].n, &c[1], NULL, NULL, NULL, 0,
                             (int64_t)b};
        if (PyDict_Check(prod)) {
            gs[g].producers = prod;
            continue;
        }
        for (int k = 0; k < 2; k++, n_bufs++)
            if (!get_i64(PyTuple_GET_ITEM(prod, k), &bufs[n_bufs], 0)) goto done;
        gs[g].counts = bufs[n_bufs - 2].buf;
        gs[g].pair_producers = bufs[n_bufs - 1].buf;
        gs[g].n_pairs = bufs[n_bufs - 1].len / 8;
        if (bufs[n_bufs - 2].len / 8 < gs[g].n) {
            PyErr_SetString(PyExc_ValueError, "blame_waits_all: fewer counts than positions");
            goto done;
        }
    }
    if (plain) {
        int rc = blame_waits_summed(gs, ng, (int64_t)np, blame, wsd, whd, dcyc, dins);
        if (rc < 0) goto done;
        plain = rc == 1;
    }
    out = Py_NewRef(plain ? Py_True : Py_False);
done:
    while (opened > 0) {
        opened--;
        icol_close(&cols[opened]);
    }
    while (n_bufs > 0) PyBuffer_Release(&bufs[--n_bufs]);
    PyMem_Free(bufs);
    PyMem_Free(cols);
    PyMem_Free(gs);
    return out;
}

/* The int64 (pair, cycles, count) triples of a group's take (Fold.take_group) in a buffer; 0
 * with an exception when it does not hold whole triples. */
static int get_triples(PyObject *o, Py_buffer *b, Py_ssize_t *n) {
    if (!get_i64(o, b, 0)) return 0;
    *n = b->len / 24;
    if (b->len % 24) {
        PyBuffer_Release(b);
        PyErr_SetString(PyExc_ValueError, "entries are int64 (pair, cycles, count) triples");
        return 0;
    }
    return 1;
}

/* hists[pair][cycles] += count for entry e of triples `ev`; 0 with an exception. */
static int add_entry(PyObject *hists, const int64_t *ev, Py_ssize_t e) {
    int64_t pair = ev[3 * e];
    if (pair < 0 || pair >= PyList_GET_SIZE(hists) || !PyDict_Check(PyList_GET_ITEM(hists, pair))) {
        PyErr_SetString(PyExc_IndexError, "add_entries: no histogram for that pair");
        return 0;
    }
    PyObject *c = PyLong_FromLongLong(ev[3 * e + 1]);
    int ok = c && dict_add_i64(PyList_GET_ITEM(hists, pair), c, ev[3 * e + 2]);
    Py_XDECREF(c);
    return ok;
}

/* add_entries(hists, entries): hists[pair][cycles] += count for each int64 (pair, cycles, count)
 * triple of a group's take, in order (groups.add_entries, its twin). */
static PyObject *add_entries(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *hists, *entries;
    if (!PyArg_ParseTuple(args, "O!O", &PyList_Type, &hists, &entries)) return NULL;
    Py_buffer b;
    Py_ssize_t n;
    if (!get_triples(entries, &b, &n)) return NULL;
    const int64_t *ev = b.buf;
    int ok = 1;
    for (Py_ssize_t e = 0; e < n && ok; e++) ok = add_entry(hists, ev, e);
    PyBuffer_Release(&b);
    return ok ? Py_NewRef(Py_None) : NULL;
}

/* merge_hists(dist_cycles, pair_lines, pair_hists): for each pair's {cycles: count}, added into
 * dist_cycles[pair_lines[pair]] (the last loop of groups._flush_blame). */
static PyObject *merge_hists(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *dcyc, *pair_lines, *hists;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyDict_Type, &dcyc, &PyList_Type, &pair_lines,
                          &PyList_Type, &hists))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(hists);
    for (Py_ssize_t pair = 0; pair < n; pair++) {
        PyObject *hist = PyList_GET_ITEM(hists, pair);
        if (pair >= PyList_GET_SIZE(pair_lines)) {
            PyErr_SetString(PyExc_IndexError, "merge_hists: more histograms than pairs");
            return NULL;
        }
        PyObject *key = PyList_GET_ITEM(pair_lines, pair);
        PyObject *hc = PyDict_GetItemWithError(dcyc, key);
        if (!hc) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
            return NULL;
        }
        if (!PyDict_Check(hc) || !PyDict_Check(hist)) {
            PyErr_SetString(PyExc_TypeError, "merge_hists: histograms must be dicts");
            return NULL;
        }
        Py_ssize_t pos = 0;
        PyObject *c, *count;
        while (PyDict_Next(hist, &pos, &c, &count))
            if (!dict_add(hc, c, count)) return NULL;
    }
    Py_RETURN_NONE;
}

/* merge_entries_all(dist_cycles, groups): merge_hists of the histograms the int64 (pair, cycles,
 * count) triples `entries` (a group's takes, in order) add up to, without making them, for each
 * (lines, pair_waits, pair_producers, entries) of the list `groups` in turn (groups.merge_entries
 * of each, its twin; flush_group calls it with one group), with the key of pair i (lines[wait],
 * lines[producer]) and each (key, cycles) summed over all groups first, so that each histogram
 * entry is written once, in the order the per-group merges first write it. True done; False
 * nothing changed, when a count sum leaves int64 (the caller merges group by group). */
static PyObject *merge_entries_all(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *dcyc, *items;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &dcyc, &PyList_Type, &items)) return NULL;
    Py_ssize_t ng = PyList_GET_SIZE(items), n_bufs = 0;
    Py_buffer *bufs = PyMem_Calloc((size_t)(4 * ng + 1), sizeof *bufs);
    OMap sums = {0}, keys = {0}; /* (wline, pline, cycles) -> count; (wline, pline) */
    sums.nv = 2; /* count, its keys entry */
    keys.nv = 0;
    PyObject **hcs = NULL, *out = NULL;
    int fits = 1;
    if (!bufs) goto nomem;
    for (Py_ssize_t g = 0; g < ng && fits; g++) {
        PyObject *it = PyList_GET_ITEM(items, g);
        if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 4) {
            PyErr_SetString(PyExc_TypeError,
                            "merge_entries_all: groups are (lines, pair_waits, pair_producers, entries)");
            goto done;
        }
        for (int k = 0; k < 4; k++, n_bufs++)
            if (!get_i64(PyTuple_GET_ITEM(it, k), &bufs[n_bufs], 0)) goto done;
        const Py_buffer *b = &bufs[n_bufs - 4];
        const int64_t *lines = b[0].buf, *pw = b[1].buf, *pp = b[2].buf, *ev = b[3].buf;
        Py_ssize_t n = b[0].len / 8, np = b[1].len / 8, ne = b[3].len / 8 / 3;
        if (b[2].len != b[1].len || b[3].len % 24) {
            PyErr_SetString(PyExc_ValueError, "merge_entries_all: pairs or entries of odd lengths");
            goto done;
        }
        for (Py_ssize_t p = 0; p < np; p++)
            if (pw[p] < 0 || pw[p] >= n || pp[p] < 0 || pp[p] >= n) {
                PyErr_SetString(PyExc_IndexError, "merge_entries_all: a pair outside the sequence");
                goto done;
            }
        /* the group's entries pair by pair, each pair's in their order (a stable counting sort) */
        Py_ssize_t *start = PyMem_Calloc((size_t)np + 1, sizeof *start);
        Py_ssize_t *order = PyMem_Malloc((size_t)(ne ? ne : 1) * sizeof *order);
        int ok = start && order;
        if (!ok) PyErr_NoMemory();
        for (Py_ssize_t e = 0; e < ne && ok; e++) {
            if (ev[3 * e] < 0 || ev[3 * e] >= np) {
                PyErr_SetString(PyExc_IndexError, "merge_entries_all: an entry's pair has no lines");
                ok = 0;
            } else {
                start[ev[3 * e] + 1]++;
            }
        }
        if (ok) {
            for (Py_ssize_t p = 0; p < np; p++) start[p + 1] += start[p];
            for (Py_ssize_t e = 0; e < ne; e++) order[start[ev[3 * e]]++] = e;
        }
        for (Py_ssize_t i = 0; i < ne && ok && fits; i++) {
            const int64_t *t = &ev[3 * order[i]];
            int64_t wl = lines[pw[t[0]]], pl = lines[pp[t[0]]];
            Py_ssize_t k = omap_get(&keys, wl, pl, 0), e = k < 0 ? -1 : omap_get(&sums, wl, pl, t[1]);
            if (e < 0) {
                PyErr_NoMemory();
                ok = 0;
                break;
            }
            sums.vals[2 * e + 1] = k;
            fits = add_i64(&sums.vals[2 * e], t[2]);
        }
        PyMem_Free(start);
        PyMem_Free(order);
        if (!ok) goto done;
    }
    if (!fits) {
        out = Py_NewRef(Py_False);
        goto done;
    }
    /* every key's histogram first (a missing one fails before any write), then the sums */
    hcs = PyMem_Calloc((size_t)(keys.n ? keys.n : 1), sizeof *hcs);
    if (!hcs) goto nomem;
    for (Py_ssize_t k = 0; k < keys.n; k++) {
        PyObject *key = Py_BuildValue("(LL)", (long long)keys.keys[3 * k], (long long)keys.keys[3 * k + 1]);
        if (!key) goto done;
        hcs[k] = PyDict_GetItemWithError(dcyc, key); /* borrowed: dcyc holds it */
        if (!hcs[k] && !PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
        Py_DECREF(key);
        if (!hcs[k]) goto done;
        if (!PyDict_Check(hcs[k])) {
            PyErr_SetString(PyExc_TypeError, "merge_entries_all: histograms must be dicts");
            goto done;
        }
    }
    for (Py_ssize_t e = 0; e < sums.n; e++) {
        PyObject *c = PyLong_FromLongLong(sums.keys[3 * e + 2]);
        int ok = c && dict_add_i64(hcs[sums.vals[2 * e + 1]], c, sums.vals[2 * e]);
        Py_XDECREF(c);
        if (!ok) goto done;
    }
    out = Py_NewRef(Py_True);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    while (n_bufs > 0) PyBuffer_Release(&bufs[--n_bufs]);
    PyMem_Free(bufs);
    PyMem_Free(hcs);
    omap_free(&sums);
    omap_free(&keys);
    return out;
}

/* One sequence group's int64 columns as fold_per_line_summed reads them. */
typedef struct {
    const int64_t *lines, *dur, *stall, *charge;
    Py_ssize_t n;
    int64_t waves;
} LineGroup;

/* fold_per_line for int64 columns of the groups `gs` in turn, summed per line first (a sequence
 * runs each line of a loop body many times, and the groups of one kernel share their lines):
 * per_line gets each line once, in first-position order over the groups, with the counts and
 * sums of its positions; line_states each line once, in the order of its first position with a
 * nonzero window. The same dicts as fold_per_line of each group in turn makes. 1 done, 0 the sums
 * leave int64 (nothing changed: the caller takes fold_per_line), -1 error. */
static int fold_per_line_summed(PyObject *per_line, PyObject *line_states, const LineGroup *gs,
                                Py_ssize_t ng) {
    /* values per line: positions, duration, stall, charged (0/1), N_STATES charges */
    enum { V_N, V_D, V_S, V_CH, V_C0, NV = V_C0 + N_STATES };
    OMap m = {0};
    m.nv = NV;
    Py_ssize_t total = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (Py_ssize_t g = 0; g < ng; g++) {
        total += gs[g].n;
        for (Py_ssize_t j = 0; j < gs[g].n; j++) {
            lo = gs[g].lines[j] < lo ? gs[g].lines[j] : lo;
            hi = gs[g].lines[j] > hi ? gs[g].lines[j] : hi;
        }
    }
    Py_ssize_t *order = PyMem_Malloc((size_t)(total ? total : 1) * sizeof *order), n_order = 0;
    /* line - lo -> its entry + 1 (0: not met yet), when the lines span a short range (code line
     * numbers): an index in place of a hash lookup per position */
    Py_ssize_t *dense = NULL;
    if (total && (uint64_t)hi - (uint64_t)lo < (uint64_t)(4 * total + 4096))
        dense = PyMem_Calloc((size_t)((uint64_t)hi - (uint64_t)lo + 1), sizeof *dense);
    int rc = -1;
    if (!order) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t g = 0; g < ng; g++) {
    const int64_t *lines = gs[g].lines, *dur = gs[g].dur, *stall = gs[g].stall, *charge = gs[g].charge;
    for (Py_ssize_t j = 0; j < gs[g].n; j++) {
        Py_ssize_t *at = dense ? &dense[(uint64_t)lines[j] - (uint64_t)lo] : NULL;
        Py_ssize_t e = at && *at ? *at - 1 : omap_get(&m, lines[j], 0, 0);
        if (e < 0) {
            PyErr_NoMemory();
            goto out;
        }
        if (at) *at = e + 1;
        int64_t *v = &m.vals[e * NV];
        /* hits: `waves` per position (count * waves, the overflow found on the way) */
        if (!add_i64(&v[V_N], gs[g].waves)) { rc = 0; goto out; }
        if (!add_i64(&v[V_D], dur[j]) || !add_i64(&v[V_S], stall[j])) { rc = 0; goto out; }
        const int64_t *win = &charge[j * N_STATES];
        int any = 0;
        for (int k = 0; k < N_STATES; k++) {
            any |= win[k] != 0;
            if (!add_i64(&v[V_C0 + k], win[k])) { rc = 0; goto out; }
        }
        if (any && !v[V_CH]) {
            v[V_CH] = 1;
            order[n_order++] = e;
        }
    }
    }
    for (Py_ssize_t e = 0; e < m.n; e++) {
        const int64_t *v = &m.vals[e * NV];
        PyObject *line = PyLong_FromLongLong(m.keys[3 * e]);
        if (!line) goto out;
        PyObject *acc = PyDict_GetItemWithError(per_line, line);
        int ok = 1;
        if (!acc) {
            PyObject *fresh = PyErr_Occurred() ? NULL : PyList_New(3);
            ok = fresh != NULL;
            for (int k = 0; k < 3 && ok; k++) {
                PyObject *x = PyLong_FromLongLong(v[k]);
                if (!x) ok = 0;
                else PyList_SET_ITEM(fresh, k, x);
            }
            if (ok) ok = PyDict_SetItem(per_line, line, fresh) == 0;
            Py_XDECREF(fresh);
        } else if (!PyList_Check(acc) || PyList_GET_SIZE(acc) != 3) {
            PyErr_SetString(PyExc_TypeError, "fold_lines: per-line entry is not a 3-list");
            ok = 0;
        } else {
            for (int k = 0; k < 3 && ok; k++) {
                PyObject *x = PyLong_FromLongLong(v[k]);
                ok = x && add_item(acc, k, x);
                Py_XDECREF(x);
            }
        }
        Py_DECREF(line);
        if (!ok) goto out;
    }
    for (Py_ssize_t o = 0; o < n_order; o++) {
        Py_ssize_t e = order[o];
        const int64_t *v = &m.vals[e * NV + V_C0];
        PyObject *line = PyLong_FromLongLong(m.keys[3 * e]);
        if (!line) goto out;
        PyObject *ls = PyDict_GetItemWithError(line_states, line);
        int ok = 1;
        if (!ls) {
            PyObject *fresh = PyErr_Occurred() ? NULL : PyList_New(N_STATES);
            ok = fresh != NULL;
            for (int k = 0; k < N_STATES && ok; k++) {
                PyObject *x = PyLong_FromLongLong(v[k]);
                if (!x) ok = 0;
                else PyList_SET_ITEM(fresh, k, x);
            }
            if (ok) ok = PyDict_SetItem(line_states, line, fresh) == 0;
            Py_XDECREF(fresh);
        } else if (!PyList_Check(ls) || PyList_GET_SIZE(ls) != N_STATES) {
            PyErr_SetString(PyExc_TypeError, "fold_lines: line-state entry is not a 5-list");
            ok = 0;
        } else {
            for (int k = 0; k < N_STATES && ok; k++) {
                PyObject *x = PyLong_FromLongLong(v[k]);
                ok = x && add_item(ls, k, x);
                Py_XDECREF(x);
            }
        }
        Py_DECREF(line);
        if (!ok) goto out;
    }
    rc = 1;
out:
    PyMem_Free(order);
    PyMem_Free(dense);
    omap_free(&m);
    return rc;
}

/* charge_sums(charge): [sum(charge[k::N_STATES]) for k in range(N_STATES)] of an int64 buffer;
 * None when a sum leaves int64 (the caller sums in Python). */
static PyObject *charge_sums(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer b;
    if (!get_i64(arg, &b, 0)) return NULL;
    const int64_t *v = (const int64_t *)b.buf;
    Py_ssize_t n = b.len / (Py_ssize_t)sizeof(int64_t);
    int64_t sums[N_STATES] = {0};
    int fits = 1;
    for (Py_ssize_t i = 0; i < n && fits; i++) fits = add_i64(&sums[i % N_STATES], v[i]);
    PyBuffer_Release(&b);
    if (!fits) Py_RETURN_NONE;
    PyObject *out = PyList_New(N_STATES);
    for (int k = 0; out && k < N_STATES; k++) {
        PyObject *x = PyLong_FromLongLong(sums[k]);
        if (!x) Py_CLEAR(out);
        else PyList_SET_ITEM(out, k, x);
    }
    return out;
}

/* entries_key(lines, entries): edges_key(orjson.dumps(expected edges)) of a replay's entries
 * [(wait position, [producer positions])], the expected edges being [[lines[w], [[lines[p], 0],
 * ...]], ...] (groups.SequenceGroup.expected_edges): the same bytes, without the JSON between;
 * None where edges_key gives None (a line at or beyond 2**40 in magnitude). */
static int key_value(Col *out, int64_t v, int *fits) {
    if (v >= VALUE_LIMIT || v <= -VALUE_LIMIT) *fits = 0;
    return col_push(out, v);
}

static PyObject *entries_key(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *olines, *entries;
    if (!PyArg_ParseTuple(args, "OO!", &olines, &PyList_Type, &entries)) return NULL;
    Py_buffer lb;
    if (!get_i64(olines, &lb, 0)) return NULL;
    const int64_t *lines = (const int64_t *)lb.buf;
    Py_ssize_t n_lines = lb.len / (Py_ssize_t)sizeof(int64_t);
    Col e = {NULL, 0, 0};
    int fits = 1, ok = 1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries) && ok; i++) {
        PyObject *entry = PyList_GET_ITEM(entries, i);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2 || !PyList_Check(PyTuple_GET_ITEM(entry, 1))) {
            PyErr_SetString(PyExc_TypeError, "entries_key: entries are (position, [positions])");
            ok = 0;
            break;
        }
        PyObject *prods = PyTuple_GET_ITEM(entry, 1);
        Py_ssize_t w = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 0));
        ok = !(w == -1 && PyErr_Occurred());
        if (ok && (w < 0 || w >= n_lines)) {
            PyErr_SetString(PyExc_IndexError, "entries_key: position outside the sequence");
            ok = 0;
        }
        ok = ok && col_push(&e, OPEN_MARK) && key_value(&e, lines[w], &fits) && col_push(&e, OPEN_MARK);
        for (Py_ssize_t j = 0; ok && j < PyList_GET_SIZE(prods); j++) {
            Py_ssize_t p = PyLong_AsSsize_t(PyList_GET_ITEM(prods, j));
            if (p == -1 && PyErr_Occurred()) { ok = 0; break; }
            if (p < 0 || p >= n_lines) {
                PyErr_SetString(PyExc_IndexError, "entries_key: position outside the sequence");
                ok = 0;
                break;
            }
            ok = col_push(&e, OPEN_MARK) && key_value(&e, lines[p], &fits) && col_push(&e, 0) &&
                 col_push(&e, CLOSE_MARK);
        }
        ok = ok && col_push(&e, CLOSE_MARK) && col_push(&e, CLOSE_MARK);
        if (!ok && !PyErr_Occurred()) PyErr_NoMemory();
    }
    PyBuffer_Release(&lb);
    PyObject *out = !ok ? NULL : fits ? col_bytes(&e) : Py_NewRef(Py_None);
    col_free(&e);
    return out;
}

/* pair_lists(lines, positions, entries) -> (producers, pair_waits, pair_producers, pair_lines):
 * groups._pairs in C. producers: wait position -> its producer positions (entries of one wait
 * joined, in entry order); per wait position in `positions` order, one pair per producer. */
static PyObject *pair_lists(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *olines, *positions, *entries;
    if (!PyArg_ParseTuple(args, "OO!O!", &olines, &PyList_Type, &positions, &PyList_Type, &entries))
        return NULL;
    Py_buffer lb;
    if (!get_i64(olines, &lb, 0)) return NULL;
    const int64_t *lines = (const int64_t *)lb.buf;
    Py_ssize_t n_lines = lb.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *producers = PyDict_New(), *waits = PyList_New(0), *prods_out = PyList_New(0),
             *plines = PyList_New(0), *out = NULL;
    if (!producers || !waits || !prods_out || !plines) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries); i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 2 || !PyList_Check(PyTuple_GET_ITEM(e, 1))) {
            PyErr_SetString(PyExc_TypeError, "pair_lists: entries are (position, [positions])");
            goto done;
        }
        PyObject *w = PyTuple_GET_ITEM(e, 0), *lst = PyDict_GetItemWithError(producers, w);
        if (!lst) {
            if (PyErr_Occurred()) goto done;
            lst = PyList_New(0);
            if (!lst) goto done;
            int rc = PyDict_SetItem(producers, w, lst);
            Py_DECREF(lst); /* the dict holds it */
            if (rc < 0) goto done;
        }
        PyObject *ext = PyTuple_GET_ITEM(e, 1);
        if (PyList_SetSlice(lst, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, ext) < 0) goto done; /* extend */
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(positions); i++) {
        PyObject *w = PyList_GET_ITEM(positions, i), *lst = PyDict_GetItemWithError(producers, w);
        if (!lst) {
            if (PyErr_Occurred()) goto done;
            continue;
        }
        Py_ssize_t wi = PyLong_AsSsize_t(w);
        if (wi == -1 && PyErr_Occurred()) goto done;
        if (wi < 0 || wi >= n_lines) {
            PyErr_SetString(PyExc_IndexError, "pair_lists: position outside the sequence");
            goto done;
        }
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(lst); j++) {
            PyObject *p = PyList_GET_ITEM(lst, j);
            Py_ssize_t pi = PyLong_AsSsize_t(p);
            if (pi == -1 && PyErr_Occurred()) goto done;
            if (pi < 0 || pi >= n_lines) {
                PyErr_SetString(PyExc_IndexError, "pair_lists: position outside the sequence");
                goto done;
            }
            PyObject *key = Py_BuildValue("(LL)", (long long)lines[wi], (long long)lines[pi]);
            int ok = key && PyList_Append(waits, w) == 0 && PyList_Append(prods_out, p) == 0 &&
                     PyList_Append(plines, key) == 0;
            Py_XDECREF(key);
            if (!ok) goto done;
        }
    }
    out = PyTuple_Pack(4, producers, waits, prods_out, plines);
done:
    Py_XDECREF(producers);
    Py_XDECREF(waits);
    Py_XDECREF(prods_out);
    Py_XDECREF(plines);
    PyBuffer_Release(&lb);
    return out;
}

/* An index in [0, n) of a Python integer; -1 (no exception) when it is not one. */
static Py_ssize_t index_in(PyObject *o, Py_ssize_t n) {
    if (!PyLong_Check(o)) return -1;
    Py_ssize_t v = PyLong_AsSsize_t(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return v >= 0 && v < n ? v : -1;
}

/* pair_index(lines, positions, entries) -> (pair_waits, pair_producers, counts) as int64 bytes,
 * or None: pair_lists' pairs without its Python objects. Per wait position in `positions` order,
 * its producers (the entries of that position joined, in entry order) as pairs, and counts[i] the
 * number of pairs of positions[i]. None when a position or producer is not an index into
 * `lines` (pair_lists, its twin groups._pairs, decides those). */
static PyObject *pair_index(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *olines, *positions, *entries;
    if (!PyArg_ParseTuple(args, "OO!O!", &olines, &PyList_Type, &positions, &PyList_Type, &entries))
        return NULL;
    Py_buffer lb;
    if (!get_i64(olines, &lb, 0)) return NULL;
    Py_ssize_t n = lb.len / (Py_ssize_t)sizeof(int64_t), ne = PyList_GET_SIZE(entries),
               np = PyList_GET_SIZE(positions), total = 0, n_pairs = 0;
    /* per position w: its producers' count, then (prefix sums) where they start in `flat` */
    Py_ssize_t *cnt = PyMem_Calloc((size_t)n + 1, sizeof *cnt), *at = NULL, *flat = NULL;
    PyObject *out = NULL, *bw = NULL, *bp = NULL, *bc = NULL;
    int fits = 1;
    if (!cnt) goto nomem;
    for (Py_ssize_t i = 0; i < ne && fits; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 2 || !PyList_Check(PyTuple_GET_ITEM(e, 1))) {
            fits = 0;
            break;
        }
        Py_ssize_t w = index_in(PyTuple_GET_ITEM(e, 0), n);
        fits = w >= 0;
        if (fits) {
            cnt[w] += PyList_GET_SIZE(PyTuple_GET_ITEM(e, 1));
            total += PyList_GET_SIZE(PyTuple_GET_ITEM(e, 1));
        }
    }
    if (!fits) goto none;
    at = PyMem_Malloc((size_t)n * sizeof *at + 1);
    flat = PyMem_Malloc((size_t)(total ? total : 1) * sizeof *flat);
    if (!at || !flat) goto nomem;
    for (Py_ssize_t w = 0, run = 0; w < n; w++) {
        at[w] = run;
        run += cnt[w];
    }
    for (Py_ssize_t i = 0; i < ne && fits; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i), *lst = PyTuple_GET_ITEM(e, 1);
        Py_ssize_t w = index_in(PyTuple_GET_ITEM(e, 0), n);
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(lst) && fits; j++) {
            Py_ssize_t p = index_in(PyList_GET_ITEM(lst, j), n);
            fits = p >= 0;
            flat[at[w]++] = p;
        }
    }
    if (!fits) goto none;
    for (Py_ssize_t w = 0; w < n; w++) at[w] -= cnt[w]; /* back to where w's producers start */
    for (Py_ssize_t i = 0; i < np && fits; i++) {
        Py_ssize_t w = index_in(PyList_GET_ITEM(positions, i), n);
        fits = w >= 0;
        if (fits) n_pairs += cnt[w];
    }
    if (!fits) goto none;
    bw = PyBytes_FromStringAndSize(NULL, n_pairs * 8);
    bp = PyBytes_FromStringAndSize(NULL, n_pairs * 8);
    bc = PyBytes_FromStringAndSize(NULL, np * 8);
    if (!bw || !bp || !bc) goto done;
    {
        int64_t *ow = (int64_t *)PyBytes_AS_STRING(bw), *op = (int64_t *)PyBytes_AS_STRING(bp),
                *oc = (int64_t *)PyBytes_AS_STRING(bc);
        Py_ssize_t k = 0;
        for (Py_ssize_t i = 0; i < np; i++) {
            Py_ssize_t w = index_in(PyList_GET_ITEM(positions, i), n);
            oc[i] = (int64_t)cnt[w];
            for (Py_ssize_t j = 0; j < cnt[w]; j++, k++) {
                ow[k] = (int64_t)w;
                op[k] = (int64_t)flat[at[w] + j];
            }
        }
    }
    out = PyTuple_Pack(3, bw, bp, bc);
    goto done;
none:
    out = Py_NewRef(Py_None);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    Py_XDECREF(bw);
    Py_XDECREF(bp);
    Py_XDECREF(bc);
    PyMem_Free(cnt);
    PyMem_Free(at);
    PyMem_Free(flat);
    PyBuffer_Release(&lb);
    return out;
}

/* line_terms(hits, by_line): issue_share._terms in C, its list comprehension's objects in its
 * order: for each (line, count) of `hits` whose line has weights (m, v, b) in `by_line`, the
 * tuple (line, count * m, count * v, count * b), None for a None weight (Python products, so the
 * same floats); None when a weight is not a 3-tuple (the comprehension decides). */
static PyObject *line_terms(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *hits, *by_line;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &hits, &PyDict_Type, &by_line)) return NULL;
    PyObject *out = PyList_New(0), *line, *count;
    Py_ssize_t pos = 0;
    if (!out) return NULL;
    while (PyDict_Next(hits, &pos, &line, &count)) {
        PyObject *t = PyDict_GetItemWithError(by_line, line);
        if (!t) {
            if (PyErr_Occurred()) goto fail;
            continue;
        }
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        PyObject *row = PyTuple_New(4);
        if (!row) goto fail;
        PyTuple_SET_ITEM(row, 0, Py_NewRef(line));
        for (int k = 0; k < 3; k++) {
            PyObject *wk = PyTuple_GET_ITEM(t, k);
            PyObject *v = wk == Py_None ? Py_NewRef(Py_None) : PyNumber_Multiply(count, wk);
            if (!v) {
                Py_DECREF(row);
                goto fail;
            }
            PyTuple_SET_ITEM(row, k + 1, v);
        }
        int rc = PyList_Append(out, row);
        Py_DECREF(row);
        if (rc < 0) goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* count_lines(col): {value: times} of an int64 column, values in first-seen order (what
 * collections.Counter(col) holds). */
static PyObject *count_lines(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer b;
    if (!get_i64(arg, &b, 0)) return NULL;
    const int64_t *v = (const int64_t *)b.buf;
    Py_ssize_t n = b.len / (Py_ssize_t)sizeof(int64_t);
    OMap m = {0};
    m.nv = 1;
    PyObject *out = NULL;
    /* value - lo -> its entry + 1, when the values span a short range (line numbers) */
    int64_t lo = n ? v[0] : 0, hi = lo;
    for (Py_ssize_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    Py_ssize_t *dense = n && (uint64_t)hi - (uint64_t)lo < (uint64_t)(4 * n + 4096)
                            ? PyMem_Calloc((size_t)((uint64_t)hi - (uint64_t)lo + 1), sizeof *dense)
                            : NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t *at = dense ? &dense[(uint64_t)v[i] - (uint64_t)lo] : NULL;
        Py_ssize_t e = at && *at ? *at - 1 : omap_get(&m, v[i], 0, 0);
        if (e < 0) {
            PyErr_NoMemory();
            goto done;
        }
        if (at) *at = e + 1;
        m.vals[e]++;
    }
    out = PyDict_New();
    for (Py_ssize_t e = 0; out && e < m.n; e++) {
        PyObject *k = PyLong_FromLongLong(m.keys[3 * e]), *c = PyLong_FromLongLong(m.vals[e]);
        if (!k || !c || PyDict_SetItem(out, k, c) < 0) Py_CLEAR(out);
        Py_XDECREF(k);
        Py_XDECREF(c);
    }
done:
    PyMem_Free(dense);
    omap_free(&m);
    PyBuffer_Release(&b);
    return out;
}

static int cmp_i64_asc(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* barrier_rows(lines, barrier_lines): [(line, [positions])] of the lines in `barrier_lines` (an
 * int64 buffer), each line once in the order of its first position (groups._barrier_rows). */
static PyObject *barrier_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *olines, *obar;
    if (!PyArg_ParseTuple(args, "OO", &olines, &obar)) return NULL;
    Py_buffer lb, bb;
    if (!get_i64(olines, &lb, 0)) return NULL;
    if (!get_i64(obar, &bb, 0)) {
        PyBuffer_Release(&lb);
        return NULL;
    }
    const int64_t *lines = (const int64_t *)lb.buf;
    Py_ssize_t n = lb.len / (Py_ssize_t)sizeof(int64_t), k = bb.len / (Py_ssize_t)sizeof(int64_t);
    int64_t *bar = PyMem_Malloc((size_t)(k ? k : 1) * sizeof *bar);
    PyObject **rows = PyMem_Calloc((size_t)(k ? k : 1), sizeof *rows); /* per sorted value */
    PyObject *out = PyList_New(0);
    int ok = bar && rows && out;
    if (!bar || !rows) PyErr_NoMemory();
    if (ok) {
        memcpy(bar, bb.buf, (size_t)k * sizeof *bar);
        qsort(bar, (size_t)k, sizeof *bar, cmp_i64_asc);
    }
    for (Py_ssize_t j = 0; ok && j < n; j++) {
        int64_t v = lines[j];
        Py_ssize_t lo = 0, hi = k;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (bar[mid] < v) lo = mid + 1;
            else hi = mid;
        }
        if (lo == k || bar[lo] != v) continue;
        PyObject *pos = PyLong_FromSsize_t(j);
        if (!pos) { ok = 0; break; }
        if (!rows[lo]) {
            PyObject *lst = PyList_New(0), *line = PyLong_FromLongLong(v);
            PyObject *pair = lst && line ? PyTuple_Pack(2, line, lst) : NULL;
            ok = pair && PyList_Append(out, pair) == 0;
            rows[lo] = lst; /* the list lives in out's pair */
            Py_XDECREF(line);
            Py_XDECREF(pair);
            Py_XDECREF(lst);
        }
        ok = ok && PyList_Append(rows[lo], pos) == 0;
        Py_DECREF(pos);
    }
    PyMem_Free(bar);
    PyMem_Free(rows);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&bb);
    if (!ok) Py_CLEAR(out);
    return out;
}

/* backedges(lines, cats, jump): [((branch line, target line), times)] of the backward taken
 * branches (a row after a `jump` row whose line is lower), each pair once in first-seen order
 * (groups._backedges). */
static PyObject *backedges(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *olines, *ocats;
    long long jump;
    if (!PyArg_ParseTuple(args, "OOL", &olines, &ocats, &jump)) return NULL;
    Py_buffer lb, cb;
    if (!get_i64(olines, &lb, 0)) return NULL;
    if (!get_i64(ocats, &cb, 0)) {
        PyBuffer_Release(&lb);
        return NULL;
    }
    const int64_t *lines = (const int64_t *)lb.buf, *cats = (const int64_t *)cb.buf;
    Py_ssize_t nl = lb.len / (Py_ssize_t)sizeof(int64_t), nc = cb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t n = nl < nc ? nl : nc;
    OMap m = {0};
    m.nv = 1;
    PyObject *out = NULL;
    for (Py_ssize_t j = 0; j + 1 < n; j++) {
        if (cats[j] != jump || lines[j + 1] >= lines[j]) continue;
        Py_ssize_t e = omap_get(&m, lines[j], lines[j + 1], 0);
        if (e < 0) {
            PyErr_NoMemory();
            goto done;
        }
        m.vals[e]++;
    }
    out = PyList_New(m.n);
    for (Py_ssize_t e = 0; out && e < m.n; e++) {
        PyObject *item = Py_BuildValue("((LL)L)", (long long)m.keys[3 * e], (long long)m.keys[3 * e + 1],
                                       (long long)m.vals[e]);
        if (!item) Py_CLEAR(out);
        else PyList_SET_ITEM(out, e, item);
    }
done:
    omap_free(&m);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&cb);
    return out;
}

static PyObject *fold_lines(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *per_line, *line_states, *olines, *waves, *odur, *ostall, *ocharge;
    if (!PyArg_ParseTuple(args, "O!O!OOOOO", &PyDict_Type, &per_line, &PyDict_Type, &line_states,
                          &olines, &waves, &odur, &ostall, &ocharge))
        return NULL;
    ICol cols[4];
    PyObject *objs[4] = {olines, odur, ostall, ocharge};
    int opened = 0;
    PyObject *out = NULL;
    for (; opened < 4; opened++)
        if (!icol_open(objs[opened], &cols[opened])) goto done;
    if (cols[1].n != cols[0].n || cols[2].n != cols[0].n || cols[3].n != cols[0].n * N_STATES) {
        PyErr_SetString(PyExc_ValueError, "fold_lines: lengths disagree");
        goto done;
    }
    if (!cols[0].seq && !cols[1].seq && !cols[2].seq && !cols[3].seq) {
        int overflow = 0;
        long long w = PyLong_AsLongLongAndOverflow(waves, &overflow);
        if (w == -1 && PyErr_Occurred()) goto done;
        if (!overflow && w >= 0) {
            LineGroup g = {(const int64_t *)cols[0].buf.buf, (const int64_t *)cols[1].buf.buf,
                           (const int64_t *)cols[2].buf.buf, (const int64_t *)cols[3].buf.buf,
                           cols[0].n, (int64_t)w};
            int rc = fold_per_line_summed(per_line, line_states, &g, 1);
            if (rc < 0) goto done;
            if (rc == 1) {
                out = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
    out = fold_per_line(per_line, line_states, &cols[0], waves, &cols[1], &cols[2], &cols[3]);
done:
    while (opened > 0) icol_close(&cols[--opened]);
    return out;
}

/* fold_lines_all(per_line, line_states, groups): fold_lines of each (lines, waves, duration, stall,
 * charge) of the list `groups` in turn, with each line's dict entries touched once for all of them
 * (the groups of a kernel share its lines). True done; False nothing changed, when a column is not
 * an int64 buffer, `waves` not a non-negative int64 or a sum leaves int64: the caller then folds
 * the groups one by one (fold_lines, whose per-position loop takes any integers). */
static PyObject *fold_lines_all(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *per_line, *line_states, *items;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyDict_Type, &per_line, &PyDict_Type, &line_states,
                          &PyList_Type, &items))
        return NULL;
    Py_ssize_t ng = PyList_GET_SIZE(items), opened = 0;
    ICol *cols = PyMem_Calloc((size_t)(4 * ng + 1), sizeof *cols);
    LineGroup *gs = PyMem_Calloc((size_t)(ng + 1), sizeof *gs);
    PyObject *out = NULL;
    int plain = 1;
    if (!cols || !gs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t g = 0; g < ng && plain; g++) {
        PyObject *it = PyList_GET_ITEM(items, g);
        if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 5) {
            PyErr_SetString(PyExc_TypeError, "fold_lines_all: groups are (lines, waves, duration, stall, charge)");
            goto done;
        }
        PyObject *objs[4] = {PyTuple_GET_ITEM(it, 0), PyTuple_GET_ITEM(it, 2), PyTuple_GET_ITEM(it, 3),
                             PyTuple_GET_ITEM(it, 4)};
        ICol *c = &cols[4 * g];
        for (int k = 0; k < 4; k++, opened++)
            if (!icol_open(objs[k], &c[k])) goto done;
        if (c[1].n != c[0].n || c[2].n != c[0].n || c[3].n != c[0].n * N_STATES) {
            PyErr_SetString(PyExc_ValueError, "fold_lines: lengths disagree");
            goto done;
        }
        int overflow = 0;
        long long w = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(it, 1), &overflow);
        if (w == -1 && PyErr_Occurred()) goto done;
        plain = !overflow && w >= 0 && !c[0].seq && !c[1].seq && !c[2].seq && !c[3].seq;
        gs[g] = (LineGroup){(const int64_t *)c[0].buf.buf, (const int64_t *)c[1].buf.buf,
                            (const int64_t *)c[2].buf.buf, (const int64_t *)c[3].buf.buf, c[0].n,
                            (int64_t)w};
    }
    if (plain) {
        int rc = fold_per_line_summed(per_line, line_states, gs, ng);
        if (rc < 0) goto done;
        plain = rc == 1;
    }
    out = Py_NewRef(plain ? Py_True : Py_False);
done:
    while (opened > 0) {
        opened--;
        icol_close(&cols[opened]);
    }
    PyMem_Free(cols);
    PyMem_Free(gs);
    return out;
}

/* gather_add(acc, col, positions): acc[i] += col[positions[i]] over int64 buffers. */
static PyObject *gather_add(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *oacc, *ocol, *opos;
    if (!PyArg_ParseTuple(args, "OOO", &oacc, &ocol, &opos)) return NULL;
    Py_buffer acc, col, pos;
    PyObject *result = NULL;
    if (!get_i64(oacc, &acc, 1)) return NULL;
    if (!get_i64(ocol, &col, 0)) goto g1;
    if (!get_i64(opos, &pos, 0)) goto g2;
    {
        Py_ssize_t n = col.len / 8, m = pos.len / 8;
        int64_t *a = acc.buf;
        const int64_t *c = col.buf, *p = pos.buf;
        if (acc.len != pos.len) {
            PyErr_SetString(PyExc_ValueError, "gather_add: lengths disagree");
            goto g3;
        }
        for (Py_ssize_t i = 0; i < m; i++)
            if (p[i] < 0 || p[i] >= n) {
                PyErr_SetString(PyExc_IndexError, "gather_add: position out of range");
                goto g3;
            }
        for (Py_ssize_t i = 0; i < m; i++) a[i] += c[p[i]];
        result = Py_NewRef(Py_None);
    }
g3:
    PyBuffer_Release(&pos);
g2:
    PyBuffer_Release(&col);
g1:
    PyBuffer_Release(&acc);
    return result;
}

/* arrivals(times, stalls, positions) -> bytes: int64 [t, t + stall, ...] at the positions
 * (barrier arrival and release of each barrier instance). */
static PyObject *arrivals(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *otimes, *ostalls, *opos;
    if (!PyArg_ParseTuple(args, "OOO", &otimes, &ostalls, &opos)) return NULL;
    Py_buffer times, stalls, pos;
    PyObject *result = NULL;
    if (!get_i64(otimes, &times, 0)) return NULL;
    if (!get_i64(ostalls, &stalls, 0)) goto a1;
    if (!get_i64(opos, &pos, 0)) goto a2;
    {
        Py_ssize_t n = times.len / 8, m = pos.len / 8;
        const int64_t *t = times.buf, *st = stalls.buf, *p = pos.buf;
        if (stalls.len != times.len) {
            PyErr_SetString(PyExc_ValueError, "arrivals: lengths disagree");
            goto a3;
        }
        result = PyBytes_FromStringAndSize(NULL, 2 * m * (Py_ssize_t)sizeof(int64_t));
        if (!result) goto a3;
        int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
        for (Py_ssize_t i = 0; i < m; i++) {
            if (p[i] < 0 || p[i] >= n) {
                Py_CLEAR(result);
                PyErr_SetString(PyExc_IndexError, "arrivals: position out of range");
                goto a3;
            }
            out[2 * i] = t[p[i]];
            out[2 * i + 1] = t[p[i]] + st[p[i]];
        }
    }
a3:
    PyBuffer_Release(&pos);
a2:
    PyBuffer_Release(&stalls);
a1:
    PyBuffer_Release(&times);
    return result;
}


/* ---------------------------------------------------------------------------------------------
 * Fold: the whole per-wave pass in one call (hotspot/att/engine/groups.py `NativeFold` drives it).
 *
 * fold.wave(data, se) scans a wave file and, when its executed sequence is a registered group and
 * its decoder edges equal that group's reconstruction (or it has none), adds everything the wave
 * contributes in C: the group's stall/duration columns, timeline charges, wait stalls, the
 * issue-to-wait histograms (an insertion-ordered hash table per group), the barrier arrival and
 * release times (per (se, cu, line), insertion-ordered), the issue sums per (scope, SIMD) when
 * the group has an issue shape (fold.wave(data, se, simd)), and the pass totals. It returns None.
 * Any other wave (unreadable by the scanner, a new sequence, other edges, values no decoder
 * writes) is returned to Python as (scanned tuple or None, group index or -1) for the Python
 * path, which keeps every error message and rare case in one place. Accumulators are int64: every
 * per-wave value is below 2**41 in magnitude, and `take_*` hands them to Python integers before
 * `spill` waves have added up (the call returns (None, -2) to ask for it).
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    int64_t cycles, count;
    Py_ssize_t pair;
} PairEnt;

typedef struct {
    uint64_t hash;
    Py_ssize_t n;              /* positions (executed records) */
    int64_t *lines, *cats;     /* the sequence, to confirm a hash match */
    int64_t *expected;         /* expected edges, canonical encoding */
    Py_ssize_t n_expected;
    int64_t ooo;
    int64_t *wait_pos, *pair_w, *pair_p, *bar_line, *bar_pos;
    int64_t *pair_last; /* per pair: its last counted entry + 1 (0: none since the last take) */
    char *raw_edges; /* the waitcnt text of a wave whose edges were the expected ones, and their */
    Py_ssize_t n_raw, raw_entries; /* length and entries: a wave with the same text has them too */
    Py_ssize_t n_wait, n_pairs, n_bar, *bar_start; /* barrier line k: bar_pos[bar_start[k]..[k+1]) */
    int64_t *stall, *duration, *charge, *wait;
    int64_t waves, blame_waves;
    /* issue shares (hotspot/att/issue_share.py `Shape`), when registered: the kernel's sums
     * (mfma cycles, valu cycles, vmem bytes) and per loop entered its scope, the positions of the
     * header's first and the branch's last execution, and its sums */
    int has_issue;
    double issue_kernel[3];
    Py_ssize_t n_iloops;
    int64_t *il_scope, *il_first, *il_last;
    double *il_sums;
    PairEnt *ents;
    Py_ssize_t n_ents, cap_ents, *slots, n_slots; /* slots: ent index + 1, 0 = empty; power of 2 */
} Group;

typedef struct {
    int64_t se, cu, line;
    Col v;
} BarBuf;

/* One (scope, SIMD)'s issue sums (issue_share.IssueAccumulator `sums` and `spans`): the doubles
 * are running sums, added in wave order from the value Python seeded them with, so they equal
 * Python's float additions; waves and spans are handed over and cleared at each take. */
typedef struct {
    int64_t scope, se, cu, simd;
    double sums[3];
    int64_t waves;
    Col spans; /* [begin, end, ...] */
} ISlot;

typedef struct {
    PyObject_HEAD
    Group **groups;
    Py_ssize_t n_groups, cap_groups;
    BarBuf *bars;
    Py_ssize_t n_bars, cap_bars, *bar_slots, n_bar_slots;
    ISlot *islots; /* issue sums per (scope, se, cu, simd), insertion-ordered */
    Py_ssize_t n_islots, cap_islots, *islot_slots, n_islot_slots;
    int64_t *wave_time; /* per scope: Σ max(0, span) since the last take, -1 when no wave added */
    Py_ssize_t n_scopes;
    int64_t issue_waves; /* waves whose issue sums C added since the last take */
    int64_t waves, instructions, cycles, ooo, waves_edges, edge_entries, waves_static;
    int64_t pending, spill;
    uint64_t hash_mask; /* all ones; tests narrow it to force sequence-hash collisions */
    /* ranges of the last scanned wave: time, category, stall, duration, line, state, cycles */
    int64_t rmin[7], rmax[7];
    int rhas[7];
    Wave scratch; /* the buffers the next wave is scanned into */
    char *buf; /* Fold.files: the file being folded, read into this (kept for the next one) */
    size_t buf_cap;
    int busy; /* a Fold.files call is running (it releases the GIL around its reads) */
#ifdef FOLD_DIRS
    char *dir; /* Fold.files: the folder of the last path read (through its last '/'), NULL none */
    size_t dir_len;
    int dir_fd; /* it opened with O_PATH; -1 when it did not (its files are opened by whole path) */
#endif
    int again_ok; /* the scratch columns hold a wave handed back by the last call (Fold.again) */
} Fold;

static void group_free(Group *g) {
    if (!g) return;
    PyMem_Free(g->lines); PyMem_Free(g->cats); PyMem_Free(g->expected); PyMem_Free(g->wait_pos);
    PyMem_Free(g->pair_w); PyMem_Free(g->pair_p); PyMem_Free(g->bar_line); PyMem_Free(g->bar_pos);
    PyMem_Free(g->bar_start); PyMem_Free(g->stall); PyMem_Free(g->duration); PyMem_Free(g->charge);
    PyMem_Free(g->wait); PyMem_Free(g->ents); PyMem_Free(g->slots); PyMem_Free(g->pair_last);
    PyMem_Free(g->raw_edges);
    PyMem_Free(g->il_scope); PyMem_Free(g->il_first); PyMem_Free(g->il_last); PyMem_Free(g->il_sums);
    PyMem_Free(g);
}

static void fold_clear_bars(Fold *f) {
    for (Py_ssize_t i = 0; i < f->n_bars; i++) col_free(&f->bars[i].v);
    f->n_bars = 0;
    if (f->bar_slots) memset(f->bar_slots, 0, (size_t)f->n_bar_slots * sizeof(Py_ssize_t));
}

#ifdef FOLD_DIRS
static void fold_drop_dir(Fold *f) {
    if (!f->dir) return;
    if (f->dir_fd >= 0) close(f->dir_fd);
    free(f->dir);
    f->dir = NULL;
}
#endif

static void Fold_dealloc(Fold *f) {
#ifdef FOLD_DIRS
    fold_drop_dir(f);
#endif
    wave_free(&f->scratch);
    free(f->buf);
    for (Py_ssize_t i = 0; i < f->n_groups; i++) group_free(f->groups[i]);
    PyMem_Free(f->groups);
    fold_clear_bars(f);
    PyMem_Free(f->bars);
    PyMem_Free(f->bar_slots);
    for (Py_ssize_t i = 0; i < f->n_islots; i++) col_free(&f->islots[i].spans);
    PyMem_Free(f->islots);
    PyMem_Free(f->islot_slots);
    PyMem_Free(f->wave_time);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyObject *Fold_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    (void)kw;
    long long spill;
    unsigned long long mask = ~0ULL;
    if (!PyArg_ParseTuple(args, "L|K", &spill, &mask)) return NULL;
    if (spill < 1 || spill > (1LL << 21)) {
        PyErr_SetString(PyExc_ValueError, "Fold: spill must be in 1..2**21 waves");
        return NULL;
    }
    Fold *f = (Fold *)type->tp_alloc(type, 0);
    if (f) {
        f->spill = spill;
        f->hash_mask = mask;
    }
    return (PyObject *)f;
}

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* An int64 copy of a buffer argument (NULL with an exception on error; *n its length). */
static int64_t *copy_i64(PyObject *obj, Py_ssize_t *n) {
    Py_buffer b;
    if (!get_i64(obj, &b, 0)) return NULL;
    *n = b.len / 8;
    int64_t *out = PyMem_Malloc(b.len ? (size_t)b.len : 8);
    if (out) memcpy(out, b.buf, (size_t)b.len);
    else PyErr_NoMemory();
    PyBuffer_Release(&b);
    return out;
}

static int64_t *zeros(Py_ssize_t n) {
    int64_t *v = PyMem_Calloc(n ? (size_t)n : 1, sizeof(int64_t));
    if (!v) PyErr_NoMemory();
    return v;
}

/* The per-scope wave time array covers scopes 0..scope. 0 on memory error (exception set). */
static int scopes_reserve(Fold *f, int64_t scope) {
    if (scope < f->n_scopes) return 1;
    if (scope < 0 || scope >= ((int64_t)1 << 20)) {
        PyErr_SetString(PyExc_ValueError, "issue scope out of range");
        return 0;
    }
    Py_ssize_t n = (Py_ssize_t)scope + 1;
    int64_t *grown = PyMem_Realloc(f->wave_time, (size_t)n * sizeof(int64_t));
    if (!grown) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t i = f->n_scopes; i < n; i++) grown[i] = -1;
    f->wave_time = grown;
    f->n_scopes = n;
    return 1;
}

/* A group's issue shape from (mfma, valu, vmem, [(scope, first, last, mfma, valu, vmem), ...]);
 * 0 with an exception when it is not that or a position is outside the sequence. */
static int group_issue(Fold *f, Group *g, PyObject *shape) {
    PyObject *oloops;
    if (!PyArg_ParseTuple(shape, "dddO!", &g->issue_kernel[0], &g->issue_kernel[1],
                          &g->issue_kernel[2], &PyList_Type, &oloops))
        return 0;
    Py_ssize_t m = PyList_GET_SIZE(oloops);
    if (!(g->il_scope = zeros(m)) || !(g->il_first = zeros(m)) || !(g->il_last = zeros(m)) ||
        !(g->il_sums = PyMem_Calloc(m ? (size_t)m * 3 : 1, sizeof(double)))) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        long long scope, first, last;
        double *v = &g->il_sums[3 * k];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(oloops, k), "LLLddd", &scope, &first, &last, &v[0],
                              &v[1], &v[2]))
            return 0;
        if (first < 0 || first >= g->n || last < 0 || last >= g->n || scope < 1) {
            PyErr_SetString(PyExc_ValueError, "add_group: issue loop out of range");
            return 0;
        }
        if (!scopes_reserve(f, scope)) return 0;
        g->il_scope[k] = scope;
        g->il_first[k] = first;
        g->il_last[k] = last;
    }
    if (!scopes_reserve(f, 0)) return 0;
    g->n_iloops = m;
    g->has_issue = 1;
    return 1;
}

/* add_group(hash, lines, cats, expected_key, ooo, wait_positions, pair_waits, pair_producers,
 *           barrier_rows[, issue_shape]) -> index.  barrier_rows: [(line, int64 positions), ...];
 *           issue_shape: see group_issue (None or absent: the group adds no issue sums). */
static PyObject *Fold_add_group(Fold *f, PyObject *args) {
    unsigned long long hash;
    long long ooo;
    PyObject *olines, *ocats, *oexp, *owait, *opw, *opp, *orows, *oissue = Py_None;
    if (!PyArg_ParseTuple(args, "KOOOLOOOO!|O", &hash, &olines, &ocats, &oexp, &ooo, &owait, &opw,
                          &opp, &PyList_Type, &orows, &oissue))
        return NULL;
    Group *g = PyMem_Calloc(1, sizeof(Group));
    if (!g) return PyErr_NoMemory();
    Py_ssize_t n_cats, n_pp;
    g->hash = hash;
    g->ooo = ooo;
    if (!(g->lines = copy_i64(olines, &g->n)) || !(g->cats = copy_i64(ocats, &n_cats)) ||
        !(g->expected = copy_i64(oexp, &g->n_expected)) ||
        !(g->wait_pos = copy_i64(owait, &g->n_wait)) || !(g->pair_w = copy_i64(opw, &g->n_pairs)) ||
        !(g->pair_p = copy_i64(opp, &n_pp)))
        goto fail;
    if (n_cats != g->n || n_pp != g->n_pairs || g->n == 0) {
        PyErr_SetString(PyExc_ValueError, "add_group: column lengths disagree");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < g->n_wait; i++)
        if (g->wait_pos[i] < 0 || g->wait_pos[i] >= g->n) goto badpos;
    for (Py_ssize_t i = 0; i < g->n_pairs; i++)
        if (g->pair_w[i] < 0 || g->pair_w[i] >= g->n || g->pair_p[i] < 0 || g->pair_p[i] >= g->n)
            goto badpos;
    g->n_bar = PyList_GET_SIZE(orows);
    Py_ssize_t total = 0;
    if (!(g->bar_line = zeros(g->n_bar)) || !(g->bar_start = PyMem_Calloc((size_t)g->n_bar + 1,
                                                                          sizeof(Py_ssize_t))))
        goto nomem;
    for (Py_ssize_t k = 0; k < g->n_bar; k++) {
        PyObject *row = PyList_GET_ITEM(orows, k);
        long long line;
        PyObject *opos;
        if (!PyArg_ParseTuple(row, "LO", &line, &opos)) goto fail;
        Py_ssize_t m;
        int64_t *pos = copy_i64(opos, &m);
        if (!pos) goto fail;
        int64_t *grown = PyMem_Realloc(g->bar_pos, (size_t)(total + m + 1) * sizeof(int64_t));
        if (!grown) {
            PyMem_Free(pos);
            goto nomem;
        }
        g->bar_pos = grown;
        for (Py_ssize_t i = 0; i < m; i++) {
            if (pos[i] < 0 || pos[i] >= g->n) {
                PyMem_Free(pos);
                goto badpos;
            }
            g->bar_pos[total + i] = pos[i];
        }
        PyMem_Free(pos);
        g->bar_line[k] = line;
        g->bar_start[k] = total;
        total += m;
        g->bar_start[k + 1] = total;
    }
    if (!(g->stall = zeros(g->n)) || !(g->duration = zeros(g->n)) ||
        !(g->charge = zeros(g->n * N_STATES)) || !(g->wait = zeros(g->n_wait)) ||
        !(g->pair_last = zeros(g->n_pairs)))
        goto nomem;
    if (oissue != Py_None && !group_issue(f, g, oissue)) goto fail;
    if (f->n_groups == f->cap_groups) {
        Py_ssize_t cap = f->cap_groups ? 2 * f->cap_groups : 16;
        Group **grown = PyMem_Realloc(f->groups, (size_t)cap * sizeof(Group *));
        if (!grown) goto nomem;
        f->groups = grown;
        f->cap_groups = cap;
    }
    f->groups[f->n_groups] = g;
    return PyLong_FromSsize_t(f->n_groups++);
badpos:
    PyErr_SetString(PyExc_ValueError, "add_group: position out of range");
    goto fail;
nomem:
    PyErr_NoMemory();
fail:
    group_free(g);
    return NULL;
}

/* count[(pair, cycles)] += 1 in the group's insertion-ordered table. A pair's cycles mostly repeat
 * from wave to wave: its last entry is tried before the table. */
static int pair_count(Group *g, Py_ssize_t pair, int64_t cycles) {
    int64_t last = g->pair_last[pair];
    if (last && g->ents[last - 1].cycles == cycles) {
        g->ents[last - 1].count++;
        return 1;
    }
    if (2 * (g->n_ents + 1) > g->n_slots) {
        Py_ssize_t ns = g->n_slots ? 2 * g->n_slots : 256;
        Py_ssize_t *slots = PyMem_Calloc((size_t)ns, sizeof(Py_ssize_t));
        if (!slots) return 0;
        for (Py_ssize_t e = 0; e < g->n_ents; e++) {
            uint64_t h = mix64((uint64_t)g->ents[e].cycles * 0x9E3779B97F4A7C15ULL ^ (uint64_t)g->ents[e].pair);
            Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(ns - 1));
            while (slots[i]) i = (i + 1) & (ns - 1);
            slots[i] = e + 1;
        }
        PyMem_Free(g->slots);
        g->slots = slots;
        g->n_slots = ns;
    }
    uint64_t h = mix64((uint64_t)cycles * 0x9E3779B97F4A7C15ULL ^ (uint64_t)pair);
    Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(g->n_slots - 1));
    while (g->slots[i]) {
        PairEnt *e = &g->ents[g->slots[i] - 1];
        if (e->pair == pair && e->cycles == cycles) {
            e->count++;
            g->pair_last[pair] = g->slots[i];
            return 1;
        }
        i = (i + 1) & (g->n_slots - 1);
    }
    if (g->n_ents == g->cap_ents) {
        Py_ssize_t cap = g->cap_ents ? 2 * g->cap_ents : 128;
        PairEnt *grown = PyMem_Realloc(g->ents, (size_t)cap * sizeof(PairEnt));
        if (!grown) return 0;
        g->ents = grown;
        g->cap_ents = cap;
    }
    g->ents[g->n_ents] = (PairEnt){cycles, 1, pair};
    g->slots[i] = ++g->n_ents;
    g->pair_last[pair] = g->n_ents;
    return 1;
}

/* The barrier buffer of (se, cu, line), created on first use (insertion-ordered). */
static Col *bar_buf(Fold *f, int64_t se, int64_t cu, int64_t line) {
    if (2 * (f->n_bars + 1) > f->n_bar_slots) {
        Py_ssize_t ns = f->n_bar_slots ? 2 * f->n_bar_slots : 64;
        Py_ssize_t *slots = PyMem_Calloc((size_t)ns, sizeof(Py_ssize_t));
        if (!slots) return NULL;
        for (Py_ssize_t e = 0; e < f->n_bars; e++) {
            BarBuf *b = &f->bars[e];
            uint64_t h = mix64(((uint64_t)b->se * 1000003ULL + (uint64_t)b->cu) * 1000003ULL + (uint64_t)b->line);
            Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(ns - 1));
            while (slots[i]) i = (i + 1) & (ns - 1);
            slots[i] = e + 1;
        }
        PyMem_Free(f->bar_slots);
        f->bar_slots = slots;
        f->n_bar_slots = ns;
    }
    uint64_t h = mix64(((uint64_t)se * 1000003ULL + (uint64_t)cu) * 1000003ULL + (uint64_t)line);
    Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(f->n_bar_slots - 1));
    while (f->bar_slots[i]) {
        BarBuf *b = &f->bars[f->bar_slots[i] - 1];
        if (b->se == se && b->cu == cu && b->line == line) return &b->v;
        i = (i + 1) & (f->n_bar_slots - 1);
    }
    if (f->n_bars == f->cap_bars) {
        Py_ssize_t cap = f->cap_bars ? 2 * f->cap_bars : 64;
        BarBuf *grown = PyMem_Realloc(f->bars, (size_t)cap * sizeof(BarBuf));
        if (!grown) return NULL;
        f->bars = grown;
        f->cap_bars = cap;
    }
    f->bars[f->n_bars] = (BarBuf){se, cu, line, {NULL, 0, 0}};
    f->bar_slots[i] = ++f->n_bars;
    return &f->bars[f->n_bars - 1].v;
}

/* The issue slot of (scope, se, cu, simd), created with zero sums on first use. */
static ISlot *islot(Fold *f, int64_t scope, int64_t se, int64_t cu, int64_t simd) {
    if (2 * (f->n_islots + 1) > f->n_islot_slots) {
        Py_ssize_t ns = f->n_islot_slots ? 2 * f->n_islot_slots : 64;
        Py_ssize_t *slots = PyMem_Calloc((size_t)ns, sizeof(Py_ssize_t));
        if (!slots) return NULL;
        for (Py_ssize_t e = 0; e < f->n_islots; e++) {
            ISlot *b = &f->islots[e];
            uint64_t h = mix64((((uint64_t)b->scope * 1000003ULL + (uint64_t)b->se) * 1000003ULL +
                                (uint64_t)b->cu) * 1000003ULL + (uint64_t)b->simd);
            Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(ns - 1));
            while (slots[i]) i = (i + 1) & (ns - 1);
            slots[i] = e + 1;
        }
        PyMem_Free(f->islot_slots);
        f->islot_slots = slots;
        f->n_islot_slots = ns;
    }
    uint64_t h = mix64((((uint64_t)scope * 1000003ULL + (uint64_t)se) * 1000003ULL + (uint64_t)cu) *
                       1000003ULL + (uint64_t)simd);
    Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(f->n_islot_slots - 1));
    while (f->islot_slots[i]) {
        ISlot *b = &f->islots[f->islot_slots[i] - 1];
        if (b->scope == scope && b->se == se && b->cu == cu && b->simd == simd) return b;
        i = (i + 1) & (f->n_islot_slots - 1);
    }
    if (f->n_islots == f->cap_islots) {
        Py_ssize_t cap = f->cap_islots ? 2 * f->cap_islots : 64;
        ISlot *grown = PyMem_Realloc(f->islots, (size_t)cap * sizeof(ISlot));
        if (!grown) return NULL;
        f->islots = grown;
        f->cap_islots = cap;
    }
    f->islots[f->n_islots] = (ISlot){scope, se, cu, simd, {0.0, 0.0, 0.0}, 0, {NULL, 0, 0}};
    f->islot_slots[i] = ++f->n_islots;
    return &f->islots[f->n_islots - 1];
}

/* One wave's sums in one scope (IssueAccumulator._add): 0 on memory error. */
static int issue_add_to(Fold *f, int64_t scope, int64_t se, int64_t cu, int64_t simd, int64_t begin,
                        int64_t end, const double *sums) {
    ISlot *b = islot(f, scope, se, cu, simd);
    if (!b || !col_push(&b->spans, begin) || !col_push(&b->spans, end)) return 0;
    for (int k = 0; k < 3; k++) b->sums[k] += sums[k];
    b->waves++;
    if (f->wave_time[scope] < 0) f->wave_time[scope] = 0;
    f->wave_time[scope] += end > begin ? end - begin : 0;
    return 1;
}

/* Minimum and maximum of a column, in four interleaved lanes (independent compare chains). */
static void col_range_of(const int64_t *v, Py_ssize_t n, int64_t *lo, int64_t *hi, int *has) {
    *has = n > 0;
    if (!n) return;
    int64_t a[4] = {v[0], v[0], v[0], v[0]}, b[4] = {v[0], v[0], v[0], v[0]};
    Py_ssize_t i = 1;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) {
            int64_t x = v[i + j];
            a[j] = x < a[j] ? x : a[j];
            b[j] = x > b[j] ? x : b[j];
        }
    for (; i < n; i++) {
        a[0] = v[i] < a[0] ? v[i] : a[0];
        b[0] = v[i] > b[0] ? v[i] : b[0];
    }
    for (int j = 1; j < 4; j++) {
        a[0] = a[j] < a[0] ? a[j] : a[0];
        b[0] = b[j] > b[0] ? b[j] : b[0];
    }
    *lo = a[0];
    *hi = b[0];
}

/* Add a matched wave into group g and the fold's totals. 0 on memory error. */
static int fold_into(Fold *f, Group *g, const Wave *w, int64_t se, int64_t simd, Py_ssize_t n_edges) {
    const int64_t *tm = w->cols[0].v, *st = w->cols[2].v, *du = w->cols[3].v;
    Py_ssize_t n = g->n;
    int64_t cu = (w->have_cu && !w->cu_null) ? w->cu : -1;
    /* barriers and issue spans first: the steps that allocate */
    for (Py_ssize_t k = 0; k < g->n_bar; k++) {
        Col *b = bar_buf(f, se, cu, g->bar_line[k]);
        if (!b) return 0;
        for (Py_ssize_t i = g->bar_start[k]; i < g->bar_start[k + 1]; i++) {
            int64_t p = g->bar_pos[i];
            if (!col_push(b, tm[p]) || !col_push(b, tm[p] + st[p])) return 0;
        }
    }
    if (g->has_issue) { /* IssueAccumulator.add_wave: the kernel, then each loop entered */
        if (!issue_add_to(f, 0, se, cu, simd, w->begin, w->end, g->issue_kernel)) return 0;
        for (Py_ssize_t k = 0; k < g->n_iloops; k++) {
            int64_t last = g->il_last[k];
            if (!issue_add_to(f, g->il_scope[k], se, cu, simd, tm[g->il_first[k]], tm[last] + du[last],
                              &g->il_sums[3 * k]))
                return 0;
        }
        f->issue_waves++;
    }
    for (Py_ssize_t i = 0; i < g->n_pairs; i++) {
        int64_t wp = g->pair_w[i], pp = g->pair_p[i];
        if (!pair_count(g, i, tm[wp] - tm[pp] - st[pp])) return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        g->stall[i] += st[i];
        g->duration[i] += du[i];
    }
    charge_into(g->charge, tm, du, n, w->states.v, w->cycles.v, w->states.n, w->begin);
    for (Py_ssize_t i = 0; i < g->n_wait; i++) g->wait[i] += st[g->wait_pos[i]];
    g->waves++;
    g->blame_waves++;
    f->waves++;
    f->instructions += n;
    f->cycles += w->end - w->begin;
    f->ooo += g->ooo;
    if (n_edges) {
        f->waves_edges++;
        f->edge_entries += n_edges;
    } else {
        f->waves_static++;
    }
    f->pending++;
    return 1;
}

/* Fold the scanned wave `w` into its registered group when it has one and its edges are the
 * group's: 1 folded, 0 not (no group, other edges, values no decoder writes), 2 its waitcnt is
 * not nested integer arrays after all, -1 error. *gi_out: the group found (-1 none), *h_out the
 * sequence hash. */
static int fold_known(Fold *f, Wave *w, long long se, long long simd, Py_ssize_t *gi_out,
                      uint64_t *h_out) {
    /* values no decoder writes (the Python path checks and reports them): a negative instruction
     * value (the parser admits no negative timeline value), begin after end, a state outside the
     * enum */
    int plain = w->begin <= w->end && w->ins_or >= 0;
    for (Py_ssize_t i = 0; i < w->states.n && plain; i++) plain = w->states.v[i] < N_STATES;
    uint64_t h = sequence_hash(w) & f->hash_mask;
    Py_ssize_t gi = -1;
    Py_ssize_t n = w->cols[0].n;
    for (Py_ssize_t i = 0; i < f->n_groups; i++) {
        Group *g = f->groups[i];
        if (g && g->hash == h && g->n == n && !memcmp(g->lines, w->cols[4].v, (size_t)n * 8) &&
            !memcmp(g->cats, w->cols[1].v, (size_t)n * 8)) {
            gi = i;
            break;
        }
    }
    *gi_out = gi;
    *h_out = h;
    if (gi < 0 || !plain) return 0;
    Group *g = f->groups[gi];
    Py_ssize_t n_raw = w->edges_lazy ? w->edges_end - w->edges_at : -1, n_edges = 0;
    int match = g->raw_edges && n_raw == g->n_raw && !memcmp(w->edges_at, g->raw_edges, (size_t)n_raw);
    if (match) { /* the text of edges known to be the expected ones */
        n_edges = g->raw_entries;
    } else {
        int e = edges_settle(w);
        if (e < 0) return -1;
        if (e == 0) return 2;
        match = w->edges.n == 0 || (w->edges.n == g->n_expected &&
                                    !memcmp(w->edges.v, g->expected, (size_t)g->n_expected * 8));
        n_edges = count_entries(&w->edges);
        if (match && n_edges && n_raw > 0 && !g->raw_edges) {
            g->raw_edges = PyMem_Malloc((size_t)n_raw);
            if (!g->raw_edges) {
                PyErr_NoMemory();
                return -1;
            }
            memcpy(g->raw_edges, w->edges_at, (size_t)n_raw);
            g->n_raw = n_raw;
            g->raw_entries = n_edges;
        }
    }
    if (!match) return 0;
    if (!fold_into(f, g, w, se, simd, n_edges)) {
        PyErr_NoMemory();
        return -1;
    }
    return 1;
}

/* Scan and fold the wave text p[0..n) (p[n] == NUL): what Fold.wave returns for it. `keep`: the
 * caller wants the wave's columns even when C folds it (diff's per-wave sample): a folded wave is
 * then answered (columns, -3), or (columns, -4) when the sums are due, so that its file is
 * scanned once. */
static PyObject *fold_text(Fold *f, const char *p, Py_ssize_t len, long long se, long long simd,
                           int keep) {
    Wave w = f->scratch; /* the last wave's buffers */
    memset(&f->scratch, 0, sizeof f->scratch);
    f->again_ok = 0;
    int handed = 0;
    int rc = scan_into(p, len, &w, 1);
    PyObject *out = NULL;
    if (rc < 0) goto done;
    if (rc == 0) {
        out = Py_BuildValue("(On)", Py_None, (Py_ssize_t)-1);
        goto done;
    }
    Py_ssize_t gi;
    uint64_t h;
    int k = fold_known(f, &w, se, simd, &gi, &h);
    if (k < 0) goto done;
    if (k == 2) {
        out = Py_BuildValue("(On)", Py_None, (Py_ssize_t)-1);
        goto done;
    }
    if (k == 1) {
        int due = f->pending >= f->spill;
        if (keep) {
            int e = edges_settle(&w); /* the columns as scan() gives them: edges encoded */
            if (e < 0) goto done;
            if (e == 0) { /* cannot be: the same edges text was encoded when the group met it */
                PyErr_SetString(PyExc_SystemError, "Fold.wave: a folded wave's edges do not encode");
                goto done;
            }
            PyObject *scanned = scanned_tuple(&w, h);
            w.edges_at = w.edges_end = NULL; /* the text they point into is gone after this call */
            if (scanned) out = Py_BuildValue("(Nn)", scanned, (Py_ssize_t)(due ? -4 : -3));
        } else if (due)
            out = Py_BuildValue("(On)", Py_None, (Py_ssize_t)-2);
        else
            out = Py_NewRef(Py_None);
        goto done;
    }
    {
        int e = edges_settle(&w); /* handed back: its edges encoded, as scan() gives them */
        if (e < 0) goto done;
        if (e == 0) {
            out = Py_BuildValue("(On)", Py_None, (Py_ssize_t)-1);
            goto done;
        }
        /* the column ranges, for last_ranges() */
        const int64_t *cols[7] = {w.cols[0].v, w.cols[1].v, w.cols[2].v, w.cols[3].v, w.cols[4].v,
                                  w.states.v, w.cycles.v};
        Py_ssize_t lens[7] = {w.cols[0].n, w.cols[1].n, w.cols[2].n, w.cols[3].n, w.cols[4].n,
                              w.states.n, w.cycles.n};
        for (int c = 0; c < 7; c++) col_range_of(cols[c], lens[c], &f->rmin[c], &f->rmax[c], &f->rhas[c]);
        PyObject *scanned = scanned_tuple(&w, h);
        w.edges_at = w.edges_end = NULL; /* the text they point into is gone after this call */
        if (scanned) {
            out = Py_BuildValue("(Nn)", scanned, gi);
            handed = out != NULL;
        }
    }
done:
    wave_keep(&f->scratch, &w);
    /* a wave handed back stays in the scratch columns, its edges encoded: Fold.again folds it
     * once its group is registered, without a second scan */
    f->again_ok = handed && f->scratch.cols[0].n > 0;
    return out;
}

/* again(se, simd): fold the wave the last wave()/files() call handed back (still in the scratch
 * columns) as that call would fold it now: 1 folded, 2 folded and the sums are due (the spill
 * signal), 0 not folded (nothing changed: a scan of its bytes would not fold it either), -1 the
 * columns are not held (a huge wave's buffers are not kept; the caller scans the bytes again).
 * Once per hand-back. */
static PyObject *Fold_again(Fold *f, PyObject *args) {
    long long se, simd = -1;
    if (!PyArg_ParseTuple(args, "L|L", &se, &simd)) return NULL;
    if (!f->again_ok) return PyLong_FromLong(-1);
    f->again_ok = 0;
    Wave w = f->scratch;
    memset(&f->scratch, 0, sizeof f->scratch);
    Py_ssize_t gi;
    uint64_t h;
    int k = fold_known(f, &w, se, simd, &gi, &h);
    wave_keep(&f->scratch, &w);
    if (k < 0) return NULL;
    return PyLong_FromLong(k != 1 ? 0 : f->pending >= f->spill ? 2 : 1);
}

/* wave(data, se, simd=-1, keep=False): see fold_text. */
static PyObject *Fold_wave(Fold *f, PyObject *args) {
    PyObject *data;
    long long se, simd = -1;
    int keep = 0;
    if (!PyArg_ParseTuple(args, "OL|Lp", &data, &se, &simd, &keep)) return NULL;
    Text t;
    if (!text_open(data, &t)) return NULL;
    PyObject *out = fold_text(f, t.p, t.n, se, simd, keep);
    text_close(&t); /* after fold_text: a scanned tuple copies the waitcnt text */
    return out;
}

#ifdef FOLD_FILES
/* The bytes of one wave file into f->buf (NUL after them), read the way hotspot/capture/files.py
 * `read_capped` reads a file that raises nothing: opened without following a symlink and without
 * blocking, a regular file (fstat), at most `cap` bytes (-1: no cap; any other negative cap is
 * under every size, as in Python), read whole in one call. 1 read, 0 anything else (a link, a
 * FIFO, a device, over the cap, a short read, an error, a file whose buffer would pass
 * KEEP_BUF_BYTES): the caller then reads the file in Python, which follows a link it may follow and
 * refuses the rest with its messages. The GIL is released around the system calls. */
static int read_file(Fold *f, const char *path, long long cap, Py_ssize_t *len) {
    int ok = 0;
    Py_BEGIN_ALLOW_THREADS
    int fd = -1, whole = 1;
#ifdef FOLD_DIRS
    const char *slash = strrchr(path, '/');
    /* absolute paths only: a relative one would be resolved against the working directory at the
     * call's first file, not at each file's own open */
    if (path[0] == '/' && slash && slash[1]) { /* the folder through its '/', the file name after it */
        size_t dl = (size_t)(slash - path) + 1;
        if (!f->dir || f->dir_len != dl || memcmp(f->dir, path, dl) != 0) {
            fold_drop_dir(f);
            char *d = malloc(dl + 1);
            if (d) {
                memcpy(d, path, dl);
                d[dl] = '\0';
                f->dir = d;
                f->dir_len = dl;
                f->dir_fd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
            }
        }
        if (f->dir && f->dir_fd >= 0) {
            fd = openat(f->dir_fd, slash + 1, FILE_FLAGS);
            whole = 0;
        }
    }
#endif
    if (whole) fd = open(path, FILE_FLAGS);
    struct stat st;
    if (fd >= 0) {
        /* a file too big to keep the buffer of is left to Python: a buffer as big as the largest
         * file would stay allocated while Python works on that file, and after */
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (cap == -1 || st.st_size <= cap)
                && (uint64_t)st.st_size <= KEEP_BUF_BYTES - 2) {
            size_t need = (size_t)st.st_size + 2;
            if (need > f->buf_cap) { /* the old bytes are not needed: no realloc copy of them */
                free(f->buf);
                f->buf = malloc(need);
                f->buf_cap = f->buf ? need : 0;
            }
            if (need <= f->buf_cap) {
                /* one byte more than the size: a file that grew is read again in Python */
                ssize_t got = read(fd, f->buf, (size_t)st.st_size + 1);
                if (got == (ssize_t)st.st_size) {
                    f->buf[got] = '\0';
                    *len = (Py_ssize_t)got;
                    ok = 1;
                }
            }
        }
        close(fd);
    }
    Py_END_ALLOW_THREADS
    return ok;
}

/* Item i of files()'s lists: the path (a new reference: the audit hooks and __fspath__ that see it
 * may change the lists), its SE and SIMD; NULL with an exception when the lists no longer reach i
 * or a number is not one. */
static PyObject *files_item(PyObject *paths, PyObject *ses, PyObject *simds, Py_ssize_t i,
                            long long *se, long long *simd) {
    if (i >= PyList_GET_SIZE(paths) || i >= PyList_GET_SIZE(ses) || i >= PyList_GET_SIZE(simds)) {
        PyErr_SetString(PyExc_RuntimeError, "Fold.files: the lists changed during the call");
        return NULL;
    }
    PyObject *path = Py_NewRef(PyList_GET_ITEM(paths, i));
    PyObject *se_o = Py_NewRef(PyList_GET_ITEM(ses, i)), *simd_o = Py_NewRef(PyList_GET_ITEM(simds, i));
    *se = PyLong_AsLongLong(se_o);
    int bad = *se == -1 && PyErr_Occurred();
    if (!bad) {
        *simd = PyLong_AsLongLong(simd_o);
        bad = *simd == -1 && PyErr_Occurred();
    }
    Py_DECREF(se_o);
    Py_DECREF(simd_o);
    if (bad) Py_CLEAR(path);
    return path;
}

/* files(paths, ses, simds, start, stop, cap, keep=None): read and fold wave files start..stop-1 in
 * turn (cap: the byte limit, -1 none) while C folds them, then return (i, data, res):
 * i == stop: all folded; res None: file i is not read (read_file says why), the caller reads and
 * folds it; else file i was folded as fold.wave(data, se, simd, keep[i]) would, `res` being what
 * that returns (data: the file's bytes, None when res is a folded wave's: the spill signal or the
 * kept columns). `keep`: None or bytes, one per path, nonzero for the files whose columns the
 * caller wants; such a file is answered even when C folds it. Each open raises the "open" audit
 * event as os.open does (the result cache records what a command read). */
static PyObject *files_run(Fold *f, PyObject *args) {
    PyObject *paths, *ses, *simds, *keep = Py_None;
    Py_ssize_t start, stop;
    long long cap;
    if (!PyArg_ParseTuple(args, "O!O!O!nnL|O", &PyList_Type, &paths, &PyList_Type, &ses, &PyList_Type,
                          &simds, &start, &stop, &cap, &keep))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(paths);
    if (PyList_GET_SIZE(ses) != n || PyList_GET_SIZE(simds) != n || start < 0 || start > stop
            || stop > n) {
        PyErr_SetString(PyExc_ValueError, "Fold.files: lists of unequal length or range outside them");
        return NULL;
    }
    const char *wanted = NULL;
    if (keep != Py_None) {
        if (!PyBytes_Check(keep) || PyBytes_GET_SIZE(keep) != n) {
            PyErr_SetString(PyExc_ValueError, "Fold.files: keep is None or bytes, one per path");
            return NULL;
        }
        wanted = PyBytes_AS_STRING(keep);
    }
    for (Py_ssize_t i = start; i < stop; i++) {
        long long se, simd;
        PyObject *path = files_item(paths, ses, simds, i, &se, &simd);
        if (!path) return NULL;
        PyObject *encoded = NULL;
        int named = PySys_Audit("open", "OOi", path, Py_None, FILE_FLAGS) >= 0 &&
                    PyUnicode_FSConverter(path, &encoded);
        Py_DECREF(path);
        if (!named) return NULL;
        Py_ssize_t len = 0;
        int ok = read_file(f, PyBytes_AS_STRING(encoded), cap, &len);
        Py_DECREF(encoded);
        if (!ok) return Py_BuildValue("(nOO)", i, Py_None, Py_None);
        PyObject *res = fold_text(f, f->buf, len, se, simd, wanted != NULL && wanted[i]);
        if (!res) return NULL;
        if (res == Py_None) {
            Py_DECREF(res);
            if (PyErr_CheckSignals() < 0) return NULL; /* Ctrl-C between files */
            continue;
        }
        int folded = PyTuple_Check(res) && PyTuple_GET_SIZE(res) == 2 &&
                     PyLong_AsSsize_t(PyTuple_GET_ITEM(res, 1)) <= -2;
        PyObject *data = folded ? Py_NewRef(Py_None) : PyBytes_FromStringAndSize(f->buf, len);
        if (!data) {
            Py_DECREF(res);
            return NULL;
        }
        return Py_BuildValue("(nNN)", i, data, res);
    }
    return Py_BuildValue("(nOO)", stop, Py_None, Py_None);
}

/* One call at a time per Fold (the reads run without the GIL, into f->buf): a second call while
 * one runs, from another thread or from a hook the first one calls, raises RuntimeError. */
static PyObject *Fold_files(Fold *f, PyObject *args) {
    if (f->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Fold.files: already running on this Fold");
        return NULL;
    }
    f->busy = 1;
    PyObject *out = files_run(f, args);
#ifdef FOLD_DIRS
    fold_drop_dir(f); /* no folder held between calls */
#endif
    f->busy = 0;
    if (f->buf_cap > KEEP_BUF_BYTES) { /* not reached while read_file keeps to the bound */
        free(f->buf);
        f->buf = NULL;
        f->buf_cap = 0;
    }
    return out;
}
#endif

/* take_group(index) -> (waves, blame_waves, stall, duration, charge, wait, [(pair, cycles,
 * count), ...]) since the last take, zeroing them; a group with no wave since gives None. */
static PyObject *Fold_take_group(Fold *f, PyObject *arg) {
    Py_ssize_t gi = PyLong_AsSsize_t(arg);
    if (gi == -1 && PyErr_Occurred()) return NULL;
    if (gi < 0 || gi >= f->n_groups || !f->groups[gi]) {
        PyErr_SetString(PyExc_IndexError, "take_group: no such group");
        return NULL;
    }
    Group *g = f->groups[gi];
    if (g->waves == 0) Py_RETURN_NONE;
    /* the (pair, cycles, count) entries in first-seen order, as int64 triples */
    PyObject *ents = PyBytes_FromStringAndSize(NULL, g->n_ents * 3 * 8);
    if (!ents) return NULL;
    int64_t *ev = (int64_t *)PyBytes_AS_STRING(ents);
    for (Py_ssize_t e = 0; e < g->n_ents; e++) {
        ev[3 * e] = (int64_t)g->ents[e].pair;
        ev[3 * e + 1] = g->ents[e].cycles;
        ev[3 * e + 2] = g->ents[e].count;
    }
    PyObject *out = Py_BuildValue(
        "(LLy#y#y#y#N)", (long long)g->waves, (long long)g->blame_waves,
        (const char *)g->stall, g->n * 8, (const char *)g->duration, g->n * 8,
        (const char *)g->charge, g->n * N_STATES * 8, (const char *)g->wait, g->n_wait * 8, ents);
    if (!out) return NULL;
    memset(g->stall, 0, (size_t)g->n * 8);
    memset(g->duration, 0, (size_t)g->n * 8);
    memset(g->charge, 0, (size_t)g->n * N_STATES * 8);
    memset(g->wait, 0, (size_t)(g->n_wait ? g->n_wait : 0) * 8);
    g->waves = g->blame_waves = 0;
    g->n_ents = 0;
    if (g->slots) memset(g->slots, 0, (size_t)g->n_slots * sizeof(Py_ssize_t));
    memset(g->pair_last, 0, (size_t)g->n_pairs * sizeof(int64_t));
    return out;
}

/* drop_group(index): forget a group (its sums must have been taken). */
static PyObject *Fold_drop_group(Fold *f, PyObject *arg) {
    Py_ssize_t gi = PyLong_AsSsize_t(arg);
    if (gi == -1 && PyErr_Occurred()) return NULL;
    if (gi < 0 || gi >= f->n_groups || !f->groups[gi]) {
        PyErr_SetString(PyExc_IndexError, "drop_group: no such group");
        return NULL;
    }
    group_free(f->groups[gi]);
    f->groups[gi] = NULL;
    Py_RETURN_NONE;
}

/* take_barriers() -> [((se, cu, line), int64 bytes [arrival, release, ...]), ...] in first-seen
 * order, emptying the store. */
static PyObject *Fold_take_barriers(Fold *f, PyObject *unused) {
    (void)unused;
    PyObject *out = PyList_New(f->n_bars);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < f->n_bars; i++) {
        BarBuf *b = &f->bars[i];
        PyObject *t = Py_BuildValue("((LLL)N)", (long long)b->se, (long long)b->cu,
                                    (long long)b->line, col_bytes(&b->v));
        if (!t) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, t);
    }
    fold_clear_bars(f);
    return out;
}

/* take_totals() -> (waves, instructions, cycles, out_of_order_waits, waves_edges, edge_entries,
 * waves_static) since the last take, zeroing them. */
static PyObject *Fold_take_totals(Fold *f, PyObject *unused) {
    (void)unused;
    PyObject *out = Py_BuildValue("(LLLLLLL)", (long long)f->waves, (long long)f->instructions,
                                  (long long)f->cycles, (long long)f->ooo,
                                  (long long)f->waves_edges, (long long)f->edge_entries,
                                  (long long)f->waves_static);
    if (out) {
        f->waves = f->instructions = f->cycles = f->ooo = 0;
        f->waves_edges = f->edge_entries = f->waves_static = f->pending = 0;
    }
    return out;
}

/* issue_seed(scope, se, cu, simd, mfma, valu, vmem): the running sums of a slot start from
 * these (the partial's sums so far), so that C's additions continue Python's in order. */
static PyObject *Fold_issue_seed(Fold *f, PyObject *args) {
    long long scope, se, cu, simd;
    double v[3];
    if (!PyArg_ParseTuple(args, "LLLLddd", &scope, &se, &cu, &simd, &v[0], &v[1], &v[2])) return NULL;
    if (!scopes_reserve(f, scope)) return NULL;
    ISlot *b = islot(f, scope, se, cu, simd);
    if (!b) return PyErr_NoMemory();
    for (int k = 0; k < 3; k++) b->sums[k] = v[k];
    Py_RETURN_NONE;
}

/* issue_add(scope, se, cu, simd, begin, end, mfma, valu, vmem): one wave's sums in one scope from
 * the Python path, in order with the waves C adds. */
static PyObject *Fold_issue_add(Fold *f, PyObject *args) {
    long long scope, se, cu, simd, begin, end;
    double v[3];
    if (!PyArg_ParseTuple(args, "LLLLLLddd", &scope, &se, &cu, &simd, &begin, &end, &v[0], &v[1], &v[2]))
        return NULL;
    if (!scopes_reserve(f, scope)) return NULL;
    if (!issue_add_to(f, scope, se, cu, simd, begin, end, v)) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* take_issue() -> (waves, [(scope, se, cu, simd, mfma, valu, vmem, waves, int64 spans), ...],
 * [wave time per scope]): the waves C added, every slot's running sums (kept) and its waves and
 * spans since the last take (cleared), and the wave time per scope (None: no wave added). */
static PyObject *Fold_take_issue(Fold *f, PyObject *unused) {
    (void)unused;
    PyObject *slots = PyList_New(f->n_islots), *times = PyList_New(f->n_scopes);
    if (!slots || !times) goto fail;
    for (Py_ssize_t i = 0; i < f->n_islots; i++) {
        ISlot *b = &f->islots[i];
        PyObject *t = Py_BuildValue("(LLLLdddLN)", (long long)b->scope, (long long)b->se,
                                    (long long)b->cu, (long long)b->simd, b->sums[0], b->sums[1],
                                    b->sums[2], (long long)b->waves, col_bytes(&b->spans));
        if (!t) goto fail;
        PyList_SET_ITEM(slots, i, t);
    }
    for (Py_ssize_t i = 0; i < f->n_scopes; i++) {
        PyObject *t = f->wave_time[i] < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(f->wave_time[i]);
        if (!t) goto fail;
        PyList_SET_ITEM(times, i, t);
    }
    PyObject *out = Py_BuildValue("(LNN)", (long long)f->issue_waves, slots, times);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < f->n_islots; i++) {
        f->islots[i].waves = 0;
        f->islots[i].spans.n = 0;
    }
    for (Py_ssize_t i = 0; i < f->n_scopes; i++) f->wave_time[i] = -1;
    f->issue_waves = 0;
    return out;
fail:
    Py_XDECREF(slots);
    Py_XDECREF(times);
    return NULL;
}

/* last_ranges() -> ([5 instruction column ranges], states range, cycles range) of the last
 * scanned wave handed back to Python, each (min, max) or None when empty: what a check of the
 * wave's values needs. */
static PyObject *Fold_last_ranges(Fold *f, PyObject *unused) {
    (void)unused;
    PyObject *r[7];
    for (int k = 0; k < 7; k++) {
        r[k] = f->rhas[k] ? Py_BuildValue("(LL)", (long long)f->rmin[k], (long long)f->rmax[k])
                          : Py_NewRef(Py_None);
        if (!r[k]) {
            for (int j = 0; j < k; j++) Py_DECREF(r[j]);
            return NULL;
        }
    }
    return Py_BuildValue("([NNNNN]NN)", r[0], r[1], r[2], r[3], r[4], r[5], r[6]);
}

static PyMethodDef Fold_methods[] = {
    {"wave", (PyCFunction)Fold_wave, METH_VARARGS, "Scan and fold one wave file."},
    {"again", (PyCFunction)Fold_again, METH_VARARGS, "Fold the wave just handed back, now its group is known."},
#ifdef FOLD_FILES
    {"files", (PyCFunction)Fold_files, METH_VARARGS, "Read and fold wave files in turn."},
#endif
    {"add_group", (PyCFunction)Fold_add_group, METH_VARARGS, "Register a sequence group."},
    {"take_group", (PyCFunction)Fold_take_group, METH_O, "A group's sums since the last take."},
    {"drop_group", (PyCFunction)Fold_drop_group, METH_O, "Forget a group."},
    {"take_barriers", (PyCFunction)Fold_take_barriers, METH_NOARGS, "Barrier times since the last take."},
    {"take_totals", (PyCFunction)Fold_take_totals, METH_NOARGS, "Pass totals since the last take."},
    {"last_ranges", (PyCFunction)Fold_last_ranges, METH_NOARGS, "Column ranges of the last wave."},
    {"issue_seed", (PyCFunction)Fold_issue_seed, METH_VARARGS, "Start a slot's issue sums from these."},
    {"issue_add", (PyCFunction)Fold_issue_add, METH_VARARGS, "One wave's issue sums in one scope."},
    {"take_issue", (PyCFunction)Fold_take_issue, METH_NOARGS, "Issue sums since the last take."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FoldType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hotspot.att.engine._wavescan.Fold",
    .tp_basicsize = sizeof(Fold),
    .tp_dealloc = (destructor)Fold_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The fused per-wave pass: Fold(spill_waves[, hash_mask]).",
    .tp_methods = Fold_methods,
    .tp_new = Fold_new,
};

/* col_range(buf): (min, max) of an int64 column, None when it is empty. A separate helper for the
 * wave validation of hotspot/capture/wavecheck.py (the checks themselves stay in Python, shared
 * with the pure-Python path). */
static PyObject *col_range(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer b;
    if (!get_i64(arg, &b, 0)) return NULL;
    Py_ssize_t n = b.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *out;
    if (n == 0) {
        out = Py_NewRef(Py_None);
    } else {
        const int64_t *v = b.buf;
        int64_t lo = v[0], hi = v[0];
        for (Py_ssize_t i = 1; i < n; i++) {
            if (v[i] < lo) lo = v[i];
            if (v[i] > hi) hi = v[i];
        }
        out = Py_BuildValue("(LL)", (long long)lo, (long long)hi);
    }
    PyBuffer_Release(&b);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * After the pass: barrier episodes (hotspot/att/barriers.py `flat_episodes`) and achieved
 * occupancy per SE (hotspot/arch/achieved.py `achieved_from_columns`), each the C twin of a Python
 * function that stays the reference (tests/test_native_equal.py holds them equal).
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    int64_t release, arrival;
} BarPair;

static int cmp_barpair(const void *a, const void *b) {
    const BarPair *x = a, *y = b;
    if (x->release != y->release) return x->release < y->release ? -1 : 1;
    return (x->arrival > y->arrival) - (x->arrival < y->arrival);
}

static int barpair_less(const BarPair *x, const BarPair *y) {
    return x->release < y->release || (x->release == y->release && x->arrival < y->arrival);
}

/* Runs of pairs in order up to which sort_barpairs merges them instead of calling qsort. */
#define BARPAIR_MERGE_RUNS 64

/* Sorts pairs by (release, arrival), as qsort with cmp_barpair (equal pairs are alike, so any
 * sort gives the same array). A capture's pairs come in a few ascending runs (one per stretch of
 * wave files), which are merged pairwise; qsort when they are many. 0 on memory error. */
static int sort_barpairs(BarPair *p, Py_ssize_t m) {
    Py_ssize_t runs = 1;
    for (Py_ssize_t i = 1; i < m; i++) runs += barpair_less(&p[i], &p[i - 1]);
    if (m < 2 || runs == 1) return 1;
    if (runs > BARPAIR_MERGE_RUNS) {
        qsort(p, (size_t)m, sizeof(BarPair), cmp_barpair);
        return 1;
    }
    Py_ssize_t *bounds = PyMem_Malloc((size_t)(runs + 1) * sizeof *bounds);
    BarPair *tmp = PyMem_Malloc((size_t)m * sizeof *tmp), *src = p, *dst = tmp;
    if (!bounds || !tmp) {
        PyMem_Free(bounds);
        PyMem_Free(tmp);
        return 0;
    }
    Py_ssize_t r = 0;
    bounds[r++] = 0;
    for (Py_ssize_t i = 1; i < m; i++)
        if (barpair_less(&p[i], &p[i - 1])) bounds[r++] = i;
    bounds[runs] = m;
    while (runs > 1) {
        Py_ssize_t merged = 0;
        for (r = 0; r < runs; r += 2) {
            Py_ssize_t lo = bounds[r], mid = bounds[r + 1], hi = r + 2 <= runs ? bounds[r + 2] : m;
            if (r + 1 >= runs) mid = hi = m; /* an odd run out: copied as it is */
            Py_ssize_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) dst[o++] = barpair_less(&src[b], &src[a]) ? src[b++] : src[a++];
            while (a < mid) dst[o++] = src[a++];
            while (b < hi) dst[o++] = src[b++];
            bounds[merged++] = lo;
        }
        bounds[merged] = m;
        runs = merged;
        BarPair *t = src;
        src = dst;
        dst = t;
    }
    if (src != p) memcpy(p, src, (size_t)m * sizeof *p);
    PyMem_Free(bounds);
    PyMem_Free(tmp);
    return 1;
}

/* a + b into *out; 0 on int64 overflow */
static int add_checked(int64_t a, int64_t b, int64_t *out) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
    *out = a + b;
    return 1;
}

/* episodes(flat, tolerance) -> (instances, stall, int64 spreads, int64 sizes), or None when the
 * sums leave int64 (the caller's Python twin then counts): flat is [arrival, release, ...];
 * pairs sorted by (release, arrival) fall into one episode while within `tolerance` cycles of its
 * first release; spreads (last - first arrival) and sizes of the episodes with >= 2 waves. */
static PyObject *episodes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *oflat;
    long long tol;
    if (!PyArg_ParseTuple(args, "OL", &oflat, &tol)) return NULL;
    Py_buffer flat;
    if (!get_i64(oflat, &flat, 0)) return NULL;
    const int64_t *v = flat.buf;
    Py_ssize_t m = flat.len / 16;
    PyObject *out = NULL;
    BarPair *pairs = PyMem_Malloc(m ? (size_t)m * sizeof(BarPair) : 1);
    Col spreads = {NULL, 0, 0}, sizes = {NULL, 0, 0};
    if (!pairs) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t stall = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        pairs[i].arrival = v[2 * i];
        pairs[i].release = v[2 * i + 1];
        int64_t d;
        if (!add_checked(pairs[i].release, -pairs[i].arrival, &d) || !add_checked(stall, d, &stall) ||
            pairs[i].arrival == INT64_MIN) {
            out = Py_NewRef(Py_None);
            goto done;
        }
    }
    if (!sort_barpairs(pairs, m)) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < m;) {
        int64_t first = pairs[i].release, lo = pairs[i].arrival, hi = lo;
        Py_ssize_t j = i + 1;
        for (; j < m; j++) {
            int64_t gap;
            if (!add_checked(pairs[j].release, -first, &gap)) { /* beyond any tolerance */
                break;
            }
            if (gap > tol) break;
            if (pairs[j].arrival < lo) lo = pairs[j].arrival;
            if (pairs[j].arrival > hi) hi = pairs[j].arrival;
        }
        if (j - i >= 2) {
            int64_t spread;
            if (!add_checked(hi, -lo, &spread)) {
                out = Py_NewRef(Py_None);
                goto done;
            }
            if (!col_push(&spreads, spread) || !col_push(&sizes, (int64_t)(j - i))) {
                PyErr_NoMemory();
                goto done;
            }
        }
        i = j;
    }
    out = Py_BuildValue("(nLNN)", m, (long long)stall, col_bytes(&spreads), col_bytes(&sizes));
done:
    col_free(&spreads);
    col_free(&sizes);
    PyMem_Free(pairs);
    PyBuffer_Release(&flat);
    return out;
}

/* Occupancy event values the C twin takes (the caller's Python twin reads any other): far from
 * int64 overflow in every sum over a capture's events. */
#define OCC_LIMIT ((int64_t)1 << 40)
#define OCC_MAX_EVENTS ((Py_ssize_t)1 << 22)

typedef struct {
    int64_t time, cu, simd, slot, start, index;
} OccEvent;

static int cmp_occ(const void *a, const void *b) {
    const OccEvent *x = a, *y = b;
    const int64_t kx[6] = {x->cu, x->simd, x->slot, x->time, x->start, x->index};
    const int64_t ky[6] = {y->cu, y->simd, y->slot, y->time, y->start, y->index};
    for (int k = 0; k < 6; k++)
        if (kx[k] != ky[k]) return kx[k] < ky[k] ? -1 : 1;
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Buckets (cu, simd, slot) sort_occ counts in, at most: beyond, it calls qsort. */
#define OCC_BUCKETS_MAX ((int64_t)1 << 20)

/* Sorts the m events as qsort with cmp_occ would (every event's index differs, so the order is
 * total and the sorted array one). Events in time order (a capture's, per SE) are counted into
 * their (cu, simd, slot) buckets in order, which leaves each bucket in (time, file order), then
 * an insertion pass puts the ends before the starts at equal times; qsort for other events,
 * wide keys, or when that pass would move more than a few events per event. 0 on memory error. */
static int sort_occ(OccEvent *ev, Py_ssize_t m) {
    int64_t n_cu = 0, n_simd = 0, n_slot = 0;
    int timed = 1;
    for (Py_ssize_t i = 0; i < m; i++) {
        if (ev[i].cu >= n_cu) n_cu = ev[i].cu + 1;
        if (ev[i].simd >= n_simd) n_simd = ev[i].simd + 1;
        if (ev[i].slot >= n_slot) n_slot = ev[i].slot + 1;
        if (i && ev[i].time < ev[i - 1].time) timed = 0;
    }
    /* values are below OCC_LIMIT (2**40): each factor is checked before the product grows */
    if (!timed || m < 2 || n_cu > OCC_BUCKETS_MAX || n_simd > OCC_BUCKETS_MAX || n_slot > OCC_BUCKETS_MAX ||
        n_cu * n_simd > OCC_BUCKETS_MAX || n_cu * n_simd * n_slot > OCC_BUCKETS_MAX) {
        qsort(ev, (size_t)m, sizeof(OccEvent), cmp_occ);
        return 1;
    }
    Py_ssize_t nb = (Py_ssize_t)(n_cu * n_simd * n_slot);
    Py_ssize_t *at = PyMem_Calloc((size_t)nb + 1, sizeof *at);
    OccEvent *out = PyMem_Malloc((size_t)m * sizeof *out);
    if (!at || !out) {
        PyMem_Free(at);
        PyMem_Free(out);
        return 0;
    }
#define OCC_BUCKET(e) (((e).cu * n_simd + (e).simd) * n_slot + (e).slot)
    for (Py_ssize_t i = 0; i < m; i++) at[OCC_BUCKET(ev[i]) + 1]++;
    for (Py_ssize_t b = 0; b < nb; b++) at[b + 1] += at[b];
    for (Py_ssize_t i = 0; i < m; i++) out[at[OCC_BUCKET(ev[i])]++] = ev[i];
#undef OCC_BUCKET
    Py_ssize_t moves = 0, budget = 8 * m + 1024;
    for (Py_ssize_t i = 1; i < m && moves <= budget; i++) {
        OccEvent x = out[i];
        Py_ssize_t j = i;
        for (; j > 0 && cmp_occ(&out[j - 1], &x) > 0 && ++moves <= budget; j--) out[j] = out[j - 1];
        out[j] = x;
    }
    if (moves > budget) /* many events at one time: qsort orders them */
        qsort(out, (size_t)m, sizeof(OccEvent), cmp_occ);
    memcpy(ev, out, (size_t)m * sizeof *ev);
    PyMem_Free(at);
    PyMem_Free(out);
    return 1;
}

/* Item i of a list or tuple as an int64 in [0, OCC_LIMIT): 1, 0 (another value), -1 (error). */
static int occ_value(PyObject *seq, Py_ssize_t i, int64_t *out) {
    PyObject *o = PySequence_Fast_ITEMS(seq)[i];
    if (!PyLong_CheckExact(o)) return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow || v < 0 || v >= OCC_LIMIT) return 0;
    *out = v;
    return 1;
}

/* A simd's resident waves at most at once: its intervals' edges (time * 2 + 1 for a start, time * 2
 * for an end: ends first at equal times) swept in order. */
static int64_t peak_of(int64_t *edges, Py_ssize_t n) {
    qsort(edges, (size_t)n, sizeof(int64_t), cmp_i64);
    int64_t now = 0, best = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        now += (edges[i] & 1) ? 1 : -1;
        if (now > best) best = now;
    }
    return best;
}

/* Round codes of occupancy_se: no wave started on the SE, or the one-round rule's answer. */
#define ROUND_NO_STARTS (-1)
#define ROUND_UNKNOWN 2

/* occupancy_se(time, cu, simd, slot, is_start, kernel_id, wanted) -> (window, unmatched_starts,
 * unmatched_ends, busy_cus, round, simds, busy, peak, intervals), or None when a value is not a
 * plain int in [0, 2**40) or the SE has over 2**22 events (the Python twin reads those). One SE's
 * event columns (lists or tuples), the events of kernels in `wanted` (a set; None: all). `round`
 * is -1 when no wave started, 2 when unknown (no wave ended), else 1/0: the one-round rule. An SE
 * with no event gives intervals 0. Each (cu, simd, slot)'s events in (time, ends first, file
 * order) make its intervals as achieved.py's sweep does: that order within a slot is the sweep's. */
static PyObject *occupancy_se(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ocols[6], *wanted;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &ocols[0], &ocols[1], &ocols[2], &ocols[3], &ocols[4],
                          &ocols[5], &wanted))
        return NULL;
    PyObject *cols[6] = {NULL};
    OccEvent *ev = NULL;
    int64_t *edges = NULL;
    PyObject *out = NULL;
    for (int k = 0; k < 6; k++)
        if (!(cols[k] = PySequence_Fast(ocols[k], "occupancy_se: columns must be sequences"))) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(cols[0]);
    for (int k = 1; k < 6; k++)
        if (PySequence_Fast_GET_SIZE(cols[k]) != n) {
            PyErr_SetString(PyExc_ValueError, "occupancy_se: column lengths disagree");
            goto done;
        }
    if (n > OCC_MAX_EVENTS) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    ev = PyMem_Malloc(n ? (size_t)n * sizeof(OccEvent) : 1);
    edges = PyMem_Malloc(n ? (size_t)n * 2 * sizeof(int64_t) : 1);
    if (!ev || !edges) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (wanted != Py_None) {
            int in = PySet_Contains(wanted, PySequence_Fast_ITEMS(cols[5])[i]);
            if (in < 0) goto done;
            if (!in) continue;
        }
        int64_t x[5];
        for (int k = 0; k < 5; k++) {
            int rc = occ_value(cols[k], i, &x[k]);
            if (rc < 0) goto done;
            if (rc == 0 || (k == 4 && x[4] > 1)) {
                out = Py_NewRef(Py_None);
                goto done;
            }
        }
        ev[m] = (OccEvent){x[0], x[1], x[2], x[3], x[4], i};
        m++;
    }
    if (m == 0) {
        out = Py_BuildValue("(iiiiiiiii)", 0, 0, 0, 0, ROUND_NO_STARTS, 0, 0, 0, 0);
        goto done;
    }
    int64_t begin = ev[0].time, end = ev[0].time, first_end = -1, last_start = -1;
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t t = ev[i].time;
        if (t < begin) begin = t;
        if (t > end) end = t;
        if (ev[i].start) {
            if (t > last_start) last_start = t;
        } else if (first_end < 0 || t < first_end) {
            first_end = t;
        }
    }
    if (!sort_occ(ev, m)) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t unmatched_starts = 0, unmatched_ends = 0, busy_cus = 0, simds = 0, busy = 0, peak = 0,
            intervals = 0, last_cu = -1;
    Py_ssize_t n_edges = 0;
    for (Py_ssize_t i = 0; i < m;) {
        /* one (cu, simd): its slots' events, slot by slot */
        Py_ssize_t j = i;
        int any_start = 0;
        for (; j < m && ev[j].cu == ev[i].cu && ev[j].simd == ev[i].simd; j++) any_start |= (int)ev[j].start;
        if (any_start && ev[i].cu != last_cu) { /* sorted by cu: a new cu that started a wave */
            busy_cus++;
            last_cu = ev[i].cu;
        }
        n_edges = 0;
        for (Py_ssize_t k = i; k < j;) {
            Py_ssize_t e = k;
            int open = 0;
            int64_t t0 = 0;
            for (; e < j && ev[e].slot == ev[k].slot; e++) {
                int64_t t = ev[e].time, s0 = -1;
                if (ev[e].start) {
                    if (open) { /* the decoder lost this slot's end: close it here */
                        unmatched_starts++;
                        s0 = t0;
                    }
                    open = 1;
                    t0 = t;
                } else if (open) {
                    s0 = t0;
                    open = 0;
                } else { /* resident since before the window */
                    unmatched_ends++;
                    s0 = begin;
                }
                if (s0 >= 0) {
                    edges[n_edges++] = s0 * 2 + 1;
                    edges[n_edges++] = t * 2;
                    busy += t - s0;
                    intervals++;
                }
            }
            if (open) { /* still resident at the window's end */
                unmatched_starts++;
                edges[n_edges++] = t0 * 2 + 1;
                edges[n_edges++] = end * 2;
                busy += end - t0;
                intervals++;
            }
            k = e;
        }
        simds++;
        int64_t p = peak_of(edges, n_edges);
        if (p > peak) peak = p;
        i = j;
    }
    int round = last_start < 0 ? ROUND_NO_STARTS : first_end < 0 ? ROUND_UNKNOWN : last_start < first_end;
    out = Py_BuildValue("(LLLLiLLLL)", (long long)(end - begin), (long long)unmatched_starts,
                        (long long)unmatched_ends, (long long)busy_cus, round, (long long)simds,
                        (long long)busy, (long long)peak, (long long)intervals);
done:
    for (int k = 0; k < 6; k++) Py_XDECREF(cols[k]);
    PyMem_Free(ev);
    PyMem_Free(edges);
    return out;
}

/* A list of Python ints from int64 values. */
static PyObject *i64_list(const int64_t *v, Py_ssize_t n) {
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, x);
    }
    return out;
}

/* Appends (idx, [q[head], ..., q[head + k - 1]]) to entries: 1, or 0 with an exception. */
static int replay_entry(PyObject *entries, int64_t idx, const int64_t *q, Py_ssize_t k) {
    PyObject *prods = i64_list(q, k);
    PyObject *entry = prods ? Py_BuildValue("(LN)", (long long)idx, prods) : NULL;
    int ok = entry && PyList_Append(entries, entry) == 0;
    Py_XDECREF(entry);
    return ok;
}

/* replay(lines, table) -> (entries, wait_positions, out_of_order_waits): hotspot/att/waits/replay.py
 * `reconstruct` over an int64 column of lines. `table` holds 4 int64 per line number 0..L-1 (a line
 * outside has no role): [1, pushes VM, pushes LGKM, scalar] for a memory row, [2, vm N, lgkm N, 0]
 * for an s_waitcnt (N < 0: the counter is not waited on), [0, ...] otherwise. */
static PyObject *replay(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *olines, *otable;
    if (!PyArg_ParseTuple(args, "OO", &olines, &otable)) return NULL;
    Py_buffer lb, tb;
    if (!get_i64(olines, &lb, 0)) return NULL;
    if (!get_i64(otable, &tb, 0)) {
        PyBuffer_Release(&lb);
        return NULL;
    }
    const int64_t *lines = lb.buf, *table = tb.buf;
    Py_ssize_t n = lb.len / 8, rows = tb.len / 32;
    int64_t *vm = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *lg = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    PyObject *entries = PyList_New(0), *positions = PyList_New(0), *out = NULL;
    if (!vm || !lg || !entries || !positions) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    {
        /* queued producers are vm[vh..vn) and lg[lh..ln): a pop takes from the front */
        Py_ssize_t vh = 0, vn = 0, lh = 0, ln = 0;
        int smem_pending = 0;
        long long ooo = 0;
        for (Py_ssize_t idx = 0; idx < n; idx++) {
            int64_t line = lines[idx];
            if (line < 0 || line >= rows) continue;
            const int64_t *t = table + 4 * line;
            if (t[0] == 1) {
                if (t[1]) vm[vn++] = idx;
                if (t[2]) {
                    lg[ln++] = idx;
                    if (t[3]) smem_pending = 1;
                }
            } else if (t[0] == 2) {
                PyObject *pos = PyLong_FromSsize_t(idx);
                int ok = pos && PyList_Append(positions, pos) == 0;
                Py_XDECREF(pos);
                if (!ok) goto done;
                int64_t vm_n = t[1], lg_n = t[2];
                if (lg_n >= 0) {
                    if (lg_n > 0 && smem_pending) ooo++;
                    int64_t k = (int64_t)(ln - lh) - lg_n;
                    if (k > 0) {
                        if (!replay_entry(entries, idx, lg + lh, (Py_ssize_t)k)) goto done;
                        lh += (Py_ssize_t)k;
                    }
                    if (lh == ln) smem_pending = 0;
                }
                if (vm_n >= 0) {
                    int64_t k = (int64_t)(vn - vh) - vm_n;
                    if (k > 0) {
                        if (!replay_entry(entries, idx, vm + vh, (Py_ssize_t)k)) goto done;
                        vh += (Py_ssize_t)k;
                    }
                }
            }
        }
        out = Py_BuildValue("(OOL)", entries, positions, ooo);
    }
done:
    Py_XDECREF(entries);
    Py_XDECREF(positions);
    PyMem_Free(vm);
    PyMem_Free(lg);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&lb);
    return out;
}

/* wide_rows(on=None) -> bool: whether the wide row reader (rows_window) is used; on=False forces the
 * portable one (row_simd/compact_row), on=True restores it where the CPU has it. For the tests
 * that hold both readers to the same results. */
static PyObject *wide_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *on = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &on)) return NULL;
#ifdef ROW_WIDE
    if (on != Py_None) {
        int t = PyObject_IsTrue(on);
        if (t < 0) return NULL;
        wide_on = t && wide_ok;
    }
    return PyBool_FromLong(wide_on);
#else
    Py_RETURN_FALSE;
#endif
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_O, "Parse a plain wave file into int64 columns, or None."},
    {"wide_rows", wide_rows, METH_VARARGS, "Whether the AVX-512 row reader is used; False forces the portable one."},
    {"charge", charge, METH_VARARGS, "Charge a wave's timeline to instruction windows."},
    {"edges_key", edges_key, METH_O, "Canonical encoding of a JSON array of integer arrays."},
    {"count_pairs", count_pairs, METH_VARARGS, "Histogram of issue-to-wait cycles per pair."},
    {"fold_lines", fold_lines, METH_VARARGS, "Fold a sequence group's sums into per-line dicts."},
    {"fold_lines_all", fold_lines_all, METH_VARARGS, "fold_lines of several groups at once, or False."},
    {"blame_waits", blame_waits, METH_VARARGS, "The per-wait blame of a sequence group's flush."},
    {"blame_waits_all", blame_waits_all, METH_VARARGS, "blame_waits of several groups at once, or False."},
    {"charge_sums", charge_sums, METH_O, "Per-state sums of a group's int64 timeline charges."},
    {"add_entries", add_entries, METH_VARARGS, "Add a group's taken (pair, cycles, count) entries."},
    {"merge_entries_all", merge_entries_all, METH_VARARGS, "merge_hists of groups' taken entries at once, or False."},
    {"entries_key", entries_key, METH_VARARGS, "edges_key of a replay's expected edges."},
    {"pair_lists", pair_lists, METH_VARARGS, "A sequence's producers and (wait, producer) pairs."},
    {"pair_index", pair_index, METH_VARARGS, "pair_lists' pairs as int64 bytes, or None."},
    {"count_lines", count_lines, METH_O, "Counter of an int64 column, as a dict."},
    {"line_terms", line_terms, METH_VARARGS, "issue_share._terms of a hits dict, or None."},
    {"barrier_rows", barrier_rows, METH_VARARGS, "Positions of the barrier lines of a sequence."},
    {"backedges", backedges, METH_VARARGS, "Backward taken branches of a sequence, counted."},
    {"merge_hists", merge_hists, METH_VARARGS, "Add per-pair cycle histograms into dist_cycles."},
    {"gather_add", gather_add, METH_VARARGS, "acc[i] += col[positions[i]]."},
    {"arrivals", arrivals, METH_VARARGS, "Barrier (arrival, release) pairs at positions."},
    {"add", add, METH_VARARGS, "acc[i] += col[i] over int64 buffers."},
    {"col_range", col_range, METH_O, "(min, max) of an int64 column, or None when empty."},
    {"episodes", episodes, METH_VARARGS, "Barrier episodes of one flat [arrival, release, ...] column."},
    {"occupancy_se", occupancy_se, METH_VARARGS, "Achieved occupancy sums of one SE's events."},
    {"replay", replay, METH_VARARGS, "The vm/lgkm replay of one executed sequence (reconstruct)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wavescan",
                                    "Native fast path of the wave pass.", -1, methods};

/* Raised whenever a function's arguments or results change: hotspot/att/engine/native.py uses a
   build only when its ABI matches (a stale build left by an editable install falls back). */
#define WAVESCAN_ABI 6

PyMODINIT_FUNC PyInit__wavescan(void) {
#ifdef ROW_WIDE
    __builtin_cpu_init();
    wide_ok = wide_on = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
                        __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                        __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("sse4.1");
    row_tab_init(&ins_tab, 5);
    row_tab_init(&timeline_tab, 2);
#endif
    if (PyType_Ready(&FoldType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "ABI", WAVESCAN_ABI) < 0
            || PyModule_AddIntConstant(m, "ROUND_NO_STARTS", ROUND_NO_STARTS) < 0
            || PyModule_AddIntConstant(m, "ROUND_UNKNOWN", ROUND_UNKNOWN) < 0
            || PyModule_AddObjectRef(m, "Fold", (PyObject *)&FoldType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#ifdef FOLD_FILES
    /* Fold.files's open flags and buffer bound, for the tests that hold them to files.py's */
    if (PyModule_AddIntConstant(m, "FILE_FLAGS", FILE_FLAGS) < 0
            || PyModule_AddIntConstant(m, "KEEP_BUF_BYTES", (long)KEEP_BUF_BYTES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
