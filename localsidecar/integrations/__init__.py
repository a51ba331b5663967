"""Adapters for other libraries: llama-cpp-python's draft-model API."""
