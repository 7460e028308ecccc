/* Limits of the microruntime, in one place. MR_CONFIG_SMALL (set per build, e.g. for a
 * microcontroller) sizes the tables, buffers and limits to fit in a few KB of RAM; the
 * defaults are sized for a PC. */
#ifndef MR_CONFIG_H_
#define MR_CONFIG_H_

#ifdef MR_CONFIG_SMALL
/* Tensors. */
#define MR_MAX_NDIM 8
#define MR_DATA_ALIGNMENT 64
/* Errors: longer messages are truncated. */
#define MR_MAX_ERROR_KIND 32
#define MR_MAX_ERROR_MESSAGE 256
/* Names of functions, symbols, module kinds. */
#define MR_MAX_NAME 128
/* Global tables (grown on demand up to these). */
#define MR_MAX_GLOBAL_FUNCS 64
#define MR_MAX_SYSLIB_SYMBOLS 256
#define MR_MAX_CONTEXT_SYMBOLS 16
#define MR_MAX_MODULE_LOADERS 8
#define MR_MAX_MODULE_KIND 32
#define MR_MAX_DEVICE_TYPES 16
#define MR_MAX_DEVICE_IDS 1
/* Library blobs. */
#define MR_MAX_BLOB_MODULES 16
#define MR_MAX_LIBRARY_BLOB ((uint64_t)16 << 20)
/* Params files. */
#define MR_MAX_PARAMS 4096
/* Graph executor. */
#define MR_MAX_GRAPH_JSON ((size_t)1 << 20)
#define MR_MAX_JSON_DEPTH 16
#define MR_MAX_GRAPH_NODES (1u << 12)
#define MR_MAX_GRAPH_ENTRIES (1u << 12)
#define MR_MAX_GRAPH_OP_ARGS 64
#define MR_MAX_GRAPH_DEVICES 1
/* Threads. */
#define MR_MAX_THREADS 1
/* Workspace: nesting depth of live allocations per thread. */
#define MR_MAX_WORKSPACE_DEPTH 16
#else

/* Tensors. */
#define MR_MAX_NDIM 32
#define MR_DATA_ALIGNMENT 64
/* Errors: longer messages are truncated. */
#define MR_MAX_ERROR_KIND 64
#define MR_MAX_ERROR_MESSAGE 4096
/* Names of functions, symbols, module kinds. */
#define MR_MAX_NAME 512
/* Global tables. */
#define MR_MAX_GLOBAL_FUNCS 4096
#define MR_MAX_SYSLIB_SYMBOLS 65536
#define MR_MAX_CONTEXT_SYMBOLS 64
#define MR_MAX_MODULE_LOADERS 64
#define MR_MAX_MODULE_KIND 64
#define MR_MAX_DEVICE_TYPES 32
#define MR_MAX_DEVICE_IDS 16
/* Library blobs (__tvm_ffi__library_bin). A blob whose real size the platform
 * cannot tell (system library, symbol without a size) is read within its declared
 * size, which may be at most this. */
#define MR_MAX_BLOB_MODULES 1024
#define MR_MAX_LIBRARY_BLOB ((uint64_t)1 << 30)
/* Device modules (CUDA/OpenCL code in a library blob): kernels per module, arguments per
 * kernel, and launch tags (3 grid extents, 3 block extents, dynamic shared memory). */
#define MR_MAX_DEVICE_KERNELS 65536
#define MR_MAX_KERNEL_ARGS 1024
#define MR_MAX_LAUNCH_TAGS 7
/* Params files. */
#define MR_MAX_PARAMS 1000000
/* Graph executor: graph JSON text, JSON nesting, graph nodes and entries,
 * inputs + outputs of one op, devices of one executor. */
#define MR_MAX_GRAPH_JSON ((size_t)256 << 20)
#define MR_MAX_JSON_DEPTH 32
#define MR_MAX_GRAPH_NODES (1u << 20)
#define MR_MAX_GRAPH_ENTRIES (1u << 20)
#define MR_MAX_GRAPH_OP_ARGS 1024
#define MR_MAX_GRAPH_DEVICES 8
/* Threads. */
#define MR_MAX_THREADS 256
/* Workspace: nesting depth of live allocations per thread. */
#define MR_MAX_WORKSPACE_DEPTH 1024

#endif /* MR_CONFIG_SMALL */

#endif /* MR_CONFIG_H_ */
