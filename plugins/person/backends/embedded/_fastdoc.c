/* The loader's hot path in C: one JSON line straight to the engine document, without building Python objects.
 *
 * prepare(raw: bytes, seq: int) -> (id, seq, document: str, dataset_version or None), or None.
 *
 * It gives exactly what layout.prepare_document(orjson.loads(raw), raw, seq) gives (the same fields and values; the
 * order of keys and of `_field_names` may differ) for the records a dataset is made of: strings in keyword and text
 * fields, integers in integer fields, numbers in float fields, yyyy[-MM[-dd]] strings in date fields, booleans or
 * strings in boolean fields. For anything else (a number in a keyword field, a duplicated key, a bad line, an escape
 * in a key or in a value it must compare, a nesting it does not know) it answers None and the caller takes the Python
 * path, which either indexes the record the same way or names what is wrong with it. The schema comes from Python
 * (configure), so the one definition of the fields stays in profile_fields.py.
 *
 * The GIL is held throughout and no Python code runs mid-call, so the module's reusable buffers need no lock.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { KEYWORD, TEXT, INTEGER, FLOAT, DATE, BOOLEAN };
#define MAX_DEPTH 32
#define MAX_ANCESTORS 8
#define SEQ_BITS 31
#define SEQ_MAX ((1LL << SEQ_BITS) - 1)
#define VALUE_OFFSET (1LL << 31)

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_reserve(Buf *b, size_t more) {
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const char *s, size_t n) {
    if (buf_reserve(b, n))
        return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

#define PUT_LITERAL(b, s) buf_put((b), (s), sizeof(s) - 1)

static int buf_put_int(Buf *b, long long value) {
    char text[24], *end = text + sizeof text, *p = end;
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    do {
        *--p = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (value < 0)
        *--p = '-';
    return buf_put(b, p, (size_t)(end - p));
}

typedef struct {
    char *key;
    size_t len;
    int is_object;
    int index; /* a leaf's slot, or an object's node */
} Child;

typedef struct {
    Child *children;
    int count;
} Node;

typedef struct {
    char *path;
    size_t path_len;
    int kind, single, minmax, fold;
    int ancestors[MAX_ANCESTORS], ancestor_count;
    /* per record */
    Buf values; /* comma-separated JSON values */
    int count;
    size_t min_at, min_len, max_at, max_len; /* string contents within values, for __min/__max */
    long long number;                         /* a single integer or date value, for __asc/__desc */
    int converted;                            /* a value was a boolean made a string (id and dataset_version must be strings) */
} Leaf;

static Node *nodes;
static int node_count;
static Leaf *leaves;
static int leaf_count;
static char **names;
static size_t *name_lens;
static int name_count;
static int id_slot = -1, version_slot = -1;
static char *name_present;
static Buf out;
static int saw_non_ascii; /* whether a string of the record holds a byte past ASCII (else its document is built as ASCII) */
static char base64_pairs[4096][2]; /* two base64 characters per 12 bits */

typedef struct {
    const unsigned char *p, *end;
} Cursor;

static void skip_ws(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int hex_value(unsigned char h) {
    if (h >= '0' && h <= '9')
        return h - '0';
    if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
    if (h >= 'A' && h <= 'F')
        return h - 'A' + 10;
    return -1;
}

/* The high bit of each of 8 bytes (little-endian) that is a quote, a backslash, a control character or not ASCII. Bytes
 * above the first such byte may be flagged falsely (a borrow), so only the lowest flag is exact: the first one. */
static inline uint64_t special8(uint64_t word) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t quote = word ^ (ones * '"'), backslash = word ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) | ((word - ones * 0x20) & ~word) | word) & high;
}

/* A string token at c->p (on its opening quote): sets [start, end) to its contents and *escaped when it holds a
 * backslash. Rejects what orjson rejects (control characters, bad escapes, invalid UTF-8) and, to stay on the safe side,
 * \u escapes of surrogates. */
