"""The library's structs (h5pack_info, h5pack_stats) as plain dicts, enums by name."""
import ctypes

from . import _lib


def _struct_dict(s):
    out = {}
    for name, _ in s._fields_:
        if name == "struct_size":
            continue
        v = getattr(s, name)
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        elif isinstance(v, ctypes.Array):
            v = list(v)
        out[name] = v
    return out


def _info_dict(info):
    d = _struct_dict(info)
    names = {v: k for k, v in _lib.LAYOUTS.items()}
    d["input_layout"], d["output_layout"] = names[info.input_layout], names[info.output_layout]
    d["dtype"] = {v: k for k, v in _lib.DTYPES.items()}[info.dtype]
    d["device"] = {v: k for k, v in _lib.DEVICES.items()}[info.device]
    d["crop"] = {v: k for k, v in _lib.CROPS.items()}[info.crop]
    d["echo_mode"] = {v: k for k, v in _lib.ECHO_MODES.items()}[info.echo_mode]
    d["mean"], d["std"] = d["mean"][:info.channels], d["std"][:info.channels]
    return d
