"""The decoding core: the engine, speculative decoding and its draft policy,
the draft layouts, prompts, sentence stops, context checks, distributions."""
