/*
 * The alignment writer's common case in C: a BAM record, as it lies in the inflated file, written as the
 * JSON bytes of a ReadAlignment, byte for byte as alignment-writer.ts writes it. The TypeScript writer
 * stays the reference and writes every record this one hands back (returns -1 for): a read name or a
 * string tag that needs escaping, a float tag, a CIGAR kept in a CG tag, and anything malformed, which
 * the TypeScript writer refuses with its own message. Every key and id text comes from TypeScript when
 * the writer is made (create); this file knows the order of a record's fields, not their names.
 *
 * It also runs the reads service's page loop for a run of records (write_run), where one lane reads one
 * set (all of its read groups, or some of its first 32), so that a page is a few calls, not one a record.
 *
 * Why it exists: writing ~1.2 KB of JSON per read was ~0.7 us of the page worker's ~1.5 us a read in
 * TypeScript, and the loop around it ~0.2 us, the largest parts of the bound on paging reads
 * (docs/performance.md, "Read pages").
 */
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint8_t *bytes;
  uint32_t length;
} Text;

/* The texts of one naming form, by what they precede. */
typedef struct {
  Text improper_placement, duplicate_fragment, number_reads, fragment_length, read_number, failed_qc;
  Text secondary, supplementary, aligned_sequence, strand_plus, strand_minus, mapping_quality, cigar;
  Text aligned_quality, attributes, values, int32_value, int64_value, string_value;
  Text cigar_ops[9];
  /* Per read group, per reference (twice: the alignment's and the mate's). */
  Text *group, *alignment, *mate;
  uint32_t group_count, alignment_count, mate_count;
  /* The longest of the key texts above, and of the per-group and per-reference texts. */
  uint32_t longest_key, longest_set_text;
} FormTexts;

/* The runs of keys and values between a record's numbers that its flag alone decides (bits 0-11). */
typedef struct {
  Text before_length;   /* improperPlacement to the fragmentLength key */
  Text after_length;    /* readNumber (when there is one) and failedVendorQualityChecks */
  Text after_alignment; /* secondaryAlignment and supplementaryAlignment */
} FlagTexts;

typedef struct {
  FormTexts forms[2];
  /* Per form, per flag: made when the flag is first met (a file has a few dozen flags). */
  FlagTexts *flag_texts[2][4096];
  uint32_t group_count, reference_count;
  /* Per group, per reference and one more for none: the id's base64 start and the 0-2 bytes left over. */
  Text *id_encoded, *id_rest;
  uint32_t id_count, id_rest_count;
  uint32_t longest_id;
  /* The read group names (the @RG IDs), to find a record's group by its RG tag; their count is group_count. */
  Text *group_names;
  uint32_t group_name_count;
  /* The room the TypeScript writer takes for a record: fixed_bytes + bytes_per_record_byte per byte of it. */
  uint32_t fixed_bytes, bytes_per_record_byte;
} Writer;

static uint16_t base_pairs[256];
static uint32_t quality_text[256];
static uint8_t quality_length[256];
/* Two qualities and their commas at once, by the two bytes as a little-endian 16-bit number: the loop's
 * stores and its chain of lengths are half as many. */
static uint64_t quality_pair_text[65536];
static uint8_t quality_pair_length[65536];
/* The two digits of 0..99. */
static uint8_t digit_pairs[200];
static uint16_t base64_pairs[4096];
static const char base64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void make_tables(void) {
  static const char bases[] = "=ACMGRSVTWYHKDBN";
  for (int i = 0; i < 256; i++) {
    base_pairs[i] = (uint16_t)((uint8_t)bases[i >> 4] | ((uint8_t)bases[i & 15] << 8));
    char text[8];
    int n = 0;
    if (i >= 100) text[n++] = (char)('0' + i / 100);
    if (i >= 10) text[n++] = (char)('0' + (i / 10) % 10);
    text[n++] = (char)('0' + i % 10);
    text[n++] = ',';
    quality_length[i] = (uint8_t)n;
    quality_text[i] = 0;
    for (int k = 0; k < n; k++) quality_text[i] |= (uint32_t)(uint8_t)text[k] << (8 * k);
  }
  for (int v = 0; v < 65536; v++) {
    quality_pair_text[v] = quality_text[v & 255] | ((uint64_t)quality_text[v >> 8] << (8 * quality_length[v & 255]));
    quality_pair_length[v] = (uint8_t)(quality_length[v & 255] + quality_length[v >> 8]);
  }
  for (int i = 0; i < 100; i++) {
    digit_pairs[i * 2] = (uint8_t)('0' + i / 10);
    digit_pairs[i * 2 + 1] = (uint8_t)('0' + i % 10);
  }
  for (int v = 0; v < 4096; v++) base64_pairs[v] = (uint16_t)((uint8_t)base64url[v >> 6] | ((uint8_t)base64url[v & 63] << 8));
}

static inline int32_t int32_at(const uint8_t *b) { return (int32_t)((uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24)); }
static inline uint32_t uint32_at(const uint8_t *b) { return (uint32_t)int32_at(b); }

static inline uint8_t *put(uint8_t *o, const Text *t) {
  memcpy(o, t->bytes, t->length);
  return o + t->length;
}

