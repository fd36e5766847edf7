"""Rate limits of simulated networks: the shaped loopback of tandem bench and
the links of simulated hosts (tc's token bucket filter, tbf; this kernel has
no netem)."""

from __future__ import annotations

from .builds import TandemError

SHAPED_BURST_BYTES = 256 * 1000  # tc's "256kb": kilobytes of 1000 bytes

# tc's rate units, in bits per second (bps: bytes per second)
RATE_UNITS = {
    **{"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12},
    **{"bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "tbps": 8e12},
}


def rate_bits(rate: str, option: str = "--rate") -> float:
    """A tc rate such as 2gbit or 100mbps, in bits per second; 'option'
    names where it was given, for the error."""
    number = rate.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = rate[len(number) :].lower() or "bit"
    try:
        value = float(number)
    except ValueError:
        value = -1
    if value <= 0 or unit not in RATE_UNITS:
        raise TandemError(
            f"{option} {rate}: expected a positive number and one of tc's units "
            f"({', '.join(RATE_UNITS)}), such as 2gbit"
        )
    return value * RATE_UNITS[unit]


def tbf(rate: str) -> list[str]:
    """The words of a tc qdisc that limits a device's sending to 'rate', with a
    bucket of SHAPED_BURST_BYTES and at most 50 ms of queue."""
    return ["tbf", "rate", rate, "burst", f"{SHAPED_BURST_BYTES // 1000}kb", "latency", "50ms"]
