"""The safetensors format written and read with numpy alone, for the golden files.

The format (core/include/accel/keras/saving/safetensors.hpp is accel's reader):

    8 bytes   N, the header's length (unsigned little-endian)
    N bytes   JSON: {"__metadata__": {"<key>": "<string>"},
                     "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
    the data  each tensor's raw little-endian bytes, row-major, packed in order;
              offsets count from the end of the header

As the reference writer does, the header is padded with spaces to a multiple
of 8 bytes so that the data stays aligned. accel's reader takes the dtypes
F32, BF16, F16, I32, I64, U8 and BOOL and wants the byte ranges to tile the
data exactly (no gap, no overlap, nothing after the last tensor).
"""
import json
import struct

import numpy as np

# numpy dtype <-> the format's dtype names, for the dtypes the goldens use.
_NAME_OF = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int32"): "I32",
            np.dtype("int64"): "I64", np.dtype("uint8"): "U8", np.dtype("bool"): "BOOL"}
_DTYPE_OF = {name: dtype for dtype, name in _NAME_OF.items()}
_DTYPE_OF["BF16"] = np.dtype("uint16")  # numpy has no bfloat16: read as the raw 16-bit patterns


def serialize(tensors, metadata=None):
    """The file's bytes: `tensors` is an ordered dict name -> numpy array (packed in
    that order), `metadata` a dict of strings."""
    header = {}
    if metadata:
        for key, value in metadata.items():
            if not isinstance(value, str):
                raise TypeError(f"__metadata__ values must be strings; {key!r} is {type(value).__name__}")
        header["__metadata__"] = dict(metadata)
    chunks = []
    offset = 0
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        if array.dtype not in _NAME_OF:
            raise TypeError(f"tensor {name!r}: dtype {array.dtype} has no safetensors name here")
        raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _NAME_OF[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def write_file(path, tensors, metadata=None):
    with open(path, "wb") as out:
        out.write(serialize(tensors, metadata))


def parse(data):
    """(tensors, metadata) from a file's bytes, with the checks accel's reader makes."""
    (header_size,) = struct.unpack("<Q", data[:8])
    if header_size > len(data) - 8:
        raise ValueError("the header length runs past the end of the file")
    header = json.loads(data[8:8 + header_size].decode("utf-8"))
    body = data[8 + header_size:]
    metadata = header.pop("__metadata__", {})
    entries = sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"]))
    expected_begin = 0
    tensors = {}
    for name, entry in entries:
        begin, end = entry["data_offsets"]
        dtype = _DTYPE_OF[entry["dtype"]]
        count = int(np.prod(entry["shape"], dtype=np.int64))
        if begin != expected_begin or end - begin != count * dtype.itemsize or end > len(body):
            raise ValueError(f"tensor {name!r}: data_offsets {entry['data_offsets']} do not tile the data")
        tensors[name] = np.frombuffer(body[begin:end], dtype=dtype.newbyteorder("<")).reshape(entry["shape"])
        expected_begin = end
    if expected_begin != len(body):
        raise ValueError(f"the tensors cover {expected_begin} bytes but the data holds {len(body)}")
    # Back in the header's (= writing) order.
    ordered = {name: tensors[name] for name in header}
    return ordered, metadata


def read_file(path):
    with open(path, "rb") as f:
        return parse(f.read())
