"""Serving open-weight models: server specs, the Docker driver, and our transformers OpenAI-compatible server."""
