"""The end-of-run summary names each skip reason once, with how many tests it skipped: pytest's
`-rs` prints one line per test location, so one missing database variable filled hundreds of lines
with the same sentence."""

from __future__ import annotations

from collections import Counter


def skip_reason(report) -> str:
    """The reason a skipped test report gives, without pytest's "Skipped: " prefix."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter) -> None:
    reasons = Counter(
        skip_reason(report)
        for report in terminalreporter.stats.get("skipped", ())
        if getattr(report, "longrepr", None) is not None
    )
    if not reasons:
        return
    terminalreporter.write_sep("=", "skip reasons (once each; -rs lists every test)")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"SKIPPED {count} test{'s' if count != 1 else ''}: {reason}")
