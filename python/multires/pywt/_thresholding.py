"""PyWavelets' thresholding functions."""

from __future__ import annotations

import numpy as np


def _soft(data, value, substitute=0):
    data = np.asarray(data)
    if data.dtype.kind == "c":
        mag = np.abs(data)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrink = np.where(mag > 0, np.maximum(mag - value, 0) / np.where(mag > 0, mag, 1), 0)
        out = data * shrink
        if substitute != 0:
            out = np.where(mag < value, substitute, out)
        return out
    mag = np.abs(data)
    out = np.sign(data) * np.maximum(mag - value, 0)
    if substitute != 0:
        out = np.where(mag < value, substitute, out)
    return out.astype(np.result_type(data, np.float32) if data.dtype.kind in "iub" else data.dtype, copy=False)


def _nn_garrote(data, value, substitute=0):
    data = np.asarray(data)
    mag = np.abs(data)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = 1 - (value / np.where(mag > 0, mag, 1)) ** 2
    shrink = np.clip(shrink, 0, None)
    shrink = np.where(mag > 0, shrink, 0)
    out = data * shrink
    if substitute != 0:
        out = np.where(mag < value, substitute, out)
    return out


def _hard(data, value, substitute=0):
    data = np.asarray(data)
    return np.where(np.abs(data) < value, substitute, data)


def _greater(data, value, substitute=0):
    data = np.asarray(data)
    if data.dtype.kind == "c":
        raise ValueError("greater thresholding is only defined for real data")
    return np.where(data < value, substitute, data)


def _less(data, value, substitute=0):
    data = np.asarray(data)
    if data.dtype.kind == "c":
        raise ValueError("less thresholding is only defined for real data")
    return np.where(data > value, substitute, data)


_MODES = {"soft": _soft, "hard": _hard, "garrote": _nn_garrote, "garotte": _nn_garrote, "greater": _greater, "less": _less}


def threshold(data, value, mode="soft", substitute=0):
    """Thresholds ``data`` at ``value``: 'soft', 'hard', 'garrote', 'greater' or 'less'.

    Values thresholded away become ``substitute`` (0 by default), as in PyWavelets.
    """
    try:
        f = _MODES[mode]
    except KeyError:
        keys = ("'{0}'".format(k) for k in _MODES)
        raise ValueError("The mode parameter only takes values from: {0}.".format(", ".join(keys))) from None
    return f(data, value, substitute)


def threshold_firm(data, value_low, value_high):
    """Firm thresholding: hard above ``value_high``, zero below ``value_low``,
    linear between."""
    if value_low < 0:
        raise ValueError("value_low must be non-negative.")
    if value_high < value_low:
        raise ValueError("value_high must be greater than or equal to value_low.")
    data = np.asarray(data)
    mag = np.abs(data)
    if data.dtype.kind == "c":
        with np.errstate(divide="ignore", invalid="ignore"):
            unit = np.where(mag > 0, data / np.where(mag > 0, mag, 1), 0)
    else:
        unit = np.sign(data)
    if value_high == value_low:
        mid = mag
    else:
        mid = value_high * (mag - value_low) / (value_high - value_low)
    out = np.where(mag <= value_low, 0, np.where(mag > value_high, data, unit * mid))
    return out.astype(data.dtype if data.dtype.kind in "fc" else np.float64, copy=False)
