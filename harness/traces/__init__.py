"""Reading and writing what the engines and drivers exchange: traces, ITF, TLA+ values, user files."""
