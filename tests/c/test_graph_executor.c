/* The graph executor in C: a hand-written graph over hand-written kernels
 * (fixtures/graph_kernels.c) through the C API for apps and the packed functions, malformed
 * graphs (each error names the node and field; no leaks), and GraphExecutorFactory payloads
 * with their manifests (every truncation of a payload fails cleanly). */
#include <stdlib.h>

#include "check.h"
#include "graph/graph.h"
#include "microruntime/graph_executor.h"

#define FIXTURES "build/tests/fixtures/"

/* x, y (inputs, [2, 2]), b (a param, [4]); s = x + y (flattened to 1-D), r = relu(s): the
 * output. s and r share no slot; a __nop node is skipped. */
static const char* k_graph =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"y\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"sum\", \"inputs\": [[0, 0, 0], [1, 0, 0]], \"attrs\":"
    " {\"func_name\": \"gadd\", \"num_inputs\": \"2\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"1\"}},"
    "{\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"biased\", \"inputs\": [[2, 0], [3, 0, 0]], \"attrs\":"
    " {\"func_name\": \"gadd\", \"num_inputs\": \"2\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"1\"}},"
    "{\"op\": \"tvm_op\", \"name\": \"relu\", \"inputs\": [[4, 0, 0]], \"attr\":"
    " {\"func_name\": \"grelu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"1\", \"hash\": \"12\"}},"
    "{\"op\": \"tvm_op\", \"name\": \"nothing\", \"inputs\": [[5, 0, 0]], \"attrs\":"
    " {\"func_name\": \"__nop\", \"num_inputs\": \"1\", \"num_outputs\": \"1\","
    " \"flatten_data\": \"0\"}}],"
    "\"arg_nodes\": [0, 1, 3], \"heads\": [[5, 0, 0]],"
    "\"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6, 7],"
    "\"attrs\": {\"shape\": [\"list_shape\", [[2, 2], [2, 2], [2, 2], [4], [2, 2], [2, 2], [2, 2]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\","
    " \"float32\", \"float32\"]],"
    " \"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 2, 5]],"
    " \"device_index\": [\"list_int\", [1, 1, 1, 1, 1, 1, 1]],"
    " \"storage_scope\": [\"list_str\", [\"global\", \"global\", \"global\", \"global\", \"global\","
    " \"global\", \"global\"]]},"
    "\"metadata\": {\"anything\": 1}}";

static const float k_x[4] = {1, -2, 3, -4}, k_y[4] = {0.5f, 0.5f, -5, 1}, k_b[4] = {1, 1, 1, 1};

