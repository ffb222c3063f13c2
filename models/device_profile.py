"""
Device profiles: what `mobile-probe` measured on a device, as the JSON file passes
read (identity, image limits, compute, caches, bandwidths, TMModel constants, and the
raw sweeps behind them). Presets of mobile GPUs carry the figures their papers
publish, marked `"source": "published"`, with null where a paper gives none.
"""

from __future__ import annotations

import json
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.models.tmmodel import FEATURES, TextureConstants

SCHEMA = "mobile-opt device profile 1"
PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
"""Shipped profiles and presets: `models/profiles/<name>.json`."""


class ProfileError(DiagnosticException):
    """A profile file is missing, malformed, or lacks what a pass needs; one line."""


def profile_path(name_or_path: str) -> Path:
    """Where `load_profile` reads a profile: a path, or a shipped one's by its name."""
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        path = PROFILE_DIR / f"{name_or_path}.json"
    return path


def load_profile(name_or_path: str) -> dict:
    """A profile by path, or by the name of a shipped one (`pocl`, `adreno740`, ...)."""
    path = profile_path(name_or_path)
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in PROFILE_DIR.glob("*.json"))) or "none"
        raise ProfileError(f"{name_or_path}: no such device profile (shipped: {shipped})")
    try:
        profile = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}: not a device profile: {e.msg} at line {e.lineno}") from None
    if not isinstance(profile, dict) or profile.get("schema") != SCHEMA:
        raise ProfileError(f"{path}: not a device profile (no \"schema\": \"{SCHEMA}\")")
    return profile


def texture_constants(profile: dict) -> TextureConstants:
    """TMModel's constants from a profile; a ProfileError names what is missing."""
    name = profile.get("identity", {}).get("name", "profile")
    tm, compute = profile.get("tmmodel") or {}, profile.get("compute") or {}
    needed = {
        "tmmodel.beta": tm.get("beta"), "tmmodel.thrash_factor": tm.get("thrash_factor"),
        "tmmodel.cache_lines": tm.get("cache_lines"), "compute.cores": compute.get("cores"),
        "compute.registers_per_core": compute.get("registers_per_core"),
        "compute.warp_size": compute.get("warp_size"),
    }
    missing = [k for k, v in needed.items() if v is None]
    if missing:
        raise ProfileError(f"{name}: the profile has no {', '.join(missing)} (run mobile-probe)")
    if list(tm.get("features", [])) != list(FEATURES):
        raise ProfileError(f"{name}: β was fitted to other features than this model's")
    occupancy = (tm.get("occupancy") or {})
    groups = occupancy.get("warps_per_occupancy_group") or {}
    resident = None
    if groups:  # the occupancy group at the least register pressure, in threads
        least = min(groups, key=int)
        resident = int(groups[least]) * int(occupancy.get("warp_size_used") or compute["warp_size"])
    sweep = tm.get("work_groups") or {}
    noise = 1 + float(sweep.get("round_spread") or 0.0)
    tables = sorted((tm.get("kernel_groups") or {}).items())
    families = tuple((family, _group_factors(table.get("relative_time") or {}, noise))
                     for family, table in tables)
    patterns = tuple((family, _pattern_factors(table, noise))
                     for family, table in tables if table.get("pattern_relative_time"))
    by_tile = [(family, sorted((tuple(map(int, tile.split("x"))), entry)
                               for tile, entry in table["tiles"].items()))
               for family, table in tables if table.get("tiles")]
    tile_groups = tuple((family, tuple((tile, _group_factors(entry["relative_time"], noise))
                                       for tile, entry in entries))
                        for family, entries in by_tile)
    tile_patterns = tuple((family, tuple((tile, _pattern_factors(entry, noise))
                                         for tile, entry in entries))
                          for family, entries in by_tile
                          if any(e.get("pattern_relative_time") for _, e in entries))
    return TextureConstants(tuple(tm["beta"]), float(tm["thrash_factor"]),
                            int(tm["cache_lines"]), int(compute["cores"]),
                            int(compute["registers_per_core"]), int(compute["warp_size"]),
                            resident, _group_factors(sweep.get("relative_time") or {}, noise),
                            families, patterns, tile_groups, tile_patterns,
                            compute.get("local_memory_bytes"),
                            _fma_ns(compute, resident))


def _fma_ns(compute: dict, resident: int | None) -> float | None:
    """ns one of a full core's `resident` threads takes per FMA: the core's share of the
    measured peak (2 FLOPs an FMA) divided among them; None without a peak."""
    peak = compute.get("peak_gflops")
    if not peak or not resident:
        return None
    return resident / (float(peak) / 2 / int(compute["cores"]))


def _beyond_noise(relative_time: float, noise: float) -> float:
    """A time relative to the best, or 1 where it is within the noise between rounds."""
    return relative_time if relative_time > noise else 1.0


def _pattern_factors(table: dict, noise: float) -> tuple[tuple[str, float], ...]:
    """(layout, F) per layout a table timed, as fast as the best within the noise."""
    return tuple(sorted((layout, _beyond_noise(t, noise))
                        for layout, t in (table.get("pattern_relative_time") or {}).items()))


def _group_factors(relative_time: dict[str, float],
                   noise: float) -> tuple[tuple[int, int, float], ...]:
    """(Gx, Gy, F) per shape `GxxGy`, as fast as the best within the noise."""
    return tuple(sorted((*map(int, shape.split("x")), _beyond_noise(t, noise))
                        for shape, t in relative_time.items()))


POCL_PLATFORM = "Portable Computing Language"


def describes(identity: dict, device_name: str, platform: str) -> bool:
    """
    Whether a profile's identity is of this device: the same name, or both PoCL's CPU
    device, whose name changes with the host's CPU (and PoCL's build) but whose
    readings are one software device's.
    """
    return identity.get("name") == device_name or (
        platform == POCL_PLATFORM and identity.get("platform") == POCL_PLATFORM
    )


IMAGE_PENALTY = 3.0
"""How many times slower than buffer reads a profile's image reads must be for tensors
to go in buffers (`prefers_buffers`)."""


def prefers_buffers(profile: dict) -> bool:
    """
    Romou's storage criterion: whether tensors belong in buffers rather than images on
    this device, its measured image read bandwidth being under 1/`IMAGE_PENALTY` of its
    buffer bandwidth. PoCL emulates images in software (8.96 against 2.20 GB/s); the
    H100 reads its images through a texture cache (4887 against 1983 GB/s, the buffer
    figure from L1), and its kernels were tuned on images. Unmeasured: False.
    """
    bandwidth = profile.get("bandwidth_gbs") or {}
    buffer, image = bandwidth.get("buffer"), bandwidth.get("texture")
    return bool(buffer and image) and buffer > IMAGE_PENALTY * image


def profile_for_device(device_name: str, platform: str = "") -> str | None:
    """
    The shipped measured profile of the device of this name, if there is one; PoCL's
    CPU device takes the shipped PoCL profile whatever the CPU.
    """
    for path in sorted(PROFILE_DIR.glob("*.json")):
        try:
            identity = json.loads(path.read_text()).get("identity", {})
        except (OSError, json.JSONDecodeError):
            continue
        if identity.get("source") == "measured" and identity.get("name") == device_name:
            return path.stem
    if platform == POCL_PLATFORM and (PROFILE_DIR / "pocl.json").is_file():
        return "pocl"
    return None
