/* A stand-in for libFuzzer where clang is not installed: feeds a fuzz target
 * (LLVMFuzzerTestOneInput) the seed files given on the command line, then random
 * mutations of them (byte flips, interesting values, u64 fields, cuts, inserts,
 * splices) for a number of seconds. Without coverage feedback it finds less, but
 * built with AddressSanitizer/UBSan it still checks every input is read in bounds.
 *   driver SECONDS SEED_FILE...   (prints the number of inputs run) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#define MAX_INPUT 65536
#define MAX_SEEDS 64

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static size_t below(size_t n) { return n ? (size_t)(next() % n) : 0; }

static void mutate(uint8_t* buf, size_t* size, const uint8_t* other, size_t other_size) {
  static const uint64_t interesting[] = {0, 1, 2, 7, 8, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF,
                                         0xFFFFFFFFull, 0x7FFFFFFFFFFFFFFFull, ~0ull, 1ull << 32,
                                         1ull << 40};
  size_t n = *size, i, at, len;
  int k, edits = 1 + (int)below(4);
  for (k = 0; k < edits; ++k) {
    switch (below(7)) {
      case 0: /* flip a bit */
        if (n) buf[below(n)] ^= (uint8_t)(1u << below(8));
        break;
      case 1: /* a random byte */
        if (n) buf[below(n)] = (uint8_t)next();
        break;
      case 2: /* an interesting little-endian u64 (or a part of it) */
        if (n) {
          uint64_t v = interesting[below(sizeof(interesting) / sizeof(interesting[0]))];
          at = below(n);
          len = 1 + below(8);
          for (i = 0; i < len && at + i < n; ++i) buf[at + i] = (uint8_t)(v >> (8 * i));
        }
        break;
      case 3: /* cut */
        n = below(n + 1);
        break;
      case 4: /* delete a range */
        if (n) {
          at = below(n);
          len = below(n - at) + 1;
          memmove(buf + at, buf + at + len, n - at - len);
          n -= len;
        }
        break;
      case 5: /* insert random bytes */
        len = 1 + below(16);
        if (n + len <= MAX_INPUT) {
          at = below(n + 1);
          memmove(buf + at + len, buf + at, n - at);
          for (i = 0; i < len; ++i) buf[at + i] = (uint8_t)next();
          n += len;
        }
        break;
      default: /* splice in a piece of another seed */
        if (other_size && n) {
          size_t from = below(other_size);
          at = below(n);
          len = below(other_size - from) + 1;
          if (at + len > n) len = n - at;
          memcpy(buf + at, other + from, len);
        }
        break;
    }
  }
  *size = n;
}

int main(int argc, char** argv) {
  static uint8_t seeds[MAX_SEEDS][MAX_INPUT], buf[MAX_INPUT];
  size_t sizes[MAX_SEEDS], size;
  int nseeds = 0, i;
  double seconds;
  unsigned long long runs = 0;
  time_t start = time(NULL);
  if (argc < 3) {
    fprintf(stderr, "usage: %s SECONDS SEED_FILE...\n", argv[0]);
    return 2;
  }
  seconds = atof(argv[1]);
  for (i = 2; i < argc && nseeds < MAX_SEEDS; ++i) {
    FILE* f = fopen(argv[i], "rb");
    if (!f) continue;
    sizes[nseeds] = fread(seeds[nseeds], 1, MAX_INPUT, f);
    fclose(f);
    LLVMFuzzerTestOneInput(seeds[nseeds], sizes[nseeds]);
    ++nseeds;
  }
  if (nseeds == 0) {
    fprintf(stderr, "no seed files\n");
    return 2;
  }
  while (difftime(time(NULL), start) < seconds) {
    int s = (int)below((size_t)nseeds), o = (int)below((size_t)nseeds);
    uint8_t* input;
    size = sizes[s];
    memcpy(buf, seeds[s], size);
    mutate(buf, &size, seeds[o], sizes[o]);
    /* An exact-size copy, so that AddressSanitizer sees a read one byte past the end. */
    input = (uint8_t*)malloc(size ? size : 1);
    if (!input) return 1;
    memcpy(input, buf, size);
    LLVMFuzzerTestOneInput(input, size);
    free(input);
    ++runs;
  }
  printf("stat::number_of_executed_units: %llu\n", runs);
  return 0;
}