/* k_graph with the first `from` replaced by `to`. */
static char* edited(const char* from, const char* to) {
  const char* at = strstr(k_graph, from);
  size_t n = strlen(k_graph) + strlen(to) + 1, head;
  char* out = (char*)malloc(n);
  if (!at) {
    fprintf(stderr, "edit '%s' not found\n", from);
    exit(1);
  }
  head = (size_t)(at - k_graph);
  memcpy(out, k_graph, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

/* Creating an executor of the edited graph fails with `phrase`. */
static void check_bad(TVMFFIObject* lib, const char* from, const char* to, const char* phrase) {
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject* ex = NULL;
  char* json = edited(from, to);
  ++check_count;
  mr_error_clear();
  if (mr_graph_executor_from_json(json, lib, cpu, &ex) == 0) {
    ++check_failures;
    fprintf(stderr, "graph with '%s' -> '%s' loaded\n", from, to);
    mr_object_release(ex);
  } else if (!check_error_matches(phrase) ||
             strcmp(mr_last_error_kind(), "GraphExecutorError") != 0) {
    ++check_failures;
    fprintf(stderr, "graph with '%s' -> '%s': %s: '%s' lacks '%s'\n", from, to,
            mr_last_error_kind(), mr_last_error(), phrase);
  }
  free(json);
}

static void check_output(TVMFFIObject* ex, float bias) {
  float out[4];
  int i;
  CHECK_OK(mr_graph_executor_get_output(ex, 0, out, sizeof(out)));
  for (i = 0; i < 4; ++i) {
    float want = k_x[i] + k_y[i] + bias;
    CHECK(out[i] == (want > 0 ? want : 0));
  }
}

/* Calls the executor module's function `name` with args; result owned by the caller. */
static int call(TVMFFIObject* ex, const char* name, TVMFFIAny* args, int n, TVMFFIAny* result) {
  TVMFFIObject* f = NULL;
  int status;
  memset(result, 0, sizeof(*result));
  if (mr_module_get_function(ex, name, 0, &f) != 0 || !f) return -1;
  status = mr_function_call(f, args, n, result);
  mr_object_release(f);
  return status;
}

static void test_executor(TVMFFIObject* lib) {
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject *ex = NULL, *tensors[1], *params = NULL, *info;
  TVMFFIAny args[2], result;
  const char* name = "b";
  int64_t shape4 = 4;
  DLDataType f32 = {kDLFloat, 32, 1};
  CHECK_OK(mr_graph_executor_from_json(k_graph, lib, cpu, &ex));
  CHECK(mr_graph_executor_num_inputs(ex) == 3 && mr_graph_executor_num_outputs(ex) == 1);
  CHECK(mr_graph_executor_output_bytes(ex, 0) == 16 && mr_graph_executor_output_bytes(ex, 1) < 0);
  CHECK_OK(mr_graph_executor_set_input(ex, "x", k_x, sizeof(k_x)));
  CHECK_OK(mr_graph_executor_set_input(ex, "y", k_y, sizeof(k_y)));
  CHECK_FAIL(mr_graph_executor_run(ex), "run: input 'b' was never set");
  CHECK_FAIL(mr_graph_executor_set_input(ex, "q", k_x, sizeof(k_x)), "no input named 'q'");
  CHECK_FAIL(mr_graph_executor_set_input(ex, "x", k_x, 8), "holds 16 bytes, not 8");
  /* b from a params file. */
  CHECK_OK(mr_tensor_create(1, &shape4, f32, cpu, &tensors[0]));
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(tensors[0]), k_b, sizeof(k_b)));
  CHECK_OK(mr_params_save(&name, tensors, 1, &params));
  CHECK_OK(mr_graph_executor_load_params(ex, mr_bytes_view(params)->data,
                                         mr_bytes_view(params)->size));
  CHECK_FAIL(mr_graph_executor_load_params(ex, "junk", 4), "load_params: params:");
  CHECK_OK(mr_graph_executor_run(ex));
  check_output(ex, 1.0f);
  CHECK_FAIL(mr_graph_executor_get_output(ex, 0, NULL, 3), "16 bytes but the buffer has 3");
  CHECK_FAIL(mr_graph_executor_get_output(ex, 2, NULL, 0), "out of range (1 outputs)");
  /* Packed functions: get_input_info leaves b (a param) out; set_input with a tensor. */
  CHECK_OK(call(ex, "get_input_info", NULL, 0, &result));
  info = result.v_obj;
  CHECK(mr_array_view(info)->size == 3 &&
        mr_array_view(((TVMFFIAny*)mr_array_view(info)->data)[0].v_obj)->size == 2);
  mr_any_clear(&result);
  args[0].type_index = kTVMFFIRawStr;
  args[0].v_c_str = "b";
  mr_any_set_object(&args[1], tensors[0]);
  ((float*)mr_tensor_dl(tensors[0])->data)[0] = 3.0f;
  CHECK_OK(call(ex, "set_input", args, 2, &result));
  args[0].type_index = kTVMFFIRawStr;
  args[0].v_c_str = "x";
  CHECK_FAIL(call(ex, "set_input", args, 2, &result), "input 'x' expects [2, 2] float32, got [4]");
  CHECK_OK(call(ex, "run", NULL, 0, &result));
  {
    float out[4];
    CHECK_OK(mr_graph_executor_get_output(ex, 0, out, sizeof(out)));
    CHECK(out[0] == 4.5f && out[1] == 0.0f);
  }
  args[0].type_index = kTVMFFIInt;
  args[0].v_int64 = 2; /* debug_get_output(node 2 = sum) */
  CHECK_OK(call(ex, "debug_get_output", args, 1, &result));
  CHECK(result.type_index == kTVMFFITensor &&
        ((float*)mr_tensor_dl(result.v_obj)->data)[2] == -2.0f);
  mr_any_clear(&result);
  CHECK_OK(call(ex, "run_individual", args, 1, &result));
  CHECK(result.type_index == kTVMFFIBytes && mr_bytes_view(result.v_obj)->size == 7 * 8);
  mr_any_clear(&result);
  CHECK(mr_module_implements(ex, "share_params", 0) && !mr_module_implements(ex, "nope", 0));
  mr_object_release(tensors[0]);
  mr_object_release(params);
  mr_object_release(ex);
}

