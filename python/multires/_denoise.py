"""Wavelet denoising with scikit-image's signature and results:
``denoise`` (= ``denoise_wavelet``: BayesShrink and VisuShrink, soft or
hard, per channel or in YCbCr), ``estimate_sigma`` and ``cycle_spin``;
plus SureShrink (Donoho & Johnstone's hybrid SURE threshold, as MATLAB's
``thselect('heursure')``) per subband. The transforms are the engine's
``wavedecn``/``waverecn`` (pywt's, mode 'symmetric', as skimage uses).
"""
from __future__ import annotations

import numbers
import warnings
from concurrent.futures import ThreadPoolExecutor
from itertools import product

import numpy as np

from . import _multires
from .pywt import Wavelet, dwtn_max_level
from .pywt._dwt import _check_dtype, _use_gpu

# skimage.color's ITU-R BT.601 matrix (RGB in [0, 1] to YCbCr in [16, 235]).
_YCBCR_FROM_RGB = np.array(
    [[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0], [112.0, -93.786, -18.214]]
)
_YCBCR_OFFSET = np.array([16.0, 128.0, 128.0])

METHODS = ("BayesShrink", "VisuShrink", "SureShrink")


def sure_threshold(details, sigma):
    """SureShrink's threshold for one subband (MATLAB's 'heursure'): the
    minimiser of Stein's unbiased risk of soft thresholding over the
    coefficients' magnitudes, capped at the universal threshold, and the
    universal threshold itself where the band is too sparse for SURE."""
    d = np.ascontiguousarray(details)
    if d.dtype not in (np.float32, np.float64):
        d = d.astype(np.float64)
    return float(_multires.sure_threshold(d.ravel(), float(sigma)))


def _wavelet_threshold(image, wavelet, method, sigma=None, mode="soft", wavelet_levels=None, device="cpu"):
    """skimage's _wavelet_threshold: wavedecn (mode symmetric), a threshold
    per detail subband, waverecn, cut to the image's extent; one engine
    call (the transforms on the GPU for device 'cuda')."""
    wavelet = Wavelet(wavelet) if not isinstance(wavelet, Wavelet) else wavelet
    if not wavelet.orthogonal:
        warnings.warn(
            f"Wavelet thresholding was designed for use with orthogonal wavelets. For nonorthogonal "
            f"wavelets such as {wavelet.name},results are likely to be suboptimal."
        )
    if wavelet_levels is None:
        wavelet_levels = max(dwtn_max_level(image.shape, wavelet) - 3, 1)
    elif not isinstance(wavelet_levels, (numbers.Integral, np.integer)) or wavelet_levels < 1:
        raise ValueError(f"wavelet_levels must be a positive integer, got {wavelet_levels!r}")
    a = np.ascontiguousarray(image)
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    out, _ = _multires.denoise_nd(
        a, wavelet._filters, method, mode, None if sigma is None else float(sigma), int(wavelet_levels), device == "cuda"
    )
    return out.astype(image.dtype, copy=False)


def _img_as_float(image):
    """skimage's img_as_float for integer and boolean images (float64)."""
    a = np.asarray(image)
    if a.dtype.kind == "b":
        return a.astype(np.float64)
    info = np.iinfo(a.dtype)
    if a.dtype.kind == "u":
        return np.multiply(a, 1.0 / info.max, dtype=np.float64)
    # The most negative value maps to -1, every other c to c / imax.
    out = np.multiply(a, 1.0 / info.max, dtype=np.float64)
    np.maximum(out, -1.0, out=out)
    return out


def _scale_sigma_and_image(image, sigma, multichannel, rescale_sigma):
    if multichannel:
        if isinstance(sigma, numbers.Number) or sigma is None:
            sigma = [sigma] * image.shape[-1]
        elif len(sigma) != image.shape[-1]:
            raise ValueError("When channel_axis is not None, sigma must be a scalar or have length equal to the number of channels")
    if image.dtype.kind != "f":
        if rescale_sigma:
            range_pre = float(image.max()) - float(image.min())
        image = _img_as_float(image)
        if rescale_sigma:
            scale = (float(image.max()) - float(image.min())) / range_pre if range_pre else 1.0
            if multichannel:
                sigma = [s * scale if s is not None else s for s in sigma]
            elif sigma is not None:
                sigma = sigma * scale
    elif image.dtype == np.float16:
        image = image.astype(np.float32)
    return image, sigma


