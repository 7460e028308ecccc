"""Writes device-module payloads and library blobs by hand, byte for byte as the GPU contract
(and TVM's SaveToBytes) lays them out, so the runtime's loaders are tested against the format
itself rather than against the compiler that also writes it."""
import struct

HANDLE = (3, 64, 1)
FLOAT32 = (2, 32, 1)
FLOAT64 = (2, 64, 1)
FLOAT16 = (2, 16, 1)
INT32 = (0, 32, 1)
INT64 = (0, 64, 1)
UINT8 = (1, 8, 1)


def u64(value):
    return struct.pack("<Q", value)


def string(value):
    data = value.encode() if isinstance(value, str) else bytes(value)
    return u64(len(data)) + data


def function_info(name, arg_types, tags, extra_tags=None):
    """FunctionInfo: name; vec<DLDataType> arg_types; vec<str> tags; vec<i32> extra tags."""
    extra = [0] * len(arg_types) if extra_tags is None else extra_tags
    out = string(name) + u64(len(arg_types))
    out += b"".join(struct.pack("<BBH", *t) for t in arg_types)
    out += u64(len(tags)) + b"".join(string(t) for t in tags)
    out += u64(len(extra)) + b"".join(struct.pack("<i", e) for e in extra)
    return out


def payload(fmt, funcs, code):
    """funcs: a list of (name, arg_types, tags) or (name, arg_types, tags, extra_tags)."""
    out = string(fmt) + u64(len(funcs))
    for func in funcs:
        out += string(func[0]) + function_info(*func)
    return out + string(code)


def library_blob(kind, device_payload):
    """__tvm_ffi__library_bin: root "_lib" importing one device module (as TVM writes it)."""
    body = u64(3) + u64(0) + u64(1) + u64(1) + u64(1) + u64(1)
    body += string("_lib") + string(kind) + string(device_payload)
    return u64(len(body)) + body
