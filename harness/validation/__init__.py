"""Trace validation of recorded commit histories: the format, the search, the converter."""
