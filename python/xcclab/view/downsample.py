"""Fewer samples for the page: a run's series reduced to at most a given number of points.

Samples are grouped into consecutive buckets of equal count; each bucket keeps its last time
and a reduction that keeps what the eye looks for: the mean for rates and utilisation (what
was carried), the largest value for queues (a spike survives), the sum for drops and marks
(none is lost). Series at or under the limit are kept as they are.
"""

from __future__ import annotations

import math

import numpy as np

#: How each kind of column is reduced over a bucket.
REDUCERS = {
    "mean": np.nanmean,
    "max": np.nanmax,
    "min": np.nanmin,
    "sum": np.nansum,
    "last": None,
}


def bucket_size(n: int, limit: int) -> int:
    """Samples per bucket so that ``n`` samples give at most ``limit`` points."""
    return max(1, math.ceil(n / max(1, limit)))


def reduce(values: np.ndarray, size: int, how: str) -> np.ndarray:
    """``values`` (1-d, or 2-d with time along axis 0) reduced over buckets of ``size``
    samples; the last bucket may be shorter."""
    values = np.asarray(values, dtype=float)
    if size <= 1:
        return values
    n = values.shape[0]
    full = (n // size) * size
    parts = []
    if full:
        body = values[:full].reshape((n // size, size) + values.shape[1:])
        parts.append(_reduce_axis(body, how))
    if full < n:
        parts.append(_reduce_axis(values[full:][None, ...], how))
    return np.concatenate(parts, axis=0)


def _reduce_axis(blocks: np.ndarray, how: str) -> np.ndarray:
    if how == "last":
        return blocks[:, -1]
    with np.errstate(all="ignore"), _quiet_all_nan():
        out = REDUCERS[how](blocks, axis=1)
    if how == "sum":  # nansum of an all-NaN bucket is 0; keep it missing
        out = np.where(np.all(np.isnan(blocks), axis=1), np.nan, out)
    return out


class _quiet_all_nan:
    """Silence numpy's "mean of empty slice" for buckets with only missing values."""

    def __enter__(self) -> None:
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


def times(t: np.ndarray, size: int) -> np.ndarray:
    """Each bucket's time: the end of its last sampling interval."""
    return reduce(np.asarray(t, dtype=float), size, "last")