static inline uint8_t *put_bool(uint8_t *o, int value) {
  if (value) {
    memcpy(o, "true", 4);
    return o + 4;
  }
  memcpy(o, "false", 5);
  return o + 5;
}

/* The decimal text of an integer from -2^31 to 2^32 - 1: at most 11 bytes, written from its end two digits at a time. */
static inline uint8_t *put_int(uint8_t *o, int64_t value) {
  if (value < 0) *o++ = '-';
  uint32_t n = (uint32_t)(value < 0 ? -value : value);
  int digits = n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
  uint8_t *end = o + digits, *at = end;
  while (n >= 100) {
    uint32_t pair = (n % 100) * 2;
    n /= 100;
    *--at = digit_pairs[pair + 1];
    *--at = digit_pairs[pair];
  }
  if (n >= 10) {
    *--at = digit_pairs[n * 2 + 1];
    *--at = digit_pairs[n * 2];
  } else *--at = (uint8_t)('0' + n);
  return end;
}

/* Printable ASCII without a quote or a backslash: goes into a JSON string as it is. */
static inline int is_plain(const uint8_t *b, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) {
    uint8_t c = b[i];
    if (c < 32 || c == 34 || c == 92 || c > 126) return 0;
  }
  return 1;
}

/* base64url without padding of text[0, n). */
static uint8_t *put_base64(uint8_t *o, const uint8_t *text, size_t n) {
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = ((uint32_t)text[i] << 16) | ((uint32_t)text[i + 1] << 8) | text[i + 2];
    uint16_t pairs[2] = {base64_pairs[v >> 12], base64_pairs[v & 4095]};
    memcpy(o, pairs, 4);
    o += 4;
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)text[i] << 16;
    *o++ = (uint8_t)base64url[v >> 18];
    *o++ = (uint8_t)base64url[(v >> 12) & 63];
  } else if (n - i == 2) {
    uint32_t v = ((uint32_t)text[i] << 16) | ((uint32_t)text[i + 1] << 8);
    *o++ = (uint8_t)base64url[v >> 18];
    *o++ = (uint8_t)base64url[(v >> 12) & 63];
    *o++ = (uint8_t)base64url[(v >> 6) & 63];
  }
  return o;
}

/* Bytes of one value of a fixed-size tag type; 0 for any other type. */
static inline int tag_size(uint8_t type) {
  switch (type) {
    case 'A': case 'c': case 'C': return 1;
    case 's': case 'S': return 2;
    case 'i': case 'I': case 'f': return 4;
    default: return 0;
  }
}

/* The integer of tag type `type` at b; sets *ok to 0 for a type that is not an integer. */
static inline int64_t integer_at(uint8_t type, const uint8_t *b, int *ok) {
  switch (type) {
    case 'c': return (int8_t)b[0];
    case 'C': return b[0];
    case 's': return (int16_t)(b[0] | (b[1] << 8));
    case 'S': return (uint16_t)(b[0] | (b[1] << 8));
    case 'i': return int32_at(b);
    case 'I': return uint32_at(b);
    default: *ok = 0; return 0;
  }
}

/* The end of the tag at b[tag] within end, or 0 when it runs past it or has an unknown type. */
static size_t skip_tag(const uint8_t *b, size_t tag, size_t end) {
  if (tag + 3 > end) return 0;
  uint8_t type = b[tag + 2];
  int size = tag_size(type);
  if (size) return tag + 3 + size <= end ? tag + 3 + size : 0;
  if (type == 'Z' || type == 'H') {
    size_t stop = tag + 3;
    while (stop < end && b[stop] != 0) stop++;
    return stop < end ? stop + 1 : 0;
  }
  if (type == 'B') {
    if (tag + 8 > end) return 0;
    int element = tag_size(b[tag + 3]);
    int64_t count = int32_at(b + tag + 4);
    if (!element || count < 0) return 0;
    int64_t next = (int64_t)tag + 8 + count * element;
    return next <= (int64_t)end ? (size_t)next : 0;
  }
  return 0;
}

/* Room for n more bytes, or the record goes to the TypeScript writer. */
#define NEED(n) \
  do { \
    if ((size_t)(out_end - o) < (size_t)(n)) return -1; \
  } while (0)

