"""The codec inside HDF5 files: an HDF5 filter plugin, as hdf5plugin's are.

Each chunk of a chunked dataset is stored as one .mrz stream, within the
bound asked for (a relative bound is relative to each chunk's range)::

    import h5py, multires.hdf5
    with h5py.File("field.h5", "w") as f:
        f.create_dataset("u", data=u, chunks=(64, 64, 64), **multires.hdf5.filter(rel=1e-3))
    with h5py.File("field.h5") as f:
        u2 = f["u"][...]

Importing this module makes the plugin known to h5py's HDF5 (no
HDF5_PLUGIN_PATH needed). For other HDF5 programs (h5dump, h5repack, C
or Fortran codes, netCDF-4) put :func:`plugin_dir` in HDF5_PLUGIN_PATH.
"""

import os
import struct

from . import _bound
from ._multires import hdf5_filter_id as _filter_id

#: The filter's ID, in HDF5's range for testing (256-511) until one is registered.
FILTER_ID = _filter_id()
_TRANSFORMS = {"haar": 0, "cdf53": 1, "cdf97": 2, "interp": 3, "lorenzo": 4}
_KINDS = {"abs": 0, "rel": 1, "psnr": 2, "lossless": 3}


def plugin_dir() -> str:
    """The folder holding the plugin (libh5multires.so), for HDF5_PLUGIN_PATH."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hdf5_plugin")
    if not os.path.isfile(os.path.join(d, "libh5multires.so")):
        raise FileNotFoundError(
            f"{d}/libh5multires.so is missing: this install of multires was built without its HDF5 plugin "
            "(pip install ./python builds it)"
        )
    return d


def filter_options(*, abs=None, rel=None, psnr=None, lossless=False, transform="interp"):
    """The filter's ``cd_values``: layout, bound kind, the bound as two
    32-bit words of its float64 bits, transform (what ``h5repack -f
    UD=ID,0,5,...`` takes)."""
    kind, v = _bound(abs, rel, psnr, lossless)
    if transform not in _TRANSFORMS:
        raise ValueError(f"transform must be one of {', '.join(_TRANSFORMS)}, got {transform!r}")
    bits = int.from_bytes(struct.pack("<d", v), "little")
    return (1, _KINDS[kind], bits & 0xFFFFFFFF, bits >> 32, _TRANSFORMS[transform])


def filter(*, abs=None, rel=None, psnr=None, lossless=False, transform="interp"):
    """The keywords of ``h5py.Group.create_dataset`` that store a dataset
    through the codec: ``compression=`` the filter's ID and
    ``compression_opts=`` its values. Give exactly one bound, or
    ``lossless=True``. The dataset must be chunked (h5py picks chunks when
    none are given); float32, float64, uint8, uint16, int16 and int32."""
    register()
    return {"compression": FILTER_ID, "compression_opts": filter_options(
        abs=abs, rel=rel, psnr=psnr, lossless=lossless, transform=transform)}


def register():
    """Makes the plugin known to h5py's HDF5 (done on import when h5py is
    installed); True if HDF5 can use the filter now."""
    try:
        import h5py
    except ImportError:
        return False
    d = plugin_dir()
    paths = [h5py.h5pl.get(i).decode() for i in range(h5py.h5pl.size())]
    if d not in paths:
        h5py.h5pl.prepend(d.encode())
    return bool(h5py.h5z.filter_avail(FILTER_ID))


try:
    register()
except (FileNotFoundError, OSError):  # reported when filter() is called
    pass
