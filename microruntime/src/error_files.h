/* The numbers of the runtime's source files in error-site codes (MR_CONFIG_SMALL builds, see
 * MR_ERROR_CODE in internal.h): the code of an error raised at line L of file F is
 * F * 10000 + L, so E<code> in mr_last_error() names the file below and the line. A file that
 * raises errors defines MR_ERROR_FILE to its number. New files take the next number; numbers
 * are never reused. */
#ifndef MR_ERROR_FILES_H_
#define MR_ERROR_FILES_H_

enum {
  kMrFileBuiltins = 1, /* builtins.c */
  kMrFileCrc32c = 2, /* crc32c.c */
  kMrFileDevice = 3, /* device.c */
  kMrFileDeviceCpu = 4, /* device_cpu.c */
  kMrFileDtype = 5, /* dtype.c */
  kMrFileElfCheck = 6, /* elf_check.c */
  kMrFileError = 7, /* error.c */
  kMrFileFunction = 8, /* function.c */
  kMrFileMap = 9, /* map.c */
  kMrFileModule = 10, /* module.c */
  kMrFileModuleDso = 11, /* module_dso.c */
  kMrFileModuleLibrary = 12, /* module_library.c */
  kMrFileModuleLoader = 13, /* module_loader.c */
  kMrFileModuleNodl = 14, /* module_nodl.c */
  kMrFileModuleSyslib = 15, /* module_syslib.c */
  kMrFileNdarray = 16, /* ndarray.c */
  kMrFileObject = 17, /* object.c */
  kMrFileParams = 18, /* params.c */
  kMrFileParamsSave = 19, /* params_save.c */
  kMrFilePlatform = 20, /* platform.c */
  kMrFilePlatformBaremetal = 21, /* platform_baremetal.c */
  kMrFilePlatformDl = 22, /* platform_dl.c */
  kMrFileReader = 23, /* reader.c */
  kMrFileRegistry = 24, /* registry.c */
  kMrFileSymtab = 25, /* symtab.c */
  kMrFileTensorDlpack = 26, /* tensor_dlpack.c */
  kMrFileThreadpool = 27, /* threadpool.c */
  kMrFileThreadpoolInline = 28, /* threadpool_inline.c */
  kMrFileTimer = 29, /* timer.c */
  kMrFileWorkspace = 30, /* workspace.c */
  kMrFileGraphApi = 31, /* graph/api.c */
  kMrFileGraphArena = 32, /* graph/arena.c */
  kMrFileGraphArgs = 33, /* graph/args.c */
  kMrFileGraphError = 34, /* graph/error.c */
  kMrFileGraphExecutor = 35, /* graph/executor.c */
  kMrFileGraphExecutorModule = 36, /* graph/executor_module.c */
  kMrFileGraphExtras = 37, /* graph/extras.c */
  kMrFileGraphFactory = 38, /* graph/factory.c */
  kMrFileGraphFactoryModule = 39, /* graph/factory_module.c */
  kMrFileGraphGraph = 40, /* graph/graph.c */
  kMrFileGraphJson = 41, /* graph/json.c */
  kMrFileGraphLinkedParams = 42, /* graph/linked_params.c */
  kMrFileGraphManifest = 43, /* graph/manifest.c */
  kMrFileVmAlloc = 44, /* vm/alloc.c */
  kMrFileVmBuiltins = 45, /* vm/builtins.c */
  kMrFileVmExec = 46, /* vm/exec.c */
  kMrFileVmExtras = 47, /* vm/extras.c */
  kMrFileVmInterp = 48, /* vm/interp.c */
  kMrFileVmModule = 49, /* vm/module.c */
};

#endif /* MR_ERROR_FILES_H_ */