/* The tags of b[from, end) as attributes; -1 when one of them is for the TypeScript writer. */
static int64_t write_tags(const FormTexts *t, const uint8_t *b, size_t from, size_t end, uint8_t *out, uint8_t *o, uint8_t *out_end) {
  int first = 1;
  for (size_t tag = from; tag + 3 <= end;) {
    size_t next = skip_tag(b, tag, end);
    if (next == 0) return -1;
    uint8_t type = b[tag + 2];
    const uint8_t *values = b + tag + 3;
    if (type == 'f') return -1; /* a float's shortest text is TypeScript's */
    if (type == 'B' && int32_at(values + 1) == 0) {
      tag = next; /* an empty array: no values to give */
      continue;
    }
    /* The tag's name between quotes: two bytes that must need no escaping. */
    if (!is_plain(b, tag, tag + 2)) return -1;
    NEED(t->attributes.length + t->values.length + t->longest_key + 8);
    o = first ? put(o, &t->attributes) : (*o++ = ',', o);
    *o++ = '"';
    *o++ = b[tag];
    *o++ = b[tag + 1];
    *o++ = '"';
    o = put(o, &t->values);
    first = 0;
    if (type == 'A') {
      if (!is_plain(values, 0, 1)) return -1;
      NEED(t->string_value.length + 8);
      o = put(o, &t->string_value);
      *o++ = '"';
      *o++ = values[0];
      *o++ = '"';
      *o++ = '}';
    } else if (type == 'Z' || type == 'H') {
      size_t length = next - 1 - (tag + 3);
      if (!is_plain(values, 0, length)) return -1;
      NEED(t->string_value.length + length + 8);
      o = put(o, &t->string_value);
      *o++ = '"';
      memcpy(o, values, length);
      o += length;
      *o++ = '"';
      *o++ = '}';
    } else if (type == 'B') {
      uint8_t subtype = values[0];
      if (subtype == 'f') return -1;
      int size = tag_size(subtype);
      int64_t count = int32_at(values + 1);
      NEED((uint64_t)count * (t->longest_key + 14));
      for (int64_t i = 0; i < count; i++) {
        if (i) *o++ = ',';
        int ok = 1;
        int64_t value = integer_at(subtype, values + 5 + i * size, &ok);
        if (!ok) return -1;
        o = put(o, value > 2147483647 ? &t->int64_value : &t->int32_value);
        o = put_int(o, value);
        *o++ = '}';
      }
    } else {
      int ok = 1;
      int64_t value = integer_at(type, values, &ok);
      if (!ok) return -1;
      NEED(t->longest_key + 14);
      o = put(o, value > 2147483647 ? &t->int64_value : &t->int32_value);
      o = put_int(o, value);
      *o++ = '}';
    }
    NEED(4);
    *o++ = ']';
    *o++ = '}';
    tag = next;
  }
  if (!first) {
    NEED(2);
    *o++ = '}';
    *o++ = '}';
  }
  return o - out;
}

static int text_from(Text *t, const uint8_t *bytes, size_t length) {
  t->bytes = malloc(length ? length : 1);
  if (!t->bytes) return 0;
  memcpy(t->bytes, bytes, length);
  t->length = (uint32_t)length;
  return 1;
}

/* The texts of one flag, made once per writer and form; NULL when memory runs out. */
static const FlagTexts *flag_texts_of(Writer *w, int form, uint32_t flag) {
  FlagTexts *made = w->flag_texts[form][flag];
  if (made) return made;
  const FormTexts *t = &w->forms[form];
  uint8_t scratch[16 * 256], *o = scratch;
  if (8 * t->longest_key + 64 > sizeof scratch) return NULL;
  made = calloc(1, sizeof(FlagTexts));
  if (!made) return NULL;
  o = put(o, &t->improper_placement);
  o = put_bool(o, (flag & 2) == 0);
  o = put(o, &t->duplicate_fragment);
  o = put_bool(o, (flag & 1024) != 0);
  o = put(o, &t->number_reads);
  *o++ = flag & 1 ? '2' : '1';
  o = put(o, &t->fragment_length);
  int ok = text_from(&made->before_length, scratch, (size_t)(o - scratch));
  o = scratch;
  if (!(flag & 1) || (flag & 192) == 64 || (flag & 192) == 128) {
    o = put(o, &t->read_number);
    *o++ = flag & 128 ? '1' : '0';
  }
  o = put(o, &t->failed_qc);
  o = put_bool(o, (flag & 512) != 0);
  ok = ok && text_from(&made->after_length, scratch, (size_t)(o - scratch));
  o = scratch;
  o = put(o, &t->secondary);
  o = put_bool(o, (flag & 256) != 0);
  o = put(o, &t->supplementary);
  o = put_bool(o, (flag & 2048) != 0);
  ok = ok && text_from(&made->after_alignment, scratch, (size_t)(o - scratch));
  if (!ok) {
    free(made->before_length.bytes);
    free(made->after_length.bytes);
    free(made->after_alignment.bytes);
    free(made);
    return NULL;
  }
  return w->flag_texts[form][flag] = made;
}

/*
 * Writes the record b[at, end) of read group `group` at out[o0, out_end); returns where it ends, or -1
 * when the TypeScript writer is to write it.
 */
