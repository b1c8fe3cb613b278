"""The project's facts for the Python scripts, each read from its one place.

    steps()                 the step directories NN_slug, in order (steps/[0-9][0-9]_*, the
                            pattern of CMakeLists.txt and scripts/lib.sh)
    step_source(step)       steps/NN_slug/<slug>.cu
    shapes(name)            the sizes of a named set of tests/shapes.txt, e.g. "faults.edges"
    gpu_groups()            the GPU suite's sets: (name, sizes, alpha, beta, further options)
    expected_failures()     {set: [steps]} of the lines expect_fail.SET STEP...: steps known to
                            fail gpu.SET (tests/gpu_suite.cmake registers those tests as such)
    survey()                the shape survey's sets in file order: (kind, sizes), kind being the
                            set's name after "survey." (scripts/bench.sh --survey runs them all)
    ncu_metrics(*sets)      the metric names of those sets of scripts/ncu_metrics.txt
    cmake_cache(build, v)   a setting of a configured build (the architectures live there)
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def steps() -> list[str]:
    return sorted(p.name for p in (ROOT / "steps").glob("[0-9][0-9]_*") if p.is_dir())


def step_source(step: str) -> Path:
    slug = step.split("_", 1)[1]
    path = ROOT / "steps" / step / f"{slug}.cu"
    if not path.is_file():
        raise SystemExit(f"project: no {path.relative_to(ROOT)} (known steps: {' '.join(steps())})")
    return path


def _records(path: Path) -> list[list[str]]:
    lines = path.read_text().splitlines()
    return [line.split() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def shapes(name: str) -> str:
    for fields in _records(ROOT / "tests" / "shapes.txt"):
        if fields[0] == name:
            return fields[1]
    raise SystemExit(f"project: no shape set '{name}' in tests/shapes.txt")


def gpu_groups() -> list[tuple[str, str, str, str, list[str]]]:
    return [(fields[0].removeprefix("gpu."), fields[1], fields[2], fields[3], fields[4:])
            for fields in _records(ROOT / "tests" / "shapes.txt") if fields[0].startswith("gpu.")]


def expected_failures() -> dict[str, list[str]]:
    return {fields[0].removeprefix("expect_fail."): fields[1:]
            for fields in _records(ROOT / "tests" / "shapes.txt") if fields[0].startswith("expect_fail.")}


def survey() -> list[tuple[str, str]]:
    return [(fields[0].removeprefix("survey."), fields[1])
            for fields in _records(ROOT / "tests" / "shapes.txt") if fields[0].startswith("survey.")]


def ncu_metrics(*sets: str) -> list[str]:
    return [fields[1] for fields in _records(ROOT / "scripts" / "ncu_metrics.txt") if fields[0] in sets]


def cmake_cache(build: Path, name: str) -> str:
    cache = Path(build) / "CMakeCache.txt"
    if not cache.is_file():
        raise SystemExit(f"project: {cache} not found: configure first (cmake -S . -B {build})")
    for line in cache.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and key.split(":")[0] == name:
            return value
    raise SystemExit(f"project: {name} not in {cache}")
