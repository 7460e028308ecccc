/* Fuzz target: graph JSON (the JSON reader and the graph loader, mr_graph_parse), and the same
 * bytes as the manifest of a fixed graph. Whatever loads is walked completely. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static const char k_graph[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"f\", \"inputs\": [[0, 0, 0]], \"attrs\": {\"func_name\":"
    " \"f\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}}],"
    "\"arg_nodes\": [0], \"heads\": [[1, 0, 0]], \"node_row_ptr\": [0, 1, 2],"
    "\"attrs\": {\"shape\": [\"list_shape\", [[4], [4]]], \"dltype\": [\"list_str\","
    " [\"float32\", \"float32\"]], \"storage_id\": [\"list_int\", [0, 1]]}}";

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mr_graph_t* g = NULL;
  TVMFFIObject* names = NULL;
  char* copy = (char*)malloc(size ? size : 1); /* exactly the input: over-reads are caught */
  memcpy(copy, data, size);
  if (mr_graph_parse(copy, size, &g) == 0) {
    uint64_t total = 0;
    uint32_t i;
    for (i = 0; i < g->num_storage; ++i) total += g->storage_bytes[i];
    for (i = 0; i < g->num_nodes; ++i) total += strlen(g->nodes[i].name);
    for (i = 0; i < g->num_heads; ++i) total += g->entries[g->heads[i]].nbytes;
    (void)total;
    mr_graph_free(g);
  }
  if (mr_graph_parse(k_graph, sizeof(k_graph) - 1, &g) == 0 &&
      mr_array_create(NULL, 0, &names) == 0) {
    uint8_t* linked = (uint8_t*)calloc(g->num_args + 1, 1);
    if (linked) (void)mr_graph_manifest_check(copy, size, g, names, linked);
    free(linked);
    mr_object_release(names);
  }
  mr_graph_free(g);
  free(copy);
  mr_error_clear();
  return 0;
}