static int scan_string(Cursor *c, const unsigned char **start, const unsigned char **end, int *escaped) {
    const unsigned char *p = c->p + 1, *e = c->end;
    *escaped = 0;
    *start = p;
    for (;;) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (e - p >= 8) {
            uint64_t word;
            memcpy(&word, p, 8);
            uint64_t flags = special8(word);
            if (flags) {
                p += __builtin_ctzll(flags) / 8;
                break;
            }
            p += 8;
        }
#endif
        if (p >= e)
            break;
        unsigned char ch = *p;
        if (ch == '"') {
            *end = p;
            c->p = p + 1;
            return 0;
        }
        if (ch < 0x20)
            return -1;
        if (ch == '\\') {
            *escaped = 1;
            if (p + 1 >= e)
                return -1;
            unsigned char kind = p[1];
            if (kind == 'u') {
                if (p + 6 > e)
                    return -1;
                int code = 0;
                for (int k = 2; k < 6; k++) {
                    int h = hex_value(p[k]);
                    if (h < 0)
                        return -1;
                    code = code * 16 + h;
                }
                if (code >= 0xD800 && code <= 0xDFFF)
                    return -1;
                p += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", kind) || kind == 0)
                return -1;
            p += 2;
            continue;
        }
        if (ch < 0x80) { /* the tail of a string shorter than a word */
            p++;
            continue;
        }
        saw_non_ascii = 1;
        /* UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF */
        int more;
        unsigned int code;
        if (ch >= 0xC2 && ch <= 0xDF) {
            more = 1;
            code = ch & 0x1F;
        } else if (ch >= 0xE0 && ch <= 0xEF) {
            more = 2;
            code = ch & 0x0F;
        } else if (ch >= 0xF0 && ch <= 0xF4) {
            more = 3;
            code = ch & 0x07;
        } else {
            return -1;
        }
        if (p + more >= e)
            return -1;
        for (int k = 1; k <= more; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return -1;
            code = (code << 6) | (p[k] & 0x3F);
        }
        if ((more == 2 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) || (more == 3 && (code < 0x10000 || code > 0x10FFFF)))
            return -1;
        p += more + 1;
    }
    return -1;
}

static int scan_number_token(Cursor *c, const unsigned char **start, const unsigned char **end, int *integral) {
    const unsigned char *p = c->p, *e = c->end;
    *start = p;
    *integral = 1;
    if (p < e && *p == '-')
        p++;
    if (p >= e)
        return -1;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    } else {
        return -1;
    }
    if (p < e && *p == '.') {
        *integral = 0;
        p++;
        if (p >= e || *p < '0' || *p > '9')
            return -1;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        *integral = 0;
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || *p < '0' || *p > '9')
            return -1;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    *end = p;
    c->p = p;
    return 0;
}

/* A number token's value as a double; -1 past 63 characters or past a double's range (which orjson refuses). */
static int token_double(const unsigned char *s, const unsigned char *e, double *value) {
    char text[64];
    size_t len = (size_t)(e - s);
    if (len >= sizeof text)
        return -1;
    memcpy(text, s, len);
    text[len] = 0;
    *value = strtod(text, NULL);
    return *value - *value == 0 ? 0 : -1; /* finite */
}

/* A number token: [start, end), *integral when it has no fraction or exponent. JSON's grammar, and within a double's
 * range, as orjson reads it (integers past 18 digits and numbers past 63 characters are left to the Python path). */
static int scan_number(Cursor *c, const unsigned char **start, const unsigned char **end, int *integral) {
    if (scan_number_token(c, start, end, integral))
        return -1;
    if (*integral)
        return *end - *start > 18 ? -1 : 0;
    double value;
    return token_double(*start, *end, &value);
}

static int scan_literal(Cursor *c, const char *word, size_t len) {
    if ((size_t)(c->end - c->p) < len || memcmp(c->p, word, len))
        return -1;
    c->p += len;
    return 0;
}

/* At an opening bracket: 1 when an item follows (the cursor on it), 0 when the container is empty (its closing bracket
 * passed). Each container walk is: more = open_items(); while (more > 0) { the item; more = next_item(); } return more. */
static int open_items(Cursor *c, unsigned char close) {
    c->p++;
    skip_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 0;
    }
    return 1;
}

