"""The pages' shape: each page is a module of functions whose `main()` the router runs (the file
executed as `__main__`); importing one draws nothing; and pages reach the core only through
`core.service` and the record modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE_FILES = sorted((ROOT / "pages").glob("*.py"))
PAGE_NAMES = [path.stem for path in PAGE_FILES if path.stem != "__init__"]
ALLOWED = ("core.service", "core.records", "core.run_results", "core.record_base")
ALLOWED_EXACT = ("core.errors",)


def core_imports(source: str) -> list[str]:
    """Every module of `core` the source imports, at any depth (`from core import x`: core.x)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "core":
                found += [f"core.{alias.name}" for alias in node.names]
            elif node.module.startswith("core."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "core"]
    return found


def allowed(module: str) -> bool:
    return module in ALLOWED_EXACT or any(
        module == prefix or module.startswith(f"{prefix}.") for prefix in ALLOWED
    )


@pytest.mark.parametrize(
    "path",
    [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_pages_import_the_core_through_the_service_only(path: Path) -> None:
    assert [m for m in core_imports(path.read_text("utf-8")) if not allowed(m)] == []


def test_the_import_check_sees_the_holes() -> None:
    source = (
        "from core import create_scorer\n"
        "import core.reporting\n"
        "def f():\n    from core.storage import Store\n"
        "from core.service import views\nfrom core.errors import ScorerRunError\n"
    )
    holes = [m for m in core_imports(source) if not allowed(m)]
    assert holes == ["core.create_scorer", "core.reporting", "core.storage"]


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_every_page_runs_main_only_as_main(name: str) -> None:
    source = (ROOT / "pages" / f"{name}.py").read_text("utf-8")
    tree = ast.parse(source)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body)
    last = tree.body[-1]
    assert isinstance(last, ast.If) and ast.unparse(last.test) == "__name__ == '__main__'"
    calls = [n for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    assert calls == []  # nothing drawn at import


def import_every_page(names: list[str]) -> None:
    import importlib

    for name in names:
        importlib.import_module(f"pages.{name}")


def test_importing_the_pages_draws_nothing(fresh_service: None) -> None:
    app = AppTest.from_function(import_every_page, args=(PAGE_NAMES,), default_timeout=30)
    app.run()
    assert not app.exception, app.exception
    assert len(app.main.children) == 0 and len(app.sidebar.children) == 0
