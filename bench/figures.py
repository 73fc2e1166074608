"""The figures the benchmarks print."""


def percentile(values: list[float], share: float) -> float:
    """The sample at `share` (0.99 for p99) of the sorted `values`; NaN for no samples."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]
