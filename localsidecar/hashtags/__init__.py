"""The hashtag feature: the sidecar's generation (candidates, grammar,
parsing) and the tag metrics."""
