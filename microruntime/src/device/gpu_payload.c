/* The payload of a device module (kinds "opencl", "cuda", "vulkan"), as TVM's SaveToBytes
 * writes it: str fmt; u64 nfuncs; nfuncs x {str key; FunctionInfo}; str code (for
 * "vulkan" the shader map instead, see gpu.h), with
 * FunctionInfo = str name; vec<DLDataType> arg_types; vec<str> launch_param_tags;
 * vec<i32> arg_extra_tags. Parsed and checked in full at load, against the bytes
 * there are, so a launch needs no checks of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* Launch tags by MR_LAUNCH_* index; the dynamic shared memory tag has two spellings
 * (TVM renamed "tir" to "tirx"). */
static const char* const k_tags[MR_MAX_LAUNCH_TAGS] = {
    "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
    "tirx.use_dyn_shared_memory"};

static int tag_index(const char* text, uint64_t len) {
  int i;
  for (i = 0; i < MR_MAX_LAUNCH_TAGS; ++i)
    if (strlen(k_tags[i]) == len && memcmp(k_tags[i], text, len) == 0) return i;
  if (len == 25 && memcmp(text, "tir.use_dyn_shared_memory", 25) == 0) return MR_LAUNCH_DYN_SHMEM;
  return -1;
}

/* A string of 1 to MR_MAX_NAME - 1 bytes without NUL, copied into buf. */
static int read_name(mr_reader_t* r, const char* field, char* buf) {
  const char* text;
  uint64_t len, at = r->pos;
  if (mr_read_bytes(r, field, &text, &len) != 0) return -1;
  if (len == 0 || len >= MR_MAX_NAME || memchr(text, 0, len))
    return mr_reader_fail(r, "%s at offset %llu is empty, longer than %d bytes or holds a NUL",
                          field, (unsigned long long)at, MR_MAX_NAME - 1);
  memcpy(buf, text, len);
  buf[len] = '\0';
  return 0;
}

/* The argument types a kernel can take: handles (buffers) of 64 bits, and scalars. */
static int check_arg_type(const mr_reader_t* r, const char* func, uint64_t i, DLDataType t) {
  int ok = t.lanes == 1 &&
           ((t.code == kDLOpaqueHandle && t.bits == 64) ||
            ((t.code == kDLInt || t.code == kDLUInt) &&
             (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) ||
            (t.code == kDLFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64)) ||
            (t.code == kDLBool && t.bits == 8));
  if (!ok)
    return mr_reader_fail(r, "kernel '%s' argument %llu has type (code %d, bits %d, lanes %d), "
                          "which a kernel cannot take (handles, ints, uints, floats, bools)",
                          func, (unsigned long long)i, t.code, t.bits, t.lanes);
  return 0;
}

static int read_arg_types(mr_reader_t* r, mr_gpu_func_t* f) {
  uint64_t n, i, v;
  if (mr_read_le(r, 8, "arg_types count", &n) != 0) return -1;
  if (n > MR_MAX_KERNEL_ARGS || n > (r->size - r->pos) / 4)
    return mr_reader_bad(r, "arg_types count", n, "is invalid");
  f->arg_types = (DLDataType*)calloc(n ? n : 1, sizeof(DLDataType));
  if (!f->arg_types) return mr_error_oom("kernel argument types");
  f->num_args = (uint32_t)n;
  for (i = 0; i < n; ++i) {
    DLDataType t;
    (void)mr_read_le(r, 4, "arg_type", &v); /* in range: checked above */
    t.code = (uint8_t)(v & 0xFF);
    t.bits = (uint8_t)((v >> 8) & 0xFF);
    t.lanes = (uint16_t)(v >> 16);
    if (check_arg_type(r, f->name, i, t) != 0) return -1;
    f->arg_types[i] = t;
  }
  return 0;
}