/* After an item: 1 when another follows (its comma passed, the cursor on it), 0 at the closing bracket (passed), -1
 * for anything else. */
static int next_item(Cursor *c, unsigned char close) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ',') {
        c->p++;
        skip_ws(c);
        return 1;
    }
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 0;
    }
    return -1;
}

/* An object member's key and colon: [start, end) is the key, *escaped when it holds a backslash; the cursor ends on the
 * value. */
static int member_key(Cursor *c, const unsigned char **start, const unsigned char **end, int *escaped) {
    if (c->p >= c->end || *c->p != '"' || scan_string(c, start, end, escaped))
        return -1;
    skip_ws(c);
    if (c->p >= c->end || *c->p != ':')
        return -1;
    c->p++;
    skip_ws(c);
    return 0;
}

/* Any JSON value, checked and passed over (a key the schema does not know). */
static int skip_value(Cursor *c, int depth) {
    const unsigned char *s, *t;
    int flag, more;
    if (depth > MAX_DEPTH || c->p >= c->end)
        return -1;
    switch (*c->p) {
    case '"':
        return scan_string(c, &s, &t, &flag);
    case 't':
        return scan_literal(c, "true", 4);
    case 'f':
        return scan_literal(c, "false", 5);
    case 'n':
        return scan_literal(c, "null", 4);
    case '[':
        more = open_items(c, ']');
        while (more > 0) {
            if (skip_value(c, depth + 1))
                return -1;
            more = next_item(c, ']');
        }
        return more;
    case '{':
        more = open_items(c, '}');
        while (more > 0) {
            if (member_key(c, &s, &t, &flag) || skip_value(c, depth + 1))
                return -1;
            more = next_item(c, '}');
        }
        return more;
    default:
        return scan_number(c, &s, &t, &flag);
    }
}

static int parse_int64(const unsigned char *s, const unsigned char *e, long long *value) {
    int negative = s < e && *s == '-';
    if (negative)
        s++;
    if (e - s > 18) /* keep clear of overflow; larger integers take the Python path */
        return -1;
    long long v = 0;
    for (; s < e; s++)
        v = v * 10 + (*s - '0');
    *value = negative ? -v : v;
    return 0;
}

static int days_in_month(int year, int month) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
        return 29;
    return days[month - 1];
}

/* yyyy, yyyy-M[M] or yyyy-M[M]-d[d] (ASCII digits, nothing around it) -> days since 0001-01-01 plus one, as
 * Python's date.toordinal(); -1 for anything else. */
static long long date_ordinal(const unsigned char *s, const unsigned char *e) {
    int parts[3] = {0, 1, 1}, count = 0, digits = 0;
    if (e - s > 10)
        return -1;
    for (const unsigned char *p = s; p <= e; p++) {
        if (p == e || *p == '-') {
            if (digits == 0 || count == 3 || (count == 0 && digits != 4))
                return -1;
            count++;
            digits = 0;
            if (p < e && count < 3)
                parts[count] = 0;
            else if (p < e)
                return -1;
            continue;
        }
        if (*p < '0' || *p > '9')
            return -1;
        parts[count] = parts[count] * 10 + (*p - '0');
        digits++;
    }
    int year = parts[0], month = parts[1], day = parts[2];
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month))
        return -1;
    long long y = year - 1;
    long long ordinal = y * 365 + y / 4 - y / 100 + y / 400;
    for (int m = 1; m < month; m++)
        ordinal += days_in_month(year, m);
    return ordinal + day;
}

/* Python's order of str values: UTF-8 bytes compare as their code points do. */
static int compare(const char *a, size_t a_len, const char *b, size_t b_len) {
    int order = memcmp(a, b, a_len < b_len ? a_len : b_len);
    return order ? order : (a_len > b_len) - (a_len < b_len);
}

static void mark_present(const Leaf *leaf) {
    for (int k = 0; k < leaf->ancestor_count; k++)
        name_present[leaf->ancestors[k]] = 1;
}

/* One scalar value of `leaf` at c->p: converted as flatten's converters do and appended to the leaf's values.
 * 1 when it was null (nothing appended), 0 when appended, -1 when the Python path must decide. */
