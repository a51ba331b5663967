"""localsidecar: speculative summarization on llama.cpp with a hashtag sidecar on the draft."""

__version__ = "0.1.0"
