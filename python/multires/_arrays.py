"""How arrays enter and leave the engine.

numpy arrays that are C-contiguous float32/float64 (complex64/complex128
where a transform takes complex input) go to the engine as they are; any
other dtype or layout is converted once with ``numpy.ascontiguousarray``.
Arrays of other libraries (CuPy, PyTorch, JAX) are recognised by
``__dlpack__``; their results come back as the same kind of array.
"""

from __future__ import annotations

import numpy as np

_REAL = (np.float32, np.float64)
_COMPLEX = (np.complex64, np.complex128)

# DLPack device types (dlpack.h): 1 is the host, 2 CUDA, 3 pinned host memory.
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST = 1, 2, 3


class Foreign:
    """Where a non-numpy input came from, to hand the result back alike."""

    def __init__(self, obj):
        self.obj = obj
        self.module = type(obj).__module__.split(".")[0]
        dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (_DL_CPU, 0)
        self.device_type, self.device_id = int(dev[0]), int(dev[1])

    @property
    def on_cuda(self) -> bool:
        return self.device_type == _DL_CUDA

    @property
    def dtype_name(self) -> str:
        """The element type as numpy names it ('float32', ...)."""
        return str(getattr(self.obj, "dtype", "")).replace("torch.", "")

    def sync(self):
        """Waits until the producer's queued work on the device is done, so
        that the engine's own stream reads finished values."""
        if self.module == "cupy":
            import cupy

            with cupy.cuda.Device(self.device_id):
                cupy.cuda.get_current_stream().synchronize()
        elif self.module == "torch":
            import torch

            torch.cuda.synchronize(self.device_id)
        elif self.module in ("jax", "jaxlib"):
            self.obj.block_until_ready()

    def last_axis_rows(self, axis=-1):
        """The array with `axis` moved last, C-contiguous, as (rows, n) on
        its device; and the shape of the leading axes."""
        x = self.obj
        if self.module == "cupy":
            import cupy

            x = cupy.ascontiguousarray(cupy.moveaxis(x, axis, -1))
        elif self.module == "torch":
            x = x.movedim(axis, -1).contiguous()
        else:
            import jax.numpy as jnp

            x = jnp.moveaxis(x, axis, -1)
        outer = tuple(x.shape[:-1])
        return x.reshape(-1, x.shape[-1]), outer

    def last_axis_to(self, arr, axis):
        """`arr` (this input's kind) with its last axis moved to `axis`."""
        if self.module == "cupy":
            import cupy

            return cupy.moveaxis(arr, -1, axis)
        if self.module == "torch":
            return arr.movedim(-1, axis)
        import jax.numpy as jnp

        return jnp.moveaxis(arr, -1, axis)

    def wrap(self, dev):
        """A DeviceArray of the engine as this input's kind of array (no copy)."""
        if self.module == "cupy":
            import cupy

            return cupy.from_dlpack(dev)
        if self.module == "torch":
            import torch

            return torch.from_dlpack(dev)
        import jax.dlpack

        return jax.dlpack.from_dlpack(dev)

    def to_numpy(self) -> np.ndarray:
        """The input's values on the host."""
        if self.on_cuda:
            if self.module == "cupy":
                return self.obj.get()
            if self.module == "torch":
                return self.obj.detach().cpu().numpy()
            if self.module in ("jax", "jaxlib"):
                return np.asarray(self.obj)
            raise TypeError(
                f"a CUDA array of {self.module!r}: pass a numpy, CuPy, PyTorch or JAX array"
            )
        try:
            return np.from_dlpack(self.obj)
        except (TypeError, RuntimeError, BufferError, AttributeError):
            return np.asarray(self.obj)

    def like(self, result):
        """`result` (numpy, or a tuple/list/dict of them) as the input's kind of array."""
        if isinstance(result, tuple):
            return tuple(self.like(r) for r in result)
        if isinstance(result, list):
            return [self.like(r) for r in result]
        if isinstance(result, dict):
            return {k: self.like(v) for k, v in result.items()}
        if not isinstance(result, np.ndarray):
            return result
        if self.module == "cupy":
            import cupy

            with cupy.cuda.Device(self.device_id):
                return cupy.asarray(result)
        if self.module == "torch":
            import torch

            t = torch.from_numpy(np.ascontiguousarray(result))
            if self.on_cuda:
                t = t.to(f"cuda:{self.device_id}")
            return t
        if self.module in ("jax", "jaxlib"):
            import jax

            return jax.device_put(result, jax.devices("gpu" if self.on_cuda else "cpu")[0])
        return result


def split(x):
    """(numpy array, Foreign or None) of any array-like input."""
    if isinstance(x, np.ndarray):
        return x, None
    if hasattr(x, "__dlpack__") and not isinstance(x, (list, tuple)):
        f = Foreign(x)
        return f.to_numpy(), f
    return np.asarray(x), None


def as_float(x, what="x", allow_complex=False) -> np.ndarray:
    """x as a C-contiguous engine dtype: float32/float64 (and complex64/128
    when allowed) as given; float16 to float32; integers, bools and others
    to float64 (as PyWavelets converts them)."""
    a = np.asarray(x)
    if a.dtype.kind == "c":
        if not allow_complex:
            raise TypeError(f"{what} is complex ({a.dtype}); this function takes real arrays")
        dt = a.dtype if a.dtype in _COMPLEX else np.complex128
    elif a.dtype in _REAL:
        dt = a.dtype
    elif a.dtype == np.float16:
        dt = np.float32
    elif a.dtype.kind in "biuf":
        dt = np.float64
    else:
        raise TypeError(f"{what} has dtype {a.dtype}; expected a numeric array")
    return aligned(np.ascontiguousarray(a, dtype=dt))


def aligned(a: np.ndarray) -> np.ndarray:
    """`a` itself, or a copy where its values are not aligned to their size
    (arrays unpickled from a buffer, as Dask's workers receive them, can
    start at any byte; the engine reads whole values)."""
    return a if a.flags.aligned else a.copy(order="C")