static int leaf_scalar(Cursor *c, Leaf *leaf) {
    const unsigned char *s, *t;
    int flag;
    unsigned char ch = c->p < c->end ? *c->p : 0;
    if (ch == 'n')
        return scan_literal(c, "null", 4) ? -1 : 1;
    if (leaf->count && PUT_LITERAL(&leaf->values, ","))
        return -1;
    switch (leaf->kind) {
    case KEYWORD:
    case TEXT:
    case BOOLEAN:
        if (ch == '"') {
            if (scan_string(c, &s, &t, &flag) || (flag && leaf->minmax))
                return -1;
            size_t at = leaf->values.len + 1, len = (size_t)(t - s);
            if (buf_put(&leaf->values, (const char *)s - 1, len + 2))
                return -1;
            if (leaf->minmax) {
                const char *data = leaf->values.data;
                if (!leaf->count || compare(data + at, len, data + leaf->min_at, leaf->min_len) < 0) {
                    leaf->min_at = at;
                    leaf->min_len = len;
                }
                if (!leaf->count || compare(data + at, len, data + leaf->max_at, leaf->max_len) > 0) {
                    leaf->max_at = at;
                    leaf->max_len = len;
                }
            }
            break;
        }
        if ((ch == 't' || ch == 'f') && !leaf->minmax && leaf->kind != TEXT) {
            int truth = ch == 't';
            if (truth ? scan_literal(c, "true", 4) : scan_literal(c, "false", 5))
                return -1;
            if (truth ? PUT_LITERAL(&leaf->values, "\"true\"") : PUT_LITERAL(&leaf->values, "\"false\""))
                return -1;
            leaf->converted = 1;
            break;
        }
        return -1;
    case INTEGER:
        if (ch != '-' && (ch < '0' || ch > '9'))
            return -1;
        if (scan_number(c, &s, &t, &flag) || !flag || parse_int64(s, t, &leaf->number) || buf_put_int(&leaf->values, leaf->number))
            return -1;
        break;
    case FLOAT: {
        if (ch != '-' && (ch < '0' || ch > '9'))
            return -1;
        double value;
        if (scan_number_token(c, &s, &t, &flag) || (flag && t - s > 18) || token_double(s, t, &value))
            return -1;
        char text[32];
        int n = snprintf(text, sizeof text, "%.17g", value);
        if (buf_put(&leaf->values, text, (size_t)n))
            return -1;
        if (!strpbrk(text, ".eEn") && PUT_LITERAL(&leaf->values, ".0"))
            return -1;
        break;
    }
    case DATE:
        if (ch != '"' || scan_string(c, &s, &t, &flag) || flag)
            return -1;
        leaf->number = date_ordinal(s, t);
        if (leaf->number < 0 || buf_put_int(&leaf->values, leaf->number))
            return -1;
        break;
    default:
        return -1;
    }
    leaf->count++;
    mark_present(leaf);
    return 0;
}

/* A leaf's value: one scalar, or (but for top-level single fields) a list of scalars. */
static int leaf_value(Cursor *c, Leaf *leaf) {
    if (c->p < c->end && *c->p == '[') {
        if (leaf->single)
            return -1;
        int more = open_items(c, ']');
        while (more > 0) {
            if ((c->p < c->end && *c->p == '[') || leaf_scalar(c, leaf) < 0)
                return -1;
            more = next_item(c, ']');
        }
        return more;
    }
    if (c->p < c->end && *c->p == '{')
        return -1;
    return leaf_scalar(c, leaf) < 0 ? -1 : 0;
}

static int object_value(Cursor *c, const Node *node, int depth);