static int64_t write_record(Writer *w, int form, const uint8_t *b, size_t at, size_t end, uint32_t group, uint8_t *out, size_t o0, uint8_t *out_end, int comma) {
  const FormTexts *t = &w->forms[form];
  if (end < at + 36 || group >= w->group_count) return -1;
  int32_t ref_id = int32_at(b + at + 4);
  int32_t position = int32_at(b + at + 8);
  uint32_t name_length = b[at + 12];
  uint32_t mapping_quality = b[at + 13];
  uint32_t cigar_count = b[at + 16] | (b[at + 17] << 8);
  uint32_t flag = b[at + 18] | (b[at + 19] << 8);
  int32_t sequence_length = int32_at(b + at + 20);
  int32_t mate_ref_id = int32_at(b + at + 24);
  int32_t mate_position = int32_at(b + at + 28);
  int32_t template_length = int32_at(b + at + 32);
  size_t name_start = at + 36;
  size_t name_end = name_length > 0 ? name_start + name_length - 1 : name_start;
  size_t cigar_start = name_start + name_length;
  size_t sequence_start = cigar_start + (size_t)cigar_count * 4;
  if (sequence_length < 0) return -1;
  size_t quality_start = sequence_start + (((size_t)sequence_length + 1) >> 1);
  size_t tag_start = quality_start + (size_t)sequence_length;
  if (tag_start > end) return -1;
  if (!is_plain(b, name_start, name_end)) return -1;
  /* More than 65,535 operations, kept in a CG tag behind a placeholder: the TypeScript writer's. */
  if (cigar_count == 2 && tag_start < end) {
    uint32_t first = uint32_at(b + cigar_start), second = uint32_at(b + cigar_start + 4);
    if ((first & 15) == 4 && first >> 4 == (uint32_t)sequence_length && (second & 15) == 3) return -1;
  }

  uint8_t *o = out + o0;
  size_t name_bytes = name_end - name_start;
  NEED(1 + 2 * (w->longest_id + name_bytes + 40) + t->longest_set_text + name_bytes + 12 * t->longest_key + 60);
  if (comma) *o++ = ',';

  /* id: base64url of ["dataset","rgs","set","group","reference","position","name","flag"]. */
  uint32_t id_index = group * (w->reference_count + 1) + (ref_id >= 0 && (uint32_t)ref_id < w->reference_count ? (uint32_t)ref_id : w->reference_count);
  o = put(o, &w->id_encoded[id_index]);
  uint8_t id_tail[300];
  uint8_t *n = id_tail;
  n = put(n, &w->id_rest[id_index]);
  n = put_int(n, position);
  *n++ = '"';
  *n++ = ',';
  *n++ = '"';
  memcpy(n, b + name_start, name_bytes);
  n += name_bytes;
  *n++ = '"';
  *n++ = ',';
  *n++ = '"';
  n = put_int(n, flag);
  *n++ = '"';
  *n++ = ']';
  o = put_base64(o, id_tail, (size_t)(n - id_tail));

  o = put(o, &t->group[group]);
  *o++ = '"';
  memcpy(o, b + name_start, name_bytes);
  o += name_bytes;
  *o++ = '"';
  const FlagTexts *flags = flag_texts_of(w, form, flag & 4095);
  if (!flags) return -1;
  o = put(o, &flags->before_length);
  o = put_int(o, template_length);
  o = put(o, &flags->after_length);

  if (!(flag & 4) && ref_id >= 0 && (uint32_t)ref_id < w->reference_count) {
    NEED(t->longest_set_text + 4 * t->longest_key + 30 + (size_t)cigar_count * (t->longest_key + 14));
    o = put(o, &t->alignment[ref_id]);
    o = put_int(o, position);
    o = put(o, flag & 16 ? &t->strand_minus : &t->strand_plus);
    o = put(o, &t->mapping_quality);
    o = put_int(o, mapping_quality);
    if (cigar_count > 0) {
      o = put(o, &t->cigar);
      for (uint32_t i = 0; i < cigar_count; i++) {
        uint32_t unit = uint32_at(b + cigar_start + i * 4);
        if ((unit & 15) > 8) return -1;
        if (i) *o++ = ',';
        o = put(o, &t->cigar_ops[unit & 15]);
        o = put_int(o, unit >> 4);
        *o++ = '}';
      }
      *o++ = ']';
    }
    *o++ = '}';
  }
  NEED(4 * t->longest_key + 20 + 5 * (size_t)sequence_length);
  o = put(o, &flags->after_alignment);
  if (sequence_length > 0) {
    o = put(o, &t->aligned_sequence);
    uint8_t *bases_end = o + sequence_length;
    for (size_t i = sequence_start; i < quality_start; i++) {
      memcpy(o, &base_pairs[b[i]], 2);
      o += 2;
    }
    o = bases_end; /* an odd length leaves the last half-byte's padding out */
    if (b[quality_start] != 255) {
      o = put(o, &t->aligned_quality);
      size_t i = quality_start;
      for (; i + 2 <= tag_start; i += 2) {
        uint32_t pair = b[i] | ((uint32_t)b[i + 1] << 8);
        memcpy(o, &quality_pair_text[pair], 8);
        o += quality_pair_length[pair];
      }
      if (i < tag_start) {
        memcpy(o, &quality_text[b[i]], 4);
        o += quality_length[b[i]];
      }
      o[-1] = ']'; /* over the last comma */
    } else *o++ = '"';
  }

  if (mate_ref_id >= 0 && mate_position >= 0 && (uint32_t)mate_ref_id < w->reference_count) {
    NEED(t->longest_set_text + t->longest_key + 14);
    o = put(o, &t->mate[mate_ref_id]);
    o = put_int(o, mate_position);
    o = put(o, flag & 32 ? &t->strand_minus : &t->strand_plus);
  }
  if (tag_start < end) {
    int64_t written = write_tags(t, b, tag_start, end, out, o, out_end);
    if (written < 0) return -1;
    o = out + written;
  }
  NEED(1);
  *o++ = '}';
  return o - out;
}

