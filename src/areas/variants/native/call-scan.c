/*
 * The patched lines of the variant writer in C (variant-writer.ts, patchedCalls; call-scan.ts holds the
 * TypeScript twin of each function here). In a genotype-only cohort most sample columns of a line
 * repeat the first sample's text; the line's calls are then written as one copy of that text's run of
 * calls, with the few bytes that differ patched in for the other columns. Finding those columns
 * passes over every column of every line (~10 M columns a pass of the bench's region, ~10 ns each in
 * TypeScript), and patching them is a few bytes each for hundreds of columns a line: both are here.
 * The TypeScript writer works out each patch the first time its text is met and keeps it in a table
 * that `find` reads.
 */
#include <node_api.h>
#include <stdint.h>
#include <string.h>

/* Bump when the arguments or the answers change, so that a module built from an older checkout is not used. */
#define INTERFACE_VERSION 2
#define TAB 9
/* Slots of the diploid genotypes of one-digit alleles: two alleles of 0-9, phased or not. */
#define DIPLOID_SLOTS 200
/* A slot's entry in the table: a patch not worked out yet, or a text whose calls cannot be patched. */
#define UNKNOWN (-1)
#define UNPATCHABLE (-2)

/* The slot of a 3-byte column text and the tab after it, read as one little-endian word; -1 when it is not a diploid genotype. */
static int32_t diploid_slot(uint32_t word) {
  if (word >> 24 != TAB) return -1;
  int32_t first = (int32_t)(word & 255) - 48, separator = (word >> 8) & 255, second = (int32_t)((word >> 16) & 255) - 48;
  if (first < 0 || first > 9 || second < 0 || second > 9 || (separator != '|' && separator != '/')) return -1;
  return (first * 10 + second) * 2 + (separator == '|' ? 1 : 0);
}

static int typed_array(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length, const char *what) {
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, value, &type, length, data, NULL, NULL) != napi_ok || type != want) {
    napi_throw_type_error(env, NULL, what);
    return 0;
  }
  return 1;
}

static int int32_arg(napi_env env, napi_value value, int32_t *out) {
  if (napi_get_value_int32(env, value, out) == napi_ok) return 1;
  napi_throw_type_error(env, NULL, "call scan: positions must be numbers");
  return 0;
}

/*
 * find(bytes, baseStart, baseLength, lineEnd, samples, slots, found): the sample columns of the line
 * from the second on, the first starting after the tab at baseStart + baseLength. Columns whose text is
 * the first sample's (bytes [baseStart, baseStart + baseLength)) are passed over. For each other
 * column, [sample, its patch] goes into `found`: the patch is the table's entry for its diploid slot
 * (`slots`, an Int32Array of DIPLOID_SLOTS) when that is known, else -1 - the column's start, for the
 * caller to work out. Returns how many columns it found, and puts in found's last element how many of
 * them wait for the caller; -1 when the line has fewer columns than samples, -2 when a column longer
 * than 4 bytes comes first, -3 when a column's text cannot be patched (the table says so).
 */
static napi_value find(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7], result;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 7) {
    napi_throw_type_error(env, NULL, "find takes seven arguments");
    return NULL;
  }
  void *data, *slots_data, *found_data;
  size_t length, slots_length, found_length;
  int32_t base_start, base_length, line_end, samples;
  if (!typed_array(env, argv[0], napi_uint8_array, &data, &length, "find: bytes must be a Uint8Array") ||
      !typed_array(env, argv[5], napi_int32_array, &slots_data, &slots_length, "find: slots must be an Int32Array") ||
      !typed_array(env, argv[6], napi_int32_array, &found_data, &found_length, "find: found must be an Int32Array") ||
      !int32_arg(env, argv[1], &base_start) || !int32_arg(env, argv[2], &base_length) || !int32_arg(env, argv[3], &line_end) ||
      !int32_arg(env, argv[4], &samples))
    return NULL;
  if (base_start < 0 || base_length < 0 || base_length > 4 || line_end < base_start + base_length || (size_t)line_end > length || samples < 1 ||
      found_length < 2 * (size_t)samples + 1 || slots_length != DIPLOID_SLOTS) {
    napi_throw_range_error(env, NULL, "find: positions out of range");
    return NULL;
  }
  const uint8_t *bytes = data;
  const uint8_t *base = bytes + base_start;
  const int32_t *slots = slots_data;
  int32_t *found = found_data;
  /* The first sample's 3-byte text and the tab after it, as one word: the common case is one compare. */
  uint32_t column = 0;
  int word_compare = base_length == 3;
  if (word_compare) memcpy(&column, base, 3), column |= (uint32_t)TAB << 24;
  int32_t count = 0, waiting = 0, end = base_start + base_length;
  for (int32_t sample = 1; sample < samples; sample++) {
    int32_t start = end + 1;
    if (start > line_end) {
      count = -1;
      break;
    }
    int32_t slot = -1;
    if (start + 4 <= line_end) {
      uint32_t word;
      memcpy(&word, bytes + start, 4);
      if (word_compare && word == column) {
        end = start + 3;
        continue;
      }
      slot = diploid_slot(word);
    }
    if (slot >= 0) {
      end = start + 3;
      int32_t patch = slots[slot];
      if (patch == UNPATCHABLE) {
        count = -3;
        break;
      }
      found[2 * count] = sample;
      found[2 * count + 1] = patch >= 0 ? patch : -1 - start;
      if (patch < 0) waiting++;
      count++;
      continue;
    }
    int32_t column_end = start;
    while (column_end < line_end && bytes[column_end] != TAB && column_end - start <= 4) column_end++;
    if (column_end - start > 4) {
      count = -2;
      break;
    }
    end = column_end;
    if (column_end - start == base_length && memcmp(bytes + start, base, base_length) == 0) continue;
    found[2 * count] = sample;
    found[2 * count + 1] = -1 - start;
    waiting++;
    count++;
  }
  found[found_length - 1] = count < 0 ? 0 : waiting;
  napi_create_int32(env, count, &result);
  return result;
}

