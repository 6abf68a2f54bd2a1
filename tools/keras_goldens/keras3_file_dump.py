"""Text dumps of Keras 3 files, down to the HDF5 and zip details that a C++
reader and writer must reproduce: used by make_keras3_goldens.py to write the
`*.structure.txt` goldens, and usable alone:

    bench/.venv-tensorflow/bin/python tools/keras_goldens/keras3_file_dump.py FILE.weights.h5|FILE.keras

Needs h5py and numpy only (no TensorFlow).

HDF5 objects are listed twice: in h5py's iteration order (links of an old-style
group are kept in a B-tree sorted by name, so `vars/10` comes before `vars/2`)
and in object-header address order (where the HDF5 library placed them; it packs
small metadata into shared blocks, so this is not the creation order, which is
Keras's traversal order: see the README of the goldens).
"""
import io
import sys
import zipfile

import h5py
import numpy as np

_LAYOUTS = {h5py.h5d.COMPACT: "compact", h5py.h5d.CONTIGUOUS: "contiguous", h5py.h5d.CHUNKED: "chunked"}
_CSETS = {h5py.h5t.CSET_ASCII: "ascii", h5py.h5t.CSET_UTF8: "utf-8"}
_STRPADS = {h5py.h5t.STR_NULLTERM: "nullterm", h5py.h5t.STR_NULLPAD: "nullpad", h5py.h5t.STR_SPACEPAD: "spacepad"}
_MESSAGE_NAMES = {0x00: "nil", 0x01: "dataspace", 0x02: "link-info", 0x03: "datatype", 0x04: "fill-value-old",
                  0x05: "fill-value", 0x06: "link", 0x07: "external-files", 0x08: "layout", 0x09: "bogus",
                  0x0A: "group-info", 0x0B: "filter-pipeline", 0x0C: "attribute", 0x0D: "comment",
                  0x0E: "mtime-old", 0x0F: "shared-message-table", 0x10: "continuation", 0x11: "symbol-table",
                  0x12: "mtime", 0x13: "btree-k", 0x14: "driver-info", 0x15: "attribute-info", 0x16: "refcount"}
_ALLOC_TIMES = {h5py.h5d.ALLOC_TIME_DEFAULT: "default", h5py.h5d.ALLOC_TIME_EARLY: "early",
                h5py.h5d.ALLOC_TIME_LATE: "late", h5py.h5d.ALLOC_TIME_INCR: "incremental"}
_ZIP_METHODS = {zipfile.ZIP_STORED: "stored (0)", zipfile.ZIP_DEFLATED: "deflated (8)"}


def object_header(data, address):
    """(version, [message names]) of the object header at `address`, read from the raw
    bytes (h5py does not expose this); follows continuation messages and leaves out
    nil (padding) messages. An `mtime` message would mean timestamps are stored (h5py
    writes none by default). Assumes 8-byte offsets and lengths, as every file here has."""
    def u(offset, size):
        return int.from_bytes(data[offset:offset + size], "little")

    messages = []
    if data[address:address + 4] == b"OHDR":
        version, flags = data[address + 4], data[address + 5]
        cursor = address + 6 + (16 if flags & 0x20 else 0) + (4 if flags & 0x10 else 0)
        size_bytes = 1 << (flags & 0x03)
        blocks = [(cursor + size_bytes, u(cursor, size_bytes))]
        while blocks:
            start, length = blocks.pop(0)
            cursor = start
            while cursor + 4 <= start + length:
                kind, size, msg_flags = data[cursor], u(cursor + 1, 2), data[cursor + 3]
                body = cursor + 4 + (2 if flags & 0x04 else 0)
                if kind == 0x10:
                    blocks.append((u(body, 8) + 4, u(body + 8, 8) - 8))  # skip "OCHK" and the checksum
                if kind != 0x00:
                    messages.append(_MESSAGE_NAMES.get(kind, hex(kind)) + ("(shared)" if msg_flags & 0x02 else ""))
                cursor = body + size
        return version, messages
    version, count = data[address], u(address + 2, 2)
    blocks = [(address + 16, u(address + 8, 4))]
    while blocks and len(messages) < count:
        start, length = blocks.pop(0)
        cursor = start
        while cursor + 8 <= start + length and len(messages) < count:
            kind, size, msg_flags = u(cursor, 2), u(cursor + 2, 2), data[cursor + 4]
            if kind == 0x10:
                blocks.append((u(cursor + 8, 8), u(cursor + 16, 8)))
            messages.append(_MESSAGE_NAMES.get(kind, hex(kind)) + ("(shared)" if msg_flags & 0x02 else ""))
            cursor += 8 + size
    return version, [m for m in messages if m != "nil"]


