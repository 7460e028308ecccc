/* Fuzz target: params files (mr_params_load). Whatever loads must be usable. */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TVMFFIObject *names = NULL, *tensors = NULL;
  if (mr_params_load(data, size, &names, &tensors) == 0) {
    const TVMFFISeqCell* ts = mr_array_view(tensors);
    int64_t i;
    for (i = 0; i < ts->size; ++i) {
      DLTensor* t = mr_tensor_dl(((TVMFFIAny*)ts->data)[i].v_obj);
      size_t n = mr_tensor_nbytes(t);
      if (n) ((volatile unsigned char*)t->data)[n - 1] ^= 1; /* the data is all there */
    }
    mr_object_release(names);
    mr_object_release(tensors);
  }
  mr_error_clear();
  return 0;
}
