"""What `make upgrade-check` installed: each distribution whose version differs from the pins of the
given files."""

from __future__ import annotations

import re
import sys
from importlib.metadata import distributions

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(paths: list[str]) -> dict[str, str]:
    found = {}
    for path in paths:
        with open(path) as lines:
            for line in lines:
                match = PIN.match(line)
                if match:
                    found[canonical(match.group(1))] = match.group(2)
    return found


def main(paths: list[str]) -> None:
    pinned = pins(paths)
    installed = {canonical(dist.metadata["Name"]): dist.version for dist in distributions()}
    changed = sorted(
        (name, pinned[name], version)
        for name, version in installed.items()
        if name in pinned and pinned[name] != version
    )
    added = sorted(set(installed) - set(pinned) - {"hirekit", "pip", "setuptools", "wheel"})
    print(f"upgrade-check: {len(changed)} of {len(pinned)} pinned distributions at another version")
    for name, old, new in changed:
        print(f"  {name} {old} -> {new}")
    if added:
        print("  not pinned: " + ", ".join(f"{name} {installed[name]}" for name in added))


if __name__ == "__main__":
    main(sys.argv[1:])