/* ---- Node-API: making a writer from TypeScript's texts, and writing a record. ---- */

static void free_texts(Text *texts, uint32_t count);
static void free_writer(napi_env env, void *data, void *hint);

#define CHECK(call) \
  do { \
    if ((call) != napi_ok) return 0; \
  } while (0)

static int text_of(napi_env env, napi_value value, Text *t) {
  void *data;
  size_t length;
  CHECK(napi_get_buffer_info(env, value, &data, &length));
  return text_from(t, data, length);
}

static int named_text(napi_env env, napi_value object, const char *name, Text *t, uint32_t *longest) {
  napi_value value;
  CHECK(napi_get_named_property(env, object, name, &value));
  if (!text_of(env, value, t)) return 0;
  if (t->length > *longest) *longest = t->length;
  return 1;
}

/* An array of Buffers as texts; its length in *count. */
static int texts_of(napi_env env, napi_value array, Text **texts, uint32_t *count, uint32_t *longest) {
  uint32_t length;
  CHECK(napi_get_array_length(env, array, &length));
  *texts = calloc(length ? length : 1, sizeof(Text));
  if (!*texts) return 0;
  *count = length;
  for (uint32_t i = 0; i < *count; i++) {
    napi_value element;
    CHECK(napi_get_element(env, array, i, &element));
    if (!text_of(env, element, &(*texts)[i])) return 0;
    if (longest && (*texts)[i].length > *longest) *longest = (*texts)[i].length;
  }
  return 1;
}

static int form_of(napi_env env, napi_value object, FormTexts *t, uint32_t *groups, uint32_t *references) {
  uint32_t *k = &t->longest_key;
  if (!named_text(env, object, "improperPlacement", &t->improper_placement, k) || !named_text(env, object, "duplicateFragment", &t->duplicate_fragment, k) ||
      !named_text(env, object, "numberReads", &t->number_reads, k) || !named_text(env, object, "fragmentLength", &t->fragment_length, k) ||
      !named_text(env, object, "readNumber", &t->read_number, k) || !named_text(env, object, "failedVendorQualityChecks", &t->failed_qc, k) ||
      !named_text(env, object, "secondaryAlignment", &t->secondary, k) || !named_text(env, object, "supplementaryAlignment", &t->supplementary, k) ||
      !named_text(env, object, "alignedSequence", &t->aligned_sequence, k) || !named_text(env, object, "strandPlus", &t->strand_plus, k) ||
      !named_text(env, object, "strandMinus", &t->strand_minus, k) || !named_text(env, object, "mappingQuality", &t->mapping_quality, k) ||
      !named_text(env, object, "cigar", &t->cigar, k) || !named_text(env, object, "alignedQuality", &t->aligned_quality, k) ||
      !named_text(env, object, "attributes", &t->attributes, k) || !named_text(env, object, "values", &t->values, k) ||
      !named_text(env, object, "int32Value", &t->int32_value, k) || !named_text(env, object, "int64Value", &t->int64_value, k) ||
      !named_text(env, object, "stringValue", &t->string_value, k))
    return 0;
  napi_value ops, group, alignment, mate;
  uint32_t count = 0;
  CHECK(napi_get_named_property(env, object, "cigarOps", &ops));
  Text *op_texts = NULL;
  int made = texts_of(env, ops, &op_texts, &count, k) && count == 9;
  if (!made) {
    free_texts(op_texts, count);
    return 0;
  }
  memcpy(t->cigar_ops, op_texts, sizeof t->cigar_ops); /* the texts now belong to t->cigar_ops */
  free(op_texts);
  CHECK(napi_get_named_property(env, object, "group", &group));
  CHECK(napi_get_named_property(env, object, "alignment", &alignment));
  CHECK(napi_get_named_property(env, object, "mate", &mate));
  uint32_t *s = &t->longest_set_text;
  if (!texts_of(env, group, &t->group, &t->group_count, s) || !texts_of(env, alignment, &t->alignment, &t->alignment_count, s) ||
      !texts_of(env, mate, &t->mate, &t->mate_count, s))
    return 0;
  *groups = t->group_count;
  *references = t->alignment_count;
  return t->mate_count == t->alignment_count;
}

static void free_texts(Text *texts, uint32_t count) {
  if (!texts) return;
  for (uint32_t i = 0; i < count; i++) free(texts[i].bytes);
  free(texts);
}