static void test_malformed(TVMFFIObject* lib) {
  check_bad(lib, "\"tvm_op\", \"name\": \"sum\"", "\"conv\", \"name\": \"sum\"",
            "node 2 ('sum'): field 'op': must be \"null\" or \"tvm_op\"");
  check_bad(lib, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [4, 0, 0]]",
            "node 2 ('sum'): field 'inputs'");
  check_bad(lib, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [1, 1, 0]]",
            "node 2 ('sum'): field 'inputs'");
  check_bad(lib, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0]]",
            "node 2 ('sum'): field 'num_inputs': differs from the length of 'inputs'");
  check_bad(lib, "\"func_name\": \"gadd\"", "\"func_name\": \"nope\"",
            "node 2 ('sum'): function 'nope' is not in the module or its imports");
  check_bad(lib, "\"func_name\": \"gadd\"", "\"func_nam\": \"gadd\"",
            "node 2 ('sum'): field 'func_name': missing");
  check_bad(lib, "\"num_outputs\": \"1\"", "\"num_outputs\": \"2\"",
            "node 2 ('sum'): field 'num_outputs': must be at least 1 and match node_row_ptr");
  check_bad(lib, "\"flatten_data\": \"1\"", "\"flatten_data\": \"yes\"",
            "node 2 ('sum'): field 'flatten_data': not a small decimal integer");
  check_bad(lib, "\"name\": \"x\", \"inputs\": []", "\"name\": \"x\", \"inputs\": [[1, 0]]",
            "node 0 ('x'): field 'inputs'");
  check_bad(lib, "\"name\": \"x\"", "\"nam\": \"x\"", "node 0: field 'name': missing");
  check_bad(lib, "\"name\": \"x\", \"inputs\": []", "\"name\": \"x\", \"inputs\": [], \"z\": 1",
            "node 0 ('x'): field 'z': unknown key in a node");
  check_bad(lib, "\"name\": \"y\"", "\"name\": \"x\"", "input 'x' is listed twice");
  check_bad(lib, "\"arg_nodes\": [0, 1, 3]", "\"arg_nodes\": [0, 1]",
            "'arg_nodes' lists 2 nodes but the graph has 3 input nodes");
  check_bad(lib, "\"arg_nodes\": [0, 1, 3]", "\"arg_nodes\": [0, 1, 2]",
            "'arg_nodes'[2] is not the id of an input node");
  check_bad(lib, "\"heads\": [[5, 0, 0]]", "\"heads\": [[9, 0, 0]]", "'heads'[0] must be");
  check_bad(lib, "\"heads\": [[5, 0, 0]]", "\"heads\": []", "'heads' must be a non-empty list");
  check_bad(lib, "[0, 1, 2, 3, 4, 5, 6, 7]", "[0, 1, 2, 3, 4, 5, 6]",
            "'node_row_ptr' must be a list of 8 ints");
  check_bad(lib, "[0, 1, 2, 3, 4, 5, 6, 7]", "[0, 1, 2, 4, 3, 5, 6, 7]",
            "'node_row_ptr'[4] is not a valid entry offset");
  check_bad(lib, "[[2, 2], [2, 2], [2, 2], [4]", "[[2, 2], [2, -2], [2, 2], [4]",
            "shape of entry 1 has an invalid dimension 1");
  check_bad(lib, "[\"float32\", \"float32\", \"float32\"", "[\"float32\", \"float\", \"f32\"",
            "dltype of entry 2 is not a valid data type");
  check_bad(lib, "[0, 1, 2, 3, 4, 2, 5]", "[0, 1, 2, 3, 4, 2, 7]",
            "storage_id of entry 6 must be in [0, 7)");
  check_bad(lib, "[1, 1, 1, 1, 1, 1, 1]", "[1, 1, 2, 1, 1, 1, 1]",
            "storage slot 2 holds entries of different devices");
  check_bad(lib, "[\"global\", \"global\"", "[\"texture\", \"global\"",
            "storage_scope of entry 0 is not supported");
  check_bad(lib, "\"metadata\"", "\"extra\"", "unknown key 'extra' in the graph");
  check_bad(lib, "{\"nodes\"", "[{\"nodes\"", "graph JSON: ");
  check_bad(lib, "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}", "1",
            "node 0 is not an object");
  {
    DLDevice cpu = {kDLCPU, 0};
    TVMFFIObject* ex = NULL;
    char* json = edited("\"func_name\": \"grelu\"", "\"func_name\": \"gfail\"");
    CHECK_OK(mr_graph_executor_from_json(json, lib, cpu, &ex));
    CHECK_OK(mr_graph_executor_set_input(ex, "x", k_x, sizeof(k_x)));
    CHECK_OK(mr_graph_executor_set_input(ex, "y", k_y, sizeof(k_y)));
    CHECK_OK(mr_graph_executor_set_input(ex, "b", k_b, sizeof(k_b)));
#ifdef MR_CONFIG_SMALL /* the kernel's message, without the node */
    CHECK_FAIL(mr_graph_executor_run(ex), "the kernel failed on purpose");
#else
    CHECK_FAIL(mr_graph_executor_run(ex),
               "node 5 ('relu', function 'gfail'): the kernel failed on purpose");
#endif
    CHECK(strcmp(mr_last_error_kind(), "ValueError") == 0);
    mr_object_release(ex);
    free(json);
  }
}

