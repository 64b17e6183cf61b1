# Astrolabe Search on the embedded engine. Data lives in the /data volume.
FROM python:3.11-slim
WORKDIR /srv
ENV PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 SEARCH_DATA_DIR=/data HF_HUB_OFFLINE=1
# CPU-only torch, pinned: the default index serves a multi-GB CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY pyproject.toml README.md ./
COPY app ./app
RUN pip install .
VOLUME /data
EXPOSE 8000
# Configure SEARCH_JWT_SECRET or SEARCH_API_KEYS_FILE; one container per data volume.
CMD ["astrolabe-search", "serve", "--host", "0.0.0.0", "--port", "8000"]
