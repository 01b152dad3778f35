# GPU Advisor service image: the API, the web pages and the benchmark runner (CPU torch).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    GPU_ADVISOR_DATABASE_URL=sqlite:////data/gpu-advisor.db

WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
COPY data ./data
COPY docs ./docs
COPY templates ./templates
COPY static ./static
# Same steps as `make install`: torch first, pinned, then the project. PyPI's Linux wheel of
# torch carries CUDA, so `docker run --gpus all` lets the server benchmark its own GPU.
RUN pip install "torch==2.13.0" \
    && pip install -e ".[postgres]"

RUN useradd --create-home --uid 10001 advisor && mkdir -p /data && chown advisor /data
USER advisor
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/api/v1/health', timeout=4).status == 200 else 1)"
CMD ["gpu-advisor", "serve", "--host", "0.0.0.0", "--port", "8000"]