def describe_type(type_id):
    """One line for an HDF5 datatype: class, size, byte order, string kind."""
    if isinstance(type_id, h5py.h5t.TypeStringID):
        if type_id.is_variable_str():
            kind = "variable-length string"
        else:
            kind = f"fixed-length string size={type_id.get_size()} pad={_STRPADS.get(type_id.get_strpad(), '?')}"
        return f"{kind} charset={_CSETS.get(type_id.get_cset(), '?')}"
    if isinstance(type_id, h5py.h5t.TypeVlenID):
        return f"variable-length sequence of ({describe_type(type_id.get_super())})"
    order = {h5py.h5t.ORDER_LE: "little-endian", h5py.h5t.ORDER_BE: "big-endian"}
    if isinstance(type_id, h5py.h5t.TypeFloatID):
        return f"IEEE float size={type_id.get_size()} {order.get(type_id.get_order(), '?')}"
    if isinstance(type_id, h5py.h5t.TypeIntegerID):
        sign = "signed" if type_id.get_sign() == h5py.h5t.SGN_2 else "unsigned"
        return f"integer {sign} size={type_id.get_size()} {order.get(type_id.get_order(), '?')}"
    return f"{type(type_id).__name__} size={type_id.get_size()}"


def describe_space(space_id):
    kind = space_id.get_simple_extent_type()
    if kind == h5py.h5s.SCALAR:
        return "scalar"
    if kind == h5py.h5s.NULL:
        return "null"
    return f"simple {tuple(space_id.shape)}"


def _value_text(value):
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.size <= 8:
        value = value.tolist()
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "...(" + str(len(text)) + " chars)"


def describe_attributes(obj, indent):
    lines = []
    for name in obj.attrs:  # h5py lists attributes in creation order when it can, else by name
        attr = h5py.h5a.open(obj.id, name.encode("utf-8"))
        lines.append(f"{indent}@{name}: {describe_type(attr.get_type())}, {describe_space(attr.get_space())},"
                     f" value={_value_text(obj.attrs[name])}")
    return lines


def describe_dataset(dataset):
    dcpl = dataset.id.get_create_plist()
    layout = _LAYOUTS.get(dcpl.get_layout(), "?")
    if layout == "chunked":
        layout += f" chunks={dcpl.get_chunk()}"
    filters = [dcpl.get_filter(i)[3].decode() or str(dcpl.get_filter(i)[0]) for i in range(dcpl.get_nfilters())]
    parts = [describe_type(dataset.id.get_type()), describe_space(dataset.id.get_space()), f"layout={layout}",
             f"filters={filters or 'none'}", f"alloc_time={_ALLOC_TIMES.get(dcpl.get_alloc_time(), '?')}",
             f"storage_bytes={dataset.id.get_storage_size()}"]
    parts.append("fill_time=" + {h5py.h5d.FILL_TIME_ALLOC: "alloc", h5py.h5d.FILL_TIME_NEVER: "never",
                                 h5py.h5d.FILL_TIME_IFSET: "ifset"}.get(dcpl.get_fill_time(), "?"))
    if layout == "contiguous":
        parts.append(f"data_offset={dataset.id.get_offset()}")
    return ", ".join(parts)


def superblock_version(data):
    """The superblock version byte, found at offset 0, 512, 1024, ... as the format allows."""
    signature = b"\x89HDF\r\n\x1a\n"
    offset = 0
    while offset + 9 <= len(data):
        if data[offset:offset + 8] == signature:
            return offset, data[offset + 8]
        offset = 512 if offset == 0 else offset * 2
    return None, None