static int read_tags(mr_reader_t* r, mr_gpu_func_t* f) {
  uint64_t n, i, len, at;
  const char* text;
  int k;
  uint32_t j;
  if (mr_read_le(r, 8, "launch_param_tags count", &n) != 0) return -1;
  if (n > MR_MAX_LAUNCH_TAGS) return mr_reader_bad(r, "launch_param_tags count", n, "is invalid");
  for (i = 0; i < n; ++i) {
    at = r->pos;
    if (mr_read_bytes(r, "launch_param_tag", &text, &len) != 0) return -1;
    k = tag_index(text, len);
    if (k < 0)
      return mr_reader_fail(r, "kernel '%s' has an unknown launch tag '%.*s' at offset %llu "
                            "(known: blockIdx.x/y/z, threadIdx.x/y/z, "
                            "tirx.use_dyn_shared_memory)",
                            f->name, len > 64 ? 64 : (int)len, text, (unsigned long long)at);
    for (j = 0; j < f->num_tags; ++j)
      if (f->tags[j] == (uint8_t)k)
        return mr_reader_fail(r, "kernel '%s' has launch tag '%s' twice", f->name, k_tags[k]);
    f->tags[f->num_tags++] = (uint8_t)k;
  }
  return 0;
}

/* One tag per argument (none at all is accepted too): 0 for none; 1, a TensorMap
 * (a CUDA tensor-memory descriptor), is refused. */
static int read_extra_tags(mr_reader_t* r, const mr_gpu_func_t* f) {
  uint64_t n, i, v;
  if (mr_read_le(r, 8, "arg_extra_tags count", &n) != 0) return -1;
  if (n != 0 && n != f->num_args)
    return mr_reader_bad(r, "arg_extra_tags count", n, "differs from the argument count");
  if (n > (r->size - r->pos) / 4) return mr_reader_bad(r, "arg_extra_tags count", n, "is invalid");
  for (i = 0; i < n; ++i) {
    (void)mr_read_le(r, 4, "arg_extra_tag", &v);
    if (v == 1)
      return mr_reader_fail(r, "kernel '%s' argument %llu is a TensorMap, which this runtime "
                            "does not support", f->name, (unsigned long long)i);
    if (v != 0) return mr_reader_bad(r, "arg_extra_tag", v, "is unknown");
  }
  return 0;
}

static int read_func(mr_reader_t* r, const mr_gpu_payload_t* p, mr_gpu_func_t* f) {
  char key[MR_MAX_NAME], name[MR_MAX_NAME];
  uint32_t i;
  if (read_name(r, "function key", key) != 0 || read_name(r, "function name", name) != 0)
    return -1;
  if (strcmp(key, name) != 0)
    return mr_reader_fail(r, "function key '%s' differs from its name '%s'", key, name);
  for (i = 0; i < p->num_funcs; ++i)
    if (strcmp(p->funcs[i].name, name) == 0)
      return mr_reader_fail(r, "kernel '%s' appears twice", name);
  f->name = mr_strndup(name, strlen(name));
  if (!f->name) return mr_error_oom("a kernel name");
  return read_arg_types(r, f) != 0 || read_tags(r, f) != 0 || read_extra_tags(r, f) != 0 ? -1 : 0;
}

static int check_fmt(const mr_reader_t* r, const char* kind, const char* text, uint64_t len,
                     char* out) {
  static const char* const k_cuda[] = {"ptx", "cubin", "fatbin"};
  size_t i;
  int ok = 0;
  if (len < 16 && !memchr(text, 0, len)) {
    memcpy(out, text, len);
    out[len] = '\0';
    if (strcmp(kind, "opencl") == 0) ok = strcmp(out, "cl") == 0;
    if (strcmp(kind, "vulkan") == 0) ok = strcmp(out, "vulkan") == 0;
    for (i = 0; !ok && strcmp(kind, "cuda") == 0 && i < 3; ++i) ok = strcmp(out, k_cuda[i]) == 0;
  }
  if (!ok)
    return mr_reader_fail(r, "code format '%.*s' is not one a %s module can hold (%s)",
                          len > 32 ? 32 : (int)len, text, kind,
                          strcmp(kind, "cuda") == 0     ? "ptx, cubin, fatbin"
                          : strcmp(kind, "vulkan") == 0 ? "vulkan"
                                                        : "cl");
  return 0;
}

