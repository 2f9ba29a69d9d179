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
 * The 2**40 bound keeps every per-wave quantity (values, window ends, timeline time, per-window
 * charge <= sum of cycles) far from int64 overflow; the Python side spills the int64 accumulators
 * into Python integers before enough waves add up to overflow them (groups.SPILL_WAVES).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

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

HOT void skip_ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

HOT int peek(Cur *c, char ch) {
    skip_ws(c);
    return c->p < c->end && *c->p == ch;
}

HOT int expect(Cur *c, char ch) {
    if (!peek(c, ch)) return 0;
    c->p++;
    return 1;
}

HOT int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* A JSON integer (no fraction, no exponent) with |value| < VALUE_LIMIT. */
HOT int parse_int(Cur *c, int64_t *out) {
    skip_ws(c);
    const char *p = c->p;
    int neg = 0;
    if (p < c->end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= c->end || !is_digit(*p)) return 0;
    int64_t v = 0;
    if (*p == '0') {
        p++;
    } else {
        while (p < c->end && is_digit(*p)) {
            v = v * 10 + (*p - '0');
            if (v >= VALUE_LIMIT) return 0;
            p++;
        }
    }
    if (p < c->end && (*p == '.' || *p == 'e' || *p == 'E' || is_digit(*p))) return 0;
    c->p = p;
    *out = neg ? -v : v;
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
    if (c[0].n < c[0].cap) return 1;
    for (int k = 0; k < 5; k++) {
        Py_ssize_t n = c[k].n;
        if (!col_push(&c[k], 0)) return 0; /* grows the buffer */
        c[k].n = n;
    }
    return 1;
}

/* Return 1 parsed, 0 not the plain shape (fall back), -1 memory error (exception set). */
static int parse_instructions(Cur *c, Wave *w) {
    if (!expect(c, '[')) return 0;
    if (expect(c, ']')) return 1;
    Col *cols = w->cols;
    do {
        if (!rows_reserve(w)) {
            PyErr_NoMemory();
            return -1;
        }
        Py_ssize_t n = cols[0].n;
        int64_t v;
        if (!expect(c, '[') || !parse_int(c, &v)) return 0;
        cols[0].v[n] = v;
        for (int k = 1; k < 5; k++) {
            if (!expect(c, ',') || !parse_int(c, &v)) return 0;
            cols[k].v[n] = v;
        }
        if (!expect(c, ']')) return 0;
        for (int k = 0; k < 5; k++) cols[k].n = n + 1;
    } while (expect(c, ','));
    return expect(c, ']');
}