/* Every text a writer holds; a part not made yet is NULL (calloc), so this also undoes a failed create. */
static void free_writer(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  Writer *w = data;
  for (int f = 0; f < 2; f++) {
    FormTexts *t = &w->forms[f];
    Text *keys[] = {&t->improper_placement, &t->duplicate_fragment, &t->number_reads, &t->fragment_length, &t->read_number, &t->failed_qc,
                    &t->secondary, &t->supplementary, &t->aligned_sequence, &t->strand_plus, &t->strand_minus, &t->mapping_quality, &t->cigar,
                    &t->aligned_quality, &t->attributes, &t->values, &t->int32_value, &t->int64_value, &t->string_value};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) free(keys[i]->bytes);
    for (int i = 0; i < 9; i++) free(t->cigar_ops[i].bytes);
    free_texts(t->group, t->group_count);
    free_texts(t->alignment, t->alignment_count);
    free_texts(t->mate, t->mate_count);
  }
  for (int f = 0; f < 2; f++) {
    for (int flag = 0; flag < 4096; flag++) {
      FlagTexts *made = w->flag_texts[f][flag];
      if (!made) continue;
      free(made->before_length.bytes);
      free(made->after_length.bytes);
      free(made->after_alignment.bytes);
      free(made);
    }
  }
  free_texts(w->id_encoded, w->id_count);
  free_texts(w->id_rest, w->id_rest_count);
  free_texts(w->group_names, w->group_name_count);
  free(w);
}

/* create({camel, snake, idEncoded, idRest}): a writer for one read group set. */
static napi_value create_writer(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg, camel, snake, encoded, rest, names, fixed, per_byte, result;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc < 1) return NULL;
  Writer *w = calloc(1, sizeof(Writer));
  if (!w) return NULL;
  uint32_t groups[2] = {0, 0}, references[2] = {0, 0};
  int ok = napi_get_named_property(env, arg, "camel", &camel) == napi_ok && napi_get_named_property(env, arg, "snake", &snake) == napi_ok &&
           napi_get_named_property(env, arg, "idEncoded", &encoded) == napi_ok && napi_get_named_property(env, arg, "idRest", &rest) == napi_ok &&
           form_of(env, camel, &w->forms[0], &groups[0], &references[0]) && form_of(env, snake, &w->forms[1], &groups[1], &references[1]) &&
           texts_of(env, encoded, &w->id_encoded, &w->id_count, &w->longest_id) && texts_of(env, rest, &w->id_rest, &w->id_rest_count, NULL) &&
           napi_get_named_property(env, arg, "groupNames", &names) == napi_ok && texts_of(env, names, &w->group_names, &w->group_name_count, NULL) &&
           napi_get_named_property(env, arg, "fixedBytes", &fixed) == napi_ok && napi_get_value_uint32(env, fixed, &w->fixed_bytes) == napi_ok &&
           napi_get_named_property(env, arg, "bytesPerRecordByte", &per_byte) == napi_ok && napi_get_value_uint32(env, per_byte, &w->bytes_per_record_byte) == napi_ok;
  if (!ok || w->group_name_count != groups[0] || groups[0] != groups[1] || references[0] != references[1] || w->id_count != groups[0] * (references[0] + 1) || w->id_rest_count != w->id_count) {
    free_writer(env, w, NULL);
    napi_throw_error(env, NULL, "the alignment writer's texts are not as expected");
    return NULL;
  }
  w->group_count = groups[0];
  w->reference_count = references[0];
  if (napi_create_external(env, w, free_writer, NULL, &result) != napi_ok) {
    free_writer(env, w, NULL);
    return NULL;
  }
  return result;
}

/*
 * write(writer, record, at, end, group, form, out, writeAt, comma): where the record's JSON ends in out,
 * or -1 when the TypeScript writer is to write it.
 */
static napi_value write_alignment(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value args[9], result;
  Writer *w;
  void *record, *out;
  size_t record_length, out_length;
  int32_t at, end, group, form, write_at;
  bool comma;
  int64_t written = -1;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) == napi_ok && argc == 9 && napi_get_value_external(env, args[0], (void **)&w) == napi_ok &&
      napi_get_buffer_info(env, args[1], &record, &record_length) == napi_ok && napi_get_value_int32(env, args[2], &at) == napi_ok &&
      napi_get_value_int32(env, args[3], &end) == napi_ok && napi_get_value_int32(env, args[4], &group) == napi_ok &&
      napi_get_value_int32(env, args[5], &form) == napi_ok && napi_get_buffer_info(env, args[6], &out, &out_length) == napi_ok &&
      napi_get_value_int32(env, args[7], &write_at) == napi_ok && napi_get_value_bool(env, args[8], &comma) == napi_ok && at >= 0 && end >= at &&
      (size_t)end <= record_length && group >= 0 && (form == 0 || form == 1) && write_at >= 0 && (size_t)write_at <= out_length) {
    written = write_record(w, form, record, (size_t)at, (size_t)end, (uint32_t)group, out, (size_t)write_at, (uint8_t *)out + out_length, comma);
  }
  napi_create_int64(env, written, &result);
  return result;
}

/* ---- A run of records: the reads service's loop over one lane, for as long as it needs no promise. ---- */

/*
 * The fields of the state a run reads and writes (an Int32Array shared with reads/service.ts, whose
 * Lane.tryAdvance and page loop this follows step for step).
 */
