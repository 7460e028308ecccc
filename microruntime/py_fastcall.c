/*
 * The fast call path of PackedFunc, written against the CPython C API and compiled into the
 * cffi extension (appended to its preamble by build_ffi.py; not part of the C runtime).
 *
 * PackedFunc.__call__ is a method descriptor over mr_py_fastcall (installed by fastcall.py).
 * Arguments that are NDArrays, ints or floats are written into a TVMFFIAny array on the C stack
 * (nothing allocated, re-entrant, thread-safe); the GIL is released around the call; None, int,
 * float and bool results are returned directly. Anything else goes to the Python helpers:
 * `slow_call(self, *args)` for other argument types or more than MR_PY_FAST_ARGS arguments,
 * `take_result(address of the result Any)` for object results, `raise_error()` on failure.
 * Python objects are handed over by address (id()) and kept alive by fastcall.py. The Tensor
 * and Function addresses are read straight from the `_addr` / `_faddr` slots at the offsets their
 * member descriptors give, which costs a load instead of an attribute lookup.
 */
#include <structmember.h>
#ifndef METH_FASTCALL
#define METH_FASTCALL 0x0080 /* stable value; in the limited API from 3.10 */
#endif

#define MR_PY_FAST_ARGS 8

static PyObject* mr_py_ndarray_type;
static Py_ssize_t mr_py_addr_offset;  /* NDArray._addr: the Tensor object's address */
static Py_ssize_t mr_py_faddr_offset; /* PackedFunc._faddr: the Function object's address */
static PyObject* mr_py_slow_call;
static PyObject* mr_py_take_result;
static PyObject* mr_py_raise_error;

/* The instance offset of a `__slots__` member holding an object; -1 if `descr` is not one. */
static Py_ssize_t mr_py_slot_offset(PyObject* descr) {
  PyMemberDef* member;
  if (Py_TYPE(descr) != &PyMemberDescr_Type) return -1;
  member = ((PyMemberDescrObject*)descr)->d_member;
  return member->type == T_OBJECT_EX ? member->offset : -1;
}

/* Returns 0 when installed, -1 when the slots are not what this file expects. */
static int mr_py_fastcall_init(uintptr_t ndarray_type, uintptr_t addr_descr,
                               uintptr_t faddr_descr, uintptr_t slow_call,
                               uintptr_t take_result, uintptr_t raise_error) {
  mr_py_addr_offset = mr_py_slot_offset((PyObject*)addr_descr);
  mr_py_faddr_offset = mr_py_slot_offset((PyObject*)faddr_descr);
  if (mr_py_addr_offset < 0 || mr_py_faddr_offset < 0) return -1;
  mr_py_ndarray_type = (PyObject*)ndarray_type;
  mr_py_slow_call = (PyObject*)slow_call;
  mr_py_take_result = (PyObject*)take_result;
  mr_py_raise_error = (PyObject*)raise_error;
  return 0;
}

/* The address held (as a Python int) in the slot at `offset` of `obj`; NULL when the slot is
 * unset or 0 (a released object), with an exception set only if the int is malformed. */
static void* mr_py_slot_addr(PyObject* obj, Py_ssize_t offset) {
  PyObject* value = *(PyObject**)((char*)obj + offset);
  return value == NULL ? NULL : PyLong_AsVoidPtr(value);
}

static PyObject* mr_py_slow(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  PyObject* tuple = PyTuple_New(nargs + 1);
  if (tuple == NULL) return NULL;
  Py_INCREF(self);
  PyTuple_SetItem(tuple, 0, self);
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SetItem(tuple, i + 1, args[i]);
  }
  PyObject* out = PyObject_CallObject(mr_py_slow_call, tuple);
  Py_DECREF(tuple);
  return out;
}

/* Fills `slot` from a Python value; returns 1 when done, 0 when the value needs the slow path,
 * -1 with an exception set. */
static int mr_py_fill(TVMFFIAny* slot, PyObject* value) {
  PyTypeObject* tp = Py_TYPE(value);
  slot->zero_padding = 0;
  if (PyObject_TypeCheck(value, (PyTypeObject*)mr_py_ndarray_type)) {
    void* obj = mr_py_slot_addr(value, mr_py_addr_offset);
    if (obj == NULL) return PyErr_Occurred() ? -1 : 0;
    slot->type_index = kTVMFFITensor;
    slot->v_ptr = obj;
    return 1;
  }
  if (tp == &PyLong_Type) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow != 0) return 0; /* let the slow path raise its error */
    if (v == -1 && PyErr_Occurred()) return -1;
    slot->type_index = kTVMFFIInt;
    slot->v_int64 = (int64_t)v;
    return 1;
  }
  if (tp == &PyFloat_Type) {
    slot->type_index = kTVMFFIFloat;
    slot->v_float64 = PyFloat_AsDouble(value);
    return 1;
  }
  if (value == Py_None) {
    slot->type_index = kTVMFFINone;
    slot->v_int64 = 0;
    return 1;
  }
  return 0;
}

static PyObject* mr_py_fastcall(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  TVMFFIAny stack[MR_PY_FAST_ARGS];
  if (nargs > MR_PY_FAST_ARGS) return mr_py_slow(self, args, nargs);
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    int filled = mr_py_fill(&stack[i], args[i]);
    if (filled < 0) return NULL;
    if (filled == 0) return mr_py_slow(self, args, nargs);
  }
  void* func = mr_py_slot_addr(self, mr_py_faddr_offset);
  if (func == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "call of a released function");
    return NULL;
  }
  TVMFFIAny result;
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  int status;
  Py_BEGIN_ALLOW_THREADS
  status = TVMFFIFunctionCall(func, stack, (int32_t)nargs, &result);
  Py_END_ALLOW_THREADS
  if (status != 0) return PyObject_CallObject(mr_py_raise_error, NULL);
  switch (result.type_index) {
    case kTVMFFINone:
      Py_RETURN_NONE;
    case kTVMFFIInt:
      return PyLong_FromLongLong(result.v_int64);
    case kTVMFFIFloat:
      return PyFloat_FromDouble(result.v_float64);
    case kTVMFFIBool:
      return PyBool_FromLong(result.v_int64 != 0);
    default: {
      PyObject* addr = PyLong_FromVoidPtr(&result);
      if (addr == NULL) {
        mr_any_clear(&result);
        return NULL;
      }
      /* take_result owns the value from here on, even when it raises. */
      PyObject* out = PyObject_CallFunctionObjArgs(mr_py_take_result, addr, NULL);
      Py_DECREF(addr);
      return out;
    }
  }
}

static PyMethodDef mr_py_fastcall_def = {
    "__call__", (PyCFunction)(void (*)(void))mr_py_fastcall, METH_FASTCALL,
    "Calls the function with the given arguments."};

static void* mr_py_fastcall_method_def(void) { return (void*)&mr_py_fastcall_def; }
