/* CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and final xor
 * 0xFFFFFFFF), the checksum of a model's parts (graph JSON, params, the library file):
 * slicing by 8 bytes over tables built at first use (8 KB), or, in the small
 * configuration, bit by bit with no table (no RAM). mr_crc32c(0, "123456789", 9) is
 * 0xE3069283. Verification can be left out at build time (MR_NO_CHECKSUM) or at run
 * time (environment variable MR_SKIP_CHECKSUM=1), for deployments whose start-up time
 * matters more than the detection of a corrupt file. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MR_CRC_POLY 0x82F63B78u

/* The register after 8 more bits (the byte already xor-ed into its low bits). */
static uint32_t shift8(uint32_t c) {
  int k;
  for (k = 0; k < 8; ++k) c = (c >> 1) ^ (MR_CRC_POLY & (0u - (c & 1u)));
  return c;
}

#ifdef MR_CONFIG_SMALL
uint32_t mr_crc32c(uint32_t crc, const void* data, size_t size) {
  const unsigned char* p = (const unsigned char*)data;
  crc = ~crc;
  while (size--) crc = shift8(crc ^ *p++);
  return ~crc;
}
#else
static uint32_t g_table[8][256];
static mr_once_t g_table_once = MR_ONCE_INIT;

static void build_tables(void) {
  uint32_t i;
  int k;
  for (i = 0; i < 256; ++i) g_table[0][i] = shift8(i);
  for (k = 1; k < 8; ++k)
    for (i = 0; i < 256; ++i)
      g_table[k][i] = (g_table[k - 1][i] >> 8) ^ g_table[0][g_table[k - 1][i] & 0xFFu];
}

uint32_t mr_crc32c(uint32_t crc, const void* data, size_t size) {
  const unsigned char* p = (const unsigned char*)data;
  mr_once(&g_table_once, build_tables);
  crc = ~crc;
  while (size >= 8) {
    uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[3] << 24);
    crc = g_table[7][lo & 0xFFu] ^ g_table[6][(lo >> 8) & 0xFFu] ^
          g_table[5][(lo >> 16) & 0xFFu] ^ g_table[4][lo >> 24] ^ g_table[3][p[4]] ^
          g_table[2][p[5]] ^ g_table[1][p[6]] ^ g_table[0][p[7]];
    p += 8;
    size -= 8;
  }
  while (size--) crc = (crc >> 8) ^ g_table[0][(crc ^ *p++) & 0xFFu];
  return ~crc;
}
#endif

int mr_checksum_verify_enabled(void) {
#ifdef MR_NO_CHECKSUM
  return 0;
#else
  const char* skip = getenv("MR_SKIP_CHECKSUM");
  return !(skip && strcmp(skip, "1") == 0);
#endif
}