/* The members of an object at c->p, each known key walked by its child (a leaf or an object), the others skipped. */
static int object_members(Cursor *c, const Node *node, int depth) {
    const unsigned char *s, *t;
    int escaped;
    uint64_t seen = 0;
    int more = open_items(c, '}');
    while (more > 0) {
        if (member_key(c, &s, &t, &escaped) || escaped)
            return -1;
        size_t len = (size_t)(t - s);
        const Child *child = NULL;
        int k;
        for (k = 0; k < node->count; k++) {
            if (node->children[k].len == len && !memcmp(node->children[k].key, s, len)) {
                child = &node->children[k];
                break;
            }
        }
        if (!child) {
            if (skip_value(c, depth + 1))
                return -1;
        } else {
            if (seen & (1ULL << k)) /* a repeated key: Python keeps the last value, the Python path decides */
                return -1;
            seen |= 1ULL << k;
            if (child->is_object) {
                if (object_value(c, &nodes[child->index], depth + 1))
                    return -1;
            } else {
                Leaf *leaf = &leaves[child->index];
                if (leaf->single && leaf->count)
                    return -1;
                if (leaf_value(c, leaf))
                    return -1;
            }
        }
        more = next_item(c, '}');
    }
    return more;
}

/* An object array's value: an object, null, or a list of those (lists inside lists walked through, as flatten does). */
static int object_value(Cursor *c, const Node *node, int depth) {
    if (depth > MAX_DEPTH || c->p >= c->end)
        return -1;
    if (*c->p == '{')
        return object_members(c, node, depth);
    if (*c->p == 'n')
        return scan_literal(c, "null", 4);
    if (*c->p != '[')
        return -1;
    int more = open_items(c, ']');
    while (more > 0) {
        if (object_value(c, node, depth + 1))
            return -1;
        more = next_item(c, ']');
    }
    return more;
}

static const char BASE64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int put_base64(Buf *b, const unsigned char *s, size_t n) {
    if (buf_reserve(b, (n + 2) / 3 * 4))
        return -1;
    char *o = b->data + b->len;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = ((uint32_t)s[i] << 16) | ((uint32_t)s[i + 1] << 8) | s[i + 2];
        memcpy(o, base64_pairs[v >> 12], 2);
        memcpy(o + 2, base64_pairs[v & 4095], 2);
        o += 4;
    }
    if (i < n) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)s[i + 1] << 8;
        *o++ = BASE64[v >> 18];
        *o++ = BASE64[(v >> 12) & 63];
        *o++ = i + 1 < n ? BASE64[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    b->len = (size_t)(o - b->data);
    return 0;
}

static int put_key(Buf *b, const char *path, size_t len, const char *suffix) {
    return PUT_LITERAL(b, "\"") || buf_put(b, path, len) || buf_put(b, suffix, strlen(suffix)) || PUT_LITERAL(b, "\":");
}

/* The engine document of the record just walked, into `out`. */
static int write_document(const unsigned char *raw, size_t raw_len, long long seq) {
    out.len = 0;
    if (PUT_LITERAL(&out, "{"))
        return -1;
    for (int i = 0; i < leaf_count; i++) {
        Leaf *leaf = &leaves[i];
        if (!leaf->count)
            continue;
        if (put_key(&out, leaf->path, leaf->path_len, ""))
            return -1;
        if (leaf->single ? buf_put(&out, leaf->values.data, leaf->values.len)
                         : (PUT_LITERAL(&out, "[") || buf_put(&out, leaf->values.data, leaf->values.len) || PUT_LITERAL(&out, "]")))
            return -1;
        if (PUT_LITERAL(&out, ","))
            return -1;
        if (leaf->minmax) {
            if (put_key(&out, leaf->path, leaf->path_len, "__min") || PUT_LITERAL(&out, "\"") ||
                buf_put(&out, leaf->values.data + leaf->min_at, leaf->min_len) || PUT_LITERAL(&out, "\",") ||
                put_key(&out, leaf->path, leaf->path_len, "__max") || PUT_LITERAL(&out, "\"") ||
                buf_put(&out, leaf->values.data + leaf->max_at, leaf->max_len) || PUT_LITERAL(&out, "\","))
                return -1;
        }
        if (leaf->fold) {
            long long value = leaf->number;
            if (value < -VALUE_OFFSET || value >= VALUE_OFFSET)
                return -1;
            long long key = (value + VALUE_OFFSET) << SEQ_BITS;
            if (put_key(&out, leaf->path, leaf->path_len, "__asc") || buf_put_int(&out, key | seq) || PUT_LITERAL(&out, ",") ||
                put_key(&out, leaf->path, leaf->path_len, "__desc") || buf_put_int(&out, key | (SEQ_MAX - seq)) ||
                PUT_LITERAL(&out, ","))
                return -1;
        }
    }
    if (PUT_LITERAL(&out, "\"_field_names\":["))
        return -1;
    int first = 1;
    for (int k = 0; k < name_count; k++) {
        if (!name_present[k])
            continue;
        if ((!first && PUT_LITERAL(&out, ",")) || PUT_LITERAL(&out, "\"") || buf_put(&out, names[k], name_lens[k]) ||
            PUT_LITERAL(&out, "\""))
            return -1;
        first = 0;
    }
    if (PUT_LITERAL(&out, "],\"_seq\":") || buf_put_int(&out, seq) || PUT_LITERAL(&out, ",\"_source\":\"") ||
        put_base64(&out, raw, raw_len) || PUT_LITERAL(&out, "\"}"))
        return -1;
    return 0;
}

