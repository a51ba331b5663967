"""Markdown notes: front matter read and edited in place (YAML with ruamel.yaml,
TOML with tomlkit), the tags and summary the tool owns merged into it, and
notes read and replaced safely (docs/tag.md).

Invariant of every edit: the bytes of a note outside the keys the tool owns
(`tags` items it added, the summary key it wrote, and its own record key)
come out unchanged; an edit that would change any other byte is refused, and
the note is left as it was.
"""
