"""Arrays for the page: packed little-endian binary in base64, decoded by the page's script.

JSON numbers cost about 18 characters each; a float32 in base64 costs 5.3. NaN stands for a
missing value (null in the Parquet tables).
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np


def f32(values: Any) -> str:
    """``values`` (numbers, None for missing) as base64 little-endian float32."""
    arr = np.asarray(
        [np.nan if v is None else v for v in values] if isinstance(values, list) else values,
        dtype="<f4",
    )
    return base64.b64encode(arr.tobytes()).decode("ascii")


def u8(values: Any) -> str:
    """``values`` (already in 0..255) as base64 bytes."""
    arr = np.asarray(values, dtype=np.uint8)
    return base64.b64encode(arr.tobytes()).decode("ascii")