static PyObject *leaf_string(const Leaf *leaf) {
    /* a single string leaf's value without its quotes (escapes were refused for id and dataset_version) */
    return PyUnicode_DecodeUTF8(leaf->values.data + 1, (Py_ssize_t)leaf->values.len - 2, NULL);
}

static PyObject *prepare(PyObject *self, PyObject *args) {
    Py_buffer raw;
    long long seq;
    if (!nodes) {
        PyErr_SetString(PyExc_RuntimeError, "_fastdoc.configure() has not run");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*L", &raw, &seq))
        return NULL;
    PyObject *result = NULL;
    const unsigned char *data = raw.buf;
    Cursor c = {data, data + raw.len};
    for (int i = 0; i < leaf_count; i++) {
        leaves[i].values.len = 0;
        leaves[i].count = 0;
        leaves[i].converted = 0;
    }
    memset(name_present, 0, (size_t)name_count);
    saw_non_ascii = 0;
    skip_ws(&c);
    if (seq < 0 || seq > SEQ_MAX || c.p >= c.end || *c.p != '{' || object_members(&c, &nodes[0], 0))
        goto fallback;
    skip_ws(&c);
    if (c.p != c.end)
        goto fallback;
    Leaf *id = &leaves[id_slot], *version = &leaves[version_slot];
    /* the id: a non-empty string without escapes; dataset_version: a string without escapes, if any */
    if (!id->count || id->converted || id->values.len <= 2 || id->values.data[0] != '"' || memchr(id->values.data, '\\', id->values.len))
        goto fallback;
    if (version->count && (version->converted || memchr(version->values.data, '\\', version->values.len)))
        goto fallback;
    if (write_document(data, (size_t)raw.len, seq))
        goto fallback;
    PyObject *record_id = leaf_string(id);
    PyObject *document;
    if (saw_non_ascii) {
        document = PyUnicode_DecodeUTF8(out.data, (Py_ssize_t)out.len, NULL);
    } else if ((document = PyUnicode_New((Py_ssize_t)out.len, 127))) {
        memcpy(PyUnicode_1BYTE_DATA(document), out.data, out.len);
    }
    PyObject *dataset_version = version->count ? leaf_string(version) : Py_NewRef(Py_None);
    if (record_id && document && dataset_version)
        result = Py_BuildValue("(OLOO)", record_id, seq, document, dataset_version);
    Py_XDECREF(record_id);
    Py_XDECREF(document);
    Py_XDECREF(dataset_version);
    PyBuffer_Release(&raw);
    return result;
fallback:
    PyBuffer_Release(&raw);
    Py_RETURN_NONE;
}

static char *copy_utf8(PyObject *text, size_t *len) {
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (!utf8)
        return NULL;
    char *copy = malloc((size_t)size + 1);
    if (!copy) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(copy, utf8, (size_t)size + 1);
    *len = (size_t)size;
    return copy;
}

/* configure(leaves, nodes, names): leaves = [(path, kind, single, minmax, fold, [name indexes])]; nodes = [[(key,
 * is_object, index)]], node 0 being the record itself; names = every path and object path `exists` knows. Once. */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *leaf_specs, *node_specs, *name_specs;
    if (nodes) {
        PyErr_SetString(PyExc_RuntimeError, "_fastdoc is already configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &leaf_specs, &PyList_Type, &node_specs, &PyList_Type, &name_specs))
        return NULL;
    name_count = (int)PyList_GET_SIZE(name_specs);
    names = calloc((size_t)name_count + 1, sizeof *names);
    name_lens = calloc((size_t)name_count + 1, sizeof *name_lens);
    name_present = calloc((size_t)name_count + 1, 1);
    leaf_count = (int)PyList_GET_SIZE(leaf_specs);
    leaves = calloc((size_t)leaf_count + 1, sizeof *leaves);
    Node *built = calloc((size_t)PyList_GET_SIZE(node_specs) + 1, sizeof *built);
    if (!names || !name_lens || !name_present || !leaves || !built) {
        PyErr_NoMemory();
        return NULL;
    }
    for (int k = 0; k < name_count; k++)
        if (!(names[k] = copy_utf8(PyList_GET_ITEM(name_specs, k), &name_lens[k])))
            return NULL;
    for (int i = 0; i < leaf_count; i++) {
        PyObject *path, *ancestors;
        Leaf *leaf = &leaves[i];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(leaf_specs, i), "UipppO!", &path, &leaf->kind, &leaf->single, &leaf->minmax,
                              &leaf->fold, &PyList_Type, &ancestors))
            return NULL;
        if (!(leaf->path = copy_utf8(path, &leaf->path_len)))
            return NULL;
        leaf->ancestor_count = (int)PyList_GET_SIZE(ancestors);
        if (leaf->ancestor_count > MAX_ANCESTORS) {
            PyErr_SetString(PyExc_ValueError, "too many ancestors");
            return NULL;
        }
        for (int k = 0; k < leaf->ancestor_count; k++) {
            long name = PyLong_AsLong(PyList_GET_ITEM(ancestors, k));
            if (name < 0 || name >= name_count) {
                PyErr_SetString(PyExc_ValueError, "an ancestor index out of range");
                return NULL;
            }
            leaf->ancestors[k] = (int)name;
        }
        if (!strcmp(leaf->path, "id"))
            id_slot = i;
        if (!strcmp(leaf->path, "dataset_version"))
            version_slot = i;
    }
    for (Py_ssize_t n = 0; n < PyList_GET_SIZE(node_specs); n++) {
        PyObject *children = PyList_GET_ITEM(node_specs, n);
        built[n].count = (int)PyList_GET_SIZE(children);
        if (built[n].count > 64) {
            PyErr_SetString(PyExc_ValueError, "an object of more than 64 known keys");
            return NULL;
        }
        built[n].children = calloc((size_t)built[n].count + 1, sizeof(Child));
        if (!built[n].children) {
            PyErr_NoMemory();
            return NULL;
        }
        for (int k = 0; k < built[n].count; k++) {
            PyObject *key;
            Child *child = &built[n].children[k];
            if (!PyArg_ParseTuple(PyList_GET_ITEM(children, k), "Upi", &key, &child->is_object, &child->index) ||
                !(child->key = copy_utf8(key, &child->len)))
                return NULL;
            if (child->index < 0 || child->index >= (child->is_object ? (int)PyList_GET_SIZE(node_specs) : leaf_count)) {
                PyErr_SetString(PyExc_ValueError, "a child index out of range");
                return NULL;
            }
        }
    }
    if (id_slot < 0 || version_slot < 0) {
        PyErr_SetString(PyExc_ValueError, "the schema needs id and dataset_version leaves");
        return NULL;
    }
    for (int v = 0; v < 4096; v++) {
        base64_pairs[v][0] = BASE64[v >> 6];
        base64_pairs[v][1] = BASE64[v & 63];
    }
    node_count = (int)PyList_GET_SIZE(node_specs);
    nodes = built;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"prepare", prepare, METH_VARARGS, "prepare(raw, seq) -> (id, seq, document, dataset_version) or None"},
    {"configure", configure, METH_VARARGS, "configure(leaves, nodes, names): the schema, once"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastdoc", "The loader's hot path in C.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fastdoc(void) { return PyModule_Create(&module); }
