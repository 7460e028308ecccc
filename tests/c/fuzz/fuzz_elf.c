/* Fuzz target: the ELF header and segment checks made before dlopen, on file
 * images in memory (mr_elf_check_image). */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)mr_elf_check_image(data, size, "fuzz");
  mr_error_clear();
  return 0;
}
