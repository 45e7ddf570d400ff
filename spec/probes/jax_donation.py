"""Measures what JAX buffer donation does for a key/value cache update, the
closest existing counterpart of a must-alias with region=scatter
(spec/aliasing.md, "Comparison"). Not part of the test suite: JAX is not a
project dependency; run it where JAX is installed (a GPU shows donation
honoured, a CPU backend may decline it).

  python3 spec/probes/jax_donation.py [--steps 32] [--positions 4096]

Prints, per mode (donated, not donated): whether each step's output cache
sits in the input's buffer, the time per step and the device's peak bytes in
use, so the two can be compared side by side.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings


def run(donate: bool, steps: int, positions: int, kv_heads: int, head: int):
    import jax
    import jax.numpy as jnp

    def step(cache, update, position):
        return jax.lax.dynamic_update_slice(cache, update, (0, 0, position, 0))

    fn = jax.jit(step, donate_argnums=(0,) if donate else ())
    cache = jnp.zeros((1, kv_heads, positions, head), jnp.float32)
    update = jnp.ones((1, kv_heads, 1, head), jnp.float32)
    same, times = 0, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for s in range(steps):
            before = cache.unsafe_buffer_pointer()
            start = time.perf_counter()
            out = fn(cache, update, s)
            out.block_until_ready()
            times.append((time.perf_counter() - start) * 1e3)
            same += out.unsafe_buffer_pointer() == before
            cache = out
    stats = jax.devices()[0].memory_stats() or {}
    declined = any("donated" in str(w.message).lower() for w in caught)
    checksum = float(cache.sum())
    return same, sorted(times)[len(times) // 2], stats.get("peak_bytes_in_use"), declined, checksum


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--positions", type=int, default=4096)
    parser.add_argument("--kv-heads", type=int, default=8)
    parser.add_argument("--head", type=int, default=128)
    parser.add_argument("--mode", choices=["copied", "donated"], help="one mode only (each runs in its own process)")
    args = parser.parse_args()
    if args.mode:  # one process per mode, so that each peak is its own
        same, median, peak, declined, checksum = run(args.mode == "donated", args.steps, args.positions,
                                                     args.kv_heads, args.head)
        peak_text = f"{peak / 2**20:.0f}" if peak is not None else "n/a"
        print(f"{args.mode:<12} {same:>5}/{args.steps:<6} {median:>10.3f} {peak_text:>9}"
              f" {str(declined):>9} {checksum:>9.0f}", flush=True)
        return 0
    import jax
    mib = args.kv_heads * args.positions * args.head * 4 / 2**20
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}; cache {mib:.0f} MiB, {args.steps} steps",
          flush=True)
    print(f"{'mode':<12} {'same buffer':>12} {'median ms':>10} {'peak MiB':>9} {'declined':>9} {'checksum':>9}",
          flush=True)
    status = 0
    for mode in ("copied", "donated"):
        status |= subprocess.run([sys.executable, __file__, "--mode", mode, "--steps", str(args.steps),
                                  "--positions", str(args.positions), "--kv-heads", str(args.kv_heads),
                                  "--head", str(args.head)]).returncode
    return status


if __name__ == "__main__":
    raise SystemExit(main())
