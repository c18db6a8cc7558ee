"""JSON beyond the standard library: a partial parser for streamed arguments, relaxed repair."""
