"""HTTP API (FastAPI): thin routers over ``ragloom.service``."""