def _rgb2ycbcr(rgb):
    return rgb @ _YCBCR_FROM_RGB.T.astype(rgb.dtype) + _YCBCR_OFFSET.astype(rgb.dtype)


def _ycbcr2rgb(ycbcr):
    inv = np.linalg.inv(_YCBCR_FROM_RGB)
    return (ycbcr - _YCBCR_OFFSET.astype(ycbcr.dtype)) @ inv.T.astype(ycbcr.dtype)


def _rescale_sigma_rgb2ycbcr(sigmas):
    if sigmas[0] is None:
        return sigmas
    variances = np.asarray(sigmas, dtype=np.float64) ** 2
    return [float(np.sqrt(np.sum(_YCBCR_FROM_RGB[i] ** 2 * variances))) for i in range(3)]


def _channel_last(image, channel_axis):
    if channel_axis is None:
        return image, None
    ax = channel_axis % image.ndim
    return np.moveaxis(image, ax, -1), ax


def denoise(
    image,
    sigma=None,
    wavelet="db1",
    mode="soft",
    wavelet_levels=None,
    convert2ycbcr=False,
    method="BayesShrink",
    rescale_sigma=True,
    *,
    channel_axis=None,
    device="cpu",
):
    """Wavelet denoising, as ``skimage.restoration.denoise_wavelet``.

    Each detail subband of ``wavedecn(image, wavelet, wavelet_levels)``
    (default: the deepest level minus 3) is thresholded, ``mode`` 'soft'
    or 'hard', with ``method``: 'BayesShrink' (a threshold per subband,
    sigma² / sqrt(max(var - sigma², eps))), 'VisuShrink' (the universal
    sigma sqrt(2 log size)) or 'SureShrink' (the hybrid SURE threshold per
    subband). ``sigma`` (the noise's standard deviation) defaults to the
    MAD estimate of the finest diagonal details. Integer images are
    scaled to [0, 1] (or [-1, 1]) and the result clipped there, with
    ``rescale_sigma`` scaling a given sigma alike. ``channel_axis`` names
    a colour axis (each channel on its own, or with ``convert2ycbcr`` in
    YCbCr). Works on 1-D, 2-D and 3-D arrays; equal to skimage to 1e-6.
    ``device='cuda'`` (or 'auto' with a GPU) runs the transforms on the
    GPU (the thresholds stay on the host).
    """
    if method not in METHODS:
        raise ValueError(f'Invalid method: {method}. The currently supported methods are "BayesShrink", "VisuShrink" and "SureShrink".')
    if mode not in ("soft", "hard"):
        raise ValueError(f"mode must be 'soft' or 'hard', got {mode!r}")
    image = np.asarray(image)
    if image.dtype == object or image.dtype.kind not in "biuf":
        raise TypeError(f"image must be a real numeric array, got dtype {image.dtype}")
    if image.size == 0:
        raise ValueError("image is empty")
    if not np.all(np.isfinite(image)):
        raise ValueError("image holds NaN or Inf; denoising needs finite samples (mask or fill them first)")
    image, cax = _channel_last(image, channel_axis)
    multichannel = cax is not None
    clip_output = image.dtype.kind != "f"
    if convert2ycbcr and not multichannel:
        raise ValueError("convert2ycbcr requires channel_axis to be set")
    image, sigma = _scale_sigma_and_image(image, sigma, multichannel, rescale_sigma)
    dev = "cuda" if _use_gpu(device) else "cpu"
    kw = dict(wavelet=wavelet, method=method, mode=mode, wavelet_levels=wavelet_levels, device=dev)
    if multichannel:
        if convert2ycbcr:
            if image.shape[-1] != 3:
                raise ValueError(f"convert2ycbcr needs 3 channels (RGB), got {image.shape[-1]}")
            out = _rgb2ycbcr(image)
            if rescale_sigma:
                sigma = _rescale_sigma_rgb2ycbcr(sigma)
            for i in range(3):
                lo, hi = out[..., i].min(), out[..., i].max()
                scale = hi - lo
                if scale == 0:
                    continue
                channel = (out[..., i] - lo) / scale
                s = sigma[i] / scale if sigma[i] is not None else None
                out[..., i] = denoise(channel, sigma=s, rescale_sigma=rescale_sigma, **kw) * scale + lo
            out = _ycbcr2rgb(out)
        else:
            out = np.empty_like(image)
            for c in range(image.shape[-1]):
                out[..., c] = _wavelet_threshold(np.ascontiguousarray(image[..., c]), sigma=sigma[c], **kw)
    else:
        out = _wavelet_threshold(image, sigma=sigma, **kw)
    if clip_output:
        lo = -1 if image.min() < 0 else 0
        out = np.clip(out, lo, 1, out=out)
    return out if cax is None else np.moveaxis(out, -1, cax)


