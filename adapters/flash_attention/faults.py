"""The deliberate bugs the flash kernel can be built with (README.md, "Faults"),
chosen by the environment variable PARITY_FLASH_FAULT, and the block sizes.

Each fault is a mistake a real attention kernel has shipped with or could
easily ship with; corpus_check.py checks that the suite's verdicts catch every
one of them on the function corpus.
"""

from __future__ import annotations

import os

FAULT_VARIABLE = "PARITY_FLASH_FAULT"
BLOCK_KEYS_VARIABLE = "PARITY_FLASH_BLOCK_KEYS"
BLOCK_QUERIES_VARIABLE = "PARITY_FLASH_BLOCK_QUERIES"
DEFAULT_BLOCK_KEYS = 32
DEFAULT_BLOCK_QUERIES = 32

# name -> what the kernel then does wrong
FAULTS = {
    "scale_off": "multiplies the scores by scale * (1 + 1e-3)",
    "no_max_subtraction": "exponentiates the scores without subtracting the running maximum",
    "softmax_fp16": "keeps the running maximum, the exponentials and the running sum in float16",
    "head_mod": "query head h reads key/value head h mod H_kv instead of h // (H_q / H_kv)",
    "causal_top_left": "aligns the causal mask top-left (key j allowed iff j <= i), ignoring the past or the "
                       "external cache",
    "window_off_by_one": "lets the sliding window reach one key further to the left",
    "softcap_after_mask": "applies the soft cap after adding the mask, so masked keys get weight",
    "nan_masked_rows": "divides by a zero sum in fully masked rows, which then hold NaN",
    "ignore_nonpad": "ignores nonpad_kv_seqlen (no padding mask, no external-cache offset)",
}


class SettingError(ValueError):
    """An environment variable of this adapter holds a value it does not know."""


def fault_from_environment(environ=os.environ) -> str:
    """The fault to build the kernel with; "" for the correct kernel."""
    name = environ.get(FAULT_VARIABLE, "")
    if name and name not in FAULTS:
        raise SettingError(f"{FAULT_VARIABLE}='{name}' is not a known fault; known: {', '.join(sorted(FAULTS))} "
                           "(or empty for the correct kernel)")
    return name


def _positive(environ, variable: str, default: int) -> int:
    text = environ.get(variable, "")
    if not text:
        return default
    if not text.isdigit() or int(text) <= 0:
        raise SettingError(f"{variable}='{text}' must be a positive integer")
    return int(text)


def blocks_from_environment(environ=os.environ) -> tuple[int, int]:
    """(query rows, key columns) per block of the kernel's loops."""
    return (_positive(environ, BLOCK_QUERIES_VARIABLE, DEFAULT_BLOCK_QUERIES),
            _positive(environ, BLOCK_KEYS_VARIABLE, DEFAULT_BLOCK_KEYS))