/* The storage plan: entries that share a slot must not be live at the same time. Every
 * swap below keeps the slot sizes, so only liveness can tell. */
static void test_storage_plan(TVMFFIObject* lib) {
  static const char* const ok[] = {
      "[0, 1, 2, 3, 4, 2, 2]", /* the __nop's output is its input under another name */
      "[0, 1, 2, 3, 4, 2, 4]", /* written, never read: its slot's last user has finished */
  };
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject* ex = NULL;
  size_t i;
  /* 'biased' would write its result over its own input 'sum'. */
  check_bad(lib, "[0, 1, 2, 3, 4, 2, 5]", "[0, 1, 2, 3, 2, 4, 5]",
            "attrs: storage_id: entry 2 (output 0 of node 2 'sum') and entry 4 (output 0 of "
            "node 4 'biased') are live at the same time but share storage slot 2");
  /* An intermediate over an input: inputs are live for the whole run, and between runs. */
  check_bad(lib, "[0, 1, 2, 3, 4, 2, 5]", "[0, 1, 2, 3, 4, 0, 5]",
            "entry 0 (output 0 of node 0 'x') and entry 5 (output 0 of node 5 'relu') are "
            "live at the same time but share storage slot 0");
  check_bad(lib, "[0, 1, 2, 3, 4, 2, 5]", "[0, 1, 2, 1, 4, 2, 5]",
            "entry 1 (output 0 of node 1 'y') and entry 3 (output 0 of node 3 'b') are live "
            "at the same time but share storage slot 1");
  /* The output (a head) lives to the end; an alias does not excuse another slot's use. */
  check_bad(lib, "[0, 1, 2, 3, 4, 2, 5]", "[0, 1, 2, 3, 4, 2, 0]",
            "entry 0 (output 0 of node 0 'x') and entry 6 (output 0 of node 6 'nothing')");
  check_bad(lib, "\"heads\": [[5, 0, 0]]", "\"heads\": [[2, 0, 0]]",
            "entry 2 (output 0 of node 2 'sum') and entry 5 (output 0 of node 5 'relu')");
  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); ++i) {
    char* json = edited("[0, 1, 2, 3, 4, 2, 5]", ok[i]);
    CHECK_OK(mr_graph_executor_from_json(json, lib, cpu, &ex));
    if (ex) {
      CHECK_OK(mr_graph_executor_set_input(ex, "x", k_x, sizeof(k_x)));
      CHECK_OK(mr_graph_executor_set_input(ex, "y", k_y, sizeof(k_y)));
      CHECK_OK(mr_graph_executor_set_input(ex, "b", k_b, sizeof(k_b)));
      CHECK_OK(mr_graph_executor_run(ex));
      check_output(ex, 1.0f);
      mr_object_release(ex);
      ex = NULL;
    }
    free(json);
  }
}

/* ---- GraphExecutorFactory payloads ---- */
static size_t put_str(unsigned char* p, const char* s, size_t n) {
  size_t i;
  for (i = 0; i < 8; ++i) p[i] = (unsigned char)((uint64_t)n >> (8 * i));
  memcpy(p + 8, s, n);
  return 8 + n;
}

static const char* k_manifest =
    "{\"format\":\"kiln.manifest\",\"version\":1,"
    "\"inputs\":[{\"name\":\"x\",\"shape\":[2,2],\"dtype\":\"float32\"},"
    "{\"name\":\"y\",\"shape\":[2,2],\"dtype\":\"float32\"}],"
    "\"outputs\":[{\"shape\":[2,2],\"dtype\":\"float32\"}],\"params\":[\"b\"],"
    "\"storage_bytes\":[16,16,16,16,16,16],\"total_bytes\":96,\"kernels\":[\"gadd\",\"grelu\"]}";