enum {
  RUN_AT, RUN_END,                /* the current record (in), then the last one stepped onto (out) */
  RUN_FORM, RUN_WRITTEN, RUN_PAGE_SIZE, RUN_BUDGET_LEFT, RUN_WRITE_AT,
  RUN_REF_ID, RUN_START, RUN_WINDOW_END,
  RUN_SORT_POSITION, RUN_AT_POSITION,
  RUN_AFTER, RUN_AFTER_POSITION, RUN_AFTER_ORDINAL, RUN_AFTER_COUNT, RUN_ORDINAL,
  RUN_STOP, RUN_LAST_POSITION, RUN_LAST_AT, RUN_COUNT,
  RUN_GROUP_MASK,                 /* the groups asked for, one bit each; 0: every group of the set */
  RUN_GROUP,                      /* the current record's group, when there is a mask */
  RUN_FIELDS
};

/* Why a run stopped, as tryAdvance answers: the lane's next record is current (1), the lane is done (0), more of the file is needed (2). */
enum { STOP_DONE = 0, STOP_CURRENT = 1, STOP_FILL = 2 };

/* A record's group by its RG tag (the last group of a repeated name), 0 without one; -1 when the TypeScript writer must find it. */
static int64_t group_of(const Writer *w, const uint8_t *b, size_t at, size_t end) {
  if (end < at + 36) return -1;
  size_t tag = at + 36 + b[at + 12] + (size_t)(b[at + 16] | (b[at + 17] << 8)) * 4;
  int32_t sequence_length = int32_at(b + at + 20);
  if (sequence_length < 0) return -1;
  tag += (((size_t)sequence_length + 1) >> 1) + (size_t)sequence_length;
  while (tag + 3 <= end) {
    if (b[tag] == 'R' && b[tag + 1] == 'G' && b[tag + 2] == 'Z') {
      size_t from = tag + 3, stop = from;
      while (stop < end && b[stop] != 0) {
        if (b[stop] > 127) return -1;
        stop++;
      }
      for (uint32_t g = w->group_name_count; g-- > 0;) {
        const Text *name = &w->group_names[g];
        if (name->length == stop - from && memcmp(name->bytes, b + from, name->length) == 0) return g;
      }
      return 0;
    }
    size_t next = skip_tag(b, tag, end);
    if (next == 0) return -1;
    tag = next;
  }
  return 0;
}

/* The end of a record on the reference (its start plus the bases its CIGAR covers, at least 1); -1 when its CIGAR runs past it. */
static int64_t reference_end(const uint8_t *b, size_t at, size_t end) {
  int64_t start = int32_at(b + at + 8);
  uint32_t flag = b[at + 18] | (b[at + 19] << 8);
  if (flag & 4) return start + 1;
  uint32_t count = b[at + 16] | (b[at + 17] << 8);
  size_t cigar = at + 36 + b[at + 12];
  if (cigar + (size_t)count * 4 > end) return -1;
  int64_t span = 0;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t unit = uint32_at(b + cigar + i * 4);
    uint32_t op = unit & 15;
    if (op == 0 || op == 2 || op == 3 || op == 7 || op == 8) span += unit >> 4;
  }
  return start + (span > 1 ? span : 1);
}

/*
 * Writes the lane's current record and the ones after it, as the page loop would one by one, while
 * the page has room for them and they are at hand; stops where the loop would need the TypeScript
 * side (a record the writer hands back, a group found by name, anything that would throw there).
 */
