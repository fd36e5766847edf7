"""Rate limits of simulated networks: the shaped loopback of tandem bench and
the links of simulated hosts (tc's token bucket filter, tbf; this kernel has
no netem)."""

from __future__ import annotations

from .builds import TandemError

SHAPED_BURST_BYTES = 256 * 1024  # tc's "256kb": its kb are of 1024 bytes

# tc's sizes, in bytes
SIZE_UNITS = {"b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2}

# tc's rate units, in bits per second (bps: bytes per second)
RATE_UNITS = {
    **{"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12},
    **{"bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "tbps": 8e12},
}


def split_link(link: str) -> tuple[str, str | None]:
    """A link's rate and its bucket, as given: 1gbit, or 1gbit:16kb."""
    rate, _, burst = link.partition(":")
    return rate, burst or None


def scaled(text: str, units: dict[str, float], default_unit: str) -> float | None:
    """A tc quantity such as 2gbit or 16kb in its base unit, or None when
    it is not a positive number and one of 'units'."""
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number) :].lower() or default_unit
    try:
        value = float(number)
    except ValueError:
        return None
    return value * units[unit] if value > 0 and unit in units else None


def burst_bytes(link: str, option: str = "--link") -> int:
    """The bytes of a link's token bucket: those of RATE:BURST (a tc size
    such as 16kb or 3000), by default SHAPED_BURST_BYTES."""
    burst = split_link(link)[1]
    if burst is None:
        return SHAPED_BURST_BYTES
    value = scaled(burst, SIZE_UNITS, "b")
    if value is None:
        raise TandemError(
            f"{option} {link}: the bucket {burst!r} is not a size in tc's units "
            f"(a number and one of {', '.join(SIZE_UNITS)}), such as 16kb"
        )
    return int(value)


def rate_bits(rate: str, option: str = "--rate") -> float:
    """A tc rate such as 2gbit or 100mbps, in bits per second, optionally
    with its bucket after a colon (1gbit:16kb, checked too); 'option' names
    where it was given, for the error."""
    if ":" in rate:
        burst_bytes(rate, option)
        rate = split_link(rate)[0]
    value = scaled(rate, RATE_UNITS, "bit")
    if value is None:
        raise TandemError(
            f"{option} {rate}: expected a positive number and one of tc's units "
            f"({', '.join(RATE_UNITS)}), such as 2gbit"
        )
    return value


def tbf(link: str) -> list[str]:
    """The words of a tc qdisc that limits a device's sending to the rate of
    'link' (RATE or RATE:BURST), with its bucket (default
    SHAPED_BURST_BYTES) and at most 50 ms of queue."""
    rate = split_link(link)[0]
    return ["tbf", "rate", rate, "burst", str(burst_bytes(link)), "latency", "50ms"]