/* graph, 1 param (b), "default", then the manifest (when not NULL); returns its size. */
static size_t payload(unsigned char* out, const char* manifest, TVMFFIObject* params) {
  size_t n = 0;
  const TVMFFIByteArray* p = mr_bytes_view(params);
  /* A params file is: magic, reserved, vec<str> names, count, records. */
  size_t records = 16 + 8 + 9 + 8;
  n += put_str(out + n, k_graph, strlen(k_graph));
  memcpy(out + n, p->data + 16, 8); /* count 1 */
  n += 8;
  memcpy(out + n, p->data + 16, 8 + 9); /* vec<str> ["b"] */
  n += 17;
  memcpy(out + n, p->data + records, p->size - records);
  n += p->size - records;
  n += put_str(out + n, "default", 7);
  if (manifest) n += put_str(out + n, manifest, strlen(manifest));
  return n;
}

static int load_factory(const unsigned char* data, size_t n, TVMFFIObject* lib,
                        TVMFFIObject** out) {
  unsigned char* copy = (unsigned char*)malloc(n ? n : 1);
  int status;
  memcpy(copy, data, n);
  status = mr_graph_factory_load((const char*)copy, n, out);
  free(copy);
  if (status == 0 && lib && mr_module_import(*out, lib) != 0) {
    mr_object_release(*out);
    return -1;
  }
  return status;
}

/* get_manifest of factory `f` gives k_manifest. */
static void check_manifest_function(TVMFFIObject* f) {
  TVMFFIObject* get = NULL;
  TVMFFIAny result;
  const TVMFFIByteArray* text;
  memset(&result, 0, sizeof(result));
  CHECK_OK(mr_module_get_function(f, "get_manifest", 0, &get));
  CHECK(get != NULL);
  if (!get) return;
  CHECK_OK(mr_function_call(get, NULL, 0, &result));
  text = result.type_index == kTVMFFIStr ? mr_bytes_view(result.v_obj) : NULL;
  CHECK(text && text->size == strlen(k_manifest) &&
        memcmp(text->data, k_manifest, text->size) == 0);
  mr_any_clear(&result);
  mr_object_release(get);
}

static void test_factory(TVMFFIObject* lib) {
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject *t, *params, *f = NULL, *ex = NULL;
  const char* name = "b";
  int64_t shape4 = 4;
  DLDataType f32 = {kDLFloat, 32, 1};
  unsigned char* buf = (unsigned char*)malloc(8192);
  char* bad;
  size_t n, k;
  CHECK_OK(mr_tensor_create(1, &shape4, f32, cpu, &t));
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(t), k_b, sizeof(k_b)));
  CHECK_OK(mr_params_save(&name, &t, 1, &params));
  n = payload(buf, k_manifest, params);
  CHECK_OK(load_factory(buf, n, lib, &f));
  CHECK_OK(mr_graph_executor_create(f, cpu, &ex));
  CHECK_OK(mr_graph_executor_set_input(ex, "x", k_x, sizeof(k_x)));
  CHECK_OK(mr_graph_executor_set_input(ex, "y", k_y, sizeof(k_y)));
  CHECK_OK(mr_graph_executor_run(ex)); /* b came with the model */
  check_output(ex, 1.0f);
  mr_object_release(ex);
  mr_object_release(f);
  /* Without a lib, the kernels cannot resolve; the manifest needs none. */
  CHECK_OK(load_factory(buf, n, NULL, &f));
  CHECK_FAIL(mr_graph_executor_create(f, cpu, &ex), "no kernel library is imported");
  CHECK_FAIL(mr_module_get_function(f, "get_graph_json", 0, &ex), "no kernel library");
  check_manifest_function(f);
  mr_object_release(f);
  /* Every truncation fails cleanly; so does a trailing byte after the manifest. */
  for (k = 0; k < n; ++k)
    if (k != n - strlen(k_manifest) - 8) CHECK(load_factory(buf, k, lib, &f) != 0);
  buf[n] = 0;
  CHECK_FAIL(load_factory(buf, n + 1, lib, &f), "trailing bytes");
  /* Manifest mismatches. */
  bad = (char*)malloc(strlen(k_manifest) + 16);
  strcpy(bad, k_manifest);
  memcpy(strstr(bad, "96"), "95", 2);
  n = payload(buf, bad, params);
  CHECK_FAIL(load_factory(buf, n, lib, &f), "'total_bytes' is not 96");
  strcpy(bad, k_manifest);
  memcpy(strstr(bad, "[2,2],\"dtype\":\"float32\"}],\"outputs"), "[2,3]", 5);
  n = payload(buf, bad, params);
  CHECK_FAIL(load_factory(buf, n, lib, &f),
             "manifest: input 'y' is [2, 3] float32 in the manifest but [2, 2] float32");
  strcpy(bad, k_manifest);
  memcpy(strstr(bad, "\"grelu\""), "\"grelx\"", 7);
  n = payload(buf, bad, params);
  CHECK_FAIL(load_factory(buf, n, lib, &f), "kernel 'grelx' is not called by the graph");
  CHECK_FAIL(load_factory(buf, payload(buf, "{\"format\":1}", params), lib, &f),
             "'format' is not \"kiln.manifest\"");
  /* No manifest: TVM's layout. */
  CHECK_OK(load_factory(buf, payload(buf, NULL, params), lib, &f));
  mr_object_release(f);
  free(bad);
  free(buf);
  mr_object_release(params);
  mr_object_release(t);
}

