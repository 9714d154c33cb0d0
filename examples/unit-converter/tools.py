"""Tools of the unit-converter environment: every public function here is a tool.

Type hints and the docstring become the tool's JSON schema; EXAMPLES lets `agent-rl env check` try each tool.
Each episode gets its own process, so module state (the history below) lasts for the episode.
"""

FACTORS = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
    "in": ("length", 0.0254), "ft": ("length", 0.3048), "yd": ("length", 0.9144), "mi": ("length", 1609.344),
    "mg": ("mass", 0.001), "g": ("mass", 1.0), "kg": ("mass", 1000.0),
    "s": ("time", 1.0), "min": ("time", 60.0), "h": ("time", 3600.0), "day": ("time", 86400.0),
}
_history = []


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert a quantity from one unit to another of the same kind.

    Args:
        value: the quantity to convert
        from_unit: its unit (mm, cm, m, km, in, ft, yd, mi, mg, g, kg, s, min, h, day)
        to_unit: the unit wanted
    """
    if from_unit not in FACTORS or to_unit not in FACTORS:
        raise ValueError("unknown unit; use one of " + ", ".join(FACTORS))
    (kind_a, a), (kind_b, b) = FACTORS[from_unit], FACTORS[to_unit]
    if kind_a != kind_b:
        raise ValueError(f"cannot convert {kind_a} to {kind_b}")
    result = value * a / b
    _history.append((value, from_unit, to_unit))
    # a whole number up to float rounding (1609.344 / 0.0254 is not exactly 63360) is returned as one
    return int(round(result)) if abs(result - round(result)) < 1e-12 * max(1.0, abs(result)) else round(result, 6)


def conversions_so_far() -> int:
    """How many conversions this episode has made."""
    return len(_history)


EXAMPLES = {"convert": {"value": 2, "from_unit": "km", "to_unit": "m"}, "conversions_so_far": {}}
