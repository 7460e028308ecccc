/* Compares an output of the model with the expected values of a reference run. */
#ifndef KILN_APP_CHECK_H_
#define KILN_APP_CHECK_H_

#include <stddef.h>

/* Prints output `index` (each value beside the expected one, then the largest error) and
 * returns 1 when every value matches (|got - want| <= atol + rtol * |want|), else 0. */
int kiln_check_output(int index, const float* got, const float* want, size_t count, float atol,
                      float rtol);

#endif /* KILN_APP_CHECK_H_ */