/* ---- kind "vulkan": the shader map ---- */
static uint32_t word_at(const unsigned char* b, uint64_t i) {
  return (uint32_t)b[4 * i] | ((uint32_t)b[4 * i + 1] << 8) | ((uint32_t)b[4 * i + 2] << 16) |
         ((uint32_t)b[4 * i + 3] << 24);
}

/* A SPIR-V module of n words at b: the header (magic, a version 1.0 to 1.6, a non-zero id
 * bound, schema 0), then instructions whose word counts are non-zero and end exactly at
 * the module's end. */
static int check_spirv(const mr_reader_t* r, const char* func, const unsigned char* b,
                       uint64_t n) {
  uint64_t i = 5;
  uint32_t version;
  if (n < 5)
    return mr_reader_fail(r, "the SPIR-V of kernel '%s' has %llu words, fewer than its 5-word "
                          "header", func, (unsigned long long)n);
  if (word_at(b, 0) != 0x07230203u)
    return mr_reader_fail(r, "the SPIR-V of kernel '%s' has the magic number 0x%08x, not "
                          "0x07230203 (corrupt, or not SPIR-V)", func, (unsigned)word_at(b, 0));
  version = word_at(b, 1);
  if ((version >> 16) != 1 || ((version >> 8) & 0xFF) > 6 || (version & 0xFF0000FFu) != 0)
    return mr_reader_fail(r, "the SPIR-V of kernel '%s' has version word 0x%08x; versions 1.0 "
                          "to 1.6 load", func, (unsigned)version);
  if (word_at(b, 3) == 0 || word_at(b, 4) != 0)
    return mr_reader_fail(r, "the SPIR-V header of kernel '%s' is invalid (id bound %u, "
                          "schema %u)", func, (unsigned)word_at(b, 3), (unsigned)word_at(b, 4));
  while (i < n) {
    uint32_t count = word_at(b, i) >> 16;
    if (count == 0 || count > n - i)
      return mr_reader_fail(r, "the SPIR-V of kernel '%s' has an instruction of %u words at "
                            "word %llu of %llu (corrupt)", func, (unsigned)count,
                            (unsigned long long)i, (unsigned long long)n);
    i += count;
  }
  return 0;
}

static int read_shaders(mr_reader_t* r, mr_gpu_payload_t* p) {
  uint64_t n, i, flag, nwords, total = 0, start = r->pos;
  char key[MR_MAX_NAME];
  int64_t index;
  uint32_t* seen;
  int status = -1;
  /* First pass: validate, and sum the sizes. */
  if (mr_read_le(r, 8, "nshaders", &n) != 0) return -1;
  if (n != p->num_funcs) return mr_reader_bad(r, "nshaders", n, "differs from nfuncs");
  seen = (uint32_t*)calloc(n ? n : 1, sizeof(uint32_t));
  if (!seen) return mr_error_oom("a vulkan module");
  for (i = 0; i < n; ++i) {
    if (read_name(r, "shader key", key) != 0) goto done;
    index = mr_gpu_payload_find(p, key);
    if (index < 0 || seen[index]) {
      mr_reader_fail(r, "shader '%s' %s", key, index < 0 ? "is no function of the module"
                                                       : "appears twice");
      goto done;
    }
    seen[index] = 1;
    if (mr_read_le(r, 4, "shader flag", &flag) != 0) goto done;
    if (flag != 0) {
      mr_reader_fail(r, "shader '%s' has flag %llu: only push-constant scalars (flag 0) are "
                     "supported, not a uniform buffer", key, (unsigned long long)flag);
      goto done;
    }
    if (mr_read_le(r, 8, "SPIR-V word count", &nwords) != 0) goto done;
    if (nwords > (r->size - r->pos) / 4) {
      mr_reader_bad(r, "SPIR-V word count", nwords, "is more than the bytes left");
      goto done;
    }
    if (check_spirv(r, key, r->p + r->pos, nwords) != 0) goto done;
    p->funcs[index].code_offset = (size_t)total;
    p->funcs[index].code_bytes = (size_t)(nwords * 4);
    p->funcs[index].shader_flag = (uint32_t)flag;
    total += nwords * 4;
    r->pos += nwords * 4;
  }
  /* Second pass: copy the words (word aligned) now that the sizes are known. */
  p->code = (char*)malloc(total ? total : 4);
  if (!p->code) {
    mr_error_oom("SPIR-V shaders");
    goto done;
  }
  p->code_size = (size_t)total;
  r->pos = start + 8;
  for (i = 0; i < n; ++i) {
    const char* text;
    uint64_t len;
    (void)mr_read_bytes(r, "shader key", &text, &len); /* all checked above */
    memcpy(key, text, len);
    key[len] = '\0';
    index = mr_gpu_payload_find(p, key);
    r->pos += 4 + 8;
    memcpy(p->code + p->funcs[index].code_offset, r->p + r->pos, p->funcs[index].code_bytes);
    r->pos += p->funcs[index].code_bytes;
  }
  status = 0;
done:
  free(seen);
  return status;
}

