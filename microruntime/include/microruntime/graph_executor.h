/*
 * Running a compiled model with the graph executor, from C.
 *
 * A model is one file: the kernel library with the graph JSON, the params and a manifest in
 * it (compiler: `relay.build(...).export_library("model.so")`, or "model.a" for a
 * `--system-lib` target, linked into the program). A link-params build (the default for a
 * bare-metal target) holds the weights as constant data of the kernel library instead: the
 * executor reads them where they lie (in flash on a microcontroller), neither copied nor in
 * the arena, and setting one (set_input, load_params) fails naming it. In a few lines:
 *
 *   TVMFFIObject *model = NULL, *exec = NULL;
 *   DLDevice cpu = {kDLCPU, 0};
 *   float x[1 * 16], y[1 * 4];
 *   if (mr_graph_model_open("model.so", &model) != 0 ||   // NULL: the linked system library
 *       mr_graph_executor_create(model, cpu, &exec) != 0 ||
 *       mr_graph_executor_set_input(exec, "x", x, sizeof(x)) != 0 ||
 *       mr_graph_executor_run(exec) != 0 ||
 *       mr_graph_executor_get_output(exec, 0, y, sizeof(y)) != 0)
 *     printf("error: %s\n", mr_last_error());
 *   mr_object_release(exec);
 *   mr_object_release(model);
 *
 * The model and the executor are Module objects (the same ones the Python package and TVM's
 * API use); their packed functions (the executor's set_input, run, get_output, ..., the
 * model's "default", get_graph_json, ...) are there once mr_graph_executor_register() has
 * run, which the C API below does not need. Conventions are
 * those of microruntime.h: int status, outputs last and written only on success, messages
 * in mr_last_error(); mistakes in a graph or its inputs are errors of kind
 * "GraphExecutorError".
 */
#ifndef MICRORUNTIME_GRAPH_EXECUTOR_H_
#define MICRORUNTIME_GRAPH_EXECUTOR_H_

#include "microruntime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the module loader for "GraphExecutorFactory" payloads (also TVM's global
 * ffi.Module.load_from_bytes.GraphExecutorFactory). Idempotent; mr_graph_model_open calls it,
 * and a static program that only opens a model, sets inputs, runs and reads outputs needs
 * nothing more, so it links none of the rest. */
MR_DLL int mr_graph_register(void);
/* mr_graph_register() plus TVM's globals tvm.graph_executor.create and
 * tvm.graph_executor_factory.create, and the packed functions of executor and factory
 * modules (TVM's set: set_input, run, get_output, load_params, ..., get_input_info,
 * share_params, get_node_output, debug_get_output, run_individual, get_graph_json; the
 * factory's <module_name>(dev), get_graph_json, get_graph_params, get_manifest). Idempotent;
 * call this (or mr_graph_executor_from_json, which does) before looking functions up. */
MR_DLL int mr_graph_executor_register(void);

/* Opens a model: the shared library at `path` (dlopen), or with path NULL or "" the system
 * library linked into the program. Fails unless it holds a graph executor model whose
 * kernels all resolve and whose manifest matches its graph. */
MR_DLL int mr_graph_model_open(const char* path, TVMFFIObject** out_model);
/* A new executor of the model on `dev`, with the model's params set. */
MR_DLL int mr_graph_executor_create(TVMFFIObject* model, DLDevice dev,
                                    TVMFFIObject** out_executor);
/* An executor of graph JSON (NUL-terminated) whose kernels come from module `lib`. */
MR_DLL int mr_graph_executor_from_json(const char* graph_json, TVMFFIObject* lib, DLDevice dev,
                                       TVMFFIObject** out_executor);

/* ---- on a microcontroller: an executor in the app's memory ----
 * Bytes of the arena an executor of the model needs: its storage slots as the compiler
 * planned them (each 64-byte aligned) and the CPU workspace its kernels take at most. The
 * compiler writes the same number into the model's manifest ("arena_bytes") and into the
 * header of test vectors, so an app can declare a static buffer of that size. -1 (error set)
 * when `model` is not a model. */
MR_DLL int64_t mr_graph_model_arena_bytes(TVMFFIObject* model);
/* A new executor of the model on the CPU, with the model's params set, whose tensors and
 * kernel workspaces live in `arena` (64-byte aligned, at least mr_graph_model_arena_bytes;
 * it must outlive the executor). After it returns, set_input, run and get_output allocate
 * nothing. The workspace part serves the thread that created the executor, one such
 * executor per thread at a time. */
MR_DLL int mr_graph_executor_create_in_arena(TVMFFIObject* model, void* arena,
                                             size_t arena_bytes, TVMFFIObject** out_executor);

/* Copies nbytes (exactly the input's size) of host data into input `name`. */
MR_DLL int mr_graph_executor_set_input(TVMFFIObject* executor, const char* name,
                                       const void* data, size_t nbytes);
/* Sets the inputs named in a params file (save_param_dict format); a linked param among
 * them is an error. */
MR_DLL int mr_graph_executor_load_params(TVMFFIObject* executor, const void* data,
                                         size_t nbytes);
MR_DLL int mr_graph_executor_run(TVMFFIObject* executor);
/* Copies output `index` (exactly nbytes, its size) to host memory. */
MR_DLL int mr_graph_executor_get_output(TVMFFIObject* executor, int64_t index, void* data,
                                        size_t nbytes);
/* Bytes of output `index`; -1 (error set) when there is no such output. */
MR_DLL int64_t mr_graph_executor_output_bytes(TVMFFIObject* executor, int64_t index);
/* Inputs (params included) and outputs of the graph; -1 (error set) when not an executor. */
MR_DLL int64_t mr_graph_executor_num_inputs(TVMFFIObject* executor);
MR_DLL int64_t mr_graph_executor_num_outputs(TVMFFIObject* executor);

#ifdef __cplusplus
}
#endif
#endif /* MICRORUNTIME_GRAPH_EXECUTOR_H_ */
