# GPU Advisor images, built from the lock files and a wheel (never an editable install):
#   docker build -t gpu-advisor .                      the web service (API + pages), no torch
#   docker build --target bench -t gpu-advisor-bench .  the same plus torch/numpy/psutil, for
#                                                       benchmark runs (`docker run --gpus all`)

# -- wheel: the package with its data, templates, static files and migrations inside ------
FROM python:3.11-slim AS wheel
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY app ./app
COPY data ./data
COPY templates ./templates
COPY static ./static
COPY migrations ./migrations
COPY docs ./docs
RUN pip wheel --no-deps -w /wheels .

# -- base: what both images share -------------------------------------------------------
FROM python:3.11-slim AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GPU_ADVISOR_DATABASE_URL=sqlite:////data/gpu-advisor.db
RUN useradd --create-home --uid 10001 advisor && mkdir -p /data && chown advisor /data
WORKDIR /home/advisor
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/api/v1/health', timeout=4).status == 200 else 1)"

# -- bench: web + the benchmark runner. PyPI's Linux torch wheel carries CUDA, so
# `docker run --gpus all` lets it measure its GPU.
FROM base AS bench
COPY requirements-bench.lock /tmp/requirements.lock
RUN pip install -r /tmp/requirements.lock
COPY --from=wheel /wheels /wheels
RUN pip install --no-deps /wheels/*.whl && rm -rf /wheels
USER advisor
# Migrate and seed once under the database's lock (safe when replicas start together), then
# serve with a local benchmark worker.
CMD ["sh", "-c", "gpu-advisor db upgrade && exec gpu-advisor serve --host 0.0.0.0 --port 8000"]

# -- web (the default target, so it comes last): API and pages, without torch -----------
FROM base AS web
COPY requirements.lock /tmp/requirements.lock
RUN pip install -r /tmp/requirements.lock
COPY --from=wheel /wheels /wheels
RUN pip install --no-deps /wheels/*.whl && rm -rf /wheels \
    && ! python -c "import torch" 2>/dev/null
USER advisor
# No torch here: benchmark runs go to workers of the bench image (`gpu-advisor worker`).
CMD ["sh", "-c", "gpu-advisor db upgrade && exec gpu-advisor serve --host 0.0.0.0 --port 8000 --no-worker"]
