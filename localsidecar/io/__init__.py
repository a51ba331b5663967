"""Input, output and process handling: documents, resumable result files,
atomic writes, interrupts, number formatting."""