static int parse_timeline(Cur *c, Wave *w) {
    if (peek(c, 'n')) return skip_literal(c, "null");
    if (!expect(c, '[')) return 0;
    if (expect(c, ']')) return 1;
    int64_t total = 0;
    do {
        int64_t state, cycles;
        if (!expect(c, '[') || !parse_int(c, &state) || !expect(c, ',') ||
            !parse_int(c, &cycles) || !expect(c, ']'))
            return 0;
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

static PyObject *scan(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
    Wave w;
    memset(&w, 0, sizeof w);
    Cur c = {(const char *)buf.buf, (const char *)buf.buf + buf.len};
    int rc = parse_document(&c, &w);
    PyBuffer_Release(&buf);
    if (rc < 0) {
        wave_free(&w);
        return NULL;
    }
    if (rc == 0 || !w.have_begin || !w.have_end || !w.have_ins || w.cols[0].n == 0) {
        wave_free(&w);
        Py_RETURN_NONE;
    }
    PyObject *cu = (w.have_cu && !w.cu_null) ? PyLong_FromLongLong(w.cu) : Py_NewRef(Py_None);
    PyObject *raw = w.edges_at ? PyBytes_FromStringAndSize(w.edges_at, w.edges_end - w.edges_at)
                               : Py_NewRef(Py_None);
    /* FNV-1a over the line and category columns: the key of the wave's executed sequence (the
     * caller confirms a match by comparing the columns themselves) */
    uint64_t h = 1469598103934665603ULL;
    for (int k = 1; k < 5; k += 3) { /* cats (1), then lines (4) */
        const int64_t *v = w.cols[k].v;
        for (Py_ssize_t i = 0; i < w.cols[k].n; i++) {
            h ^= (uint64_t)v[i];
            h *= 1099511628211ULL;
        }
        h ^= 0xff; /* column separator */
        h *= 1099511628211ULL;
    }
    PyObject *out = Py_BuildValue("(LLNNNNNNNNNNnK)", (long long)w.begin, (long long)w.end, cu,
                                  col_bytes(&w.cols[0]), col_bytes(&w.cols[1]),
                                  col_bytes(&w.cols[2]), col_bytes(&w.cols[3]),
                                  col_bytes(&w.cols[4]), col_bytes(&w.states),
                                  col_bytes(&w.cycles), raw, col_bytes(&w.edges),
                                  count_entries(&w.edges), (unsigned long long)h);
    wave_free(&w);
    return out;
}

/* edges_key(json): the canonical encoding of a JSON array of nested integer arrays, as scan()
 * gives it for waitcnt; None for any other value. */
static PyObject *edges_key(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
    Cur c = {(const char *)buf.buf, (const char *)buf.buf + buf.len};
    Col e = {NULL, 0, 0};
    int rc = encode_arrays(&c, &e, 0);
    skip_ws(&c);
    PyBuffer_Release(&buf);
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
    {
        int64_t *a = acc.buf;
        const int64_t *tm = times.buf, *du = dur.buf, *st = states.buf, *cy = cycles.buf;
        Py_ssize_t last = n - 1, j = 0;
        /* window j ends at the running max of time + duration up to j */
        int64_t end_j = tm[0] + du[0];
        int64_t t = begin;
#define ADVANCE()                                                                               \
        while (end_j <= t && j < last) {                                                        \
            j++;                                                                                \
            int64_t e = tm[j] + du[j];                                                          \
            if (e > end_j) end_j = e;                                                           \
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

/* fold_lines(per_line, line_states, lines, waves, duration, stall, charge): the per-line part of
 * groups.flush_group, in the same order (so dicts get the same insertion order). */
static PyObject *fold_lines(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *per_line, *line_states, *lines, *waves, *duration, *stall, *charge;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!O!O!", &PyDict_Type, &per_line, &PyDict_Type,
                          &line_states, &PyTuple_Type, &lines, &waves, &PyList_Type, &duration,
                          &PyList_Type, &stall, &PyList_Type, &charge))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(lines);
    if (PyList_GET_SIZE(duration) != n || PyList_GET_SIZE(stall) != n ||
        PyList_GET_SIZE(charge) != n * N_STATES) {
        PyErr_SetString(PyExc_ValueError, "fold_lines: lengths disagree");
        return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *line = PyTuple_GET_ITEM(lines, j);
        PyObject *vals[3] = {waves, PyList_GET_ITEM(duration, j), PyList_GET_ITEM(stall, j)};
        PyObject *acc = PyDict_GetItemWithError(per_line, line);
        if (!acc) {
            if (PyErr_Occurred()) return NULL;
            PyObject *fresh = PyList_New(3);
            if (!fresh) return NULL;
            for (int k = 0; k < 3; k++) PyList_SET_ITEM(fresh, k, Py_NewRef(vals[k]));
            int rc = PyDict_SetItem(per_line, line, fresh);
            Py_DECREF(fresh);
            if (rc < 0) return NULL;
            continue;
        }
        if (!PyList_Check(acc) || PyList_GET_SIZE(acc) != 3) {
            PyErr_SetString(PyExc_TypeError, "fold_lines: per-line entry is not a 3-list");
            return NULL;
        }
        for (int k = 0; k < 3; k++)
            if (!add_item(acc, k, vals[k])) return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject **window = PySequence_Fast_ITEMS(charge) + j * N_STATES;
        int any = 0;
        for (int k = 0; k < N_STATES && !any; k++) {
            int t = PyObject_IsTrue(window[k]);
            if (t < 0) return NULL;
            any = t;
        }
        if (!any) continue; /* a line's entry is created on its first charge */
        PyObject *line = PyTuple_GET_ITEM(lines, j);
        PyObject *ls = PyDict_GetItemWithError(line_states, line);
        if (!ls) {
            if (PyErr_Occurred()) return NULL;
            PyObject *fresh = PyList_New(N_STATES);
            if (!fresh) return NULL;
            for (int k = 0; k < N_STATES; k++) PyList_SET_ITEM(fresh, k, Py_NewRef(window[k]));
            int rc = PyDict_SetItem(line_states, line, fresh);
            Py_DECREF(fresh);
            if (rc < 0) return NULL;
            continue;
        }
        if (!PyList_Check(ls) || PyList_GET_SIZE(ls) != N_STATES) {
            PyErr_SetString(PyExc_TypeError, "fold_lines: line-state entry is not a 5-list");
            return NULL;
        }
        for (int k = 0; k < N_STATES; k++)
            if (!add_item(ls, k, window[k])) return NULL;
    }
    Py_RETURN_NONE;
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

/* col_range(buf): (min, max) of an int64 column, None when it is empty. A separate helper for the
 * wave validation of hotspot/att/engine/validate.py (the checks themselves stay in Python, shared
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

static PyMethodDef methods[] = {
    {"scan", scan, METH_O, "Parse a plain wave file into int64 columns, or None."},
    {"charge", charge, METH_VARARGS, "Charge a wave's timeline to instruction windows."},
    {"edges_key", edges_key, METH_O, "Canonical encoding of a JSON array of integer arrays."},
    {"count_pairs", count_pairs, METH_VARARGS, "Histogram of issue-to-wait cycles per pair."},
    {"fold_lines", fold_lines, METH_VARARGS, "Fold a sequence group's sums into per-line dicts."},
    {"gather_add", gather_add, METH_VARARGS, "acc[i] += col[positions[i]]."},
    {"arrivals", arrivals, METH_VARARGS, "Barrier (arrival, release) pairs at positions."},
    {"add", add, METH_VARARGS, "acc[i] += col[i] over int64 buffers."},
    {"col_range", col_range, METH_O, "(min, max) of an int64 column, or None when empty."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wavescan",
                                    "Native fast path of the wave pass.", -1, methods};

PyMODINIT_FUNC PyInit__wavescan(void) {
    return PyModule_Create(&module);
}