void mr_gpu_payload_free(mr_gpu_payload_t* p) {
  uint32_t i;
  for (i = 0; p->funcs && i < p->num_funcs; ++i) {
    free(p->funcs[i].name);
    free(p->funcs[i].arg_types);
  }
  free(p->funcs);
  free(p->code);
  memset(p, 0, sizeof(*p));
}

int mr_gpu_payload_parse(const char* kind, const char* data, size_t size, mr_gpu_payload_t* out) {
  mr_gpu_payload_t p;
  mr_reader_t r;
  const char* text;
  uint64_t len, n, i;
  char what[MR_MAX_MODULE_KIND + 16];
  memset(&p, 0, sizeof(p));
  snprintf(what, sizeof(what), "%s module", kind);
  r.p = (const unsigned char*)data;
  r.size = size;
  r.pos = 0;
  r.at = 0;
  r.what = what;
  if (mr_read_bytes(&r, "fmt", &text, &len) != 0 || check_fmt(&r, kind, text, len, p.fmt) != 0 ||
      mr_read_le(&r, 8, "nfuncs", &n) != 0)
    return -1;
  /* Each function takes at least 42 bytes: two names of one byte, four u64 counts. */
  if (n > MR_MAX_DEVICE_KERNELS || n > (r.size - r.pos) / 42)
    return mr_reader_bad(&r, "nfuncs", n, "is invalid");
  p.funcs = (mr_gpu_func_t*)calloc(n ? n : 1, sizeof(mr_gpu_func_t));
  if (!p.funcs) return mr_error_oom("a device module");
  for (i = 0; i < n; ++i) {
    if (read_func(&r, &p, &p.funcs[i]) != 0) {
      p.num_funcs = (uint32_t)i + 1;
      goto fail;
    }
    p.num_funcs = (uint32_t)i + 1;
  }
  if (strcmp(kind, "vulkan") == 0) {
    if (read_shaders(&r, &p) != 0 || mr_reader_end(&r) != 0) goto fail;
    *out = p;
    return 0;
  }
  if (mr_read_bytes(&r, "code", &text, &len) != 0 || mr_reader_end(&r) != 0) goto fail;
  p.code = mr_strndup(text, (size_t)len);
  if (!p.code) {
    mr_error_oom("device code");
    goto fail;
  }
  p.code_size = (size_t)len;
  *out = p;
  return 0;
fail:
  mr_gpu_payload_free(&p);
  return -1;
}

int64_t mr_gpu_payload_find(const mr_gpu_payload_t* p, const char* name) {
  uint32_t i;
  for (i = 0; i < p->num_funcs; ++i)
    if (strcmp(p->funcs[i].name, name) == 0) return (int64_t)i;
  return -1;
}
