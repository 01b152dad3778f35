"""HTML pages. They call the same services as the JSON API and never import SQLAlchemy.

One module a feature (question, catalog, device); this one installs them and serves the
methodology."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from app.deps import SettingsDep
from app.errors import NotFound
from app.web import catalog_pages, device_pages, question_pages
from app.web.templating import make_templates, render

router = APIRouter(include_in_schema=False)


def install(app: FastAPI) -> None:
    app.state.templates = make_templates(app.state.settings)
    for module in (question_pages, catalog_pages, device_pages):
        app.include_router(module.router)
    app.include_router(router)
    # The answer page's path is fixed: found among the app's routes here, once, not on every
    # answer page (request.url_for tries each of the app's routes in turn until one names it).
    app.state.answer_path = app.url_path_for("recommendations")


# ---------------------------------------------------------------------------- methodology


@router.get("/methodology", response_class=HTMLResponse)
def methodology(request: Request, settings: SettingsDep) -> HTMLResponse:
    """How to read an answer, for the people who ask: the maintainers' detail is one link on."""
    return _document(request, Path(settings.docs_dir) / "guide.md", "How to read an answer")


@router.get("/methodology/details", response_class=HTMLResponse)
def methodology_details(request: Request, settings: SettingsDep) -> HTMLResponse:
    """Every formula and constant with its source: the maintainers' methodology."""
    return _document(request, Path(settings.docs_dir) / "methodology.md", "Methodology")


def _document(request: Request, path: Path, title: str) -> HTMLResponse:
    if not path.is_file():
        raise NotFound(f"the document {path.name} is not installed on this server")
    md = markdown.Markdown(
        extensions=["tables", "fenced_code", "toc", "sane_lists"],
        # an aligned column as align="right", not style="text-align": the pages' CSP allows
        # no inline style (style-src 'self'), and the browser would refuse it on every load
        extension_configs={"toc": {"toc_depth": "2-3"}, "tables": {"use_align_attribute": True}},
    )
    # docs/ is ours (reviewed with the code), not user or catalog input.
    html = _link_references(md.convert(path.read_text(encoding="utf-8")))
    toc = getattr(md, "toc", "")
    ctx = {"content": Markup(html), "toc": Markup(toc), "title": title}
    return render(request, "methodology.html", ctx)


def _link_references(html: str) -> str:
    """'[TM101]' citations link to their entry in the reference list ('**TM101**: ...'),
    and wide tables scroll inside their own focusable region on a phone."""
    keys = set(re.findall(r"<li><strong>([A-Za-z0-9]+)</strong>:", html))
    for key in keys:
        html = html.replace(
            f"<li><strong>{key}</strong>:", f'<li id="ref-{key}"><strong>{key}</strong>:', 1
        )
    if keys:
        pattern = r"\[(" + "|".join(sorted(map(re.escape, keys), key=len, reverse=True)) + r")\]"
        html = re.sub(pattern, r'<a href="#ref-\1">[\1]</a>', html)
    html = html.replace(
        "<table>", '<div class="table-wrap" role="region" aria-label="Table" tabindex="0"><table>'
    ).replace("</table>", "</table></div>")
    # a code block that scrolls on a phone must be reachable by keyboard
    return html.replace("<pre>", '<pre tabindex="0">')
