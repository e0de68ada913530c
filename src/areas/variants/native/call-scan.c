/*
 * The sample scan of the variant writer's patched lines in C (variant-writer.ts, patchedCalls): in a
 * genotype-only cohort most sample columns of a line repeat the first sample's text, and finding the
 * few that do not is a loop over every column of every line (~10 M columns a pass of the bench's
 * region, ~10 ns each in TypeScript). This file only finds them; the TypeScript writer patches them.
 */
#include <node_api.h>
#include <stdint.h>
#include <string.h>

/* Bump when the arguments or the answer change, so that a module built from an older checkout is not used. */
#define INTERFACE_VERSION 1
#define TAB 9

/*
 * scan(bytes, baseStart, baseLength, lineEnd, samples, found): the sample columns of the line from the
 * second on, the first starting after the tab at baseStart + baseLength. Columns whose text is the
 * first sample's (bytes [baseStart, baseStart + baseLength)) are passed over; for each other column,
 * its sample and its start go into `found` (an Int32Array of at least 2 * samples). Returns how many
 * it found, -1 when the line has fewer columns than samples, -2 when a column is longer than 4 bytes.
 */
static napi_value scan(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_value result;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 6) {
    napi_throw_type_error(env, NULL, "scan takes six arguments");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length, found_length;
  void *data, *found_data;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "scan: bytes must be a Uint8Array");
    return NULL;
  }
  if (napi_get_typedarray_info(env, argv[5], &type, &found_length, &found_data, NULL, NULL) != napi_ok || type != napi_int32_array) {
    napi_throw_type_error(env, NULL, "scan: found must be an Int32Array");
    return NULL;
  }
  int32_t base_start, base_length, line_end, samples;
  if (napi_get_value_int32(env, argv[1], &base_start) != napi_ok || napi_get_value_int32(env, argv[2], &base_length) != napi_ok ||
      napi_get_value_int32(env, argv[3], &line_end) != napi_ok || napi_get_value_int32(env, argv[4], &samples) != napi_ok) {
    napi_throw_type_error(env, NULL, "scan: positions must be numbers");
    return NULL;
  }
  if (base_start < 0 || base_length < 0 || base_length > 4 || line_end < base_start + base_length || (size_t)line_end > length || samples < 1 ||
      found_length < 2 * (size_t)samples) {
    napi_throw_range_error(env, NULL, "scan: positions out of range");
    return NULL;
  }
  const uint8_t *bytes = data;
  int32_t *found = found_data;
  const uint8_t *base = bytes + base_start;
  /* The first sample's 3-byte text and the tab after it, as one word (the common case is one compare). */
  uint32_t column = 0;
  int word_compare = base_length == 3;
  if (word_compare) memcpy(&column, base, 3), column |= (uint32_t)TAB << 24;
  int32_t count = 0;
  int32_t end = base_start + base_length;
  for (int32_t sample = 1; sample < samples; sample++) {
    int32_t start = end + 1;
    if (start > line_end) {
      count = -1;
      break;
    }
    if (word_compare && start + 4 <= line_end) {
      uint32_t word;
      memcpy(&word, bytes + start, 4);
      if (word == column) {
        end = start + 3;
        continue;
      }
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
    found[2 * count + 1] = start;
    count++;
  }
  napi_create_int32(env, count, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn, version;
  napi_create_function(env, "scan", NAPI_AUTO_LENGTH, scan, NULL, &fn);
  napi_set_named_property(env, exports, "scan", fn);
  napi_create_int32(env, INTERFACE_VERSION, &version);
  napi_set_named_property(env, exports, "interfaceVersion", version);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