static void write_run(Writer *w, const uint8_t *b, size_t length, uint8_t *out, size_t out_length, int32_t *state) {
  int form = state[RUN_FORM];
  size_t at = (size_t)state[RUN_AT], end = (size_t)state[RUN_END];
  size_t o = (size_t)state[RUN_WRITE_AT];
  const size_t first_o = o;
  int32_t written = state[RUN_WRITTEN], count = 0;
  int32_t sort_position = state[RUN_SORT_POSITION], at_position = state[RUN_AT_POSITION];
  const int32_t ref_id = state[RUN_REF_ID];
  const uint32_t group_mask = (uint32_t)state[RUN_GROUP_MASK];
  int64_t current_group = state[RUN_GROUP];
  int stop = STOP_CURRENT;
  for (;;) {
    /* The page loop's test before each record: the page is full, by count or by bytes. */
    if (written == state[RUN_PAGE_SIZE] || (written > 0 && (int64_t)(o - first_o) >= state[RUN_BUDGET_LEFT])) break;
    if (out_length - o < (size_t)w->fixed_bytes + (size_t)w->bytes_per_record_byte * (end - at)) break;
    int64_t group = group_mask ? current_group : group_of(w, b, at, end);
    if (group < 0) break;
    int64_t stop_at = write_record(w, form, b, at, end, (uint32_t)group, out, o, out + out_length, written > 0);
    if (stop_at < 0) break;
    o = (size_t)stop_at;
    written++;
    count++;
    state[RUN_LAST_POSITION] = sort_position;
    state[RUN_LAST_AT] = at_position;
    /* Lane.tryAdvance: the next record of the window, reading nothing. */
    size_t next_at = at, next_end = end;
    int found = 0;
    for (;;) {
      next_at = next_end;
      if (next_at + 4 > length) break;
      int64_t record_end = (int64_t)next_at + 4 + int32_at(b + next_at);
      if (record_end > (int64_t)length || record_end < (int64_t)next_at + 36) break; /* more to read, or for step() to refuse */
      next_end = (size_t)record_end;
      int32_t record_ref = int32_at(b + next_at + 4);
      if (record_ref != ref_id) {
        if (ref_id >= 0) {
          found = -1; /* the next reference has begun */
          break;
        }
        at = next_at, end = next_end; /* skipped: tryAdvance's cursor has stepped onto it */
        continue;
      }
      int32_t position = 0;
      if (ref_id >= 0) {
        position = int32_at(b + next_at + 8);
        if (position >= state[RUN_WINDOW_END]) {
          found = -1;
          break;
        }
        if (position < state[RUN_START]) {
          int64_t reference_stop = reference_end(b, next_at, next_end);
          if (reference_stop < 0) break; /* tryAdvance reads it and fails there */
          if (reference_stop <= state[RUN_START]) {
            at = next_at, end = next_end;
            continue;
          }
        }
      }
      /* A subset of the set's groups: a record of another group is stepped over, uncounted. */
      int64_t record_group = -1;
      if (group_mask) {
        record_group = group_of(w, b, next_at, next_end);
        if (record_group < 0) break; /* for tryAdvance to find (or refuse) */
        if (record_group >= 32 || !(group_mask & (1u << record_group))) {
          at = next_at, end = next_end;
          continue;
        }
      }
      at = next_at, end = next_end;
      current_group = record_group;
      at_position = position == sort_position ? at_position + 1 : 1;
      sort_position = position;
      /* Records returned by earlier pages: in a sorted file none follows one that was not (kept for a file that is not). */
      if (state[RUN_AFTER] &&
          (position < state[RUN_AFTER_POSITION] ||
           (position == state[RUN_AFTER_POSITION] && (state[RUN_ORDINAL] < state[RUN_AFTER_ORDINAL] || (state[RUN_ORDINAL] == state[RUN_AFTER_ORDINAL] && at_position <= state[RUN_AFTER_COUNT])))))
        continue;
      found = 1;
      break;
    }
    if (found == 1) continue;
    stop = found < 0 ? STOP_DONE : STOP_FILL;
    break;
  }
  state[RUN_AT] = (int32_t)at;
  state[RUN_END] = (int32_t)end;
  state[RUN_WRITTEN] = written;
  state[RUN_WRITE_AT] = (int32_t)o;
  state[RUN_SORT_POSITION] = sort_position;
  state[RUN_AT_POSITION] = at_position;
  state[RUN_STOP] = stop;
  state[RUN_COUNT] = count;
  state[RUN_GROUP] = (int32_t)current_group;
}

/* writeRun(writer, bytes, out, state): see write_run; the state says where it stopped and why. */
static napi_value write_run_js(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  Writer *w;
  void *record, *out, *state_data;
  size_t record_length, out_length, state_length;
  napi_typedarray_type type;
  napi_value state_buffer;
  size_t state_offset;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc != 4 || napi_get_value_external(env, args[0], (void **)&w) != napi_ok ||
      napi_get_buffer_info(env, args[1], &record, &record_length) != napi_ok || napi_get_buffer_info(env, args[2], &out, &out_length) != napi_ok ||
      napi_get_typedarray_info(env, args[3], &type, &state_length, &state_data, &state_buffer, &state_offset) != napi_ok || type != napi_int32_array ||
      state_length < RUN_FIELDS || record_length > INT32_MAX || out_length > INT32_MAX) {
    napi_throw_error(env, NULL, "writeRun: the arguments are not as expected");
    return NULL;
  }
  int32_t *state = state_data;
  int32_t at = state[RUN_AT], end = state[RUN_END], write_at = state[RUN_WRITE_AT], form = state[RUN_FORM];
  state[RUN_COUNT] = 0;
  state[RUN_STOP] = STOP_CURRENT;
  if (at >= 0 && end >= at + 36 && (size_t)end <= record_length && write_at >= 0 && (size_t)write_at <= out_length && (form == 0 || form == 1))
    write_run(w, record, record_length, out, out_length, state);
  return NULL;
}

/*
 * The interface this file offers alignment-writer.ts (its functions, the texts create reads, RUN's
 * fields): a module built from an older checkout, not rebuilt since, says another and is not used.
 */
#define INTERFACE_VERSION 1

NAPI_MODULE_INIT() {
  /* Each page worker loads the module; the tables are made once for all of them. */
  static pthread_once_t tables_made = PTHREAD_ONCE_INIT;
  pthread_once(&tables_made, make_tables);
  napi_value create_fn, write_fn, run_fn, version;
  napi_create_function(env, "create", NAPI_AUTO_LENGTH, create_writer, NULL, &create_fn);
  napi_create_function(env, "write", NAPI_AUTO_LENGTH, write_alignment, NULL, &write_fn);
  napi_set_named_property(env, exports, "create", create_fn);
  napi_set_named_property(env, exports, "write", write_fn);
  napi_create_function(env, "writeRun", NAPI_AUTO_LENGTH, write_run_js, NULL, &run_fn);
  napi_set_named_property(env, exports, "writeRun", run_fn);
  napi_create_uint32(env, INTERFACE_VERSION, &version);
  napi_set_named_property(env, exports, "interfaceVersion", version);
  return exports;
}