/*
 * apply(buffer, at, offsets, found, count, pool): patches the calls of the `count` columns of `found`
 * (each [sample, patch], every patch worked out) in a line's run of calls copied to buffer[at...]
 * without its first comma: call s ends before at + offsets[s + 1] - 1. A patch, at its index in
 * `pool`, is its number of pairs, then the pairs (distance from the call's end, byte).
 */
static napi_value apply(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 6) {
    napi_throw_type_error(env, NULL, "apply takes six arguments");
    return NULL;
  }
  void *buffer_data, *offsets_data, *found_data, *pool_data;
  size_t buffer_length, offsets_length, found_length, pool_length;
  int32_t at, count;
  if (!typed_array(env, argv[0], napi_uint8_array, &buffer_data, &buffer_length, "apply: buffer must be a Uint8Array") ||
      !typed_array(env, argv[2], napi_int32_array, &offsets_data, &offsets_length, "apply: offsets must be an Int32Array") ||
      !typed_array(env, argv[3], napi_int32_array, &found_data, &found_length, "apply: found must be an Int32Array") ||
      !typed_array(env, argv[5], napi_int32_array, &pool_data, &pool_length, "apply: pool must be an Int32Array") ||
      !int32_arg(env, argv[1], &at) || !int32_arg(env, argv[4], &count))
    return NULL;
  if (count < 0 || 2 * (size_t)count > found_length) {
    napi_throw_range_error(env, NULL, "apply: count out of range");
    return NULL;
  }
  uint8_t *buffer = buffer_data;
  const int32_t *offsets = offsets_data, *found = found_data, *pool = pool_data;
  for (int32_t i = 0; i < count; i++) {
    int32_t sample = found[2 * i], patch = found[2 * i + 1];
    if (sample < 0 || (size_t)sample + 1 >= offsets_length || patch < 0 || (size_t)patch >= pool_length ||
        (size_t)patch + 1 + 2 * (size_t)pool[patch] > pool_length) {
      napi_throw_range_error(env, NULL, "apply: a column's sample or patch is out of range");
      return NULL;
    }
    int64_t call_end = (int64_t)at + offsets[sample + 1] - 1;
    const int32_t *pairs = pool + patch + 1;
    for (int32_t j = 0; j < pool[patch]; j++) {
      int64_t to = call_end - pairs[2 * j];
      if (to < 0 || (uint64_t)to >= buffer_length) {
        napi_throw_range_error(env, NULL, "apply: a patch lies outside the buffer");
        return NULL;
      }
      buffer[to] = (uint8_t)pairs[2 * j + 1];
    }
  }
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn, version;
  napi_create_function(env, "find", NAPI_AUTO_LENGTH, find, NULL, &fn);
  napi_set_named_property(env, exports, "find", fn);
  napi_create_function(env, "apply", NAPI_AUTO_LENGTH, apply, NULL, &fn);
  napi_set_named_property(env, exports, "apply", fn);
  napi_create_int32(env, INTERFACE_VERSION, &version);
  napi_set_named_property(env, exports, "interfaceVersion", version);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
