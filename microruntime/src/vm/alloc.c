/* The VM's allocators, one per device: naive (each storage allocated and freed) and pooled
 * (freed storage goes back to the pool and is reused by a later storage of the same rounded
 * size, as TVM's pooled allocator does with 4096-byte pages). A storage is a 1-D uint8 Tensor
 * (64-byte aligned) whose memory returns to its pool; the pool lives while the VM or any
 * storage of it does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define MR_ERROR_FILE kMrFileVmAlloc

typedef struct {
  void* data;
  size_t nbytes;
} block_t;

struct mr_vm_pool {
  uint64_t refs;
  mr_mutex_t mutex;
  DLDevice dev;
  int pooled;
  block_t* free;
  size_t num_free, cap_free;
};

typedef struct {
  mr_vm_pool_t* pool;
  block_t block;
  int64_t shape[1];
} storage_t;

int mr_vm_pool_create(DLDevice dev, int pooled, mr_vm_pool_t** out) {
  mr_vm_pool_t* p;
  if (!mr_device_api_get(dev.device_type)) return -1;
  p = (mr_vm_pool_t*)calloc(1, sizeof(*p));
  if (!p) return MR_OOM("an allocator");
  p->refs = 1;
  mr_mutex_init_recursive(&p->mutex);
  p->dev = dev;
  p->pooled = pooled;
  *out = p;
  return 0;
}

static void free_block(DLDevice dev, block_t b) {
  const mr_device_api_t* api = mr_device_api_get(dev.device_type);
  if (api && b.data) (void)api->free_data(dev, b.data);
}

void mr_vm_pool_release(mr_vm_pool_t* p) {
  size_t i;
  if (!p || mr_atomic_sub_u64(&p->refs, 1) != 1) return;
  for (i = 0; i < p->num_free; ++i) free_block(p->dev, p->free[i]);
  free(p->free);
  free(p);
}

/* Makes room for one more free block; records no error (a storage is often released while
 * the error that ended a call is still to be reported), so failing only means the block is
 * freed instead of kept. */
static int reserve_free_slot(mr_vm_pool_t* p) {
  block_t* grown;
  size_t cap;
  if (p->num_free < p->cap_free) return 0;
  cap = p->cap_free ? 2 * p->cap_free : 8;
  if (cap > SIZE_MAX / sizeof(block_t)) return -1;
  if (!(grown = (block_t*)realloc(p->free, cap * sizeof(block_t)))) return -1;
  p->free = grown;
  p->cap_free = cap;
  return 0;
}

static void storage_release(void* owner) {
  storage_t* s = (storage_t*)owner;
  mr_vm_pool_t* p = s->pool;
  int kept = 0;
  if (p->pooled) {
    mr_mutex_lock(&p->mutex);
    if (reserve_free_slot(p) == 0) {
      p->free[p->num_free++] = s->block;
      kept = 1;
    }
    mr_mutex_unlock(&p->mutex);
  }
  if (!kept) free_block(p->dev, s->block);
  free(s);
  mr_vm_pool_release(p);
}

int mr_vm_pool_alloc(mr_vm_pool_t* p, uint64_t nbytes, DLDataType hint,
                     TVMFFIObject** out_storage) {
  const mr_device_api_t* api = mr_device_api_get(p->dev.device_type);
  storage_t* s;
  DLTensor dl;
  size_t i;
  int found = 0;
  if (!api) return -1;
  if (nbytes > ((uint64_t)1 << 48))
    return MR_RAISE(kMrErrorMemory, "cannot allocate a storage of %llu bytes (more than "
                         "2^48)", (unsigned long long)nbytes);
  if (p->pooled) nbytes = (nbytes + MR_VM_POOL_PAGE - 1) / MR_VM_POOL_PAGE * MR_VM_POOL_PAGE;
  if (!(s = (storage_t*)calloc(1, sizeof(*s)))) return MR_OOM("a storage");
  if (p->pooled) {
    mr_mutex_lock(&p->mutex);
    for (i = p->num_free; i-- > 0;)
      if (p->free[i].nbytes == nbytes) {
        s->block = p->free[i];
        p->free[i] = p->free[--p->num_free];
        found = 1;
        break;
      }
    mr_mutex_unlock(&p->mutex);
  }
  if (!found) {
    s->block.nbytes = (size_t)nbytes;
    if (api->alloc_data(p->dev, (size_t)(nbytes ? nbytes : 1), MR_DATA_ALIGNMENT, hint,
                        &s->block.data) != 0) {
      free(s);
      return -1;
    }
  }
  s->pool = p;
  s->shape[0] = (int64_t)s->block.nbytes;
  memset(&dl, 0, sizeof(dl));
  dl.data = s->block.data;
  dl.device = p->dev;
  dl.ndim = 1;
  dl.dtype.code = kDLUInt;
  dl.dtype.bits = 8;
  dl.dtype.lanes = 1;
  dl.shape = s->shape;
  if (mr_tensor_wrap(&dl, s, storage_release, out_storage) != 0) {
    free_block(p->dev, s->block);
    free(s);
    return -1;
  }
  mr_atomic_add_u64(&p->refs, 1);
  return 0;
}