/* The C API alone (mr_graph_register, as mr_graph_model_open calls it): a model runs and
 * loads params, malformed params fail as through the packed function; the modules have no
 * packed functions until mr_graph_executor_register adds them. */
static void test_c_api_alone(TVMFFIObject* lib) {
  DLDevice cpu = {kDLCPU, 0};
  TVMFFIObject *t, *params, *f = NULL, *ex = NULL, *fn = NULL;
  const char* name = "b";
  int64_t shape4 = 4;
  DLDataType f32 = {kDLFloat, 32, 1};
  const float two[4] = {2, 2, 2, 2};
  unsigned char* buf = (unsigned char*)malloc(8192);
  CHECK_OK(mr_graph_register());
  CHECK_OK(mr_tensor_create(1, &shape4, f32, cpu, &t));
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(t), k_b, sizeof(k_b)));
  CHECK_OK(mr_params_save(&name, &t, 1, &params));
  CHECK_OK(load_factory(buf, payload(buf, k_manifest, params), lib, &f));
  CHECK_OK(mr_graph_executor_create(f, cpu, &ex));
  CHECK_OK(mr_module_get_function(f, "default", 0, &fn));
  CHECK(fn == NULL);
  CHECK_OK(mr_module_get_function(ex, "run", 0, &fn));
  CHECK(fn == NULL);
  CHECK_OK(mr_graph_executor_set_input(ex, "x", k_x, sizeof(k_x)));
  CHECK_OK(mr_graph_executor_set_input(ex, "y", k_y, sizeof(k_y)));
  CHECK_OK(mr_graph_executor_run(ex));
  check_output(ex, 1.0f);
  CHECK_FAIL(mr_graph_executor_load_params(ex, "junk", 4), "load_params: params:");
  CHECK(strcmp(mr_last_error_kind(), "GraphExecutorError") == 0);
  mr_object_release(params);
  CHECK_OK(mr_tensor_copy_from_bytes(mr_tensor_dl(t), two, sizeof(two)));
  CHECK_OK(mr_params_save(&name, &t, 1, &params));
  CHECK_OK(mr_graph_executor_load_params(ex, mr_bytes_view(params)->data,
                                         mr_bytes_view(params)->size));
  CHECK_OK(mr_graph_executor_run(ex));
  check_output(ex, 2.0f);
  CHECK_OK(mr_graph_executor_register());
  CHECK_OK(mr_module_get_function(ex, "run", 0, &fn));
  CHECK(fn != NULL);
  mr_object_release(fn);
  CHECK_OK(mr_module_get_function(f, "default", 0, &fn));
  CHECK(fn != NULL);
  mr_object_release(fn);
  mr_object_release(ex);
  mr_object_release(f);
  mr_object_release(params);
  mr_object_release(t);
  free(buf);
}

int main(void) {
  TVMFFIObject* lib = NULL;
  CHECK_OK(mr_module_load(FIXTURES "graph_kernels.so", &lib));
  test_c_api_alone(lib);
  CHECK_OK(mr_graph_executor_register());
  test_executor(lib);
  test_malformed(lib);
  test_storage_plan(lib);
  test_factory(lib);
  CHECK_FAIL(mr_graph_model_open(FIXTURES "kernels.so", &lib), "holds no graph executor model");
  mr_object_release(lib);
  return CHECK_RESULT();
}