denoise_wavelet = denoise


def estimate_sigma(image, average_sigmas=False, *, channel_axis=None):
    """The noise standard deviation of an image, as skimage's
    ``estimate_sigma``: the MAD estimate of the finest db2 diagonal
    details (per channel with ``channel_axis``)."""
    image = np.asarray(image)
    if channel_axis is not None:
        ax = channel_axis % image.ndim
        sigmas = [estimate_sigma(np.take(image, c, axis=ax)) for c in range(image.shape[ax])]
        return float(np.mean(sigmas)) if average_sigmas else sigmas
    if image.shape[-1] <= 4:
        warnings.warn(
            f"image is size {image.shape[-1]} on the last axis, but channel_axis is None. If this is a color "
            "image, please set channel_axis=-1 for proper noise estimation."
        )
    a = np.ascontiguousarray(image, dtype=_check_dtype(image))
    return float(_multires.estimate_sigma(a))


def _shifts(ndim, multichannel, max_shifts, shift_steps):
    mc = int(multichannel)
    if np.isscalar(max_shifts):
        max_shifts = (max_shifts,) * (ndim - mc) + (0,) * mc
    elif multichannel and len(max_shifts) == ndim - 1:
        max_shifts = tuple(max_shifts) + (0,)
    elif len(max_shifts) != ndim:
        raise ValueError("max_shifts should have length ndim")
    if np.isscalar(shift_steps):
        shift_steps = (shift_steps,) * (ndim - mc) + (1,) * mc
    elif multichannel and len(shift_steps) == ndim - 1:
        shift_steps = tuple(shift_steps) + (1,)
    elif len(shift_steps) != ndim:
        raise ValueError("max_shifts should have length ndim")
    if any(s < 1 for s in shift_steps):
        raise ValueError("shift_steps must all be >= 1")
    if multichannel and max_shifts[-1] != 0:
        raise ValueError("Multichannel cycle spinning should not have shifts along the last axis.")
    return list(product(*[range(0, s + 1, t) for s, t in zip(max_shifts, shift_steps)]))


def cycle_spin(x, func, max_shifts, shift_steps=1, num_workers=None, func_kw=None, *, workers=None, channel_axis=None):
    """Cycle spinning, as ``skimage.restoration.cycle_spin``: the mean of
    ``func`` over circular shifts of ``x`` (0..max_shifts by shift_steps
    per axis), each result shifted back; it removes the shift dependence
    of decimated wavelet denoising. ``workers`` threads run shifts at
    once (the engine releases the GIL); the sum keeps the shifts' order,
    so the result does not depend on the number of workers."""
    func_kw = func_kw or {}
    workers = workers if workers is not None else num_workers
    x = np.asanyarray(x)
    if channel_axis is not None:
        ax = channel_axis % x.ndim
        xs = np.moveaxis(x, ax, -1)
        shifts = _shifts(xs.ndim, True, max_shifts, shift_steps)
        return np.moveaxis(_spin(xs, func, func_kw, shifts, workers), -1, ax)
    return _spin(x, func, func_kw, _shifts(x.ndim, False, max_shifts, shift_steps), workers)


def _spin(x, func, func_kw, shifts, workers):
    axes = tuple(range(x.ndim))

    def one(shift):
        return np.roll(func(np.roll(x, shift, axis=axes), **func_kw), tuple(-s for s in shift), axis=axes)

    def average(results):
        mean = None
        for r in results:
            if mean is None:
                mean = np.array(r, copy=True)
            else:
                mean += r
        mean /= len(shifts)
        return mean

    if workers is None or workers <= 1:
        return average(map(one, shifts))
    with ThreadPoolExecutor(max_workers=int(workers)) as pool:
        return average(pool.map(one, shifts))
