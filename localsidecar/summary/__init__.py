"""Summaries a reader can trust: the document's own sentences to pick from
(candidates), the walk that lets the target pick them (extract), the check
of a free summary against its document (support), and the modes (modes)."""