def dump_h5_bytes(data, title):
    """The structure dump of one HDF5 file given as bytes."""
    lines = [f"# {title}", f"file_bytes: {len(data)}"]
    offset, version = superblock_version(data)
    lines.append(f"superblock: at byte {offset}, version {version}")
    with h5py.File(io.BytesIO(data), "r") as f:
        fcpl = f.id.get_create_plist()
        super_v, freelist_v, symtab_v, shared_header_v = fcpl.get_version()
        lines.append(f"file creation: versions superblock={super_v} freelist={freelist_v} symbol_table={symtab_v}"
                     f" shared_header={shared_header_v}; userblock={fcpl.get_userblock()};"
                     f" sizeof(offset, length)={fcpl.get_sizes()}; file space strategy={fcpl.get_file_space_strategy()}")
        root_version, root_messages = object_header(data, h5py.h5o.get_info(f.id).addr)
        lines.append(f"root group: links={len(f)}, object header v{root_version} messages={root_messages},"
                     f" link creation order tracked={bool(f.id.get_create_plist().get_link_creation_order())}")
        root_attrs = describe_attributes(f, "  ")
        lines.append(f"root attributes: {len(root_attrs)}")
        lines.extend(root_attrs)

        lines.append("")
        lines.append("## objects in h5py iteration order (path, kind, details)")
        entries = []

        def visit(name, obj):
            info = h5py.h5o.get_info(obj.id)
            entries.append((info.addr, name, obj))

        f.visititems(visit)
        for _, name, obj in entries:
            header_version, messages = object_header(data, h5py.h5o.get_info(obj.id).addr)
            header = f"object header v{header_version} messages={messages}"
            if isinstance(obj, h5py.Group):
                tracked = bool(obj.id.get_create_plist().get_link_creation_order())
                lines.append(f"/{name}  GROUP links={len(obj)}, link creation order tracked={tracked}, {header}")
            else:
                lines.append(f"/{name}  DATASET {describe_dataset(obj)}, {header}")
            lines.extend(describe_attributes(obj, "    "))

        lines.append("")
        lines.append("## objects in object-header address order (HDF5's placement, not creation order)")
        for address, name, obj in sorted(entries, key=lambda entry: entry[0]):
            kind = "GROUP  " if isinstance(obj, h5py.Group) else "DATASET"
            lines.append(f"{address:>10}  {kind} /{name}")

        lines.append("")
        lines.append("## dataset values (first values, for reading checks)")
        for _, name, obj in entries:
            if isinstance(obj, h5py.Dataset):
                values = np.asarray(obj[()]).reshape(-1)
                head = ", ".join(repr(v.item()) for v in values[:4])
                lines.append(f"/{name}  [{head}{', ...' if values.size > 4 else ''}]  "
                             f"sum={float(np.sum(values.astype(np.float64))):.9g}")
    return "\n".join(lines) + "\n"


def dump_zip(path_or_bytes):
    """The zip layer of a `.keras` file: members with their method, sizes and flags."""
    if isinstance(path_or_bytes, bytes):
        data = path_or_bytes
    else:
        with open(path_or_bytes, "rb") as f:
            data = f.read()
    lines = ["# zip archive", f"file_bytes: {len(data)}"]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        lines.append(f"archive comment: {zf.comment!r}")
        lines.append("members in central-directory order:")
        for info in zf.infolist():
            lines.append(
                f"  {info.filename}: method={_ZIP_METHODS.get(info.compress_type, info.compress_type)},"
                f" file_size={info.file_size}, compress_size={info.compress_size},"
                f" local_header_offset={info.header_offset}, flag_bits=0x{info.flag_bits:04x}"
                f" (data descriptor {'yes' if info.flag_bits & 0x08 else 'no'}), crc=0x{info.CRC:08x},"
                f" date_time={info.date_time}, create_system={info.create_system},"
                f" create_version={info.create_version}, extract_version={info.extract_version},"
                f" external_attr=0x{info.external_attr:08x}, extra_bytes={len(info.extra)}")
    end = data.rfind(b"PK\x05\x06")
    lines.append(f"end of central directory record at byte {end} (of {len(data)});"
                 f" zip64 records: {'yes' if b'PK' + bytes([6, 6]) in data[max(0, end - 100):end] else 'no'}")
    return "\n".join(lines) + "\n"


def dump_keras(path):
    """The zip dump followed by the structure dump of the model.weights.h5 inside."""
    with zipfile.ZipFile(path) as zf:
        weights = zf.read("model.weights.h5")
    return dump_zip(path) + "\n" + dump_h5_bytes(weights, "model.weights.h5 inside the .keras")


def main():
    for path in sys.argv[1:]:
        if path.endswith(".keras"):
            sys.stdout.write(dump_keras(path))
        else:
            with open(path, "rb") as f:
                sys.stdout.write(dump_h5_bytes(f.read(), path))


if __name__ == "__main__":
    main()
