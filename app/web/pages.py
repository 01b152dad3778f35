"""HTML pages. They call the same services as the JSON API and never import SQLAlchemy.

One module a feature (question, catalog, device); this one installs them and serves the
methodology."""

from __future__ import annotations

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
    app.state.templates = make_templates()
    for module in (question_pages, catalog_pages, device_pages):
        app.include_router(module.router)
    app.include_router(router)


# ---------------------------------------------------------------------------- methodology


@router.get("/methodology", response_class=HTMLResponse)
def methodology(request: Request, settings: SettingsDep) -> HTMLResponse:
    path = Path(settings.docs_dir) / "methodology.md"
    if not path.is_file():
        raise NotFound("the methodology document is not installed on this server")
    md = markdown.Markdown(extensions=["tables", "fenced_code", "toc", "sane_lists"])
    # docs/ is ours (reviewed with the code), not user or catalog input.
    html = Markup(md.convert(path.read_text(encoding="utf-8")))
    return render(request, "methodology.html", {"content": html})
