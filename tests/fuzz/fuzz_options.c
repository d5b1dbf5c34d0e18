/* libFuzzer target: option text (zkroute/model/options.c), which comes from the
 * command line and the environment.  The input is lines of key=value (or
 * key NUL value), applied in turn with zkr_options_set().
 *
 * Invariants: each call returns ZOK, ZKR_EOPTION or ZKR_EOPTION_VALUE; a
 * refused call changes nothing; and whatever the setter accepted resolves
 * (zkr__options_resolve, the check zkr_init_opts makes): the setter never
 * produces a struct that zkr_init would refuse.  Inputs of the struct's
 * size are also handed to resolve as raw bytes (a struct filled by hand),
 * which must only say yes or no. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dropin/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zkr_options_t o = ZKR_OPTIONS_INIT, out;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  /* One key=value per line; a line without '=' is a key with an empty
   * value; a NUL inside a line ends it early, as C strings do. */
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *eq = strchr(line, '=');
    const char *value = "";
    if (eq) *eq = '\0', value = eq + 1;
    zkr_options_t before = o;
    int rc = zkr_options_set(&o, line, value);
    if (rc != ZOK && rc != ZKR_EOPTION && rc != ZKR_EOPTION_VALUE) abort();
    if (rc != ZOK && memcmp(&before, &o, sizeof o) != 0) abort();
  }
  if (zkr__options_resolve(&o, &out) != ZOK) abort();
  if (size >= sizeof(zkr_options_t)) {
    zkr_options_t raw;
    memcpy(&raw, data, sizeof raw);
    raw.version = data[0] & 1 ? ZKR_OPTIONS_VERSION : raw.version;
    int rc = zkr__options_resolve(&raw, &out);
    if (rc != ZOK && rc != ZKR_EOPTION_VALUE && rc != ZKR_EOPTIONS_VERSION) abort();
  }
  free(text);
  return 0;
}
